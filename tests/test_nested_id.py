"""A facet schema cannot embed a resource under another document's ``$id``.

An embedded resource named ``https://openlineage.io/spec/2-0-2/OpenLineage.json`` with permissive
base facets stood in for the real one: an example without ``_producer`` and ``_schemaURL`` passed,
and so did the change.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.core.changes import ChangeSet
from bot.core.findings import Report, State, Verdict
from bot.core.snapshot import GitSnapshot
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo
from tests.test_waivers import root_owner

BASES = ("RunFacet", "JobFacet", "DatasetFacet", "InputDatasetFacet", "OutputDatasetFacet")


def an_example(repo: Repo) -> tuple[Path, Path]:
    """A core facet schema extending a base facet of OpenLineage.json, with an example."""
    for schema in sorted((repo.path / "spec/facets").glob("*.json")):
        examples = sorted((repo.path / "spec/tests" / schema.stem).glob("*.json"))
        if examples and "OpenLineage.json#/$defs/" in schema.read_text():
            return schema, examples[0]
    raise AssertionError("no core facet with an example in the corpus")


def base_document(schema: Path) -> str:
    """The OpenLineage.json the schema's base facet is referred to in."""
    text = schema.read_text()
    start = text.index("https://openlineage.io/spec/")
    return text[start : text.index("#", start)]


def review(repo: Repo) -> Report:
    owner = root_owner(repo).removeprefix("@")
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        return run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author=owner,
                approvers=frozenset({owner}),
            )
        )


def spoil(example: Path) -> None:
    """The example's facets without their ``_producer`` (the base facets require it)."""
    doc = json.loads(example.read_text())
    for facet in doc.values():
        if isinstance(facet, dict):
            facet.pop("_producer", None)
    example.write_text(json.dumps(doc, indent=2) + "\n")


def test_an_embedded_openlineage_json_is_an_error(tmp_path: Path, corpus: Path) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    schema, example = an_example(repo)
    spoil(example)
    repo.commit("an example without _producer")
    control = review(repo)
    missing = [f for f in control.findings if f.rule.startswith("examples/")]
    assert missing and control.verdict is Verdict.FAILURE  # the spoiled example fails alone

    doc = json.loads(schema.read_text())
    doc.setdefault("$defs", {})["Compat"] = {
        "$id": base_document(schema),
        "$defs": {base: {"type": "object"} for base in BASES},
    }
    schema.write_text(json.dumps(doc, indent=2) + "\n")
    repo.commit("and an embedded OpenLineage.json")
    report = review(repo)
    nested = [f for f in report.findings if f.rule == "facets/nested-id"]
    assert len(nested) == 1 and nested[0].state is State.NEW
    assert nested[0].pointer == "/$defs/Compat/$id" and nested[0].line
    assert report.verdict is Verdict.FAILURE


def test_no_real_schema_embeds_a_resource(tmp_path: Path, corpus: Path) -> None:
    """The real registry and core facets: no nested ``$id`` (no false alarm)."""
    from bot.core.snapshot import DirSnapshot

    report = run_review(ReviewRequest(head=DirSnapshot(corpus)))
    assert not [f for f in report.findings if f.rule == "facets/nested-id"]
