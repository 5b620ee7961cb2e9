"""Markdown for GitHub: the check run summary and the summary comment.

Everything quoted from the reviewed repository is inert (docs/output-safety.md): prose goes through
``escape`` (backslash escapes for every character that can start Markdown, HTML, an entity or an
autolink, a zero-width joiner after ``@`` and ``#`` so GitHub links no mention, email or issue),
names through ``code`` (a code span with a fence
longer than any backtick run inside, ``|`` escaped for table cells), and both first through
``bot.render.inert.visible`` (newlines, bidi, zero-width and control characters shown as escapes).
Output never exceeds GitHub's 65,535-character limit: long messages are shortened so that no finding
hides the others, and when even short rows do not fit, the list ends with how many were left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from itertools import groupby

from bot.findings import Finding, Report, Severity, Verdict
from bot.incomplete import unfinished_reason
from bot.render.inert import ZWJ, plain, visible

GITHUB_TEXT_LIMIT = 65_535  # bot.app.github_limits.OUTPUT_CHARS (a test keeps them equal)
NAME_LIMIT = 200  # characters of a quoted name (file, entry, rule, owner) before it is shortened
MESSAGE_LIMIT = 1_000  # characters of a message or hint in a list, at most
MIN_MESSAGE = 80  # messages are shortened down to this before findings are left out of a list
MAX_ENTRIES = 100  # entries named in "Entries reviewed"; the rest are counted
MAX_OWNERS = 20  # owners named per entry under "Approvals needed"
_ICON = {Severity.ERROR: "❌ error", Severity.WARNING: "⚠️ warning", Severity.NOTICE: "ℹ️ notice"}
_VERDICT = {Verdict.SUCCESS: "✅ passed", Verdict.FAILURE: "❌ failed", Verdict.NEUTRAL: "➖ neutral"}
# Escaped everywhere: what opens or closes inline Markdown, HTML, entities, tables and GitHub's math.
_INLINE = {ord(c): "\\" + c for c in "\\`*[]<>&|~$"} | {ord("@"): "\\@" + ZWJ, ord("#"): "\\#" + ZWJ}
# The "." of www. and the ":" of scheme:// start autolinks; "_" emphasises except between letters or digits.
_AUTOLINK = re.compile(r"(?i)(?<=www)\.|:(?=//)|(?<![^\W_])_|_(?![^\W_])")
_LINE_START = re.compile(r"^( *)(?:([-+=])|(\d+)([.)]))")  # a list item, thematic break or setext underline
_BACKTICKS = re.compile("`+")


def escape(text: str, limit: int | None = None) -> str:
    """Untrusted text as inert Markdown prose, also inside a table cell; shortened past ``limit``.

    Backslash escapes stop emphasis, links, images, HTML, entities, math, autolinks and a list or
    heading when the text starts a line (``\\&#64;`` stays literal, where ``&#64;`` would be decoded
    to ``@`` and ping); ``\\|`` is the table cell escape GFM defines. The zero-width joiner after ``@``
    and ``#`` stops what GitHub links after parsing: mentions, team mentions, emails, issue references.
    """
    text = plain(text, limit).lstrip(" \t")  # four leading spaces would make an indented code block
    text = _AUTOLINK.sub(r"\\\g<0>", text.translate(_INLINE))
    return _LINE_START.sub(_escape_line_start, text) if text[:1] in " -+=0123456789" else text


def _escape_line_start(match: re.Match[str]) -> str:
    spaces, mark, digits, close = match.groups()
    return spaces + ("\\" + mark if mark else f"{digits}\\{close}")


def code(text: str, *, table: bool = True, limit: int | None = NAME_LIMIT) -> str:
    """Untrusted text as an inline code span: GitHub links nothing inside one and decodes no entity.

    ``table`` escapes ``|`` as GFM requires inside a table cell (the default, as a forgotten flag must
    not break a table); outside a table the escape would show, so prose passes ``table=False``.
    """
    text = plain(text, limit)
    if not text:
        return "``"
    if table:
        text = text.replace("|", "\\|")
    fence = backtick_fence(text)
    if text.strip(" ") and (text[0] in "` " or text[-1] in "` "):
        text = f" {text} "  # a parser strips one space each side, so an edge backtick or space survives
    return f"{fence}{text}{fence}"


def backtick_fence(text: str, shortest: int = 1) -> str:
    """A run of backticks longer than any inside ``text`` (and at least ``shortest``): a code span's or
    code block's fence that ``text`` cannot close."""
    return "`" * max(shortest, 1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))


class Row:
    """A list line whose quoted texts can be shortened: ``render(cap)`` builds it with each cut at ``cap``."""

    __slots__ = ("_full", "_need", "_render")

    def __init__(self, render: Callable[[int], str], *texts: str) -> None:
        self._render = render
        self._need = max((len(visible(t)) for t in texts), default=0)
        self._full = render(MESSAGE_LIMIT)

    def at(self, cap: int) -> str:
        return self._full if self._need <= cap else self._render(cap)


def fit(lines: Sequence[str | Row], budget: int) -> tuple[list[str], int]:
    """The lines within ``budget`` characters (newlines counted) and how many rows were left out.

    Every row is kept with its texts cut at the largest cap from ``MESSAGE_LIMIT`` down to
    ``MIN_MESSAGE`` that fits; when even that does not, rows are kept in order while they fit, and
    the lines that only led to rows left out (headings, table headers) are dropped.
    """
    def size(cap: int) -> int:
        return sum(len(x if isinstance(x, str) else x.at(cap)) + 1 for x in lines)

    low, high = MIN_MESSAGE, MESSAGE_LIMIT
    if size(high) <= budget:
        cap = high
    elif size(low) > budget:
        cap = low
    else:  # size(low) fits, size(high) does not
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if size(middle) <= budget else (low, middle)
        cap = low
    kept: list[str] = []
    used = 0
    for i, x in enumerate(lines):
        line = x if isinstance(x, str) else x.at(cap)
        if used + len(line) + 1 > budget:
            left_out = sum(1 for y in lines[i:] if isinstance(y, Row))
            if left_out:
                while kept and isinstance(lines[len(kept) - 1], str):
                    kept.pop()  # a heading or table header of rows left out
                return kept, left_out
            break
        kept.append(line)
        used += len(line) + 1
    return kept, 0


def cut_lines(text: str, limit: int, note: str) -> str:
    """``text`` cut at a line end so that it and ``note`` fit ``limit``: never inside a code span or escape."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, max(limit - len(note) - 1, 0))
    return text[:max(end, 0)] + "\n" + note


def headline(report: Report) -> str:
    """The verdict in one line; for a review that could not finish, its reason comes first."""
    s = report.summary()
    reason = unfinished_reason(report)
    if reason is not None:
        return f"OpenLineage registry ❌ could not finish: {plain(reason, 200)}"
    judged = "".join(f", {s[k]} {k.replace('_', '-')}" for k in ("pre_existing", "fixed") if s[k])
    return (f"OpenLineage registry {_VERDICT[report.verdict]}: {s['errors']} error(s), "
            f"{s['warnings']} warning(s), {s['notices']} notice(s){judged}")


def _finding_row(f: Finding, cap: int) -> str:
    where = code(f.path or "(repository)")
    if f.line:
        where += f" line {f.line}"
    message = escape(f.message, cap)
    if f.hint:
        message += f"<br><sub>{escape(f.hint, cap)}</sub>"
    return f"| {_ICON[f.severity]} | {code(f.rule)} | {where} | {message} |"


def _names(names: Sequence[str], most: int) -> str:
    shown = ", ".join(code(n, table=False) for n in names[:most])
    return shown + (f" and {len(names) - most:,} more" if len(names) > most else "")


def _tables(title: str, findings: tuple[Finding, ...]) -> list[str | Row]:
    """One table per entry under a heading; nothing when there are no findings."""
    if not findings:
        return []
    body: list[str | Row] = [f"### {title}"]
    for entry, group in groupby(findings, key=lambda f: f.entry or ""):
        items = list(group)
        body.append("")
        body.append(f"#### {code(entry, table=False) if entry else 'Repository'} ({len(items)})")
        body.append("")
        body.append("| severity | rule | where | message |")
        body.append("| --- | --- | --- | --- |")
        body += [Row(partial(_finding_row, f), f.message, f.hint) for f in items]
    body.append("")
    return body


def _folded(body: list[str | Row], summary: str, folded: bool = True) -> list[str | Row]:
    """``body`` inside a ``<details>`` block that GitHub shows closed, its summary line saying what it holds."""
    if not body or not folded:
        return body
    return [f"<details><summary>{summary}</summary>", "", *body, "</details>", ""]


def _witnesses(findings: tuple[Finding, ...]) -> list[str | Row]:
    """Each data-level verdict's witness in a code block (ASCII JSON under a fence it cannot close)."""
    out: list[str | Row] = []
    for f in findings:
        if f.witness is None:
            continue
        block = f.witness.pretty()
        fence = backtick_fence(block, 3)
        out += ["", f"{code(f.rule, table=False)} on {code(f.path, table=False)}: "
                f"{escape(f.witness.caption(), MESSAGE_LIMIT)}", "", f"{fence}json", *block.splitlines(), fence]
    return ["### Witnesses", *out, ""] if out else []


def render_markdown(report: Report, limit: int = GITHUB_TEXT_LIMIT, title: bool = True) -> str:
    head: list[str] = []
    if title:
        head.append(f"## {headline(report)}")
        head.append("")
    if report.neutral_reason:
        head += [f"> {escape(report.neutral_reason, MESSAGE_LIMIT)}", ""]
    if report.entries:
        head.append("Entries reviewed: " + _names(report.entries, MAX_ENTRIES))
        head.append("")
    approvals = report.required_approvals()
    if approvals:
        head.append("### Approvals needed")
        head += [f"- {code(entry, table=False)}: one of {_names(owners, MAX_OWNERS)}"
                 for entry, owners in list(approvals.items())[:MAX_ENTRIES]]
        if len(approvals) > MAX_ENTRIES:
            head.append(f"- and {len(approvals) - MAX_ENTRIES:,} more entries")
        head.append("")

    body: list[str | Row] = []
    body += _tables("Findings", report.current())
    body += _witnesses(report.current())
    body += _folded(_tables("Pre-existing (already at the base, not failing this change" +
                            (" except with --strict)" if not report.strict else "; failing with --strict)"),
                            report.pre_existing()), f"{len(report.pre_existing())} pre-existing finding(s)",
                    folded=not report.strict)
    body += _folded(_tables("Fixed by this change", report.fixed), f"{len(report.fixed)} finding(s) fixed")
    sections: list[str] = []
    for section in report.sections:
        sections += [f"### {escape(section.title, NAME_LIMIT)}", "", section.markdown.rstrip(), ""]

    # Sections come after the findings but must survive a cut: reserve their room first.
    fixed = "\n".join(head) + "\n"
    tail = "\n".join(sections)
    note_room = 400
    kept, left_out = fit(body, limit - len(fixed) - len(tail) - note_room)
    if left_out:
        total = len(report.findings) + len(report.fixed)
        shown = total - left_out
        kept += ["", f"> {left_out:,} more findings not shown: the list was cut to fit GitHub's {limit:,}-character "
                     f"limit ({shown:,} of {total:,} shown). Findings on files are also annotations, "
                     "and `registry-bot check` prints the full list.", ""]
    if sum(line.startswith("<details>") for line in kept) > sum(line == "</details>" for line in kept):
        kept.append("</details>")  # a fold whose end was cut
    out = fixed + "\n".join(kept) + ("\n" if kept else "") + tail
    return cut_lines(out, limit, "\n> (cut to fit GitHub's size limit)\n")
