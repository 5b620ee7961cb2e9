"""SARIF 2.1.0, uploadable to GitHub code scanning.

JSON keeps the structure safe; the message texts are plain text in which SARIF (section 3.11.6) and
GitHub read ``[text](target)`` as an embedded link, so quoted text has ``\\``, ``[`` and ``]``
escaped, and control, bidi and invisible characters shown as escapes. An artifact location is a URI
reference, so file names are percent-encoded.
"""

from __future__ import annotations

import re
from typing import Any

from bot.core.findings import Finding, Fix, Report, Severity, State
from bot.core.inert import visible
from bot.core.quoting import url_path

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LINK_SYNTAX = re.compile(r"[\\\[\]]")
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}


def message_text(text: str) -> str:
    """Quoted text for a SARIF plain-text message: visible, and no embedded link."""
    return _LINK_SYNTAX.sub(r"\\\g<0>", visible(text))


def artifact_uri(path: str) -> str:
    """A repository path as a relative URI reference; a non-UTF-8 name keeps its original bytes."""
    return url_path(path)


def sarif_fix(fix: Fix) -> dict[str, Any]:
    """A SARIF ``fix`` (3.55): whole lines ``start..end`` are the region from the start of line
    ``start`` to the start of line ``end + 1``; a new file is an insertion at its start."""
    changes: dict[str, list[dict[str, Any]]] = {}
    for e in fix.edits:
        end_line = max(e.end_line, e.start_line - 1) + 1
        changes.setdefault(e.path, []).append(
            {
                "deletedRegion": {
                    "startLine": e.start_line,
                    "startColumn": 1,
                    "endLine": end_line,
                    "endColumn": 1,
                },
                "insertedContent": {"text": e.text},
            }
        )
    return {
        "description": {"text": message_text(fix.description)},
        "artifactChanges": [
            {"artifactLocation": {"uri": artifact_uri(path)}, "replacements": replacements}
            for path, replacements in changes.items()
        ],
    }


def _level(f: Finding, strict: bool) -> str:
    """The finding's level; one the change did not cause is a ``note`` (``none`` once fixed), so
    code scanning shows what the change introduces as its errors (``baselineState`` says which is
    which)."""
    if f.state is State.ABSENT:
        return "none"
    if f.state is State.UNCHANGED and not strict:
        return "note"
    return _LEVEL[f.severity]


def render_sarif(report: Report, tool_version: str = "0.1.0") -> dict[str, Any]:
    from bot.review.checks import all_rules

    docs = all_rules()
    rule_ids = sorted({f.rule for f in (*report.findings, *report.fixed)})
    index = {rule: i for i, rule in enumerate(rule_ids)}
    results = []
    for f in (*report.findings, *report.fixed):
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _level(f, report.strict),
            "message": {
                "text": message_text(f.message) + (f"\n{message_text(f.hint)}" if f.hint else "")
            },
        }
        # Code scanning rejects a file with a result without a location: a finding about no one file
        # (the review as a whole) sits on the repository's root.
        physical: dict[str, Any] = {
            "artifactLocation": {"uri": artifact_uri(f.path) if f.path else "."}
        }
        if f.path and f.line:
            physical["region"] = {"startLine": f.line, "startColumn": f.column or 1}
        location: dict[str, Any] = {"physicalLocation": physical}
        if f.pointer:
            location["logicalLocations"] = [{"fullyQualifiedName": f.pointer, "kind": "member"}]
        result["locations"] = [location]
        if f.state is not None:
            # new, unchanged or absent: the same words as SARIF
            result["baselineState"] = f.state.value
        if result["level"] != _LEVEL[f.severity]:
            result["properties"] = {"severity": f.severity.value}  # the rule's own severity, kept
        if f.waived is not None:  # SARIF's suppression (3.35): shown as such, never dropped
            result["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": message_text(
                        f"{f.waived.label()} by {f.waived.granted_by}: {f.waived.reason}"
                    ),
                    "location": {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(f.waived.source)}
                        }
                    },
                }
            ]
        if f.fix is not None and f.state is not State.ABSENT:
            result["fixes"] = [sarif_fix(f.fix)]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "openlineage-registry-bot",
                        "version": tool_version,
                        "informationUri": "https://github.com/OpenLineage/OpenLineage/tree/main/spec/registry",
                        "rules": [
                            {
                                "id": rule,
                                "name": rule.replace("/", "-"),
                                "shortDescription": {
                                    "text": (docs.get(rule) or rule).split(". ")[0][:200]
                                },
                                "fullDescription": {"text": docs.get(rule) or rule},
                            }
                            for rule in rule_ids
                        ],
                    }
                },
                "results": results,
            }
        ],
    }
