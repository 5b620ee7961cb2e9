"""``registry-bot init``: a drafted entry passes ``check`` on a copy of the real OpenLineage
repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.model import draft
from bot.model.naming.events import document_kind, read_events
from bot.model.naming.placeholders import has_placeholders
from tests.gitrepo import Repo, git

EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2024-01-01T00:00:00Z",
    "producer": "https://example.com/acme",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {
        "runId": "0190c6d8-0b5c-7cc2-a8d0-5e3f1d4a2b6c",
        "facets": {
            "acme_tools_stats": {
                "_producer": "https://example.com/acme",
                "_schemaURL": "x",
                "rows": 10,
                "ratio": 0.5,
                "tags": ["a"],
                "nested": {"ok": True},
            },
            "nominalTime": {
                "_producer": "p",
                "_schemaURL": "s",
                "nominalStartTime": "2024-01-01T00:00:00Z",
            },
        },
    },
    "job": {"namespace": "ns", "name": "j"},
    "inputs": [
        {
            "namespace": "ns",
            "name": "t",
            "inputFacets": {
                "acme_tools_scan": {
                    "_producer": "https://example.com/acme",
                    "_schemaURL": "x",
                    "files": 3,
                }
            },
        }
    ],
}
SECOND = {
    **EVENT,
    "job": {
        "namespace": "ns",
        "name": "j",
        "facets": {
            "acme_tools_pipeline": {
                "_producer": "https://example.com/acme",
                "_schemaURL": "x",
                "pipeline": "p1",
            }
        },
    },
}


def test_an_entry_drafted_from_sample_events_passes_check(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    git(repo.path, "checkout", "-q", "-b", "pr")
    events = []
    for i, event in enumerate((EVENT, SECOND)):
        events.append(tmp_path / f"event{i}.json")
        events[-1].write_text(json.dumps(event))
    assert (
        main(
            [
                "init",
                "acme:tools",
                *map(str, events),
                "--owner",
                "@acme-dev",
                "--repo",
                str(repo.path),
            ]
        )
        == 0
    )
    folder = repo.path / "spec/registry/acme/tools"
    assert (folder / "CODEOWNERS").read_text().splitlines()[-1] == "* @acme-dev"
    declared = json.loads((folder / "registry.json").read_text())["producer"]["produced_facets"]
    assert sorted(declared) == [
        "ol:acme:tools:AcmeToolsPipelineJobFacet.json",
        "ol:acme:tools:AcmeToolsScanInputDatasetFacet.json",
        # core's nominalTime is not drafted
        "ol:acme:tools:AcmeToolsStatsRunFacet.json",
    ]
    schema = json.loads((folder / "facets/AcmeToolsStatsRunFacet.json").read_text())
    assert schema["$id"] == "https://openlineage.io/spec/facets/1-0-0/AcmeToolsStatsRunFacet.json"
    assert schema["$defs"]["AcmeToolsStatsRunFacet"]["allOf"][0]["$ref"].endswith(
        "OpenLineage.json#/$defs/RunFacet"
    )
    repo.commit("acme:tools: a new entry", branch="pr")
    capsys.readouterr()
    # the new name is approved by the registry's maintainers (root CODEOWNERS), as for any new entry
    code = main(
        [
            "check",
            str(repo.path),
            "--base",
            "main",
            "--head",
            "pr",
            "--author",
            "acme-dev",
            "--approved-by",
            "OpenLineage/committers",
        ]
    )
    assert code == 0, capsys.readouterr().out
    assert (
        main(
            ["init", "acme:tools", str(events[0]), "--owner", "@acme-dev", "--repo", str(repo.path)]
        )
        == 2
    )


def test_init_refuses_a_bad_name_or_owner(tmp_path: Path) -> None:
    event = tmp_path / "e.json"
    event.write_text(json.dumps(EVENT))
    assert main(["init", "Acme Tools", str(event), "--owner", "@a", "--repo", str(tmp_path)]) == 2
    assert main(["init", "acme", str(event), "--owner", "nobody", "--repo", str(tmp_path)]) == 2


def dbt_event_files(corpus: Path) -> list[str]:
    """The files of dbt's test suite that hold events (its manifests, profiles and catalogs do
    not)."""
    found = []
    for path in sorted((corpus / "integration/common/tests/dbt").rglob("*.json")):
        try:
            documents = read_events(path)
        except Exception:  # noqa: BLE001 - a file that is not JSON holds no event
            continue
        if any(document_kind(d) in draft.EVENT_KINDS for d in documents):
            found.append(str(path))
    return found


def test_the_draft_of_the_real_dbt_events_passes_check_with_no_warning(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    files = dbt_event_files(corpus)
    assert len(files) >= 20
    assert main(["init", "dbt", *files, "--owner", "@dbt-labs", "--repo", str(repo.path)]) == 0
    out = capsys.readouterr().out
    folder = repo.path / "spec/registry/dbt"
    examples = sorted((folder / "facets/examples").rglob("*.json"))
    assert len(examples) == 4  # dbt_version, dbt_run, dbt_node (job), dbt_model (output dataset)
    for example in examples:
        value = json.loads(example.read_text())
        # no `{{ any(result) }}` copied from the test suite
        assert not has_placeholders(value), example
        assert "example.com" not in example.read_text()
        [(_, facet)] = value.items()
        assert (
            facet["_producer"]
            == "https://github.com/OpenLineage/OpenLineage/tree/0.0.1/integration/dbt"
        )
    registry = json.loads((folder / "registry.json").read_text())
    assert registry["producer"]["root_doc_URL"].startswith("https://github.com/OpenLineage/")
    # the dbt schemas already in the repository are reused; a sample value they refused widens the
    # type
    run = json.loads((folder / "facets/DbtRunRunFacet.json").read_text())
    own = run["$defs"]["DbtRunRunFacet"]["allOf"][1]
    assert own["properties"]["invocation_id"]["format"] == "uuid" and own["required"] == [
        "invocation_id"
    ]
    assert own["properties"]["account_id"]["type"] == ["null", "string"]
    assert "dbt-run-run-facet.json reused" in out
    assert "processing_engine" in out and "parent" in out  # skipped facets are named, with why
    assert "/spec/registry/dbt/ @dbt-labs" in (repo.path / "CODEOWNERS").read_text()
    # the hint: the draft is on main, so it names a branch of its own first, then the check against
    # main
    assert "switch -c registry-dbt" in out and "--base main" in out
    git(repo.path, "switch", "-q", "-c", "registry-dbt")
    repo.commit("dbt: a new entry", branch="registry-dbt")
    capsys.readouterr()
    code = main(
        [
            "check",
            str(repo.path),
            "--base",
            "main",
            "--head",
            "registry-dbt",
            "--author",
            "dbt-labs",
            "--approved-by",
            "OpenLineage/committers",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "SUCCESS: 0 error(s), 0 warning(s), 0 notice(s)" in out, out


def test_types_are_merged_over_every_sample() -> None:
    samples = [
        {"n": 1, "tags": ["a"], "x": None, "o": {"a": 1}},
        {"n": 1.5, "tags": [1], "x": "s", "o": {"b": True}},
    ]
    merged: dict[str, object] = {}
    for sample in samples:
        merged = draft.merge(merged, draft.infer(sample))
    props = merged["properties"]
    assert isinstance(props, dict)
    assert props["n"]["type"] == "number" and props["x"]["type"] == ["null", "string"]
    assert props["tags"]["items"]["type"] == ["integer", "string"]
    assert set(props["o"]["properties"]) == {"a", "b"}
    assert draft.infer("{{ any(result) }}") == {}  # a matcher says nothing about the type


@pytest.mark.parametrize(
    "key", ["acme_..%2F..%2Fx", "acme_\u202egnp", "acme_a|b", "acme_a@b", "acme_../x"]
)
def test_facet_keys_that_are_not_file_names_are_skipped_and_named(
    tmp_path: Path, corpus: Path, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = corpus_registry(tmp_path, corpus)
    key = key.encode().decode("unicode_escape")
    event = json.loads(json.dumps(EVENT))
    event["run"]["facets"][key] = {"rows": 1}
    path = tmp_path / "e.json"
    path.write_text(json.dumps(event))
    assert main(["init", "acme", str(path), "--owner", "@a", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "not a facet key" in out
    written = [p.name for p in (repo / "spec/registry/acme").rglob("*")]
    assert written and all(
        n.isascii() and ".." not in n and "|" not in n and "@" not in n for n in written
    )


def test_init_bounds_its_input(
    tmp_path: Path,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = corpus_registry(tmp_path, corpus)
    many = json.loads(json.dumps(EVENT))
    many["run"]["facets"] = {f"acme_f{i}": {"v": i} for i in range(draft.MAX_FACETS + 1)}
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many))
    assert main(["init", "acme", str(path), "--owner", "@a", "--repo", str(repo)]) == 2
    assert f"more than {draft.MAX_FACETS} facets" in capsys.readouterr().err
    monkeypatch.setattr("bot.cli.commands.init.MAX_INPUT_BYTES", 100)
    assert main(["init", "acme", str(path), "--owner", "@a", "--repo", str(repo)]) == 2
    assert "MiB together" in capsys.readouterr().err
    assert not (repo / "spec/registry/acme").exists()


def corpus_registry(tmp_path: Path, corpus: Path) -> Path:
    """A folder holding the corpus's spec/ (a registry) and a root CODEOWNERS, not a git
    repository."""
    import shutil

    shutil.copytree(corpus / "spec", tmp_path / "repo" / "spec")
    shutil.copy(corpus / "CODEOWNERS", tmp_path / "repo" / "CODEOWNERS")
    return tmp_path / "repo"


def test_init_refuses_before_writing_anything(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = corpus_registry(tmp_path, corpus)
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    event, not_event, foreign = (
        tmp_path / "e.json",
        tmp_path / "manifest.json",
        tmp_path / "foreign.json",
    )
    event.write_text(json.dumps(EVENT))
    not_event.write_text(json.dumps({"nodes": {}, "metadata": {"dbt_version": "1"}}))
    foreign.write_text(
        json.dumps({**EVENT, "run": {"runId": "x", "facets": {"other_x": {"a": 1}}}, "inputs": []})
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = {
        "missing repository": [
            "init",
            "acme",
            str(event),
            "--owner",
            "@a",
            "--repo",
            str(tmp_path / "no/such"),
        ],
        "no registry": ["init", "acme", str(event), "--owner", "@a", "--repo", str(empty)],
        "not an event": ["init", "acme", str(not_event), "--owner", "@a", "--repo", str(repo)],
        "nothing to draft": ["init", "acme", str(foreign), "--owner", "@a", "--repo", str(repo)],
        "a producer that is no URL": [
            "init",
            "acme",
            str(event),
            "--owner",
            "@a",
            "--repo",
            str(repo),
            "--producer",
            "x",
        ],
    }
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    for case, argv in cases.items():
        assert main(argv) == 2, case
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, (case, err)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert "nothing to draft" in main_err(
        ["init", "acme", str(foreign), "--owner", "@a", "--repo", str(repo)], capsys
    )


@pytest.mark.parametrize(
    ("link", "refused"),
    [
        # the entry's parent folder: gcp:composer would be written under the link's target
        ("spec/registry/acme", "spec/registry/acme is a symlink"),
        # the root CODEOWNERS GitHub reads, in a symlinked .github: its routing line went there
        (".github", ".github is a symlink"),
    ],
)
def test_init_writes_nothing_through_a_symlinked_folder(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], link: str, refused: str
) -> None:
    repo = corpus_registry(tmp_path, corpus)
    outside = tmp_path / "outside"
    outside.mkdir()
    if link == ".github":
        (outside / "CODEOWNERS").write_text("* @OpenLineage/committers\n")
    (repo / link).symlink_to(outside)
    event = tmp_path / "e.json"
    event.write_text(json.dumps(EVENT))
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    err = main_err(["init", "acme:tools", str(event), "--owner", "@a", "--repo", str(repo)], capsys)
    assert err.startswith(f"registry-bot init: {refused} (to {outside}); nothing written"), err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert (outside / "CODEOWNERS").exists() == (link == ".github")
    if link == ".github":
        assert (outside / "CODEOWNERS").read_text() == "* @OpenLineage/committers\n"


@pytest.mark.parametrize(
    ("facets", "named"),
    [
        # the same PascalCase stem: one schema replaced the other, registry.json declared it twice
        (
            {"run": {"acme_env": {"a": 1}, "acme_Env": {"b": 2}}},
            "'acme_Env' and 'acme_env' would both be drafted as AcmeEnvRunFacet.json",
        ),
        # stems that differ only in case: one file on a case-insensitive file system
        (
            {"run": {"acme_ab": {"a": 1}, "acme_aB": {"b": 2}}},
            "'acme_aB' and 'acme_ab' would both be drafted as AcmeABRunFacet.json",
        ),
        # a key ending in the place's name, and the key without it in that place
        (
            {"input": {"acme_x": {"a": 1}}, "dataset": {"acme_x_input": {"b": 2}}},
            "'acme_x' (InputDatasetFacet) and 'acme_x_input' (DatasetFacet) would both be drafted "
            "as AcmeXInputDatasetFacet.json",
        ),
    ],
)
def test_init_refuses_two_facets_drafted_under_one_file_name(
    tmp_path: Path,
    corpus: Path,
    capsys: pytest.CaptureFixture[str],
    facets: dict[str, dict[str, object]],
    named: str,
) -> None:
    repo = corpus_registry(tmp_path, corpus)
    event = json.loads(json.dumps(EVENT))
    event["run"]["facets"] = facets.get("run", {})
    event["inputs"] = [
        {
            "namespace": "ns",
            "name": "t",
            "facets": facets.get("dataset", {}),
            "inputFacets": facets.get("input", {}),
        }
    ]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(event))
    err = main_err(["init", "acme", str(path), "--owner", "@a", "--repo", str(repo)], capsys)
    assert f"registry-bot init: facet keys {named}: file names must differ" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (repo / "spec/registry/acme").exists()


def main_err(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_the_next_step_names_the_branch_the_draft_goes_to(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    git(repo.path, "switch", "-q", "-c", "add-acme")
    event = tmp_path / "e.json"
    event.write_text(json.dumps(EVENT))
    assert main(["init", "acme", str(event), "--owner", "@a", "--repo", str(repo.path)]) == 0
    out = capsys.readouterr().out
    assert "switch -c" not in out and f"registry-bot check {repo.path} --base main" in out


def test_on_a_clone_the_hint_never_suggests_committing_on_the_branch_it_checks_against(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    origin = Repo.from_folder(corpus, tmp_path / "origin")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin.path), str(clone))
    event = tmp_path / "e.json"
    event.write_text(json.dumps(EVENT))
    assert main(["init", "acme", str(event), "--owner", "@a", "--repo", str(clone)]) == 0
    out = capsys.readouterr().out
    # on main, checking against origin/main after a commit on main would compare main with itself: a
    # false green
    assert "switch -c registry-acme" in out and "--base origin/main" in out, out
