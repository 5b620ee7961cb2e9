"""Issue 32's rules on real commits: samples that contradict their entry (in every file shape, on
their line), case twins named by the existing key, over-bumps read as strict SchemaVer, naming files
that contradict themselves (alternatives and literal words of the templates are no
contradiction)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.core.findings import Finding, Report, Severity, State, Verdict
from bot.core.snapshot import DirSnapshot
from bot.model.evolution import witness
from bot.model.naming import bundled_folder
from bot.model.naming.consistency import problems
from bot.model.naming.loader import read_folder
from bot.model.naming.rules import NamingRules
from bot.model.registry import FacetSchema
from tests import mutations as m
from tests.history import commit_of
from tests.planting import _git, dump, plant, read, review_pr


def new(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule and f.state is State.NEW]


@pytest.fixture(scope="module")
def newest(history_clone: Path) -> str:
    return commit_of(history_clone, "#3834")


@pytest.fixture(scope="module")
def declared(history_clone: Path, newest: str) -> m.Declared:
    found = m.declared_facet(history_clone, newest)
    assert found is not None
    return found


# --- samples --------------------------------------------------------------------------------------


def test_a_wrong_key_in_an_array_of_samples_is_on_its_line(
    history_clone: Path, newest: str, declared: m.Declared
) -> None:
    good = json.loads(declared.event())
    bad = json.loads(declared.event(key=declared.key.upper()))
    text = json.dumps([good, bad], indent=2) + "\n"
    report = review_pr(history_clone, plant(history_clone, newest, {declared.path: text.encode()}))
    [finding] = new(report, "samples/undeclared-facet")
    assert finding.pointer.startswith("/1/") and finding.pointer.endswith(
        f"/{declared.key.upper()}"
    )
    assert text.splitlines()[finding.line - 1].strip().startswith(f'"{declared.key.upper()}"')
    assert (
        finding.hint
        == f"Correct the key to {declared.key!r} ({declared.schema_id.rsplit('/', 1)[-1]})."
    )
    assert report.verdict is Verdict.FAILURE


def test_json_lines_samples_are_read_line_by_line(
    history_clone: Path, newest: str, declared: m.Declared
) -> None:
    good = json.dumps(json.loads(declared.event()))
    bad = json.dumps(json.loads(declared.event(key=declared.key + "_planted")))
    path = declared.path.replace(".json", ".jsonl")
    report = review_pr(
        history_clone, plant(history_clone, newest, {path: f"{good}\n\n{bad}\n{{oops\n".encode()})
    )
    assert [
        (f.rule, f.line) for f in report.findings if f.path == path and f.state is State.NEW
    ] == [("samples/undeclared-facet", 3), ("samples/unreadable", 4)]


def test_the_command_line_blocks_the_sample_as_the_app_does(
    history_clone: Path, newest: str, declared: m.Declared, capsys: pytest.CaptureFixture[str]
) -> None:
    head = plant(
        history_clone, newest, {declared.path: declared.event(key=declared.key + "_planted")}
    )
    code = main(
        ["check", str(history_clone), "--base", f"{head}^", "--head", head, "--format", "json"]
    )
    [finding] = [
        f
        for f in json.loads(capsys.readouterr().out)["findings"]
        if f["rule"] == "samples/undeclared-facet"
    ]
    assert code == 1 and finding["path"] == declared.path and finding["severity"] == "error"


def test_core_keys_and_another_entrys_declared_key(
    history_clone: Path, newest: str, declared: m.Declared
) -> None:
    """A core facet's key needs no declaration; a key another entry's schema defines says what to
    declare."""
    registry = m._registry(history_clone, newest)
    other = next(
        f
        for e in sorted(registry.entries.values(), key=lambda e: e.name)
        if not e.is_core and not declared.path.startswith(e.folder + "/")
        for s in e.schemas
        for f in s.facets
        if f.container in m.PLACES
    )
    facet = {"_producer": declared.producer, "_schemaURL": "https://example.com/schemas/x.json"}
    event = m._sample_event(other.container or "", other.key, facet, declared.producer)
    event["run"]["facets"]["nominalTime"] = {**facet, "nominalStartTime": "2025-07-01T10:00:00Z"}
    report = review_pr(history_clone, plant(history_clone, newest, {declared.path: dump(event)}))
    [finding] = new(report, "samples/undeclared-facet")
    assert repr(other.key) in finding.message and 'Declare it: add "ol:' in finding.hint


def _later(repo: Path, parent: str, edits: dict[str, bytes]) -> str:
    """A pull request on top of ``parent`` (``plant`` builds on a commit's parent)."""
    tree = _git(repo, "rev-parse", f"{plant(repo, parent, edits)}^{{tree}}")
    return _git(repo, "commit-tree", tree, "-p", parent, "-m", "later")


def test_a_wrong_sample_stays_pre_existing_and_a_withdrawn_declaration_is_new(
    history_clone: Path, newest: str, declared: m.Declared
) -> None:
    with_bad = plant(history_clone, newest, {declared.path: declared.event(key="plantedKey")})
    assert new(review_pr(history_clone, with_bad), "samples/undeclared-facet")
    entry_json = declared.path.split("/samples/")[0] + "/registry.json"
    text = (read(history_clone, with_bad, entry_json) or b"").decode()
    # a later change to the same entry that leaves the sample alone: its finding is pre-existing,
    # not blocking
    report = review_pr(
        history_clone,
        _later(history_clone, with_bad, {entry_json: (text.rstrip() + "\n\n").encode()}),
    )
    [finding] = [f for f in report.findings if f.rule == "samples/undeclared-facet"]
    assert finding.state is State.UNCHANGED and not report.is_blocking(finding)
    # a change withdrawing the declaration a good sample relies on contradicts that sample: new,
    # blocking
    with_good = plant(history_clone, newest, {declared.path: declared.event()})
    value = json.loads(text)
    value["producer"]["produced_facets"] = []
    report = review_pr(history_clone, _later(history_clone, with_good, {entry_json: dump(value)}))
    assert [f.path for f in new(report, "samples/undeclared-facet")] == [declared.path]


# --- keys -----------------------------------------------------------------------------------------


def test_a_case_twin_names_the_existing_key_and_only_the_new_file(
    history_clone: Path, newest: str
) -> None:
    defect, _ = m.case_twin(history_clone, newest) or ({}, {})
    report = review_pr(history_clone, plant(history_clone, newest, defect))
    findings = new(report, "keys/case-twin")
    assert findings and all(
        f.path.endswith("/PlantedColumnLineageDatasetFacet.json") or "Planted" in f.path
        for f in findings
    )
    assert [f.severity for f in findings] == [Severity.ERROR]
    assert "differs only in case from the existing facet key" in findings[0].message


def test_a_case_twin_of_a_defs_name_alone_is_caught(history_clone: Path, newest: str) -> None:
    """A new core facet whose key is new but whose `$defs` name (the type its `_schemaURL` fragment
    names) differs only in case from an existing facet's: one finding, on the `$defs` name, naming
    the existing one; the same facet with a `$defs` name of its own has none."""
    t = m.targets(history_clone, newest)[0]
    key = "planted" + t.key[:1].upper() + t.key[1:]
    twin = t.defs_name.swapcase()
    report = review_pr(
        history_clone,
        plant(history_clone, newest, m._new_core_facet(history_clone, newest, t, key, twin)),
    )
    [finding] = new(report, "keys/case-twin")
    assert finding.pointer == f"/$defs/{twin}" and "Planted" in finding.path
    assert (
        f"$defs name {twin!r} differs only in case from the existing $defs name "
        in (finding.message)
        and repr(t.defs_name) in finding.message
    )
    assert report.is_blocking(finding)
    control = review_pr(
        history_clone,
        plant(history_clone, newest, m._new_core_facet(history_clone, newest, t, key)),
    )
    assert not new(control, "keys/case-twin")


def _entry_facet(schema: FacetSchema, key: str) -> dict[str, bytes | None]:
    """A new facet file in ``schema``'s entry, copied from it (file and `$defs` name renamed
    ``Planted...``), keyed ``key``."""
    name = f"Planted{schema.facets[0].name}"
    value = json.loads(json.dumps(schema.value))
    value["$id"] = value["$id"].rsplit("/", 1)[0] + f"/{name}.json"
    value["$defs"][name] = value["$defs"].pop(schema.facets[0].name)
    value["properties"] = {key: {"$ref": f"#/$defs/{name}"}}
    return {f"{schema.path.rsplit('/', 1)[0]}/{name}.json": dump(value)}


def _one_facet_schemas(repo: Path, commit: str) -> list[FacetSchema]:
    """Schemas defining one facet, core's first then the other entries' (name order), one each."""
    registry = m._registry(repo, commit)
    out = []
    for _, entry in sorted(registry.entries.items(), key=lambda e: (not e[1].is_core, e[0])):
        out += [s for s in entry.schemas if len(s.facets) == 1][:1]
    return out


@pytest.mark.parametrize("existing", ["core", "another entry"])
def test_an_entrys_facet_keyed_like_core_or_another_entrys_is_a_case_twin(
    history_clone: Path, newest: str, existing: str
) -> None:
    """A non-core entry adds a facet whose key differs only in case from a core facet's key, or from
    another non-core entry's: the finding is on the new key and names the existing one and its file;
    the same facet under a key of its own has none."""
    core, *entries = _one_facet_schemas(history_clone, newest)
    assert len(entries) >= 2 and core.entry.is_core
    adding, other = entries[0], (core if existing == "core" else entries[1])
    assert other.entry.name != adding.entry.name
    twin = other.facets[0].key.swapcase()
    report = review_pr(history_clone, plant(history_clone, newest, _entry_facet(adding, twin)))
    [finding] = new(report, "keys/case-twin")
    assert finding.path.startswith(adding.entry.folder + "/") and finding.pointer.endswith(
        f"/{twin}"
    )
    assert (
        f"facet key {twin!r} differs only in case from the existing facet key "
        f"{other.facets[0].key!r} in {other.path}" == finding.message
    )
    control = review_pr(
        history_clone,
        plant(history_clone, newest, _entry_facet(adding, "planted_" + other.facets[0].key)),
    )
    assert not new(control, "keys/case-twin")


# --- over-bumps -----------------------------------------------------------------------------------


def test_strict_schemaver_bumps_are_not_over_bumps(history_clone: Path, newest: str) -> None:
    """An optional field added to an open object: ADDITION by the default policy, REVISION by strict
    SchemaVer; a REVISION bump is no over-bump, a MODEL bump is one that names REVISION."""
    t = m.targets(history_clone, newest)[0]
    added = m.add_field(t.schema_text, t.defs_name)
    assert added is not None
    major, revision, _ = t.version
    strict = review_pr(
        history_clone,
        plant(history_clone, newest, m.new_version(t, added, (major, revision + 1, 0))),
    )
    assert not new(strict, "versions/over-bump") and strict.verdict is Verdict.SUCCESS
    over = review_pr(
        history_clone, plant(history_clone, newest, m.new_version(t, added, (major + 1, 0, 0)))
    )
    [finding] = new(over, "versions/over-bump")
    assert "needs only REVISION" in finding.message and finding.severity is Severity.NOTICE


def test_an_over_bump_is_judged_without_searching_for_a_witness(
    history_clone: Path, newest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strict SchemaVer comparison behind an over-bump reads only which digit the change needs:
    a witness would never be shown, so none is searched for (the search builds both pure-Python
    validators and was two thirds of the slowest real review's CPU)."""
    searched: list[object] = []
    find = witness.Search.find

    def counted(self: witness.Search, *args: Any, **kwargs: Any) -> witness.Witness | None:
        searched.append(args)
        return find(self, *args, **kwargs)

    monkeypatch.setattr(witness.Search, "find", counted)
    t = m.targets(history_clone, newest)[0]
    added = m.add_field(t.schema_text, t.defs_name)
    assert added is not None
    major, _, _ = t.version
    over = review_pr(
        history_clone, plant(history_clone, newest, m.new_version(t, added, (major + 1, 0, 0)))
    )
    [finding] = new(over, "versions/over-bump")
    assert "needs only REVISION" in finding.message
    assert searched == []


# --- naming files ---------------------------------------------------------------------------------


def test_the_bundled_naming_files_agree_with_themselves() -> None:
    files = read_folder(DirSnapshot(bundled_folder()), "")
    rules = NamingRules(((p, d.value) for p, d in files.docs.items()), folder="")
    sources = [*rules.datasets.values(), *rules.jobs.values()]
    assert len(sources) > 35
    assert [p for s in sources for p in problems(s)] == []
