"""SARIF 2.1.0, uploadable to GitHub code scanning."""

from __future__ import annotations

from typing import Any

from bot.findings import Report, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}


def render_sarif(report: Report, tool_version: str = "0.1.0") -> dict[str, Any]:
    from bot.checks import all_rules

    docs = all_rules()
    rule_ids = sorted({f.rule for f in (*report.findings, *report.fixed)})
    index = {rule: i for i, rule in enumerate(rule_ids)}
    results = []
    for f in (*report.findings, *report.fixed):
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _LEVEL[f.severity],
            "message": {"text": f.message + (f"\n{f.hint}" if f.hint else "")},
        }
        if f.path:
            physical: dict[str, Any] = {"artifactLocation": {"uri": f.path}}
            if f.line:
                physical["region"] = {"startLine": f.line, "startColumn": f.column or 1}
            location: dict[str, Any] = {"physicalLocation": physical}
            if f.pointer:
                location["logicalLocations"] = [{"fullyQualifiedName": f.pointer, "kind": "member"}]
            result["locations"] = [location]
        if f.state is not None:
            result["baselineState"] = f.state.value  # new, unchanged or absent: the same words as SARIF
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "openlineage-registry-bot",
                "version": tool_version,
                "informationUri": "https://github.com/OpenLineage/OpenLineage/tree/main/spec/registry",
                "rules": [
                    {"id": rule, "name": rule.replace("/", "-"),
                     "shortDescription": {"text": (docs.get(rule) or rule).split(". ")[0][:200]},
                     "fullDescription": {"text": docs.get(rule) or rule}}
                    for rule in rule_ids
                ],
            }},
            "results": results,
        }],
    }
