"""The change of a pull request from its two trees, for pull requests GitHub cannot list in full.

GitHub's pull request files listing stops at 3,000 files: padding a pull request past that used to hide
the rest of the change. The base and head trees (one recursive listing each, already read for the
review) always hold the whole change under the folders the bot reviews: a path on one side only is
added or deleted, a path on both sides whose blob differs is modified, and an added file with exactly
the content of a deleted one is a rename. No diff hunks come with it, so every finding goes to the
check run and the review body rather than onto a line.
"""

from __future__ import annotations

from bot.app.lazy_snapshot import TreeSnapshot
from bot.changes import ChangeSet, FileChange, Status


def tree_changes(base: TreeSnapshot, head: TreeSnapshot) -> ChangeSet:
    """Every file that differs between ``base`` and ``head`` (the folders both were read for)."""
    old, new = set(base.files()), set(head.files())
    deleted = {base.blob_id(p): p for p in sorted(old - new)}
    files: list[FileChange] = []
    for path in sorted(new):
        if path not in old:
            source = deleted.pop(head.blob_id(path), None)
            status = Status.ADDED if source is None else Status.RENAMED
            files.append(FileChange(path, status, old_path=source, patch_missing=True))
        elif base.blob_id(path) != head.blob_id(path):
            files.append(FileChange(path, Status.MODIFIED, patch_missing=True))
    files += [FileChange(path, Status.DELETED) for path in sorted(deleted.values())]
    return ChangeSet(files=tuple(files))
