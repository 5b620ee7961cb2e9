"""A working tree judged as a change from a git revision: the change set git and the tree together
give.

Used where the working tree is reviewed as it is (``check --worktree``) and where fixes are applied
in memory (``fix --base``): tracked files git sees changed, untracked files it does not ignore, and
the files an in-memory overlay adds or changes. What a commit would record is the index instead
(``staged_commit``, the pre-commit hook's ``check --staged``).
"""

from __future__ import annotations

from pathlib import Path

from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.snapshot import Snapshot, run_git


def worktree_changes(
    repo: Path, rev: str, base: Snapshot, tree: Snapshot, extra: set[str] | None = None
) -> ChangeSet:
    """The files of ``tree`` (the working tree of ``repo``) that differ from ``base`` (``rev``),
    plus ``extra``."""
    listed = run_git(repo, "diff", "--name-only", "-z", "--no-renames", rev, "--").decode(
        "utf-8", "surrogateescape"
    )
    listed += run_git(repo, "ls-files", "--others", "--exclude-standard", "-z").decode(
        "utf-8", "surrogateescape"
    )
    paths = {p for p in listed.split("\0") if p} | (extra or set())
    files = []
    for path in sorted(paths):
        at_base, at_head = base.size(path) is not None, tree.size(path) is not None
        if at_base or at_head:
            status = (
                Status.MODIFIED
                if at_base and at_head
                else Status.ADDED
                if at_head
                else Status.DELETED
            )
            files.append(FileChange(path, status))
    return ChangeSet(files=tuple(files))


def staged_commit(repo: Path, parent: str) -> str:
    """A commit of what the index holds (what ``git commit`` would record), with ``parent`` as its
    parent: written to the object store on no branch (git's gc removes it). The index is the one
    git names (``GIT_INDEX_FILE`` during a commit's hooks). Untracked files and unstaged edits are
    not part of it."""
    tree = run_git(repo, "write-tree").decode().strip()
    base = run_git(repo, "rev-parse", "--verify", "--end-of-options", f"{parent}^{{commit}}")
    return (
        run_git(
            repo,
            "-c",
            "user.name=registry-bot",
            "-c",
            "user.email=registry-bot@localhost",
            "commit-tree",
            tree,
            "-p",
            base.decode().strip(),
            "-m",
            "the staged change (registry-bot check --staged)",
        )
        .decode()
        .strip()
    )
