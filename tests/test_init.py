"""``registry-bot init``: a drafted entry passes ``check`` on a copy of the real OpenLineage repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.gitrepo import Repo, git

EVENT = {
    "eventType": "COMPLETE", "eventTime": "2024-01-01T00:00:00Z", "producer": "https://example.com/acme",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0190c6d8-0b5c-7cc2-a8d0-5e3f1d4a2b6c", "facets": {
        "acme_tools_stats": {"_producer": "https://example.com/acme", "_schemaURL": "x", "rows": 10, "ratio": 0.5,
                       "tags": ["a"], "nested": {"ok": True}},
        "nominalTime": {"_producer": "p", "_schemaURL": "s", "nominalStartTime": "2024-01-01T00:00:00Z"}}},
    "job": {"namespace": "ns", "name": "j"},
    "inputs": [{"namespace": "ns", "name": "t", "inputFacets": {
        "acme_tools_scan": {"_producer": "https://example.com/acme", "_schemaURL": "x", "files": 3}}}],
}
SECOND = {**EVENT, "job": {"namespace": "ns", "name": "j", "facets": {
    "acme_tools_pipeline": {"_producer": "https://example.com/acme", "_schemaURL": "x", "pipeline": "p1"}}}}


def test_an_entry_drafted_from_sample_events_passes_check(corpus: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    git(repo.path, "checkout", "-q", "-b", "pr")
    events = []
    for i, event in enumerate((EVENT, SECOND)):
        events.append(tmp_path / f"event{i}.json")
        events[-1].write_text(json.dumps(event))
    assert main(["init", "acme:tools", *map(str, events), "--owner", "@acme-dev", "--repo", str(repo.path)]) == 0
    folder = repo.path / "spec/registry/acme/tools"
    assert (folder / "CODEOWNERS").read_text().splitlines()[-1] == "* @acme-dev"
    declared = json.loads((folder / "registry.json").read_text())["producer"]["produced_facets"]
    assert sorted(declared) == ["ol:acme:tools:AcmeToolsPipelineJobFacet.json",
                                "ol:acme:tools:AcmeToolsScanInputDatasetFacet.json",
                                "ol:acme:tools:AcmeToolsStatsRunFacet.json"]  # core's nominalTime is not drafted
    schema = json.loads((folder / "facets/AcmeToolsStatsRunFacet.json").read_text())
    assert schema["$id"] == "https://openlineage.io/spec/facets/1-0-0/AcmeToolsStatsRunFacet.json"
    assert schema["$defs"]["AcmeToolsStatsRunFacet"]["allOf"][0]["$ref"].endswith("OpenLineage.json#/$defs/RunFacet")
    repo.commit("acme:tools: a new entry", branch="pr")
    capsys.readouterr()
    # the new name is approved by the registry's maintainers (root CODEOWNERS), as for any new entry
    code = main(["check", str(repo.path), "--base", "main", "--head", "pr", "--author", "acme-dev",
                 "--approved-by", "OpenLineage/committers"])
    assert code == 0, capsys.readouterr().out
    assert main(["init", "acme:tools", str(events[0]), "--owner", "@acme-dev", "--repo", str(repo.path)]) == 2


def test_init_refuses_a_bad_name_or_owner(tmp_path: Path) -> None:
    event = tmp_path / "e.json"
    event.write_text(json.dumps(EVENT))
    assert main(["init", "Acme Tools", str(event), "--owner", "@a", "--repo", str(tmp_path)]) == 2
    assert main(["init", "acme", str(event), "--owner", "nobody", "--repo", str(tmp_path)]) == 2
