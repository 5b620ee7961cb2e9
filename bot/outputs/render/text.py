"""Plain text: findings grouped per entry, one ``file:line:col rule message`` line each.

Every quoted text goes through ``visible``: a newline, terminal escape, bidi control or zero-width
character in a file name or message shows as ``\\n``, ``\\x1b``, ``\\u202e``, so one finding is one
line. Sections (the regression table) are written in the bot's Markdown; ``plain`` turns them into
text: no emphasis, no backslash escapes, tables as aligned columns.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import groupby

from bot.core.findings import Finding, Report, Severity
from bot.core.inert import markdown_line, visible

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTICE: "\x1b[36m"}


_CELL_SPLIT = re.compile(r"(?<!\\)\|")
# CommonMark's backslash escapes: any ASCII punctuation
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def _inline(text: str) -> str:
    """One Markdown line of the bot's own as text: ``**bold**``, code spans and ``<br>`` undone,
    escapes removed."""
    text = text.replace("<br>", "; ").replace("**", "")
    text = re.sub(r"(?<!\\)`", "", text)
    return _ESCAPED.sub(r"\1", text)


def _table(rows: list[str]) -> list[str]:
    cells = [
        [_inline(c.strip()) for c in _CELL_SPLIT.split(row.strip().strip("|"))]
        for row in rows
        if not _SEPARATOR.match(row.strip())
    ]
    widths = [
        max(len(r[i]) for r in cells if i < len(r)) for i in range(max(len(r) for r in cells))
    ]
    return [
        "  ".join(c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)).rstrip()
        for r in cells
    ]


def plain(markdown: str) -> list[str]:
    """The bot's Markdown (paragraphs and pipe tables) as terminal lines."""
    lines: list[str] = []
    table: list[str] = []
    for line in [*markdown.rstrip().split("\n"), ""]:
        if line.lstrip().startswith("|"):
            table.append(line)
            continue
        if table:
            lines += _table(table)
            table = []
        lines.append(_inline(line))
    return lines[:-1]


def location(f: Finding) -> str:
    where = visible(f.path) if f.path else "<repository>"
    if f.line:
        where += f":{f.line}"
        if f.column:
            where += f":{f.column}"
    return where


def _lines(findings: tuple[Finding, ...], color: bool, hints: bool = True) -> list[str]:
    lines: list[str] = []
    for entry, group in groupby(findings, key=lambda f: f.entry or ""):
        lines.append(f"== {visible(entry) if entry else '(repository)'}")
        for f in group:
            sev = f.severity.value
            if color:
                sev = f"{_COLORS[f.severity]}{sev}\x1b[0m"
            lines.append(
                f"{location(f)}: {sev} {visible(f.rule)} {visible(f.message)}" + waived_note(f)
            )
            if f.hint and hints:
                lines.append(f"    hint: {visible(f.hint)}")
            if f.witness is not None and hints:
                lines.append(f"    witness ({visible(f.witness.caption())}):")
                lines += [f"      {line}" for line in f.witness.pretty().splitlines()]
    return lines


def waived_note(f: Finding) -> str:
    """`` (waived until DATE by @x: reason)`` for a waived finding, else nothing."""
    w = f.waived
    return "" if w is None else f" ({w.label()} by {visible(w.granted_by)}: {visible(w.reason)})"


def rule_counts(findings: tuple[Finding, ...], most: int = 5) -> str:
    """``3 facets/x, 2 entry/y and 4 more``: how many findings of each rule, most frequent first."""
    counts = Counter(f.rule for f in findings)
    shown = ", ".join(f"{n} {visible(rule)}" for rule, n in counts.most_common(most))
    return shown + (f" and {len(counts) - most} more rule(s)" if len(counts) > most else "")


def render_text(report: Report, color: bool = False) -> str:
    lines = _lines(report.current(), color)
    pre_existing = report.pre_existing()
    if pre_existing and report.strict:  # they fail the review: each one is shown
        lines.append(
            f"-- pre-existing: {len(pre_existing)} finding(s) already at the base (failing with "
            f"--strict)"
        )
        lines += _lines(pre_existing, color, hints=False)
    elif pre_existing:  # not this change's doing: counted, not listed
        lines.append(
            f"-- pre-existing: {len(pre_existing)} finding(s) already at the base, not failing "
            f"this change ({rule_counts(pre_existing)}; --strict lists them)"
        )
    if report.fixed:
        lines.append(
            f"-- fixed by this change: {len(report.fixed)} finding(s) of the base are gone"
        )
        lines += _lines(report.fixed, False, hints=False)
    for section in report.sections:
        lines.append(f"== {visible(section.title)}")
        lines += [markdown_line(line) for line in plain(section.markdown)]
    s = report.summary()
    needed = report.required_approvals()
    for entry, owners in needed.items():
        lines.append(
            f"approval needed for {visible(entry)}: {', '.join(visible(o) for o in owners)}"
        )
    lines.append(
        f"{s['verdict'].upper()}: {s['errors']} error(s), {s['warnings']} warning(s), "
        f"{s['notices']} notice(s)"
        + "".join(
            f", {s[k]} {k.replace('_', '-')}" for k in ("pre_existing", "fixed", "waived") if s[k]
        )
        + f" in {len(report.entries)} entr{'y' if len(report.entries) == 1 else 'ies'}"
        + (f" ({visible(report.neutral_reason)})" if report.neutral_reason else "")
        + (f"; {s['fixable']} fixable (registry-bot fix)" if s["fixable"] else "")
    )
    return "\n".join(lines) + "\n"
