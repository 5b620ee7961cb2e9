"""Plain text: findings grouped per entry, one ``file:line:col rule message`` line each."""

from __future__ import annotations

from itertools import groupby

from bot.findings import Finding, Report, Severity

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTICE: "\x1b[36m"}


def location(f: Finding) -> str:
    where = f.path or "<repository>"
    if f.line:
        where += f":{f.line}"
        if f.column:
            where += f":{f.column}"
    return where


def render_text(report: Report, color: bool = False) -> str:
    lines: list[str] = []
    for entry, group in groupby(report.findings, key=lambda f: f.entry or ""):
        lines.append(f"== {entry or '(repository)'}")
        for f in group:
            sev = f.severity.value
            if color:
                sev = f"{_COLORS[f.severity]}{sev}\x1b[0m"
            lines.append(f"{location(f)}: {sev} {f.rule} {f.message}")
            if f.hint:
                lines.append(f"    hint: {f.hint}")
    for section in report.sections:
        lines.append(f"== {section.title}")
        lines.append(section.markdown.rstrip())
    s = report.summary()
    needed = report.required_approvals()
    for entry, owners in needed.items():
        lines.append(f"approval needed for {entry}: {', '.join(owners)}")
    lines.append(
        f"{s['verdict'].upper()}: {s['errors']} error(s), {s['warnings']} warning(s), "
        f"{s['notices']} notice(s) in {len(report.entries)} entr{'y' if len(report.entries) == 1 else 'ies'}"
        + (f" ({report.neutral_reason})" if report.neutral_reason else "")
    )
    return "\n".join(lines) + "\n"
