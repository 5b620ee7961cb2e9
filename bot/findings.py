"""Findings, severities and the report of one review: plain data, no I/O."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.Enum):
    """How much a finding matters. Errors fail the review; warnings and notices show but pass."""

    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTICE: 2}


class Verdict(enum.Enum):
    """The conclusion of a review, in GitHub check run terms."""

    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in one file, located as precisely as the input allows.

    ``line`` and ``column`` are 1-based; ``pointer`` is an RFC 6901 JSON pointer inside the file
    (empty for the whole document or for non-JSON files). ``entry`` is the registered name the
    finding belongs to (``gcp:composer``), used for grouping. ``owners`` lists the people or teams
    a finding asks to act (the owners who must approve), so publishers need not parse messages.
    """

    rule: str
    severity: Severity
    path: str
    message: str
    line: int | None = None
    column: int | None = None
    pointer: str = ""
    hint: str = ""
    entry: str | None = None
    owners: tuple[str, ...] = ()

    def sort_key(self) -> tuple[Any, ...]:
        return (self.entry or "", self.path, self.line or 0, self.column or 0, self.severity.rank, self.rule)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "pointer": self.pointer,
            "message": self.message,
            "hint": self.hint,
        }
        if self.entry is not None:
            data["entry"] = self.entry
        if self.owners:
            data["owners"] = list(self.owners)
        return data


@dataclass(frozen=True, slots=True)
class Section:
    """An extra block of a report produced outside the checks (the Spark regression table).

    ``verdict`` lets a section make the review neutral (for example "Spark could not start")
    without inventing findings.
    """

    title: str
    markdown: str
    data: Mapping[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None


@dataclass(frozen=True)
class Report:
    """All findings of one review, plus optional extra sections, in a stable order."""

    findings: tuple[Finding, ...]
    entries: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    neutral_reason: str | None = None

    @classmethod
    def build(
        cls,
        findings: Iterable[Finding],
        entries: Iterable[str] = (),
        sections: Iterable[Section] = (),
        neutral_reason: str | None = None,
    ) -> Report:
        unique = dict.fromkeys(findings)  # a check that reports the same finding twice shows it once
        return cls(
            findings=tuple(sorted(unique, key=Finding.sort_key)),
            entries=tuple(sorted(set(entries))),
            sections=tuple(sections),
            neutral_reason=neutral_reason,
        )

    def with_sections(self, *sections: Section, findings: Iterable[Finding] = ()) -> Report:
        return Report.build((*self.findings, *findings), self.entries, (*self.sections, *sections),
                            self.neutral_reason)

    def counts(self) -> Counter[Severity]:
        return Counter(f.severity for f in self.findings)

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def verdict(self) -> Verdict:
        if self.has_errors:
            return Verdict.FAILURE
        if self.neutral_reason is not None:
            return Verdict.NEUTRAL
        return Verdict.SUCCESS

    def required_approvals(self) -> dict[str, tuple[str, ...]]:
        """Owners who must still approve, per entry (from the owner-approval findings)."""
        needed: dict[str, tuple[str, ...]] = {}
        for f in self.findings:
            if f.owners and f.entry is not None:
                needed[f.entry] = tuple(dict.fromkeys((*needed.get(f.entry, ()), *f.owners)))
        return needed

    def summary(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "verdict": self.verdict.value,
            "errors": counts[Severity.ERROR],
            "warnings": counts[Severity.WARNING],
            "notices": counts[Severity.NOTICE],
            "entries": list(self.entries),
            "required_approvals": {k: list(v) for k, v in self.required_approvals().items()},
            "neutral_reason": self.neutral_reason,
        }

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "findings": [f.to_json() for f in self.findings],
            "summary": self.summary(),
        }
        if self.sections:
            data["sections"] = [
                {"title": s.title, "data": dict(s.data), "verdict": s.verdict.value if s.verdict else None}
                for s in self.sections
            ]
        return data
