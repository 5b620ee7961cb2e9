"""Schema lint on the real history and corpus: each rule catches the pull request that introduced a
real defect, stays quiet on the pull request that fixed it, and is silent on the rest of today's
schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.core.findings import Finding, Report, Severity, State
from bot.review.checks.lint import problems
from tests.history import commit_of, replay


def lint(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule.startswith("lint/")]


@pytest.mark.parametrize(
    ("pr", "facet", "names"),
    [
        ("#1413", "ProcessingEngineRunFacet", ["'engine_version'"]),
        ("#1442", "ExtractionErrorRunFacet", ["'totalElements'", "'failedElements'"]),
    ],
)
def test_required_names_that_are_not_properties_are_caught_where_introduced(
    history: Path, pr: str, facet: str, names: list[str]
) -> None:
    found = [
        f
        for f in lint(replay(history, commit_of(history, pr)))
        if f.rule == "lint/required-undeclared"
        and f.severity is Severity.ERROR
        and f.state is State.NEW
    ]
    assert [(f.path, f.pointer) for f in found] == [
        (f"spec/facets/{facet}.json", f"/$defs/{facet}/allOf/1/required")
    ]
    assert all(name in found[0].message for name in names)


def test_the_pull_request_that_fixed_them_has_none(history: Path) -> None:
    found = lint(replay(history, commit_of(history, "#1997")))
    assert [f for f in found if f.rule == "lint/required-undeclared"] == []


def test_a_misspelled_keyword_is_caught_where_introduced(history: Path) -> None:
    found = [
        f
        for f in lint(replay(history, commit_of(history, "#531")))
        if f.severity is Severity.ERROR and f.state is State.NEW
    ]
    base = (
        "/$defs/LifecycleStateChangeDatasetFacet/allOf/1/properties/previousIdentifier/properties"
    )
    assert sorted((f.rule, f.pointer) for f in found) == [
        ("lint/unknown-keyword", f"{base}/name/documentation"),
        ("lint/unknown-keyword", f"{base}/namespace/documentation"),
    ]
    assert all("description" in f.hint and f.line for f in found)


def test_todays_schemas_hold_only_the_known_defect(corpus: Path) -> None:
    """Every schema of the corpus (facets, registry, OpenLineage.json, the published mirror): the
    only findings are the `documentation` keyword of LifecycleStateChangeDatasetFacet and the two
    1-0-0 copies of the required-list defect that #1997 fixed, which stay published."""
    found = set()
    for folder in ("spec", "website/static/spec"):
        for path in sorted((corpus / folder).rglob("*.json")):
            value = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(value, dict) and "$schema" in value and "/tests/" not in str(path):
                found.update((str(path.relative_to(corpus)), rule) for rule, *_ in problems(value))
    assert found == {
        ("spec/facets/LifecycleStateChangeDatasetFacet.json", "lint/unknown-keyword"),
        (
            "website/static/spec/facets/1-0-0/LifecycleStateChangeDatasetFacet.json",
            "lint/unknown-keyword",
        ),
        (
            "website/static/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json",
            "lint/unknown-keyword",
        ),
        (
            "website/static/spec/facets/1-0-0/ExtractionErrorRunFacet.json",
            "lint/required-undeclared",
        ),
        (
            "website/static/spec/facets/1-0-0/ProcessingEngineRunFacet.json",
            "lint/required-undeclared",
        ),
    }


def test_an_unknown_format_in_a_real_schema(corpus: Path) -> None:
    """An OpenLineage integration schema uses `format` for a message; validators ignore it."""
    path = corpus / "integration/common/src/openlineage/common/schema/bq-error-run-facet.json"
    found = [
        (rule, pointer)
        for rule, pointer, *_ in problems(json.loads(path.read_text(encoding="utf-8")))
    ]
    assert found == [
        (
            "lint/unknown-format",
            "/definitions/BigQueryErrorRunFacet/allOf/1/properties/parserError/format",
        )
    ]


def test_values_that_are_not_schemas_are_not_linted() -> None:
    schema = {
        "type": "object",
        "properties": {"documentation": {"type": "string", "x-generator": "ok"}},
        "not": {"required": ["run"]},
        "dependentRequired": {"namespace": ["name"]},
        "enum": [{"documentation": 1}],
        "default": {"format": "nope"},
        "example": {"requird": []},
    }
    assert list(problems(schema)) == []
