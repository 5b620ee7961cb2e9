"""Findings, severities and the report of one review: plain data, no I/O."""

from __future__ import annotations

import enum
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.core.anchors import at_place


class Severity(enum.Enum):
    """How much a finding matters. Errors fail the review; warnings and notices show but pass."""

    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTICE: 2}


class State(enum.Enum):
    """A finding judged against the base of the change, named as SARIF's ``baselineState``.

    ``NEW`` findings are what the change introduces; ``UNCHANGED`` ones were already there at base
    (pre-existing: shown, never failing the review unless strict); ``ABSENT`` ones were at base and
    are gone at head (fixed by the change).
    """

    NEW = "new"
    UNCHANGED = "unchanged"
    ABSENT = "absent"


_LOCATION_IN_MESSAGE = re.compile(r"\b(line|column|char|offset|byte)( \d+)")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace whole lines ``start_line``..``end_line`` (1-based, inclusive) of ``path`` with
    ``text``.

    ``text`` holds complete lines (each ending in a newline) or is empty to delete them. A file that
    does not exist yet is created by an edit of lines 1..0.
    """

    path: str
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """The mechanical fix of one finding: what it does, in words, and the edits that do it."""

    description: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class Witness:
    """An instance (canonical JSON text, so a finding stays hashable) that the schema named
    ``valid`` accepts and the one named ``invalid`` rejects, both validators agreeing
    (bot/model/evolution/witness.py)."""

    instance: str
    valid: str
    invalid: str

    def to_json(self) -> dict[str, Any]:
        return {"instance": json.loads(self.instance), "valid": self.valid, "invalid": self.invalid}

    def pretty(self, limit: int = 2_000) -> str:
        """Indented JSON, ASCII only (so no invisible or bidi character survives), or a note when
        too long."""
        text = json.dumps(json.loads(self.instance), indent=2, sort_keys=True, ensure_ascii=True)
        return (
            text
            if len(text) <= limit
            else f"(an instance of {len(text):,} characters: see the JSON output)"
        )

    def caption(self) -> str:
        return f"valid against {self.valid}, invalid against {self.invalid}"


@dataclass(frozen=True, slots=True)
class Waived:
    """Why a finding is accepted for now: a base-side waiver's reason, expiry (ISO date), grantor
    and file."""

    reason: str
    expires: str
    granted_by: str
    source: str

    def label(self) -> str:
        return f"waived until {self.expires}"

    def to_json(self) -> dict[str, str]:
        return {
            "reason": self.reason,
            "expires": self.expires,
            "granted_by": self.granted_by,
            "source": self.source,
        }


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
    ``subject`` says what the finding is about where its message says more (``fingerprint``), and
    ``anchor`` where it sits when that is not its pointer: an item of a list named by its subject
    sits in its list, so an item inserted before it moves its pointer, not the problem.
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
    subject: str = ""
    anchor: str | None = None  # the pointer it is matched at, when not its own
    state: State | None = None
    fix: Fix | None = None
    # versions/*: "data" | "wire" | "codegen", the level at which a change breaks
    category: str | None = None
    witness: Witness | None = None  # versions/* at the data level: the instance that shows it
    waived: Waived | None = None  # shown, never blocking (bot/review/waiving.py)
    # what a "could not check" finding (``bot.core.incomplete.UNJUDGED_RULES``) read: its own path
    # and every file its checking depended on; a change touching none of them leaves it standing
    # (``bot.review.engine.judge``). Empty: unknown, so it is always the change's.
    grounds: tuple[str, ...] = ()

    def fingerprint(
        self, path: str | None = None, place: bool = False
    ) -> tuple[str, str, str, str]:
        """What identifies this problem on both sides of a change: never its line.

        ``path`` replaces the finding's own path (a base-side path followed across a rename);
        ``place``: a list item named by its content is named by its index (``anchors.at_place``).
        """
        what = self.subject or _LOCATION_IN_MESSAGE.sub(r"\1 N", self.message)
        where = self.pointer if self.anchor is None else self.anchor
        if place and self.anchor is not None:
            where = at_place(self.anchor, self.pointer)
        return (self.rule, self.path if path is None else path, where, what)

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.entry or "",
            self.path,
            self.line or 0,
            self.column or 0,
            self.severity.rank,
            self.rule,
        )

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
        if self.state is not None:
            data["state"] = self.state.value
        if self.category is not None:
            data["category"] = self.category
        if self.witness is not None:
            data["witness"] = self.witness.to_json()
        if self.waived is not None:
            data["waived"] = self.waived.to_json()
        if self.fix is not None:
            data["fix"] = {
                "description": self.fix.description,
                "edits": [
                    {
                        "path": e.path,
                        "start_line": e.start_line,
                        "end_line": e.end_line,
                        "text": e.text,
                    }
                    for e in self.fix.edits
                ],
            }
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
    """All findings of one review, plus optional extra sections, in a stable order.

    ``findings`` are those present at head (each with its ``state`` when a change was judged);
    ``fixed`` those the change removed. Only *blocking* findings fail the review: errors the change
    introduces, or with ``strict`` also the pre-existing ones.
    """

    findings: tuple[Finding, ...]
    entries: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    neutral_reason: str | None = None
    fixed: tuple[Finding, ...] = ()
    strict: bool = False

    @classmethod
    def build(
        cls,
        findings: Iterable[Finding],
        entries: Iterable[str] = (),
        sections: Iterable[Section] = (),
        neutral_reason: str | None = None,
        fixed: Iterable[Finding] = (),
        strict: bool = False,
    ) -> Report:
        # a check that reports the same finding twice shows it once
        unique = dict.fromkeys(findings)
        return cls(
            findings=tuple(sorted(unique, key=Finding.sort_key)),
            entries=tuple(sorted(set(entries))),
            sections=tuple(sections),
            neutral_reason=neutral_reason,
            fixed=tuple(sorted(dict.fromkeys(fixed), key=Finding.sort_key)),
            strict=strict,
        )

    def with_sections(self, *sections: Section, findings: Iterable[Finding] = ()) -> Report:
        return Report.build(
            (*self.findings, *findings),
            self.entries,
            (*self.sections, *sections),
            self.neutral_reason,
            self.fixed,
            self.strict,
        )

    def is_blocking(self, finding: Finding) -> bool:
        """An error that fails the review: new (or not judged), or pre-existing under ``strict``;
        never a waived one."""
        if finding.severity is not Severity.ERROR or finding.waived is not None:
            return False
        return finding.state is not State.UNCHANGED or self.strict

    def current(self) -> tuple[Finding, ...]:
        """The findings that are not pre-existing: what this change is responsible for."""
        return tuple(f for f in self.findings if f.state is not State.UNCHANGED)

    def pre_existing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.state is State.UNCHANGED)

    def counts(self) -> Counter[Severity]:
        """Severities of the findings this change is responsible for (pre-existing and waived ones
        apart)."""
        return Counter(f.severity for f in self.current() if f.waived is None)

    def waived(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.waived is not None)

    @property
    def has_errors(self) -> bool:
        """Whether the review fails: at least one blocking finding."""
        return any(self.is_blocking(f) for f in self.findings)

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

    def fixable(self) -> tuple[Finding, ...]:
        """The findings this change is responsible for that carry a mechanical fix."""
        return tuple(f for f in self.current() if f.fix is not None)

    def summary(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "verdict": self.verdict.value,
            "errors": counts[Severity.ERROR],
            "warnings": counts[Severity.WARNING],
            "notices": counts[Severity.NOTICE],
            "pre_existing": len(self.pre_existing()),
            "fixed": len(self.fixed),
            "waived": len(self.waived()),
            "fixable": len(self.fixable()),
            "strict": self.strict,
            "entries": list(self.entries),
            "required_approvals": {k: list(v) for k, v in self.required_approvals().items()},
            "neutral_reason": self.neutral_reason,
        }

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "findings": [f.to_json() for f in self.findings],
            "fixed": [f.to_json() for f in self.fixed],
            "summary": self.summary(),
        }
        if self.sections:
            data["sections"] = [
                {
                    "title": s.title,
                    "data": dict(s.data),
                    "verdict": s.verdict.value if s.verdict else None,
                }
                for s in self.sections
            ]
        return data
