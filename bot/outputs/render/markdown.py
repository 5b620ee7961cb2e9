"""Markdown for GitHub: the check run summary and the summary comment.

Everything quoted is made inert by ``bot.core.quoting``. Output never exceeds GitHub's
65,535-byte limit (UTF-8, ``utf8_size``): long messages are shortened so that no finding hides the
others, and when even short rows do not fit, the list ends with how many were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import groupby

from bot.core.findings import Finding, Report, Severity, Verdict
from bot.core.incomplete import unfinished_reason
from bot.core.inert import plain
from bot.core.quoting import (  # re-exported: the text primitives lived here
    GITHUB_TEXT_LIMIT as GITHUB_TEXT_LIMIT,
)
from bot.core.quoting import MESSAGE_LIMIT as MESSAGE_LIMIT
from bot.core.quoting import MIN_MESSAGE as MIN_MESSAGE
from bot.core.quoting import NAME_LIMIT as NAME_LIMIT
from bot.core.quoting import Row as Row
from bot.core.quoting import backtick_fence as backtick_fence
from bot.core.quoting import code as code
from bot.core.quoting import cut_lines as cut_lines
from bot.core.quoting import escape as escape
from bot.core.quoting import fit as fit
from bot.core.quoting import utf8_size as utf8_size

MAX_ENTRIES = 100  # entries named in "Entries reviewed"; the rest are counted
MAX_OWNERS = 20  # owners named per entry under "Approvals needed"
_ICON = {Severity.ERROR: "❌ error", Severity.WARNING: "⚠️ warning", Severity.NOTICE: "ℹ️ notice"}
_VERDICT = {
    Verdict.SUCCESS: "✅ passed",
    Verdict.FAILURE: "❌ failed",
    Verdict.NEUTRAL: "➖ neutral",
}


def headline(report: Report) -> str:
    """The verdict in one line; for a review that could not finish, its reason comes first."""
    s = report.summary()
    reason = unfinished_reason(report)
    if reason is not None:
        return f"OpenLineage registry ❌ could not finish: {plain(reason, 200)}"
    judged = "".join(
        f", {s[k]} {k.replace('_', '-')}" for k in ("pre_existing", "fixed", "waived") if s[k]
    )
    return (
        f"OpenLineage registry {_VERDICT[report.verdict]}: {s['errors']} error(s), "
        f"{s['warnings']} warning(s), {s['notices']} notice(s){judged}"
    )


def _finding_row(f: Finding, cap: int) -> str:
    where = code(f.path or "(repository)")
    if f.line:
        where += f" line {f.line}"
    message = escape(f.message, cap)
    if f.hint:
        message += f"<br><sub>{escape(f.hint, cap)}</sub>"
    icon = _ICON[f.severity]
    if f.waived is not None:
        icon = f"{icon}, {f.waived.label()}"
        message += (
            f"<br><sub>waived by {escape(f.waived.granted_by, NAME_LIMIT)}: "
            f"{escape(f.waived.reason, cap)}</sub>"
        )
    return f"| {icon} | {code(f.rule)} | {where} | {message} |"


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
    """``body`` inside a ``<details>`` block that GitHub shows closed, its summary line saying what
    it holds."""
    if not body or not folded:
        return body
    return [f"<details><summary>{summary}</summary>", "", *body, "</details>", ""]


def _witnesses(findings: tuple[Finding, ...]) -> list[str | Row]:
    """Each data-level verdict's witness in a code block (ASCII JSON under a fence it cannot
    close)."""
    out: list[str | Row] = []
    for f in findings:
        if f.witness is None:
            continue
        block = f.witness.pretty()
        fence = backtick_fence(block, 3)
        out += [
            "",
            f"{code(f.rule, table=False)} on {code(f.path, table=False)}: "
            f"{escape(f.witness.caption(), MESSAGE_LIMIT)}",
            "",
            f"{fence}json",
            *block.splitlines(),
            fence,
        ]
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
        head += [
            f"- {code(entry, table=False)}: one of {_names(owners, MAX_OWNERS)}"
            for entry, owners in list(approvals.items())[:MAX_ENTRIES]
        ]
        if len(approvals) > MAX_ENTRIES:
            head.append(f"- and {len(approvals) - MAX_ENTRIES:,} more entries")
        head.append("")

    body: list[str | Row] = []
    body += _tables("Findings", report.current())
    body += _witnesses(report.current())
    body += _folded(
        _tables(
            "Pre-existing (already at the base, not failing this change"
            + (" except with --strict)" if not report.strict else "; failing with --strict)"),
            report.pre_existing(),
        ),
        f"{len(report.pre_existing())} pre-existing finding(s)",
        folded=not report.strict,
    )
    body += _folded(
        _tables("Fixed by this change", report.fixed), f"{len(report.fixed)} finding(s) fixed"
    )
    sections: list[str] = []
    for section in report.sections:
        sections += [f"### {escape(section.title, NAME_LIMIT)}", "", section.markdown.rstrip(), ""]

    # Sections come after the findings but must survive a cut: reserve their room first, at most
    # half of it when there are findings (a preview of hundreds of pages must not hide them all).
    fixed = "\n".join(head) + "\n"
    tail = cut_lines(
        "\n".join(sections),
        limit // 2 if body else limit,
        "\n> (sections cut to fit GitHub's size limit; `registry-bot check` prints them whole)\n",
    )
    note_room = 400
    kept, left_out = fit(body, limit - utf8_size(fixed) - utf8_size(tail) - note_room)
    if left_out:
        total = len(report.findings) + len(report.fixed)
        shown = total - left_out
        kept += [
            "",
            f"> {left_out:,} more findings not shown: the list was cut to fit GitHub's size "
            f"limit ({limit:,} bytes; {shown:,} of {total:,} shown). Findings on files are also "
            "annotations, and `registry-bot check` prints the full list.",
            "",
        ]
    if sum(line.startswith("<details>") for line in kept) > sum(
        line == "</details>" for line in kept
    ):
        kept.append("</details>")  # a fold whose end was cut
    out = fixed + "\n".join(kept) + ("\n" if kept else "") + tail
    return cut_lines(out, limit, "\n> (cut to fit GitHub's size limit)\n")
