"""The change of a pull request from its two whole trees, for pull requests GitHub cannot list in
full.

GitHub's pull request files listing stops at 3,000 files: padding a pull request past that used to
hide the rest of the change. The base and head trees (one recursive listing each of the *whole*
tree, not only the folders the bot reviews, so a workflow or a root file hidden behind the padding
is part of the change) hold every changed path: a path on one side only is added or deleted, a path
on both sides whose object differs is modified, and an added file with exactly the content of a
deleted one is a rename. Symlinks, submodules and blobs over the size limit are compared by their
object ids and stay in the change marked ``unread``. A tree GitHub could not list whole makes the
change ``truncated`` (holding only the paths both listings show and differ on, never a phantom
deletion past the cut): the review then neither passes nor approves. No diff hunks come with it, so
every finding goes to the check run and the review body.
"""

from __future__ import annotations

from bot.core.changes import ChangeSet, FileChange, Status
from bot.github.lazy_snapshot import TreeSnapshot


def tree_changes(base: TreeSnapshot, head: TreeSnapshot) -> ChangeSet:
    """Every path that differs between the whole trees ``base`` and ``head``, unreadable ones
    marked."""
    old, new = base.object_ids(), head.object_ids()
    cut = "; ".join(c for c in (base.cut, head.cut) if c)
    # a path one cut listing lacks may lie past its cut: only a path both list and differ on is
    # known
    if cut:
        known = set(old) & set(new)
        old, new = {p: old[p] for p in known}, {p: new[p] for p in known}
    readable = set(base.files()) | set(head.files())
    deleted = {old[p]: p for p in sorted(set(old) - set(new)) if p in readable}
    deleted_other = [p for p in sorted(set(old) - set(new)) if p not in readable]
    files: list[FileChange] = []
    for path in sorted(new):
        if path not in old:
            source = deleted.pop(new[path], None) if path in readable else None
            status = Status.ADDED if source is None else Status.RENAMED
            files.append(FileChange(path, status, old_path=source, patch_missing=True))
        elif old[path] != new[path]:
            files.append(FileChange(path, Status.MODIFIED, patch_missing=True))
    files += [
        FileChange(path, Status.DELETED) for path in sorted([*deleted.values(), *deleted_other])
    ]
    changes = ChangeSet(files=tuple(files), truncated=bool(cut), cut=cut)
    return changes.with_unread(base.skipped, head.skipped)
