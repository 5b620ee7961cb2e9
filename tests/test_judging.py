"""Judging the change: new, pre-existing and fixed findings, and the whole-tree verdict.

Pull requests on a git repository of the real corpus: the real registry already has problems (core
facets without examples, undeclared core facets, a legacy facet name), which a change must not be
blamed for.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.cli.sample import REFERENCE
from bot.core.changes import ChangeSet
from bot.core.config import ADOPTION_GAPS
from bot.core.findings import Finding, Report, Severity, State
from bot.core.snapshot import GitSnapshot
from bot.outputs.render import render
from bot.review.engine import ReviewContext, judge, review
from tests.gitrepo import Repo, git

# legacy name: facets/suffix at base
CORE_FACET = "spec/facets/DataQualityAssertionsDatasetFacet.json"
ICEBERG = "spec/registry/iceberg"


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "openlineage")


def review_pr(repo: Repo, strict: bool = False) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        changes = ChangeSet.from_git(repo.path, "main", "pr")
        return review(
            head=head,
            base=base,
            changes=changes,
            context=ReviewContext(author="OpenLineage/committers", strict=strict),
        )


def rules(findings: tuple[Finding, ...] | list[Finding]) -> set[str]:
    return {f.rule for f in findings}


CORE_REGISTRY = "spec/registry/core/registry.json"


def declare_a_core_facet(registry: Any) -> None:
    """A good edit of core's registry.json: one more of its facets declared."""
    registry["producer"]["produced_facets"].append("ol:core:TestRunFacet.json")


def test_an_edit_near_an_old_problem_does_not_fail(repo: Repo) -> None:
    repo.edit_json(CORE_REGISTRY, declare_a_core_facet)
    repo.commit()
    report = review_pr(repo)
    suffix = [f for f in report.findings if f.rule == "facets/suffix"]
    assert suffix and all(
        f.state is State.UNCHANGED and f.severity is Severity.ERROR for f in suffix
    )
    assert not any(report.is_blocking(f) for f in suffix)
    assert "facets/suffix" not in rules([f for f in report.findings if report.is_blocking(f)])
    assert review_pr(repo, strict=True).has_errors  # --strict fails on pre-existing errors too


def test_a_problem_the_change_adds_fails_it_beside_pre_existing_ones(repo: Repo) -> None:
    repo.edit_json(CORE_FACET, lambda s: s.update({"$id": "https://example.com/x.json"}))
    repo.commit()
    report = review_pr(repo)
    new = [f for f in report.findings if f.state is State.NEW and f.severity is Severity.ERROR]
    assert "facets/id" in rules(new)
    assert report.has_errors and report.verdict.value == "failure"
    assert report.pre_existing(), "the entry's old problems are still shown"


def test_a_fix_is_listed_as_fixed(repo: Repo) -> None:
    repo.edit_json(CORE_REGISTRY, declare_a_core_facet)
    repo.commit()
    report = review_pr(repo)
    fixed = [f for f in report.fixed if f.rule == "uris/undeclared"]
    assert [f.path for f in fixed] == ["spec/facets/TestRunFacet.json"]
    assert fixed[0].state is State.ABSENT and report.summary()["fixed"] == len(report.fixed)
    assert "fixed by this change" in render(report, "text")


def test_a_rename_keeps_old_problems_old(repo: Repo) -> None:
    """Following ``git mv``: the renamed file's problems at base are matched at its new path."""
    base = [
        Finding(
            rule="examples/missing",
            severity=Severity.ERROR,
            path="a/Old.json",
            pointer="",
            message="no example",
        ),
        Finding(
            rule="facets/id",
            severity=Severity.ERROR,
            path="a/Old.json",
            pointer="/$id",
            message="bad",
        ),
    ]
    head = [
        Finding(
            rule="examples/missing",
            severity=Severity.ERROR,
            path="a/New.json",
            pointer="",
            message="no example",
        ),
        Finding(
            rule="facets/id",
            severity=Severity.ERROR,
            path="a/New.json",
            pointer="/$id",
            message="worse",
        ),
    ]
    judged, fixed = judge(head, base, {"a/Old.json": "a/New.json"})
    assert [(f.rule, f.state) for f in judged] == [
        ("examples/missing", State.UNCHANGED),
        ("facets/id", State.NEW),
    ]
    assert [(f.rule, f.state) for f in fixed] == [("facets/id", State.ABSENT)]


def test_a_renamed_facet_keeps_its_problems_under_its_new_name() -> None:
    """``git mv ARunFacet.json BRunFacet.json``: the facet's name in pointers and messages follows
    the file."""
    old = Finding(
        rule="examples/missing",
        severity=Severity.ERROR,
        path="f/ARunFacet.json",
        pointer="/$defs/ARunFacet",
        message="ARunFacet has no example in f/examples/ARunFacet/",
    )
    new = replace(
        old,
        path="f/BRunFacet.json",
        pointer="/$defs/BRunFacet",
        message="BRunFacet has no example in f/examples/BRunFacet/",
    )
    judged, fixed = judge([new], [old], {"f/ARunFacet.json": "f/BRunFacet.json"})
    assert [f.state for f in judged] == [State.UNCHANGED] and fixed == []
    judged, fixed = judge([new], [old], {})
    assert [f.state for f in judged] == [State.NEW] and [f.state for f in fixed] == [State.ABSENT]


def test_a_renamed_example_keeps_its_numbers() -> None:
    """``git mv .../1.json .../5.json``: the stem ``1`` is no name of the example's errors; its
    ``minimum of 1`` and ``allOf/1`` stay as they were, so the error stays pre-existing."""
    old = Finding(
        rule="examples/invalid",
        severity=Severity.ERROR,
        path="f/examples/ARunFacet/1.json",
        pointer="/a/items/1",
        message="0 is less than the minimum of 1 (schema: properties/a/allOf/1/minimum)",
    )
    new = replace(old, path="f/examples/ARunFacet/5.json")
    judged, fixed = judge([new], [old], {old.path: new.path})
    assert [f.state for f in judged] == [State.UNCHANGED] and fixed == []


def test_a_rename_follows_the_name_only_where_it_is_a_whole_name() -> None:
    """``git mv Run.json Job.json``: ``Run`` becomes ``Job`` as a pointer segment and as a name, not
    inside ``RunEvent`` or ``RunId``."""
    old = Finding(
        rule="facets/x",
        severity=Severity.ERROR,
        path="f/Run.json",
        pointer="/$defs/Run/properties/RunId",
        message="Run.json: RunEvent does not name Run",
    )
    same = replace(
        old,
        path="f/Job.json",
        pointer="/$defs/Job/properties/RunId",
        message="Job.json: RunEvent does not name Job",
    )
    judged, fixed = judge([same], [old], {old.path: "f/Job.json"})
    assert [f.state for f in judged] == [State.UNCHANGED] and fixed == []
    other = replace(same, message="Job.json: JobEvent does not name Job")
    judged, fixed = judge([other], [old], {old.path: "f/Job.json"})
    assert [f.state for f in judged] == [State.NEW] and len(fixed) == 1


def test_matching_counts_identical_problems_and_ignores_lines() -> None:
    def f(line: int, message: str = "x is wrong at line 3") -> Finding:
        return Finding(
            rule="r/x",
            severity=Severity.ERROR,
            path="p.json",
            pointer="/a",
            line=line,
            message=message,
        )

    judged, fixed = judge([f(10, "x is wrong at line 9"), f(11)], [f(3)])
    assert [x.state for x in judged] == [State.UNCHANGED, State.NEW]
    assert fixed == []


def test_a_problem_the_change_made_worse_is_new() -> None:
    """A warning at base that is an error at head is the change's; an error that became a warning
    is not, and an error at base is matched to the error at head before the warning is."""

    def f(severity: Severity) -> Finding:
        return Finding(rule="r/x", severity=severity, path="p.json", pointer="/a", message="m")

    judged, fixed = judge([f(Severity.ERROR)], [f(Severity.WARNING)])
    assert [x.state for x in judged] == [State.NEW] and fixed == []
    judged, fixed = judge([f(Severity.WARNING)], [f(Severity.NOTICE)])
    assert [x.state for x in judged] == [State.NEW] and fixed == []
    judged, fixed = judge([f(Severity.WARNING)], [f(Severity.ERROR)])
    assert [x.state for x in judged] == [State.UNCHANGED] and fixed == []
    judged, fixed = judge(
        [f(Severity.WARNING), f(Severity.ERROR)], [f(Severity.WARNING), f(Severity.ERROR)]
    )
    assert [x.state for x in judged] == [State.UNCHANGED, State.UNCHANGED] and fixed == []


# the bundled reference registry (the demo's), with one problem planted on ``main`` first
DAG_RUN = "spec/registry/airflow/facets/AirflowDagRunFacet.json"
DAG_RUN_EXAMPLES = "spec/registry/airflow/facets/examples/AirflowDagRunFacet"


def reference_with(tmp_path: Path, files: dict[str, Callable[[Any], None]]) -> Repo:
    """The reference registry with ``files`` edited (``Repo.edit_json``) on ``main``."""
    repo = Repo.from_folder(REFERENCE, tmp_path / "reference")
    for path, edit in files.items():
        repo.edit_json(path, edit)
    repo.commit("a problem already there", branch="main")
    return repo


def bump_dag_run(repo: Repo, edit: Callable[[dict[str, Any]], None]) -> None:
    """A compatible change to AirflowDagRunFacet's own object, published as 1-0-1."""

    def change(schema: Any) -> None:
        edit(schema["$defs"]["AirflowDagRunFacet"]["allOf"][1])
        schema["$id"] = schema["$id"].replace("/1-0-0/", "/1-0-1/")

    repo.edit_json(DAG_RUN, change)
    repo.write(
        "website/static/spec/facets/1-0-1/AirflowDagRunFacet.json",
        (repo.path / DAG_RUN).read_text(encoding="utf-8"),
    )
    repo.commit("AirflowDagRunFacet 1-0-1")


def only(report: Report, rule: str) -> Finding:
    [found] = [f for f in report.findings if f.rule == rule]
    assert not [f for f in report.fixed if f.rule == rule]
    return found


def test_a_warning_the_change_makes_an_error_blocks(tmp_path: Path) -> None:
    """An example field no version declares (a warning) becomes a respelling (an error) when the
    change declares the field spelled otherwise: new, not the base's warning."""
    repo = reference_with(
        tmp_path,
        {f"{DAG_RUN_EXAMPLES}/1.json": lambda e: e["airflow_dagRun"].update(Owner="data-eng")},
    )
    bump_dag_run(repo, lambda facet: facet["properties"].update(owner={"type": "string"}))
    found = only(review_pr(repo), "examples/undeclared-field")
    assert (found.severity, found.state) == (Severity.ERROR, State.NEW)


RULE = "examples/invalid"


def invalid(report: Report) -> list[tuple[str, State | None]]:
    """Each examples/invalid finding's message (without its schema path) and state."""
    return sorted((f.message.split(" (")[0], f.state) for f in report.findings if f.rule == RULE)


def test_an_invalid_example_stays_pre_existing_when_the_schema_quoted_in_its_message_changes(
    tmp_path: Path,
) -> None:
    """The message of an enum error lists the enum: a value the change adds to it leaves the
    example as invalid as it was, for the same reason, at the same place."""
    repo = reference_with(
        tmp_path,
        {f"{DAG_RUN_EXAMPLES}/2.json": lambda e: e["airflow_dagRun"].update(runType="adhoc")},
    )
    bump_dag_run(repo, lambda facet: facet["properties"]["runType"]["enum"].append("asset"))
    report = review_pr(repo)
    assert invalid(report) == [
        (
            "'adhoc' is not one of "
            "['manual', 'scheduled', 'backfill', 'dataset_triggered', 'asset']",
            State.UNCHANGED,
        )
    ]
    assert not [f for f in report.fixed if f.rule == RULE]


def test_an_invalid_example_the_change_makes_invalid_otherwise_is_new(tmp_path: Path) -> None:
    """Matched by what it is about, not by its message: another offending value, or another
    required property missing, is the change's."""
    repo = reference_with(
        tmp_path,
        {
            f"{DAG_RUN_EXAMPLES}/2.json": lambda e: e["airflow_dagRun"].update(runType="adhoc"),
            f"{DAG_RUN_EXAMPLES}/1.json": lambda e: e["airflow_dagRun"].pop("runType"),
        },
    )
    repo.edit_json(f"{DAG_RUN_EXAMPLES}/2.json", lambda e: e["airflow_dagRun"].update(runType="x"))
    repo.edit_json(f"{DAG_RUN_EXAMPLES}/1.json", lambda e: e["airflow_dagRun"].pop("dagId"))
    repo.commit()
    assert invalid(review_pr(repo)) == [
        ("'dagId' is a required property", State.NEW),
        ("'runType' is a required property", State.UNCHANGED),
        ("'x' is not one of ['manual', 'scheduled', 'backfill', 'dataset_triggered']", State.NEW),
    ]


def test_an_error_on_an_object_value_stays_pre_existing_when_the_object_is_edited(
    tmp_path: Path,
) -> None:
    """A type or enum error on an object (or array) is about the value's type at that place, not
    its content: an edit inside the object leaves it as invalid as it was; a value of another type
    there is the change's."""
    repo = reference_with(
        tmp_path,
        {
            f"{DAG_RUN_EXAMPLES}/1.json": lambda e: e["airflow_dagRun"].update(
                runType={"mode": "manual"}
            )
        },
    )
    repo.edit_json(
        f"{DAG_RUN_EXAMPLES}/1.json",
        lambda e: e["airflow_dagRun"]["runType"].update(by="alice"),
    )
    repo.commit()
    states = {f.message.split(" is ")[1].split(" (")[0]: f.state for f in errors(review_pr(repo))}
    assert states == {
        "not of type 'string'": State.UNCHANGED,
        "not one of ['manual', 'scheduled', 'backfill', 'dataset_triggered']": State.UNCHANGED,
    }
    repo.edit_json(f"{DAG_RUN_EXAMPLES}/1.json", lambda e: e["airflow_dagRun"].update(runType=[]))
    repo.commit()
    assert {f.state for f in errors(review_pr(repo))} == {State.NEW}


def errors(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule == RULE]


def pattern_keys(schema: Any) -> None:
    """AirflowDagRunFacet's object closed to fields other than its own and ``_*`` (``_producer``,
    ``_schemaURL``)."""
    facet = schema["$defs"]["AirflowDagRunFacet"]["allOf"][1]
    facet.update(patternProperties={"^_": {}}, additionalProperties=False)


def test_an_unexpected_field_stays_pre_existing_when_the_schema_gains_a_pattern(
    tmp_path: Path,
) -> None:
    """Beside patternProperties, the message of an unexpected field quotes the patterns: a pattern
    the change adds leaves the field as unexpected as it was; another unexpected field is new."""
    mirror = "website/static/spec/facets/1-0-0/AirflowDagRunFacet.json"
    repo = reference_with(
        tmp_path,
        {
            DAG_RUN: pattern_keys,
            mirror: pattern_keys,
            f"{DAG_RUN_EXAMPLES}/1.json": lambda e: e["airflow_dagRun"].update(Owner="data-eng"),
        },
    )
    bump_dag_run(repo, lambda facet: facet["patternProperties"].update({"^x_": {}}))
    found = only(review_pr(repo), RULE)
    assert "'Owner' does not match any of the regexes: '^_', '^x_'" in found.message
    assert found.state is State.UNCHANGED
    repo.edit_json(f"{DAG_RUN_EXAMPLES}/1.json", lambda e: e["airflow_dagRun"].update(Team="x"))
    repo.commit()
    assert [f.state for f in errors(review_pr(repo))] == [State.NEW]


def test_an_unknown_example_key_stays_pre_existing_when_the_schema_gains_a_key(
    tmp_path: Path,
) -> None:
    """The message of an unknown key lists the schema's facet keys: a key the change adds to the
    schema leaves the example's unknown key as it was; a second unknown key is the change's."""
    repo = reference_with(
        tmp_path, {f"{DAG_RUN_EXAMPLES}/1.json": lambda e: e.update(airflow_typo={})}
    )

    def add_key(schema: Any) -> None:
        schema["properties"]["airflow_dagRunTags"] = {"$ref": "#/$defs/AirflowDagRunFacet"}
        schema["$id"] = schema["$id"].replace("/1-0-0/", "/1-0-1/")

    repo.edit_json(DAG_RUN, add_key)
    repo.edit_json(f"{DAG_RUN_EXAMPLES}/2.json", lambda e: e.update(airflow_other={}))
    repo.commit()
    found = sorted(
        (f.path.rsplit("/", 1)[1], f.state)
        for f in review_pr(repo).findings
        if f.rule == "examples/unknown-key"
    )
    assert found == [("1.json", State.UNCHANGED), ("2.json", State.NEW)]


def test_an_invalid_example_renumbered_stays_pre_existing(tmp_path: Path) -> None:
    """``git mv 1.json 5.json`` of an invalid example: its error (``minimum of 1``, ``allOf/1``)
    is the same error, neither new nor fixed."""
    repo = reference_with(
        tmp_path,
        {f"{DAG_RUN_EXAMPLES}/1.json": lambda e: e["airflow_dagRun"].update(tryNumber=0)},
    )
    git(repo.path, "checkout", "-q", "-B", "pr")
    git(repo.path, "mv", f"{DAG_RUN_EXAMPLES}/1.json", f"{DAG_RUN_EXAMPLES}/5.json")
    repo.commit()
    found = only(review_pr(repo), RULE)
    assert (found.path, found.state) == (f"{DAG_RUN_EXAMPLES}/5.json", State.UNCHANGED)


AIRFLOW_REGISTRY = "spec/registry/airflow/registry.json"


def produced(edit: Callable[[list[str]], None]) -> Callable[[Any], None]:
    return lambda registry: edit(registry["producer"]["produced_facets"])


def test_an_unresolved_uri_stays_pre_existing_when_a_uri_is_declared_before_it(
    tmp_path: Path,
) -> None:
    """A URI that resolves to nothing is matched by the URI in its list, not by its index: one
    declared before it moves it, and changes nothing of the problem; another such URI is new."""
    declared = "ol:core:DatasourceDatasetFacet.json"

    def unresolved_last(uris: list[str]) -> None:
        uris.remove(declared)
        uris.append("ol:airflow:A.json")

    repo = reference_with(tmp_path, {AIRFLOW_REGISTRY: produced(unresolved_last)})
    repo.edit_json(AIRFLOW_REGISTRY, produced(lambda uris: uris.insert(0, declared)))
    repo.commit()
    found = only(review_pr(repo), "uris/unresolved")
    assert found.state is State.UNCHANGED and found.pointer.endswith("/produced_facets/7")
    repo.edit_json(AIRFLOW_REGISTRY, produced(lambda uris: uris.insert(0, "ol:airflow:B.json")))
    repo.commit()
    report = review_pr(repo)
    assert sorted(
        (f.message.split(":")[2], f.state) for f in report.findings if f.rule == "uris/unresolved"
    ) == [
        ("A.json", State.UNCHANGED),
        ("B.json", State.NEW),
    ]


def test_a_duplicate_uri_stays_pre_existing_when_a_uri_is_declared_before_it(
    tmp_path: Path,
) -> None:
    """A URI listed twice is matched by the URI in its list, not by its index (which the message
    also names): one declared before it changes nothing of the problem; another duplicate is new."""
    twice = "ol:core:DatasourceDatasetFacet.json"
    repo = reference_with(tmp_path, {AIRFLOW_REGISTRY: produced(lambda uris: uris.append(twice))})
    repo.edit_json(
        AIRFLOW_REGISTRY, produced(lambda uris: uris.insert(0, "ol:core:SymlinksDatasetFacet.json"))
    )
    repo.commit()
    found = only(review_pr(repo), "entry/duplicate-facet")
    assert found.state is State.UNCHANGED
    repo.edit_json(AIRFLOW_REGISTRY, produced(lambda uris: uris.append(uris[1])))
    repo.commit()
    states = [f.state for f in review_pr(repo).findings if f.rule == "entry/duplicate-facet"]
    assert sorted(map(str, states)) == sorted(map(str, [State.NEW, State.UNCHANGED]))


def test_renderers_carry_the_state(repo: Repo) -> None:
    repo.edit_json(CORE_REGISTRY, declare_a_core_facet)
    repo.commit()
    report = review_pr(repo)
    sarif = json.loads(render(report, "sarif"))
    states = {r["baselineState"] for r in sarif["runs"][0]["results"]}
    assert "unchanged" in states and states <= {"new", "unchanged", "absent"}
    data = json.loads(render(report, "json"))
    assert {f["state"] for f in data["findings"]} >= {"unchanged"}
    assert data["summary"]["pre_existing"] == len(report.pre_existing()) > 0
    text = render(report, "text")
    assert "pre-existing" in text and text.rstrip().splitlines()[-1].startswith("SUCCESS")
    markdown = render(report, "markdown")
    assert "### Pre-existing" in markdown


# _schemaURL 1-0-0, schema 1-0-1 in the corpus
DATASOURCE = "spec/tests/DatasourceDatasetFacet/1.json"
# _schemaURL 1-0-0, schema 1-1-0 (adds contentType)
DOCUMENTATION = "spec/tests/DocumentationDatasetFacet/1.json"


def stale(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule == "examples/stale-schema-url"]


def test_a_stale_schema_url_blocks_only_when_the_change_made_it_stale(repo: Repo) -> None:
    # an unrelated line of a real example whose URL was already stale: shown as pre-existing, not
    # blocking
    repo.edit_json(
        DATASOURCE, lambda doc: {"dataSource": {**doc["dataSource"], "name": "datasource_two"}}
    )
    repo.commit()
    report = review_pr(repo)
    assert stale(report) and all(
        f.state is State.UNCHANGED and not report.is_blocking(f) for f in stale(report)
    )
    assert not report.has_errors, [f.message for f in report.current()]
    # the example as changed uses a field the version it names lacks (contentType, added in 1-1-0):
    # blocks
    git(repo.path, "checkout", "-q", "main")
    repo.edit_json(
        DOCUMENTATION,
        lambda doc: {
            "documentation": {k: v for k, v in doc["documentation"].items() if k != "contentType"}
        },
    )
    repo.commit("an example without contentType", branch="main")
    git(repo.path, "checkout", "-q", "-B", "pr")  # a new pull request from the new main
    repo.edit_json(
        DOCUMENTATION,
        lambda doc: {"documentation": {**doc["documentation"], "contentType": "text/plain"}},
    )
    repo.commit()
    report = review_pr(repo)
    [found] = stale(report)
    assert (
        found.state is State.NEW
        and report.is_blocking(found)
        and "lacks /documentation/contentType" in found.message
    )


def test_pre_existing_findings_are_folded_or_counted_in_every_format(repo: Repo) -> None:
    """What the change did not cause never reads as its own: counted in text, folded in Markdown, a
    SARIF note."""
    repo.edit_json(CORE_REGISTRY, declare_a_core_facet)
    repo.commit()
    report = review_pr(repo)
    old = report.pre_existing()
    assert old and any(f.severity is Severity.ERROR for f in old)
    text = render(report, "text")
    assert (
        f"-- pre-existing: {len(old)} finding(s) already at the base, not failing this change"
        in text
    )
    assert not any(
        line.startswith(f"{f.path}:") and f.message in line
        for f in old
        for line in text.splitlines()
    )
    markdown = render(report, "markdown")
    assert f"<details><summary>{len(old)} pre-existing finding(s)</summary>" in markdown
    assert markdown.count("<details>") == markdown.count("</details>")
    results = json.loads(render(report, "sarif"))["runs"][0]["results"]
    unchanged = [r for r in results if r["baselineState"] == "unchanged"]
    assert unchanged and {r["level"] for r in unchanged} == {"note"}
    assert "error" in {r["properties"]["severity"] for r in unchanged}
    strict = review_pr(repo, strict=True)  # failing with --strict: listed, and errors again
    assert any(f.message in render(strict, "text") for f in old)
    assert "error" in {
        r["level"]
        for r in json.loads(render(strict, "sarif"))["runs"][0]["results"]
        if r["baselineState"] == "unchanged"
    }


def test_pre_existing_findings_are_notice_annotations_and_not_inline(repo: Repo) -> None:
    from bot.github.publish import plan_review, to_annotations

    repo.edit_json(CORE_REGISTRY, declare_a_core_facet)
    repo.commit()
    report = review_pr(repo)
    with GitSnapshot(repo.path, "main"), GitSnapshot(repo.path, "pr"):
        changes = ChangeSet.from_git(repo.path, "main", "pr")
    notes = to_annotations(report.pre_existing())
    assert notes and {n.level for n in notes} == {"notice"}
    inline, rest = plan_review(report, changes, 30)
    assert not [c for c in inline if "facets/suffix" in c.body]
    assert all(f.state is not State.UNCHANGED for f in rest)


# -- the whole tree ------------------------------------------------------------------------------


def check_all(path: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "all.json"
    code = main(["check", "--all", str(path), "--format", "json", "-o", str(out), *extra])
    return code, json.loads(out.read_text(encoding="utf-8"))


def write_config(root: Path, text: str) -> None:
    config = root / ".github" / "registry-bot.yml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(text, encoding="utf-8")


def test_all_on_the_real_registry_passes_with_its_adoption_gaps_as_warnings(
    corpus: Path, tmp_path: Path
) -> None:
    code, data = check_all(corpus, tmp_path)
    assert code == 0 and data["summary"]["errors"] == 0
    warned = {f["rule"] for f in data["findings"] if f["severity"] == "warning"}
    assert warned & set(ADOPTION_GAPS), "the adoption gaps of today's registry are reported"
    strict_code, strict = check_all(corpus, tmp_path, "--strict")
    assert strict_code == 1 and {
        f["rule"] for f in strict["findings"] if f["severity"] == "error"
    } <= set(ADOPTION_GAPS)


def test_all_fails_on_a_consumer_block_holding_produced_facets(
    corpus_copy: Path, tmp_path: Path
) -> None:
    path = corpus_copy / "spec/registry/gcp/lineage/registry.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    block = data.setdefault("consumer", {"root_doc_URL": "https://example.com/docs"})
    block["produced_facets"] = block.pop("consumed_facets", [])
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    code, report = check_all(corpus_copy, tmp_path)
    assert code == 1
    assert "entry/misplaced-facets" in {
        f["rule"] for f in report["findings"] if f["severity"] == "error"
    }


def test_all_fails_on_a_facet_file_whose_name_does_not_match(
    corpus_copy: Path, tmp_path: Path
) -> None:
    facets = corpus_copy / ICEBERG / "facets"
    source = next(p for p in sorted(facets.glob("*.json")))
    source.rename(source.with_name(source.stem + "Copy.json"))
    code, report = check_all(corpus_copy, tmp_path)
    assert code == 1
    errors = {f["rule"] for f in report["findings"] if f["severity"] == "error"}
    assert "facets/name-mismatch" in errors


def test_the_adoption_gaps_are_configurable(corpus_copy: Path, tmp_path: Path) -> None:
    write_config(corpus_copy, "verdict:\n  adoption_gaps: [examples/missing]\n")
    code, data = check_all(corpus_copy, tmp_path)
    assert code == 1
    errors = {f["rule"] for f in data["findings"] if f["severity"] == "error"}
    assert "owners/missing-codeowners" in errors and "examples/missing" not in errors


def test_an_unknown_rule_in_the_adoption_gaps_is_a_config_error(
    corpus_copy: Path, tmp_path: Path
) -> None:
    write_config(corpus_copy, "verdict:\n  adoption_gaps: [examples/misssing]\n")
    _, data = check_all(corpus_copy, tmp_path)
    (problem,) = [f for f in data["findings"] if f["rule"] == "config/invalid"]
    assert "examples/misssing" in problem["message"]


def test_adoption_gaps_in_changes_takes_error_or_warning(corpus_copy: Path, tmp_path: Path) -> None:
    write_config(corpus_copy, "verdict:\n  adoption_gaps_in_changes: sometimes\n")
    _, data = check_all(corpus_copy, tmp_path)
    (problem,) = [f for f in data["findings"] if f["rule"] == "config/invalid"]
    assert "adoption_gaps_in_changes" in problem["message"]
