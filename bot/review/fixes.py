"""Applying the fixes findings carry: whole-line edits to text, as a unified diff or written
back."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable, Iterable

from bot.core.findings import Edit, Finding
from bot.core.snapshot import Snapshot, check_relative, paths_under


class FixConflict(ValueError):
    """Two fixes edit overlapping lines of one file."""


def edits_by_path(findings: Iterable[Finding]) -> tuple[dict[str, list[Edit]], list[Finding]]:
    """Every edit of every finding's fix, per file, and the findings they fix. Of two fixes editing
    the same lines the first (in report order) wins; the other finding is fixed by the next pass."""
    out: dict[str, list[Edit]] = defaultdict(list)
    used: list[Finding] = []
    for f in findings:
        if f.fix is None:
            continue
        mine = list(f.fix.edits)
        if any(_overlaps(e, o) for e in mine for o in out.get(e.path, ())):
            continue
        used.append(f)
        for e in mine:
            out[e.path].append(e)
    return {p: sorted(es, key=lambda e: e.start_line) for p, es in out.items()}, used


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.path != b.path:
        return False
    if a.end_line < a.start_line or b.end_line < b.start_line:  # file creations
        return True
    return a.start_line <= b.end_line and b.start_line <= a.end_line


def apply_edits(text: str | None, edits: Iterable[Edit]) -> str:
    """``text`` (``None`` for a file that does not exist) with the edits applied, last line
    first."""
    lines = (text or "").splitlines(keepends=True)
    for e in sorted(edits, key=lambda e: e.start_line, reverse=True):
        if e.start_line < 1 or e.end_line > len(lines) or e.end_line < e.start_line - 1:
            raise FixConflict(f"{e.path}: lines {e.start_line}-{e.end_line} are not in the file")
        lines[e.start_line - 1 : e.end_line] = e.text.splitlines(keepends=True)
    return "".join(lines)


def unified_diff(path: str, old: str | None, new: str) -> str:
    a = (old or "").splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    fromfile = f"a/{path}" if old is not None else "/dev/null"
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(a, b, fromfile, f"b/{path}")
    )


class Overlay:
    """A snapshot with some files replaced or added in memory: the tree as the fixes would leave
    it."""

    def __init__(self, under: Snapshot, changed: dict[str, bytes]) -> None:
        self.under = under
        self.changed = changed
        self.label = getattr(under, "label", "overlay")

    def files(self, prefix: str = "") -> list[str]:
        return paths_under(sorted({*self.under.files(), *self.changed}), prefix)

    def size(self, path: str) -> int | None:
        data = self.changed.get(check_relative(path))
        return len(data) if data is not None else self.under.size(path)

    def read(self, path: str) -> bytes | None:
        data = self.changed.get(check_relative(path))
        return data if data is not None else self.under.read(path)


def fix_until_done(
    under: Snapshot, findings_of: Callable[[Snapshot], Iterable[Finding]], max_passes: int = 10
) -> tuple[dict[str, bytes], list[Finding]]:
    """Apply every available fix, review again, and repeat until no fix is left (or ``max_passes``).

    Returns the new contents of the changed files and the findings that were fixed.
    """
    changed: dict[str, bytes] = {}
    fixed: list[Finding] = []
    for _ in range(max_passes):
        tree = Overlay(under, changed)
        edits, used = edits_by_path(findings_of(tree))
        progress = False
        for path, file_edits in edits.items():
            old = tree.read(path)
            new = apply_edits(None if old is None else old.decode("utf-8"), file_edits).encode(
                "utf-8"
            )
            if new != old:
                changed[path] = new
                progress = True
        if not progress:
            break
        fixed += used
    return changed, fixed
