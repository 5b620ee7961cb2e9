"""The edge of the review: changed paths it could not read as files (with ``--all``, any such path
of the tree), and a change it could not list whole.

A review judges only what it read. A symlink, a submodule or a blob over the size limit under the
folders the bot reviews is a changed path no check can look into, and a change GitHub could not list
whole (past its 3,000-file listing, with a tree too large to list) may hold anything: both are
errors, so that nothing unseen passes. The owners check still asks the entry's owners for every such
path, as for a readable one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from bot.core.findings import Finding, Severity
from bot.core.incomplete import NOT_LISTED, UNREAD
from bot.review.input import ReviewInput

RULES = {
    UNREAD: "A changed path under the folders the bot reviews that it cannot read as a file: a "
    "symlink (the bot never follows one), a submodule (a commit of another repository) or a blob "
    "over the 10 MB limit; with --all, any such path of the tree (a symlink to a folder too). An "
    "error: the review cannot judge what it did not read. Replace it with a regular file, or have "
    "a maintainer review it.",
    NOT_LISTED: "The bot could not list the whole change (GitHub's pull request listing stops at "
    "3,000 files and the trees were too large to list as well): an error, since the unlisted part "
    "may hold anything. Split the pull request.",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    changes = review.changes
    if changes is None:
        yield from whole_tree(review)
        return
    if changes.truncated:
        why = changes.cut or "GitHub's listing of the pull request's files was cut"
        yield Finding(
            NOT_LISTED,
            Severity.ERROR,
            "",
            f"The bot could not list the whole change: {why}. Nothing unlisted was reviewed.",
            subject="change",
        )
    watched = tuple(folder.strip("/") for folder in review.config.watched())
    for change in changes.unread():
        if any(_under(path, watched) for path in (change.path, change.old_path) if path):
            yield _unread(change.path, change.unread)


def whole_tree(review: ReviewInput) -> Iterator[Finding]:
    """A whole-tree review (``--all``) has no change: the paths of the tree under the folders the
    bot reviews that it cannot read as files (a symlink, to a folder too, a submodule) are the
    same errors as in a change."""
    if review.changes is not None:
        return
    watched = tuple(folder.strip("/") for folder in review.config.watched())
    skipped: Mapping[str, str] = getattr(review.head, "skipped", {})
    for path in sorted(skipped):
        if _under(path, watched):
            yield _unread(path, skipped[path])


def _unread(path: str, why: str) -> Finding:
    return Finding(
        UNREAD,
        Severity.ERROR,
        path,
        f"{path} is {why}: the bot cannot read it as a file, so nothing about it was reviewed.",
        subject=path,
    )


def _under(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)
