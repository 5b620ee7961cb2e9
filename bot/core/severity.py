"""Severity overrides from the registry's configuration (``severity: {rule:
error|warning|notice}``).

Every rule's severity can be changed by the registry (oasdiff's per-check severity levels), from the
base side's configuration only, so a pull request cannot lower the rules it is judged by. Each
override in effect is named in the report (a section of the summary), so a verdict reached under one
is auditable. A future lint (``{becomes_error: DATE}``, conda-forge's "future lints") is a warning
saying so before ``DATE`` and an error from that day, by the review's clock
(``ReviewContext.today``).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import replace

from bot.core.config import Config
from bot.core.findings import Finding, Section, Severity


def overridden(
    findings: Iterable[Finding], config: Config, today: datetime.date | None = None
) -> list[Finding]:
    """``findings`` with each configured rule at its configured severity, future lints as of
    ``today``."""
    levels = {rule: Severity(level) for rule, level in config.severity}
    out = [
        replace(f, severity=levels[f.rule])
        if f.rule in levels and f.severity is not levels[f.rule]
        else f
        for f in findings
    ]
    if not config.becomes_error:
        return out
    day = today or datetime.datetime.now(datetime.UTC).date()
    due = dict(config.becomes_error)
    return [_future(f, due[f.rule], day) if f.rule in due else f for f in out]


def _future(f: Finding, due: datetime.date, today: datetime.date) -> Finding:
    if today >= due:
        return replace(
            f, severity=Severity.ERROR, message=f"{f.message} (an error since {due.isoformat()})"
        )
    return replace(
        f, severity=Severity.WARNING, message=f"{f.message} (becomes an error on {due.isoformat()})"
    )


def future_rules(config: Config) -> frozenset[str]:
    """Rules with a date to become errors: no adoption-gap downgrade hides them."""
    return frozenset(rule for rule, _ in config.becomes_error)


def section(config: Config, findings: Iterable[Finding]) -> Section | None:
    """The overrides in effect and how many findings each changed, or None without overrides."""
    if not config.severity and not config.becomes_error:
        return None
    counts = {rule: 0 for rule, _ in (*config.severity, *config.becomes_error)}
    for f in findings:
        if f.rule in counts:
            counts[f.rule] += 1
    source = config.source or "the configuration"
    lines = [f"Severities set by `{source}` (base branch):", ""]
    lines += [
        f"- `{rule}`: {level} ({counts[rule]} finding(s) of this review)"
        for rule, level in config.severity
    ]
    lines += [
        f"- `{rule}`: becomes an error on {day.isoformat()} ({counts[rule]} finding(s) of this "
        f"review)"
        for rule, day in config.becomes_error
    ]
    return Section(
        title="Severity overrides",
        markdown="\n".join(lines) + "\n",
        data={
            "source": source,
            "overrides": dict(config.severity),
            "becomes_error": {rule: day.isoformat() for rule, day in config.becomes_error},
            "findings": counts,
        },
    )
