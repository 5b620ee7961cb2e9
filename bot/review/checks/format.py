"""Format rules: the registry's JSON files are laid out as OpenLineage's prettier lays them out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from bot.core.findings import Edit, Finding, Fix, Severity
from bot.core.jsonformat import FormatError, format_json
from bot.model.registry import Entry
from bot.review.input import ReviewInput

RULES = {
    "format/json": "registry.json, facet schemas and examples are laid out as prettier lays out "
    "JSON: "
    '`formatting.indent` spaces (2), `"key": value` and `{ "a": 1 }` / `[1, 2]` spacing, keys in '
    "their "
    "written order, no trailing spaces, one final newline. Line breaks are the author's (prettier "
    "keeps an object's), so prettier's own output always passes. Reported once per file with the "
    "exact fix; `formatting.enabled: false` turns it off. Files over 1 MB are not judged.",
}


# layout is judged at about 2 MB/s: larger files (none in a registry) are left alone
MAX_BYTES = 1_000_000


def check(review: ReviewInput) -> Iterator[Finding]:
    policy = review.config.formatting
    if not policy.enabled:
        return
    severity = Severity(policy.severity)
    for entry in review.reviewed_entries():
        for path in registry_json_files(entry):
            loaded = review.head_registry.files.json(path)
            if loaded.doc is None or len(loaded.doc.text) > MAX_BYTES:
                continue  # unreadable files are the other rules' findings
            # the same file on the other side of the change: laid out once per review
            key = ("format", path, loaded.doc.text, policy.indent, severity, entry.name)
            if key in review.memo:
                finding = cast(Finding | None, review.memo[key])
            else:
                finding = review.memo[key] = format_finding(
                    path, loaded.doc.text, policy.indent, severity, entry.name
                )
            if finding is not None:
                yield finding


def registry_json_files(entry: Entry) -> list[str]:
    """An entry's registry.json, facet schemas and examples (positive and negative)."""
    snapshot = entry.registry.snapshot
    examples = [p for p in snapshot.files(entry.examples_dir) if p.endswith(".json")]
    files = [entry.registry_json, *entry.facet_paths(), *examples]
    return [p for p in dict.fromkeys(files) if snapshot.size(p) is not None]


def format_finding(
    path: str, text: str, indent: int, severity: Severity, entry: str | None
) -> Finding | None:
    """One finding for a file not in the layout, with the edits that lay it out; ``None`` when it
    is."""
    try:
        formatted = format_json(text, indent)
    except FormatError:
        return None
    if formatted == text:
        return None
    edits = line_edits(path, text, formatted)
    changed = sum(e.end_line - e.start_line + 1 for e in edits)
    return Finding(
        rule="format/json",
        severity=severity,
        path=path,
        line=edits[0].start_line,
        column=1,
        message=f"not in prettier's JSON layout ({indent}-space indent): {changed} line(s) to "
        f"change",
        hint="Run `registry-bot fix` (or prettier) on the file, or commit the suggestion.",
        entry=entry,
        subject="layout",
        fix=Fix(f"lay out {path} as prettier does", edits),
    )


def line_edits(path: str, old: str, new: str) -> tuple[Edit, ...]:
    """The whole-line edit turning ``old`` into ``new``: from the first line that differs to the
    last."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    # linear: no line alignment (difflib's is O(n·m) on repeated lines, minutes on a 1 MB file)
    prefix, suffix = common_ends(a, b)
    i1, i2, j1, j2 = prefix, len(a) - suffix, prefix, len(b) - suffix
    if i1 == i2 and j1 == j2:
        return ()
    # One edit from the first changed line to the last (the lines between are equal on both sides):
    # a single suggestion on GitHub, and the unified diff of `registry-bot fix` still shows each
    # hunk.
    if i1 == i2:
        # a pure insertion: replace the line before it (or after it) together with it
        if i1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        else:
            i2, j2 = 1, j2 + 1
    return (Edit(path, i1 + 1, i2, "".join(b[j1:j2])),)


def common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start, then at their end (not overlapping):
    each line compared once."""
    shortest = min(len(a), len(b))
    prefix = next((k for k in range(shortest) if a[k] != b[k]), shortest)
    rest = shortest - prefix
    suffix = next((k for k in range(rest) if a[-1 - k] != b[-1 - k]), rest)
    return prefix, suffix
