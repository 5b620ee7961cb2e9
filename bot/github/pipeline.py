"""Fetch what a review needs through ``GitHubAPI`` and review it with ``run_review`` and the App's
stages.

Only the paths the checks read are fetched: the configured folders plus the CODEOWNERS files and
the bot's config. The config comes from the default branch, never from the pull request's head.
The approvers are the logins whose latest review approves, plus the ``org/team`` owners of the
change that the author or an approver is an active member of (``bot.github.teams``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from bot.core.changes import ChangeSet, FileChange, Status, diff_lines
from bot.core.config import CONFIG_PATHS, Config, load_config
from bot.core.findings import Finding, Report, Section, State
from bot.core.snapshot import Snapshot
from bot.github import listing
from bot.github.api import ChangedFile, GitHubAPI, PullRequest, ReviewInfo
from bot.github.lazy_snapshot import FilesSnapshot, TreeSnapshot, raise_read_failure
from bot.github.teams import TeamMembership, membership
from bot.github.tree_diff import tree_changes
from bot.github.tree_files import normalise_prefixes
from bot.outputs.site.preview import site_preview
from bot.review import compose
from bot.review.compose import Regression as Regression
from bot.review.compose import ReviewRequest, Stage, run_review, sections
from bot.review.engine import Check

log = logging.getLogger(__name__)

EXTRA_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", *CONFIG_PATHS)
_STATUS = {
    "added": Status.ADDED,
    "removed": Status.DELETED,
    "renamed": Status.RENAMED,
    "copied": Status.ADDED,
}


def to_changeset(files: Iterable[ChangedFile], truncated: bool = False) -> ChangeSet:
    """GitHub's pull request files as a ``ChangeSet`` (diff lines from each ``patch``).

    A ``copied`` file is an addition: its ``previous_filename`` is a file the change leaves as it
    was, so it is no old path (a rename's source, whose problems the copy would inherit)."""
    return ChangeSet(
        files=tuple(
            FileChange(
                f.path,
                _STATUS.get(f.status, Status.MODIFIED),
                old_path=f.previous_path if f.status == "renamed" else None,
                lines=diff_lines(f.patch),
                patch_missing=f.patch is None and f.status != "removed",
                patch=f.patch,
            )
            for f in files
        ),
        truncated=truncated,
    )


def approvers(reviews: Iterable[ReviewInfo]) -> frozenset[str]:
    """Users whose latest deciding review is an approval (a later plain comment does not revoke
    it)."""
    latest: dict[str, str] = {}
    for r in reviews:
        if r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[r.user] = r.state
    return frozenset(user for user, state in latest.items() if state == "APPROVED")


@dataclass(frozen=True)
class ReviewInputs:
    pr: PullRequest
    base: Snapshot
    head: Snapshot
    changes: ChangeSet
    config: Config
    config_findings: tuple[Finding, ...]
    approvers: frozenset[str]  # logins and the org/team slugs they (or the author) stand for
    teams: TeamMembership = field(default_factory=TeamMembership)
    # the pull request's reviews when fetched (the publisher reuses them)
    reviews: tuple[ReviewInfo, ...] = ()
    # more files than GitHub lists: the change is the diff of the two trees
    from_trees: bool = False

    def touches_watched(self) -> bool:
        """Whether the change touches what the bot reviews: the configured folders, the CODEOWNERS
        files and the bot's configuration (ownership and steering files are reviewed files too)."""
        paths = self.changes.paths()  # a file renamed away is touched at its old path
        return any(
            self.changes.touches(folder) or folder in paths
            for folder in (*self.config.watched(), *EXTRA_PATHS)
        )


def load_default_config(gh: GitHubAPI, pr: PullRequest) -> tuple[Config, list[Finding]]:
    return config_at(gh, pr.repo, pr.default_branch)


def config_at(gh: GitHubAPI, repo: str, ref: str, label: str = "") -> tuple[Config, list[Finding]]:
    """The bot's configuration at ``ref``; one GitHub does not serve (over its size limit) is a
    configuration the bot cannot use (``config/invalid``, the defaults, no delegation)."""
    files = gh.read_files(repo, ref, CONFIG_PATHS)
    return load_config(FilesSnapshot(files, label=label or ref))


def read_snapshots(
    gh: GitHubAPI, pr: PullRequest, wanted: tuple[str, ...]
) -> tuple[TreeSnapshot, TreeSnapshot]:
    """Base and head under ``wanted``: one tree listing each, files downloaded when a check reads
    them."""
    return (
        TreeSnapshot(gh.read_tree(pr.repo, pr.base_sha, wanted), label=f"base {pr.base_sha[:12]}"),
        TreeSnapshot(gh.read_tree(pr.repo, pr.head_sha, wanted), label=f"head {pr.head_sha[:12]}"),
    )


def fetch(gh: GitHubAPI, pr: PullRequest) -> ReviewInputs:
    """Everything one review reads, fetched through ``gh``."""
    config, config_findings = load_default_config(gh, pr)
    files, truncated = gh.list_pull_request_files(pr.repo, pr.number)
    scope = normalise_prefixes((*config.watched(), *EXTRA_PATHS))
    base, head = read_snapshots(gh, pr, scope)
    if not truncated:  # the listing takes no commit: held to the pinned trees, asked again once
        why = listing.mismatch(gh, pr, files, base, head, scope)
        if why:
            log.warning("%s; listing again", why)
            files, truncated = gh.list_pull_request_files(pr.repo, pr.number)
            why = "" if truncated else listing.mismatch(gh, pr, files, base, head, scope)
            if why:
                raise listing.ListingMoved(why)
    # past GitHub's listing limit the listing is not the change: the two whole trees are
    if truncated:
        changes = tree_changes(*read_snapshots(gh, pr, ("",)))
    else:  # every listed path the review cannot read as a file is marked (``ChangeSet.complete``)
        changes = to_changeset(files).with_unread(base.skipped, head.skipped)
    reviews = tuple(gh.list_reviews(pr.repo, pr.number))
    me = gh.bot_login()
    # the App's own approval stands for no one
    logins = approvers(r for r in reviews if r.user != me)
    home = pr.repo.partition("/")[0]
    teams = membership(gh, base, head, changes, config, pr.author, logins, home=home)
    return ReviewInputs(
        pr,
        base,
        head,
        changes,
        config,
        tuple(config_findings),
        logins | teams.approving,
        teams,
        reviews,
        from_trees=truncated,
    )


def review_inputs(
    inputs: ReviewInputs,
    regression: Regression | None = None,
    checks: Iterable[Check] | None = None,
    stages: Sequence[Stage] = (),
) -> Report:
    """The report for fetched inputs (a neutral one when nothing the bot reviews changed):
    ``run_review`` with the App's stages (every file read, the notes, the regression, the site
    preview, then ``stages``)."""
    if not inputs.touches_watched() and not inputs.changes.truncated:
        # the base's configuration problems are shown as in a full review (never the change's)
        return Report.build(
            [replace(f, state=State.UNCHANGED) for f in inputs.config_findings],
            neutral_reason="This pull request changes none of the registry's files: "
            "nothing to review.",
        )
    notes = [note for note in (inputs.teams.section(), _trees_note(inputs)) if note is not None]
    return run_review(
        request(inputs, checks),
        [
            read_in_full,
            sections(*notes),
            *([compose.regression(regression)] if regression is not None else []),
            site_preview,
            *stages,
            # a stage may read what no check read (the regression, the preview) and keep going
            # without it: no verdict on a review that missed a file
            read_in_full,
        ],
    )


def request(inputs: ReviewInputs, checks: Iterable[Check] | None = None) -> ReviewRequest:
    """The review of fetched inputs as a ``ReviewRequest`` (configuration from the default
    branch)."""
    return ReviewRequest(
        head=inputs.head,
        base=inputs.base,
        changes=inputs.changes,
        author=inputs.pr.author,
        approvers=inputs.approvers,
        config=inputs.config,
        config_findings=inputs.config_findings,
        checks=tuple(checks) if checks is not None else None,
    )


def read_in_full(request: ReviewRequest, report: Report) -> Report:
    """A file GitHub failed to send: no verdict without it (``raise_read_failure``)."""
    raise_read_failure(request.base, request.head)
    return report


def _trees_note(inputs: ReviewInputs) -> Section | None:
    if not inputs.from_trees:
        return None
    return Section(
        "Files",
        f"GitHub lists at most 3,000 files of a pull request and this one has more: the bot "
        f"reviewed the change from the base and head trees ({len(inputs.changes.files):,} changed "
        f"paths, {sum(1 for _ in _watched(inputs))} of them under the folders it reviews). No line "
        f"of the diff is "
        "known, so findings are not commented inline.",
    )


def _watched(inputs: ReviewInputs) -> Iterable[FileChange]:
    """The changed paths under the folders (or at the files) the bot reviews."""
    watched = tuple(w.strip("/") for w in inputs.config.watched())
    return (
        f
        for f in inputs.changes.files
        if any(f.path == w or f.path.startswith(w + "/") for w in watched)
    )
