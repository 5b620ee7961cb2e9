"""A change review does work in proportion to the change: a file the change leaves alone is judged
once for both sides (``ReviewInput.memo``), while the judged verdict stays what it was."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.core.findings import State
from bot.core.jsonformat import format_json
from bot.review.checks import examples as examples_check
from bot.review.checks import format as format_check
from tests.gitrepo import Repo
from tests.history import review_branch

ICEBERG = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"
DATASOURCE = "spec/tests/DatasourceDatasetFacet/1.json"
DOCUMENTATION = "spec/tests/DocumentationJobFacet/1.json"


def test_a_file_the_change_leaves_alone_is_laid_out_once(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    text = (repo.path / ICEBERG).read_text(encoding="utf-8")
    # out of prettier's layout: the change's own format finding, new
    repo.change({ICEBERG: text.replace('"type": "object"', '"type":   "object"', 1)})
    laid_out: Counter[str] = Counter()

    def counted(source: str, indent: int) -> str:
        laid_out[source] += 1
        return format_json(source, indent)

    monkeypatch.setattr(format_check, "format_json", counted)
    report = review_branch(repo.path, "main")
    others = [  # the pr branch is checked out
        p.read_text(encoding="utf-8")
        for p in (repo.path / "spec/registry/iceberg").rglob("*.json")
        if p.relative_to(repo.path).as_posix() != ICEBERG
    ]
    assert others and all(laid_out[t] == 1 for t in others)
    # the edited file differs between the sides: laid out on each
    assert laid_out[text] == 1 and sum(laid_out.values()) == len(others) + 2
    [finding] = [f for f in report.findings if f.rule == "format/json"]
    assert finding.path == ICEBERG and finding.state is State.NEW


def test_an_example_the_change_leaves_alone_is_validated_once(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same example text, same schema and same schemas behind it: one verdict for both sides. An
    example that fails before and after the change is explained once and stays pre-existing."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    broken = json.loads((repo.path / DATASOURCE).read_text(encoding="utf-8"))
    broken["dataSource"]["name"] = 5
    repo.write(DATASOURCE, json.dumps(broken, indent=2) + "\n")
    repo.commit("an example that does not validate", branch="main")
    edited = json.loads((repo.path / DOCUMENTATION).read_text(encoding="utf-8"))
    edited["documentation"]["description"] += " (edited)"
    repo.change({DOCUMENTATION: json.dumps(edited, indent=2) + "\n"})
    validated: Counter[str] = Counter()
    errors = examples_check._errors

    def counted(validator: Any, instance: Any, schema: Any) -> Any:
        validated[json.dumps(instance, sort_keys=True)] += 1
        return errors(validator, instance, schema)

    monkeypatch.setattr(examples_check, "_errors", counted)
    before = json.loads(json.dumps(edited).replace(" (edited)", ""))
    report = review_branch(repo.path, "main")
    assert len(validated) > 40 and max(validated.values()) == 1
    # the edited example, once on each side
    for text in (edited, before):
        assert validated[json.dumps(text, sort_keys=True)] == 1
    invalid = [f for f in report.findings if f.rule == "examples/invalid"]
    assert {f.path for f in invalid} == {DATASOURCE}
    assert all(f.state is State.UNCHANGED for f in invalid)


def test_an_example_is_validated_again_when_a_schema_behind_its_own_changes(
    tmp_path: Path, corpus: Path
) -> None:
    """The verdict is keyed by every schema the example's schema refers to: a base facet that
    gains a required field fails the unchanged examples at head, as new problems."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")

    def require(doc: Any) -> Any:
        doc["$defs"]["BaseFacet"]["required"] = ["_producer", "_schemaURL", "_planted"]
        return doc

    repo.edit_json("spec/OpenLineage.json", require)
    # and an example of the core entry edited, so that its examples are reviewed
    text = (repo.path / DOCUMENTATION).read_text(encoding="utf-8")
    repo.write(DOCUMENTATION, text.replace('"description": "', '"description": "Edited. ', 1))
    repo.commit("a base facet field required")
    invalid = [f for f in review_branch(repo.path, "main").findings if f.rule == "examples/invalid"]
    [datasource] = [f for f in invalid if f.path == DATASOURCE]
    assert "'_planted' is a required property" in datasource.message
    assert all(f.state is State.NEW for f in invalid)
