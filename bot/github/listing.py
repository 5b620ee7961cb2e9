"""Whether GitHub's pull request files listing is the change of the head the review read.

The review reads the base and head trees at the pull request's two commits, but GitHub's listing
(``GET /repos/{repo}/pulls/{number}/files``) takes no commit: it lists whatever the head is when it
is asked. An author who pushes another head while the listing runs, and pushes the reviewed one
back before the head is read again, would have the review judge one commit's trees through another
commit's list of files (a CODEOWNERS change left out of the list is never judged). So the listing is
held to the pinned trees:

- every listed path under the folders read has, at the head, the blob the listing names (GitHub's
  ``sha``), or is absent there when listed removed (or renamed away);
- every path under those folders whose object differs between the merge base and the head is
  listed. The base tree read is the base branch's tip, which may have moved on since the merge base
  GitHub diffs from: only when that tree and the head differ on an unlisted path are the merge base
  (``GitHubAPI.merge_base``) and its tree read, and the path is compared with it.

``unconfirmed_whole`` does the second check for the whole tree, before the App approves for the
owners (a path outside the folders read, a root file, is not in the review's trees).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence

from bot.core.changes import ChangeSet, Status
from bot.core.quoting import code
from bot.github.api import ChangedFile, GitHubAPI, PullRequest
from bot.github.lazy_snapshot import TreeSnapshot
from bot.github.tree_files import under_prefixes

MAX_NAMED = 5  # paths named in a reason
WRONG = "disagrees with the reviewed head {head} on {paths}"
MISSING = "leaves out {paths}, which the reviewed head {head} changes"


class ListingMoved(Exception):
    """GitHub's listing is not of the head the review read, asked twice: the review is void (the
    worker concludes its check run as superseded and the head is reviewed again)."""


def listed_paths(files: Iterable[ChangedFile]) -> set[str]:
    """Every path the listing names: each file's, and the old path of a rename or copy."""
    out: set[str] = set()
    for f in files:
        out.add(f.path)
        if f.previous_path:
            out.add(f.previous_path)
    return out


def listed_wrong(
    files: Iterable[ChangedFile],
    head: Mapping[str, str],
    scope: tuple[str, ...],
    unread: Container[str] = (),
) -> list[str]:
    """The listed paths under ``scope`` that the head (path -> object id) contradicts. A path in
    ``unread`` (a submodule, a symlink, a blob over the limit: never read, a finding whatever it
    holds) is held to its presence only, not to GitHub's ``sha`` for it."""
    wrong: list[str] = []
    for f in files:
        if under_prefixes(f.path, scope):
            if f.status == "removed":
                if f.path in head:
                    wrong.append(f.path)
            elif f.path not in head or (f.sha and f.path not in unread and f.sha != head[f.path]):
                wrong.append(f.path)
        # a rename's old path is gone at the head (a copy's stays)
        old = f.previous_path if f.status == "renamed" else None
        if old and under_prefixes(old, scope) and old in head:
            wrong.append(old)
    return wrong


def unlisted(listed: set[str], old: Mapping[str, str], head: Mapping[str, str]) -> list[str]:
    """The paths whose object differs between ``old`` and ``head`` (path -> object id) that are not
    ``listed``."""
    return sorted(p for p in set(old) | set(head) if old.get(p) != head.get(p) and p not in listed)


def mismatch(
    gh: GitHubAPI,
    pr: PullRequest,
    files: Sequence[ChangedFile],
    base: TreeSnapshot,
    head: TreeSnapshot,
    scope: tuple[str, ...],
) -> str:
    """Why ``files`` is not the change of ``pr.head_sha`` under ``scope`` (``base``/``head``: the
    trees read there at ``pr.base_sha``/``pr.head_sha``); empty when it is."""
    head_ids = head.git_ids()
    wrong = listed_wrong(files, head_ids, scope, head.skipped)
    if wrong:
        return _why(WRONG, wrong, pr)
    missing = unlisted(listed_paths(files), base.git_ids(), head_ids)
    if missing:  # the base branch may have moved on since the merge base: compare with that
        old = _merge_base_tree(gh, pr, scope)
        if old is not None:
            missing = unlisted(listed_paths(files), old.git_ids(), head_ids)
    return _why(MISSING, missing, pr) if missing else ""


def unconfirmed_whole(gh: GitHubAPI, pr: PullRequest, changes: ChangeSet) -> str:
    """Why ``changes`` (from the listing) is not known to be every path ``pr.head_sha`` changes in
    the whole tree; empty when it is. Two tree requests (the base's is cached across reviews), and
    the merge base and its tree only when a path the base tip and the head differ on is unlisted:
    the base branch may have moved on since the merge base GitHub lists from, as in ``mismatch``."""
    head = TreeSnapshot(gh.read_tree(pr.repo, pr.head_sha, ("",)), label="head")
    old = TreeSnapshot(gh.read_tree(pr.repo, pr.base_sha, ("",)), label="base")
    if head.cut or old.cut:
        return _cut(head, old)
    head_ids = head.git_ids()
    listed = changes.paths()
    wrong = [f.path for f in changes.files if (f.path in head_ids) == (f.status is Status.DELETED)]
    wrong += [
        f.old_path
        for f in changes.files
        if f.status is Status.RENAMED and f.old_path and f.old_path in head_ids
    ]
    if wrong:
        return _why(WRONG, wrong, pr)
    missing = unlisted(listed, old.git_ids(), head_ids)
    merge_base = _merge_base_tree(gh, pr, ("",)) if missing else None
    if merge_base is not None:
        if merge_base.cut:
            return _cut(head, merge_base)
        missing = unlisted(listed, merge_base.git_ids(), head_ids)
    return _why(MISSING, missing, pr) if missing else ""


def _merge_base_tree(gh: GitHubAPI, pr: PullRequest, scope: tuple[str, ...]) -> TreeSnapshot | None:
    """The tree under ``scope`` at the merge base GitHub lists the change from; None when that is
    the base tip already read."""
    merge_base = gh.merge_base(pr.repo, pr.base_sha, pr.head_sha)
    if merge_base == pr.base_sha:
        return None
    return TreeSnapshot(gh.read_tree(pr.repo, merge_base, scope), label="merge base")


def _cut(*trees: TreeSnapshot) -> str:
    cut = "; ".join(t.cut for t in trees if t.cut)
    return f"the bot could not confirm the whole change against the trees ({cut})"


def _why(what: str, paths: Sequence[str], pr: PullRequest) -> str:
    named = ", ".join(code(p, table=False) for p in paths[:MAX_NAMED])
    more = f" and {len(paths) - MAX_NAMED:,} more" if len(paths) > MAX_NAMED else ""
    head = code(pr.head_sha[:12], table=False)
    return (
        f"GitHub's list of the pull request's files {what.format(paths=named + more, head=head)}: "
        "it was listed for another commit (the head moved while it was read)"
    )
