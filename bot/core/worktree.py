"""A working tree judged as a change from a git revision: the change set git and the tree together
give.

Used where the tree about to be committed is reviewed (the pre-commit hook's ``check --worktree``)
and where fixes are applied in memory (``fix --base``): tracked files git sees changed, untracked
files it does not ignore, and the files an in-memory overlay adds or changes.
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
