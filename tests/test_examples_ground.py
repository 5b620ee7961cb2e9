"""The examples standing on a changed file: a change review validates every example whose schema's
closure (the schemas it refers to, transitively) holds a file the change touches, not only the
examples of the entries it touches, and judges their verdicts against the base like any finding
(``docs/fairness.md``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.core.findings import Finding, Report, State, Verdict
from tests.gitrepo import Repo
from tests.history import review_branch

SPEC = "spec/OpenLineage.json"
DATAPROC = "spec/registry/gcp/dataproc/facets/examples/GcpDataprocRunFacet/1.json"
SCHEMA_URL = (
    "https://openlineage.io/spec/facets/1-0-0/GcpDataprocRunFacet.json#/$defs/GcpDataprocRunFacet"
)
ERROR_MESSAGE = "spec/tests/ErrorMessageRunFacet/1.json"
DEF = "GcpDataprocRunFacet"


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "openlineage")


def invalid(report: Report, path: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == "examples/invalid" and f.path == path]


def test_a_specification_edit_revalidates_every_example_standing_on_it(repo: Repo) -> None:
    """The base facet gains a required field, edited in place: before, only the entries the change
    touched were reviewed (none), so the registered and core examples it makes invalid were never
    validated."""
    facet = {"_producer": "https://example.com/p", "_schemaURL": SCHEMA_URL, "appName": "a"}
    repo.write(DATAPROC, json.dumps({"gcp_dataproc": facet}, indent=2) + "\n")
    repo.commit("a registered example, lacking projectId", branch="main")

    def require(doc: Any) -> None:
        doc["$defs"]["BaseFacet"]["required"] = ["_producer", "_schemaURL", "_planted"]

    repo.edit_json(SPEC, require)
    repo.commit("the base facet requires a field")
    report = review_branch(repo.path, "main")
    for path in (DATAPROC, ERROR_MESSAGE):
        [planted] = [f for f in invalid(report, path) if "'_planted' is a required" in f.message]
        assert planted.state is State.NEW and report.is_blocking(planted)
    # judged against the base: what was invalid there is pre-existing
    [lacking] = [f for f in invalid(report, DATAPROC) if "'projectId'" in f.message]
    assert lacking.state is State.UNCHANGED and not report.is_blocking(lacking)
    # the untouched entries' other rules are not reviewed: only what validating says
    assert not [f for f in report.findings if f.rule == "examples/missing"]


def test_a_development_specification_edited_in_place_fails_the_examples_it_breaks(
    repo: Repo,
) -> None:
    """A ``0-*`` specification may change in place (no ``spec/not-bumped``), so nothing else blocks:
    before, a ``RunFacet`` made to require a field passed, leaving the core facet's example that
    refers to it invalid, unseen. An example that was invalid on the base stays pre-existing."""
    facet = "spec/facets/ErrorMessageRunFacet.json"
    development = "https://openlineage.io/spec/0-1-0/OpenLineage.json"

    def develop(doc: Any) -> None:
        doc["$id"] = development

    repo.edit_json(SPEC, develop)
    text = (repo.path / facet).read_text(encoding="utf-8")
    released = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
    repo.write(facet, text.replace(released, development))
    repo.commit("a development specification", branch="main")

    def require(doc: Any) -> None:
        doc["$defs"]["RunFacet"]["required"] = ["_planted"]

    repo.edit_json(SPEC, require)
    repo.commit("the run facet requires a field")
    report = review_branch(repo.path, "main")
    found = invalid(report, ERROR_MESSAGE)
    assert found and all(f.state is State.NEW and report.is_blocking(f) for f in found)
    assert report.verdict is Verdict.FAILURE


def test_an_entrys_facet_edited_alone_revalidates_another_entrys_examples_on_it(repo: Repo) -> None:
    """Composer's run facet refers to Dataproc's; a change to Dataproc's facet alone (a field made
    required) reviews the Dataproc entry only. Before: Composer's example, which it breaks, was
    never validated."""
    composer = "spec/registry/gcp/composer/facets/GcpComposerRunFacet.json"
    dataproc = "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"
    example = "spec/registry/gcp/composer/facets/examples/GcpComposerRunFacet/1.json"
    url = "https://openlineage.io/spec/facets/1-0-0/GcpDataprocRunFacet.json"

    def lean_on_dataproc(doc: Any) -> None:
        doc["$defs"]["GcpComposerRunFacet"]["allOf"].append({"$ref": f"{url}#/$defs/{DEF}"})

    repo.edit_json(composer, lean_on_dataproc)
    facet = {
        "_producer": "https://example.com/p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/GcpComposerRunFacet.json"
        "#/$defs/GcpComposerRunFacet",
        "dagRunId": "d-1",
        "appId": "i",
        "appName": "a",
        "projectId": "p",
    }
    repo.write(example, json.dumps({"gcp_composer_run": facet}, indent=2) + "\n")
    repo.commit("composer's run facet on dataproc's, with an example", branch="main")

    def require(doc: Any) -> None:
        doc["$defs"][DEF]["allOf"][1]["required"].append("batchId")

    repo.edit_json(dataproc, require)
    repo.commit("dataproc's run facet requires batchId")
    report = review_branch(repo.path, "main")
    assert report.entries == ("gcp:dataproc",)  # composer's entry is not reviewed
    [finding] = invalid(report, example)
    assert "'batchId' is a required property" in finding.message
    assert finding.state is State.NEW and report.is_blocking(finding)
