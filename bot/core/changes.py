"""What a pull request changes: files added, modified, renamed or deleted, and their diff lines."""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

from bot.core.snapshot import SUBMODULE, SYMLINK, GitError, run_git


class Status(enum.Enum):
    ADDED = "added"
    MODIFIED = "modified"
    RENAMED = "renamed"
    DELETED = "deleted"


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def diff_lines(patch: str | None) -> frozenset[int]:
    """Head-side line numbers a review comment may sit on (added and context lines of the hunks).

    Accepts a unified diff of one file, as GitHub's pull request files API returns in ``patch``.
    """
    if not patch:
        return frozenset()
    lines: set[int] = set()
    current = 0
    for raw in patch.splitlines():
        header = _HUNK.match(raw)
        if header:
            current = int(header.group(1))
            continue
        if not current or raw.startswith("\\"):
            continue
        if raw.startswith("-"):
            continue
        if raw.startswith(("+", " ")) or raw == "":
            lines.add(current)
            current += 1
    return frozenset(lines)


def in_one_hunk(patch: str | None, start: int, end: int) -> bool:
    """Whether head-side lines ``start``..``end`` (``start`` < ``end``) all lie in one hunk of
    ``patch``."""
    if not patch or start >= end:
        return False
    for hunk in re.split(r"\n(?=@@ )", patch):
        lines = diff_lines(hunk)
        if all(n in lines for n in range(start, end + 1)):
            return True
    return False


@dataclass(frozen=True, slots=True)
class FileChange:
    """One changed file. ``lines`` are the head-side lines inside the diff hunks."""

    path: str
    status: Status
    # the path a rename moved the file from (a copy's source is no old path: it stays as it was)
    old_path: str | None = None
    lines: frozenset[int] = field(default_factory=frozenset)
    patch_missing: bool = False  # GitHub omits the patch of very large diffs
    # the unified diff of this file, from its first hunk, as GitHub gives it
    patch: str | None = None
    # why the review could not read this path as a file (a symlink, a submodule, too large)
    unread: str = ""


@dataclass(frozen=True)
class ChangeSet:
    """All paths a change touches, and where the review's view of them ends.

    ``truncated``: the change may hold paths not listed here (GitHub's listing stopped at 3,000
    files and the trees could not be listed whole either). ``FileChange.unread``: a listed path the
    review could not read as a file. Either way the review did not see the whole change
    (``complete`` is false), and the App neither passes nor approves it.
    """

    files: tuple[FileChange, ...] = ()
    truncated: bool = False
    cut: str = ""  # why the change could not be listed whole, when ``truncated``

    @property
    def complete(self) -> bool:
        """Whether every changed path of the change is listed here and was read as a file."""
        return not self.truncated and not any(f.unread for f in self.files)

    def unread(self) -> list[FileChange]:
        """The listed paths the review could not read as files."""
        return [f for f in self.files if f.unread]

    def with_unread(self, base: Mapping[str, str], head: Mapping[str, str]) -> ChangeSet:
        """This change set with ``unread`` set on each file that one side could not read as a file
        (``base``/``head``: path -> why), the head side's reason first."""
        if not base and not head:
            return self
        files = tuple(
            replace(
                f,
                unread=(f.status is not Status.DELETED and head.get(f.path))
                or base.get(f.old_path or f.path)
                or f.unread,
            )
            for f in self.files
        )
        return replace(self, files=files)

    def paths(self) -> set[str]:
        """Every path touched on either side (old paths of renames included)."""
        out = {f.path for f in self.files}
        out.update(f.old_path for f in self.files if f.old_path)
        return out

    def gone(self) -> set[str]:
        """The paths the head no longer has: deleted files and the old paths of renames."""
        out = {f.path for f in self.files if f.status is Status.DELETED}
        out.update(f.old_path for f in self.files if f.status is Status.RENAMED and f.old_path)
        return out - {f.path for f in self.files if f.status is not Status.DELETED}

    def get(self, path: str) -> FileChange | None:
        for f in self.files:
            if f.path == path:
                return f
        return None

    def under(self, folder: str) -> Iterator[FileChange]:
        prefix = folder.strip("/") + "/"
        for f in self.files:
            if f.path.startswith(prefix) or (f.old_path or "").startswith(prefix):
                yield f

    def touches(self, folder: str) -> bool:
        return next(self.under(folder), None) is not None

    def commentable(self, path: str, line: int | None) -> bool:
        change = self.get(path)
        return change is not None and line is not None and line in change.lines

    def commentable_range(self, path: str, start: int, end: int) -> bool:
        """Whether a multi-line comment may span ``start``..``end``: lines of one hunk of the
        diff."""
        change = self.get(path)
        return change is not None and in_one_hunk(change.patch, start, end)

    @classmethod
    def from_git(cls, repo: str | os.PathLike[str], base: str, head: str) -> ChangeSet:
        """The change from the merge base of ``base`` and ``head`` to ``head`` (what a PR shows).

        Rename detection and patches read blobs. When git cannot (a partial clone whose promisor
        remote is gone), the change is listed from the trees alone: no renames, no patches
        (``patch_missing``), and the checks report each file they cannot read.
        """
        merge_base = run_git(repo, "merge-base", base, head).decode().strip()
        try:
            raw = run_git(repo, "diff", "--raw", "-M", "-z", "--no-ext-diff", merge_base, head)
            patches: dict[str, str] | None = split_patches(
                run_git(
                    repo,
                    "-c",
                    "core.quotepath=off",
                    "diff",
                    "-M",
                    "-U3",
                    "--no-color",
                    "--no-ext-diff",
                    merge_base,
                    head,
                )
            )
        except GitError:
            raw = run_git(
                repo, "diff", "--raw", "--no-renames", "-z", "--no-ext-diff", merge_base, head
            )
            patches = None
        records = _parse_raw(raw)
        files = _file_changes(records, patches or {})
        if patches is None:
            files = (replace(f, patch_missing=True) for f in files)
        changes = cls(files=tuple(files))
        return changes.with_unread(*_not_files(records))


def split_patches(diff: bytes) -> dict[str, str]:
    """Per-file patches of a multi-file ``git diff``, each from its first hunk header, as GitHub
    gives them.

    Keyed by the head-side path (the old path for deleted files). Binary files have no patch.
    """
    out: dict[str, str] = {}
    for chunk in diff.decode("utf-8", "replace").split("\ndiff --git "):
        lines = chunk.splitlines()
        old = new = None
        for i, line in enumerate(lines):
            if line.startswith("--- "):
                old = line[6:].rstrip("\t") if line.startswith("--- a/") else None
            elif line.startswith("+++ "):
                new = line[6:].rstrip("\t") if line.startswith("+++ b/") else None
            elif line.startswith("@@"):
                path = new or old
                if path:
                    out[path] = "\n".join(lines[i:])
                break
    return out


_NOT_FILES = {"120000": SYMLINK, "160000": SUBMODULE}


@dataclass(frozen=True)
class _Raw:
    """One record of ``git diff --raw -z``: the modes on each side, the status letter (with its
    score for a rename) and the paths (the old one only for a rename or copy)."""

    old_mode: str
    new_mode: str
    code: str
    path: str
    old_path: str | None = None


def _parse_raw(raw: bytes) -> list[_Raw]:
    """``git diff --raw -z``: ``:<old mode> <new mode> <old sha> <new sha> <status>`` then one
    path, or two for a rename or copy."""
    fields = raw.decode("utf-8", "surrogateescape").split("\x00")
    out: list[_Raw] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        meta = fields[i][1:].split()
        if len(meta) < 5:
            break
        code = meta[4]
        if code.startswith(("R", "C")):
            out.append(_Raw(meta[0], meta[1], code, fields[i + 2], fields[i + 1]))
            i += 3
        else:
            out.append(_Raw(meta[0], meta[1], code, fields[i + 1]))
            i += 2
    return out


def _not_files(records: list[_Raw]) -> tuple[dict[str, str], dict[str, str]]:
    """The changed paths that are symlinks or submodules on the base side and on the head side: path
    -> why."""
    base: dict[str, str] = {}
    head: dict[str, str] = {}
    for record in records:
        if record.old_mode in _NOT_FILES:
            base[record.old_path or record.path] = _NOT_FILES[record.old_mode]
        if record.new_mode in _NOT_FILES:
            head[record.path] = _NOT_FILES[record.new_mode]
    return base, head


def _file_changes(records: list[_Raw], patches: dict[str, str]) -> Iterator[FileChange]:
    for record in records:
        patch = patches.get(record.path)
        if record.code[0] == "R" and record.old_path is not None:
            yield FileChange(
                record.path,
                Status.RENAMED,
                old_path=record.old_path,
                lines=diff_lines(patch),
                patch=patch,
            )
            continue
        # a copy (``C``) is an addition: its source stays as it was, no old path of the change
        kind = {"A": Status.ADDED, "C": Status.ADDED, "D": Status.DELETED}.get(
            record.code[0], Status.MODIFIED
        )
        yield FileChange(record.path, kind, lines=diff_lines(patch), patch=patch)
