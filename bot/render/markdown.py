"""Markdown for GitHub: the check run summary and the summary comment.

Everything quoted from the reviewed repository is escaped: no ``@mention`` pings, no HTML, no
broken tables. Output never exceeds GitHub's 65,535-character limit; a longer one is cut with a note.
"""

from __future__ import annotations

import html
from itertools import groupby

from bot.findings import Finding, Report, Severity, Verdict

GITHUB_TEXT_LIMIT = 65_535
_ICON = {Severity.ERROR: "❌ error", Severity.WARNING: "⚠️ warning", Severity.NOTICE: "ℹ️ notice"}
_VERDICT = {Verdict.SUCCESS: "✅ passed", Verdict.FAILURE: "❌ failed", Verdict.NEUTRAL: "➖ neutral"}


def escape(text: str) -> str:
    """Make untrusted text inert in GitHub Markdown (also inside table cells)."""
    text = html.escape(text, quote=False)
    text = text.replace("@", "&#64;").replace("|", "\\|").replace("`", "&#96;")
    text = text.replace("[", "\\[").replace("]", "\\]")
    return " ".join(text.split())


def code(text: str) -> str:
    """An inline code span for untrusted text (mentions inside code spans never ping)."""
    text = " ".join(text.replace("`", "'").split())
    return f"`{text}`" if text else "``"


def headline(report: Report) -> str:
    s = report.summary()
    judged = "".join(f", {s[k]} {k.replace('_', '-')}" for k in ("pre_existing", "fixed") if s[k])
    return (f"OpenLineage registry {_VERDICT[report.verdict]}: {s['errors']} error(s), "
            f"{s['warnings']} warning(s), {s['notices']} notice(s){judged}")


def _finding_row(f: Finding) -> str:
    where = code(f.path or "(repository)")
    if f.line:
        where += f" line {f.line}"
    message = escape(f.message)
    if f.hint:
        message += f"<br><sub>{escape(f.hint)}</sub>"
    return f"| {_ICON[f.severity]} | {code(f.rule)} | {where} | {message} |"


def _tables(title: str, findings: tuple[Finding, ...]) -> list[str]:
    """One table per entry under a heading; nothing when there are no findings."""
    if not findings:
        return []
    body = [f"### {title}"]
    for entry, group in groupby(findings, key=lambda f: f.entry or ""):
        items = list(group)
        body.append("")
        body.append(f"#### {code(entry) if entry else 'Repository'} ({len(items)})")
        body.append("")
        body.append("| severity | rule | where | message |")
        body.append("| --- | --- | --- | --- |")
        body += [_finding_row(f) for f in items]
    body.append("")
    return body


def render_markdown(report: Report, limit: int = GITHUB_TEXT_LIMIT, title: bool = True) -> str:
    head: list[str] = []
    if title:
        head.append(f"## {headline(report)}")
        head.append("")
    if report.neutral_reason:
        head += [f"> {escape(report.neutral_reason)}", ""]
    if report.entries:
        head.append("Entries reviewed: " + ", ".join(code(e) for e in report.entries))
        head.append("")
    approvals = report.required_approvals()
    if approvals:
        head.append("### Approvals needed")
        head += [f"- {code(entry)}: one of " + ", ".join(code(o) for o in owners)
                 for entry, owners in approvals.items()]
        head.append("")

    body: list[str] = []
    body += _tables("Findings", report.current())
    body += _tables("Pre-existing (already at the base, not failing this change" +
                    (" except with --strict)" if not report.strict else "; failing with --strict)"),
                    report.pre_existing())
    body += _tables("Fixed by this change", report.fixed)
    sections: list[str] = []
    for section in report.sections:
        sections += [f"### {escape(section.title)}", "", section.markdown.rstrip(), ""]

    # Sections come after the findings but must survive a cut: reserve their room first.
    fixed = "\n".join(head) + "\n"
    tail = "\n".join(sections)
    note_room = 300
    budget = limit - len(fixed) - len(tail) - note_room
    kept: list[str] = []
    used = 0
    for i, line in enumerate(body):
        if used + len(line) + 1 > budget:
            shown = sum(1 for x in kept if x.startswith("| ") and not x.startswith(("| severity", "| ---")))
            kept.append("")
            total = len(report.findings) + len(report.fixed)
            kept.append(f"> The list was cut to fit GitHub's {limit:,}-character limit: {shown} of "
                        f"{total} findings shown. Every finding is an annotation on its "
                        "file, and `registry-bot check` prints the full list.")
            del body[i:]
            break
        kept.append(line)
        used += len(line) + 1
    out = fixed + "\n".join(kept) + ("\n" if kept else "") + tail
    if len(out) > limit:  # sections alone too long: cut hard, keeping the note
        out = out[: limit - 120] + "\n\n> (cut to fit GitHub's size limit)\n"
    return out
