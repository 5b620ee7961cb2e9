"""Severity overrides from the registry's configuration (``severity: {rule: error|warning|notice}``).

Every rule's severity can be changed by the registry (oasdiff's per-check severity levels), from the base
side's configuration only, so a pull request cannot lower the rules it is judged by. Each override in
effect is named in the report (a section of the summary), so a verdict reached under one is auditable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from bot.config import Config
from bot.findings import Finding, Section, Severity


def overridden(findings: Iterable[Finding], config: Config) -> list[Finding]:
    """``findings`` with each configured rule at its configured severity."""
    levels = {rule: Severity(level) for rule, level in config.severity}
    return [replace(f, severity=levels[f.rule]) if f.rule in levels and f.severity is not levels[f.rule] else f
            for f in findings]


def section(config: Config, findings: Iterable[Finding]) -> Section | None:
    """The overrides in effect and how many findings each changed, or None without overrides."""
    if not config.severity:
        return None
    counts = {rule: 0 for rule, _ in config.severity}
    for f in findings:
        if f.rule in counts:
            counts[f.rule] += 1
    source = config.source or "the configuration"
    lines = [f"Severities set by `{source}` (base branch):", ""]
    lines += [f"- `{rule}`: {level} ({counts[rule]} finding(s) of this review)" for rule, level in config.severity]
    return Section(title="Severity overrides", markdown="\n".join(lines) + "\n",
                   data={"source": source, "overrides": dict(config.severity),
                         "findings": counts})
