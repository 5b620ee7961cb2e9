"""The fix for a facet key without the registered prefix: offered on a facet the change adds (the
key renamed in the schema and in its examples), never on one already in the base, where renaming
would break events."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from bot.cli.sample import build_sample_repo

FACET = "spec/registry/dagster/facets/DagsterRunFacet.json"
EXAMPLE = "spec/registry/dagster/facets/examples/DagsterRunFacet/1.json"
SAMPLE = "spec/registry/dagster/samples/orders_pipeline.json"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def commit(repo: Path, message: str) -> None:
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", message)


def findings(repo: Path, base: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    main(["check", str(repo), "--base", base, "--format", "json", "--author", "dagster-dev"])
    return json.loads(capsys.readouterr().out)["findings"]  # type: ignore[no-any-return]


def test_fix_write_renames_a_new_facets_key_in_schema_and_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = build_sample_repo(tmp_path / "sample").path
    git(repo, "checkout", "-q", "add-dagster")
    before = findings(repo, "main", capsys)
    [prefix] = [f for f in before if f["rule"] == "facets/prefix-key"]
    assert prefix["fix"] is not None and {e["path"] for e in prefix["fix"]["edits"]} == {
        FACET,
        EXAMPLE,
        SAMPLE,
    }  # type: ignore[index]
    assert main(["fix", str(repo), "--base", "main", "--rule", "facets/prefix-key", "--write"]) == 0
    capsys.readouterr()
    assert list(json.loads((repo / FACET).read_text())["properties"]) == ["dagster_runInfo"]
    assert list(json.loads((repo / EXAMPLE).read_text())) == ["dagster_runInfo"]
    assert list(json.loads((repo / SAMPLE).read_text())[0]["run"]["facets"]) == ["dagster_runInfo"]
    commit(repo, "the fix")
    after = findings(repo, "main", capsys)
    rules = [f["rule"] for f in after]
    assert "facets/prefix-key" not in rules
    # the rename changed nothing else: the other findings are the same (the example's wrong type
    # included)
    assert sorted(rules) == sorted(
        r for r in (f["rule"] for f in before) if r != "facets/prefix-key"
    )


def test_no_fix_on_a_facet_the_base_already_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = build_sample_repo(tmp_path / "sample").path
    git(repo, "checkout", "-q", "add-dagster")
    schema = json.loads((repo / FACET).read_text())
    schema["description"] = "Dagster run information, described again."
    (repo / FACET).write_text(json.dumps(schema, indent=2) + "\n")
    commit(repo, "describe it again")
    [prefix] = [
        f for f in findings(repo, "add-dagster~1", capsys) if f["rule"] == "facets/prefix-key"
    ]
    # events may carry the key already: renaming it is a breaking change
    assert prefix.get("fix") is None
