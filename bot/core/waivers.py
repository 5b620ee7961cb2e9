"""Waivers as data: one rule at one place, accepted until a date, with a reason and who granted it.

An entry keeps its waivers in ``<entry folder>/waivers.json`` (``registry/waivers.schema.json``);
the registry-wide ones sit under ``waivers:`` in the bot's configuration. This module only reads and
validates them; ``bot.review.waiving`` decides which apply. Nothing here does I/O.
"""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot import bundled
from bot.core.findings import Finding, Severity, Waived
from bot.core.incomplete import UNJUDGED_RULES
from bot.core.jsondoc import JsonDoc, JsonProblem, pointer_from

FILE_NAME = "waivers.json"
SCHEMA_PATH = bundled.path("registry", "waivers.schema.json")
INVALID = "waivers/invalid"
HINT = (
    "Each waiver names rule, path, pointer (or subject), reason, granted_by (@login or @org/team) "
    "and expires (YYYY-MM-DD); see registry/waivers.schema.json and docs/waivers.md."
)

# The rules that decide who approves a change (their findings name, in ``Finding.owners``, the
# owners who must approve): the owners of the base branch approve each change themselves. A waiver
# is granted once, at one file, and would approve every later change for them, by anyone: a
# stranger's change to that file and, since the approval finding of an entry sits on one of its
# changed paths, to every other file of the entry with it, CODEOWNERS included. So they are never
# waived, as the rules of what the review did not judge (``UNJUDGED_RULES``) are not.
APPROVAL_RULES = frozenset(
    {
        "owners/approval-required",
        "owners/codeowners-change-needs-approval",
        "owners/approval-not-checked",
        "ownership/steering-file-change",
        "ownership/outside-entry",
        "ownership/mirror-change",
        "ownership/spec-change",
    }
)
NEVER_WAIVED = UNJUDGED_RULES | APPROVAL_RULES


def never_waived(rule: str) -> str | None:
    """Why no waiver of ``rule`` ever applies, or None when it may be waived."""
    if rule in APPROVAL_RULES:
        return (
            f"{rule} decides who approves a change: the owners approve each change themselves, and "
            "a waiver cannot approve for them"
        )
    if rule in UNJUDGED_RULES:
        return (
            f"{rule} says the review did not judge something in full (a path it could not read, a "
            "check that stopped, a file not validated): a waiver cannot vouch for what a later "
            "change puts there"
        )
    return None


def schema_problems(raw: Mapping[str, Any]) -> list[str]:
    """Why one waiver, written as in ``waivers.json``, breaks ``registry/waivers.schema.json`` (each
    problem names the field and the schema's keyword, never the value)."""
    out = []
    for e in sorted(
        _validator().iter_errors({"waivers": [raw]}), key=lambda e: list(map(str, e.path))
    ):
        field = ".".join(str(p) for p in list(e.absolute_path)[2:]) or "the waiver"
        out.append(f"{field}: breaks the schema's {e.validator} ({e.validator_value!r})")
    return out


@dataclass(frozen=True)
class Waiver:
    """One waiver as written, and where: ``entry`` is None for a registry-wide one (the
    configuration)."""

    rule: str
    path: str
    pointer: str | None
    subject: str | None
    reason: str
    granted_by: str
    expires: datetime.date
    source: str
    line: int | None = None
    entry: str | None = None

    def matches(self, f: Finding) -> bool:
        return (
            f.rule == self.rule
            and f.path == self.path
            and (self.pointer is None or f.pointer == self.pointer)
            and (self.subject is None or f.subject == self.subject)
        )

    def place(self) -> str:
        return self.path + (
            f"#{self.pointer}" if self.pointer is not None else f" ({self.subject})"
        )

    def waived(self) -> Waived:
        return Waived(self.reason, self.expires.isoformat(), self.granted_by, self.source)

    def to_json(self) -> dict[str, str]:
        data = {"rule": self.rule, "path": self.path}
        if self.pointer is not None:
            data["pointer"] = self.pointer
        if self.subject is not None:
            data["subject"] = self.subject
        return {
            **data,
            "reason": self.reason,
            "granted_by": self.granted_by,
            "expires": self.expires.isoformat(),
        }


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def _invalid(
    source: str,
    message: str,
    line: int | None = None,
    column: int | None = None,
    pointer: str = "",
    entry: str | None = None,
) -> Finding:
    return Finding(
        rule=INVALID,
        severity=Severity.ERROR,
        path=source,
        line=line,
        column=column,
        pointer=pointer,
        message=f"{source} cannot be used: {message}",
        hint=HINT,
        entry=entry,
    )


def _waiver(raw: Mapping[str, Any], source: str, line: int | None, entry: str | None) -> Waiver:
    return Waiver(
        rule=raw["rule"],
        path=raw["path"],
        pointer=raw.get("pointer"),
        subject=raw.get("subject"),
        reason=raw["reason"],
        granted_by=raw["granted_by"],
        expires=datetime.date.fromisoformat(raw["expires"]),
        source=source,
        line=line,
        entry=entry,
    )


def parse_file(data: bytes, source: str, entry: str | None) -> tuple[list[Waiver], list[Finding]]:
    """The waivers of one ``waivers.json``; a file that breaks the schema is one finding per error,
    at its line, and none of its waivers applies (a half-read file must not waive anything)."""
    try:
        doc = JsonDoc.parse(data, source)
    except JsonProblem as exc:
        return [], [_invalid(source, str(exc), exc.line, exc.column, entry=entry)]
    problems = [
        _at(doc, pointer_from(list(e.absolute_path)), e.message, entry)
        for e in sorted(
            _validator().iter_errors(doc.value), key=lambda e: list(map(str, e.absolute_path))
        )
    ]
    waivers: list[Waiver] = []
    for i, raw in enumerate(doc.value.get("waivers", []) if not problems else []):
        try:
            waivers.append(_waiver(raw, source, doc.locate(f"/waivers/{i}")[0], entry))
        except ValueError as exc:  # a date such as 2026-02-30
            problems.append(_at(doc, f"/waivers/{i}/expires", f"expires: {exc}", entry))
    return ([] if problems else waivers), problems


def _at(doc: JsonDoc, pointer: str, message: str, entry: str | None) -> Finding:
    line, column = doc.locate(pointer)
    return _invalid(doc.path, f"{pointer or '/'}: {message}", line, column, pointer, entry)


def parse_config_section(raw: Any, source: str) -> tuple[Waiver, ...]:
    """The configuration's ``waivers:`` list (registry-wide waivers); raises ``ValueError`` naming
    the problem."""
    if raw is None:
        return ()
    items: Iterable[Any] = raw if isinstance(raw, list) else [raw]
    out = []
    for i, item in enumerate(items):
        if isinstance(item, Mapping) and isinstance(item.get("expires"), datetime.date):
            # YAML reads an unquoted date as a date
            item = {**item, "expires": item["expires"].isoformat()}
        errors = sorted(
            _validator().iter_errors({"waivers": [item]}), key=lambda e: str(e.absolute_path)
        )
        if errors:
            where = "/".join(str(p) for p in list(errors[0].absolute_path)[2:])
            raise ValueError(f"'waivers[{i}]{'.' + where if where else ''}': {errors[0].message}")
        try:
            out.append(_waiver(item, source, None, None))
        except ValueError as exc:
            raise ValueError(f"'waivers[{i}].expires': {exc}") from None
    return tuple(out)
