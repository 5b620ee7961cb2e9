"""Issue 18's smaller promises: strict JSON everywhere, each _schemaURL resolved, fields an open
schema does not declare, one message per cause, and the layouts from before the registry reviewed on
real commits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.findings import Finding, Report, Severity, State
from bot.core.jsondoc import JsonDoc, JsonProblem
from bot.core.snapshot import MemorySnapshot
from bot.model.naming.loader import read_folder
from tests import mutations as m
from tests.history import commit_of
from tests.planting import dump, plant, read, review_pr


def new(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule and f.state is State.NEW]


# --- one strict parser ----------------------------------------------------------------------------


def test_a_duplicate_key_is_refused_naming_the_key_and_both_lines() -> None:
    text = '{\n  "run": {\n    "runId": "a",\n    "facets": {},\n    "runId": "b"\n  }\n}\n'
    with pytest.raises(JsonProblem) as caught:
        JsonDoc.parse(text, "event.json")
    problem = caught.value
    assert (problem.line, problem.column) == (5, 5)
    assert (
        "'runId'" in problem.message
        and "line 5" in problem.message
        and "first at line 3" in problem.message
    )


def test_the_same_key_in_different_objects_is_fine() -> None:
    doc = JsonDoc.parse('{"a": {"id": 1}, "b": [{"id": 1}, {"id": 2}], "id": {"id": {}}}')
    assert doc.value["b"][1] == {"id": 2}


def test_a_duplicate_deep_in_an_array_is_located() -> None:
    text = '[{"k": 1}, {"k": 2, "x": {"y": [1, {"z": 0,\n"z": 1}]}}]'
    with pytest.raises(JsonProblem) as caught:
        JsonDoc.parse(text)
    assert (caught.value.line, caught.value.column) == (2, 1) and "'z'" in caught.value.message


def test_a_duplicate_key_in_a_naming_file_is_a_problem_of_that_file() -> None:
    snapshot = MemorySnapshot(
        {"spec/naming/datasets/pg.json": b'{"kind": "dataset",\n "kind": "job"}\n'}
    )
    files = read_folder(snapshot, "spec/naming")
    [problem] = files.problems
    assert (
        problem.rule == "naming/invalid-file"
        and "'kind'" in problem.message
        and "line 2" in problem.message
    )


# --- the real history: _schemaURL, drift, the spec ------------------------------------------------


@pytest.fixture(scope="module")
def newest(history_clone: Path) -> str:
    return commit_of(history_clone, "#3834")


def test_a_wrong_schema_url_names_the_right_one_and_carries_the_fix(
    history_clone: Path, newest: str
) -> None:
    defect, _ = m.url_kind(m.missing_def)(history_clone, newest) or ({}, {})
    report = review_pr(history_clone, plant(history_clone, newest, defect))
    [finding] = new(report, "examples/schema-url")
    target = m.targets(history_clone, newest)[0]
    assert finding.path == target.example_path and finding.pointer == f"/{target.key}/_schemaURL"
    assert "does not define" in finding.message and target.schema_id in finding.message
    assert finding.fix is not None and target.schema_id in finding.fix.edits[0].text


def test_a_field_no_version_declares_is_a_warning_naming_the_closest(
    history_clone: Path, newest: str
) -> None:
    target = m.targets(history_clone, newest)[0]
    field = m.first_field(target)
    assert field is not None
    value = json.loads(target.example_text)
    value[target.key][field[:-1] + "X"] = value[target.key][field]  # a near miss, not a respelling
    report = review_pr(
        history_clone, plant(history_clone, newest, {target.example_path: dump(value)})
    )
    [finding] = new(report, "examples/undeclared-field")
    assert finding.severity is Severity.WARNING and repr(field) in finding.message
    assert report.verdict.value == "success"


def test_a_truncated_published_copy_is_unreadable_not_missing(
    history_clone: Path, newest: str
) -> None:
    target = next(t for t in m.targets(history_clone, newest) if m.fmt(t.version) in t.published)
    copy = f"{m.MIRROR}/facets/{m.fmt(target.version)}/{target.filename}"
    data = read(history_clone, newest, copy) or b""
    report = review_pr(history_clone, plant(history_clone, newest, {copy: data[: len(data) // 2]}))
    assert {f.rule for f in report.findings if report.is_blocking(f)} == {
        "versions/published-modified",
        "spec/unreadable",
    }
    assert not [f for f in report.findings if "not in the published mirror" in f.message]


def test_an_unreadable_facet_file_is_not_also_missing(history_clone: Path, newest: str) -> None:
    path = next(p for p in m.files_of(history_clone, newest, "spec/registry") if "/facets/" in p)
    report = review_pr(history_clone, plant(history_clone, newest, {path: b'{"$id": "x",}'}))
    assert new(report, "facets/unreadable")
    assert not [f for f in report.findings if "does not exist" in f.message]


def test_a_spec_change_without_a_bump_and_a_good_one(history_clone: Path, newest: str) -> None:
    text = (read(history_clone, newest, m.SPEC) or b"").decode()
    edited = text.replace('"$defs": {', '"$comment": "planted",\n  "$defs": {', 1)
    report = review_pr(history_clone, plant(history_clone, newest, {m.SPEC: edited.encode()}))
    assert [f.rule for f in report.findings if report.is_blocking(f)] == ["spec/not-bumped"]
    schema_id = json.loads(text)["$id"]
    bumped = edited.replace(schema_id, schema_id.replace("/2-0-2/", "/2-0-3/"))
    copy = f"{m.MIRROR}/2-0-3/OpenLineage.json"
    assert "/2-0-2/" in schema_id
    report = review_pr(history_clone, plant(history_clone, newest, {m.SPEC: bumped.encode()}))
    assert [f.rule for f in report.findings if report.is_blocking(f)] == ["spec/not-published"]
    report = review_pr(
        history_clone,
        plant(history_clone, newest, {m.SPEC: bumped.encode(), copy: bumped.encode()}),
    )
    assert report.verdict.value == "success"


# --- owners: one message per cause, core delegated through the root CODEOWNERS --------------------


def test_an_invalid_owner_is_one_finding(history_clone: Path, newest: str) -> None:
    path = next(
        p
        for p in m.files_of(history_clone, newest, "spec/registry")
        if p.endswith("/registry.json") and "/core/" not in p
    )
    codeowners = path.replace("registry.json", "CODEOWNERS")
    report = review_pr(
        history_clone, plant(history_clone, newest, {codeowners: b"* lineage-team@\n"})
    )
    rules = [
        f.rule for f in report.findings if f.path == codeowners and f.severity is Severity.ERROR
    ]
    assert rules == ["owners/invalid-owner"]


def test_core_delegated_by_the_root_codeowners_needs_no_file_of_its_own(
    history_clone: Path,
) -> None:
    # the registry's own first layout
    report = review_pr(history_clone, commit_of(history_clone, "#2729"))
    assert not [
        f for f in report.findings if f.rule == "owners/missing-codeowners" and f.entry == "core"
    ]
    root = (read(history_clone, commit_of(history_clone, "#2729"), "CODEOWNERS") or b"").decode()
    without = "\n".join(x for x in root.splitlines() if "spec/registry/core" not in x) + "\n"
    report = review_pr(
        history_clone,
        plant(history_clone, commit_of(history_clone, "#2729"), {"CODEOWNERS": without.encode()}),
    )
    assert [f.entry for f in report.findings if f.rule == "owners/missing-codeowners"] == ["core"]


def test_a_commit_from_before_the_registry_is_reviewed(
    history_clone: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 2024: spec/facets, spec/tests and a mirror, no spec/registry
    commit = commit_of(history_clone, "#2562")
    assert read(history_clone, commit, "spec/registry/core/registry.json") is None
    code = main(
        ["check", str(history_clone), "--base", f"{commit}^", "--head", commit, "--format", "json"]
    )
    out = capsys.readouterr()
    assert "no registry found" not in out.err
    assert code == 1  # its stale _schemaURL (tests/test_history.py)
    assert "examples/stale-schema-url" in out.out


def test_the_real_examples_naming_a_version_and_defs_that_do_not_exist_block_their_change(
    corpus: Path, tmp_path: Path
) -> None:
    """Today's core examples of BaseSubsetDatasetFacet name 1-1-0 (never published) and
    ``$defs/InputSubsetDatasetFacet`` (the file defines InputSubsetInputDatasetFacet): the change
    that adds them."""
    from bot.core.changes import ChangeSet
    from bot.core.snapshot import GitSnapshot
    from bot.review.engine import ReviewContext, review
    from tests.gitrepo import Repo, git

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    folder = "spec/tests/BaseSubsetDatasetFacet"
    examples = {
        p.relative_to(repo.path).as_posix(): p.read_bytes()
        for p in (repo.path / folder).glob("*.json")
    }
    assert examples
    git(repo.path, "rm", "-q", "-r", folder)
    git(repo.path, "commit", "-q", "-m", "without the examples")
    repo.change(dict(examples))  # the pull request adds them back as they are today
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = review(
            head=head,
            base=base,
            changes=ChangeSet.from_git(repo.path, "main", "pr"),
            context=ReviewContext(),
        )
    found = [
        f for f in report.findings if f.rule == "examples/schema-url" and report.is_blocking(f)
    ]
    assert sorted(f.path for f in found) == sorted(examples)
    assert all(
        "1-1-0" in f.message
        and "does not exist" in f.message
        and "1-0-0" in f.message
        and "#/$defs/InputSubsetDatasetFacet, which no version of it defines" in f.message
        for f in found
    )


def test_a_sample_event_with_a_duplicate_key_is_refused_by_the_naming_check(tmp_path: Path) -> None:
    from bot.model.naming.events import EventsProblem, read_events

    whole = tmp_path / "event.json"
    whole.write_text('{"eventType": "START",\n "run": {"runId": "a"},\n "run": {"runId": "b"}}\n')
    with pytest.raises(EventsProblem, match=r"duplicate key 'run' at line 3 \(first at line 2\)"):
        read_events(whole)
    lines = tmp_path / "events.jsonl"
    lines.write_text('{"eventType": "START"}\n{"runId": "a", "runId": "b"}\n')
    with pytest.raises(EventsProblem, match=r"line 2: duplicate key 'runId'"):
        read_events(lines)
    lines.write_text('{"eventType": "START"}\n{"runId": "a"}\n')
    assert len(read_events(lines)) == 2
