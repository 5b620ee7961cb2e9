"""A finding inside a list item is matched at the item's identity, not its index: an item
inserted before it leaves it pre-existing (``bot.core.anchors``); a schema error on an object, by
the object's type, not its content (``bot.model.error_subject``). On real data: the bundled naming
files, real dbt events as an entry's samples, the corpus's registry.json and facet files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from bot.core.anchors import at_place, keyed_pointer
from bot.core.changes import ChangeSet
from bot.core.findings import Finding, State
from bot.core.snapshot import GitSnapshot
from bot.model.naming import bundled_folder
from bot.review.engine import ReviewContext, review
from tests.conftest import CORPUS
from tests.gitrepo import Repo

POSTGRES = "spec/naming/datasets/postgres/postgres.json"
DBT_EVENTS = CORPUS / "integration/common/tests/dbt/structured_logs/postgres/seed/results"
SAMPLES = "spec/registry/iceberg/samples/dbt.json"


def judged(repo: Repo, rule: str) -> list[Finding]:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = review(
            head=head,
            base=base,
            changes=ChangeSet.from_git(repo.path, "main", "pr"),
            context=ReviewContext(author="OpenLineage/committers"),
        )
    return [f for f in report.findings if f.rule == rule]


def naming_repo(tmp_path: Path, edit: Any) -> Repo:
    """The corpus with the bundled naming files; ``edit`` applied to postgres.json on main."""
    repo = Repo.from_folder(CORPUS, tmp_path / "openlineage")
    shutil.copytree(bundled_folder(), repo.path / "spec/naming")
    repo.edit_json(POSTGRES, edit)
    repo.commit("naming files", branch="main")
    return repo


def test_a_rejected_naming_example_stays_pre_existing_when_one_is_inserted_before_it(
    tmp_path: Path,
) -> None:
    def broken(value: Any) -> None:
        value["examples"]["valid"][1]["name"] = "public.orders"  # two parts: rejected

    repo = naming_repo(tmp_path, broken)
    inserted = {"namespace": "postgres://db.example.com:5432", "name": "analytics.public.items"}
    repo.edit_json(POSTGRES, lambda v: v["examples"]["valid"].insert(0, inserted))
    repo.commit("one more valid example, first")
    [found] = judged(repo, "naming/round-trip")
    assert found.pointer == "/examples/valid/2"
    assert found.state is State.UNCHANGED


def test_a_broken_naming_form_stays_pre_existing_when_a_form_is_inserted_before_it(
    tmp_path: Path,
) -> None:
    def broken(value: Any) -> None:
        value["forms"][0]["namespace"] = "postgres://{host}:{port}/{cluster}"  # undeclared

    repo = naming_repo(tmp_path, broken)
    repo.edit_json(
        POSTGRES,
        lambda v: v["forms"].insert(
            0, {"label": "short", "namespace": "postgres://{host}", "name": "{database}.{table}"}
        ),
    )
    repo.commit("a form first")
    [found] = judged(repo, "naming/undeclared-component")
    assert found.pointer == "/forms/1" and found.state is State.UNCHANGED
    # another component undeclared in that form is another problem
    repo.edit_json(POSTGRES, lambda v: v["forms"][1].update(namespace="postgres://{zone}"))
    repo.commit("another undeclared component")
    [found] = judged(repo, "naming/undeclared-component")
    assert found.pointer == "/forms/1" and found.state is State.NEW


def test_a_sample_events_findings_stay_pre_existing_when_an_event_is_inserted_before_it(
    tmp_path: Path,
) -> None:
    """Real dbt events as iceberg's samples: their dbt facet keys are not iceberg's."""
    events = json.loads((DBT_EVENTS / "seed_ol_events.json").read_text())
    repo = Repo.from_folder(CORPUS, tmp_path / "openlineage")
    repo.write(SAMPLES, json.dumps(events[:2], indent=2) + "\n")
    repo.commit("samples", branch="main")
    repo.write(SAMPLES, json.dumps([events[2], *events[:2]], indent=2) + "\n")
    repo.commit("an event first")
    found = judged(repo, "samples/undeclared-facet")
    states: dict[str, set[State | None]] = {}
    for f in found:  # by event: /0/... is the event inserted
        states.setdefault(f.pointer.split("/")[1], set()).add(f.state)
    assert states == {"0": {State.NEW}, "1": {State.UNCHANGED}, "2": {State.UNCHANGED}}


def test_an_anchor_names_items_by_identity_and_keeps_the_index_of_the_others() -> None:
    doc = {"forms": [{"namespace": "a/{x}", "name": "n", "label": "l"}, [[1]], "s"]}
    assert keyed_pointer(doc, "/forms/0/name") == '/forms/[{"name":"n","namespace":"a~1{x}"}]/name'
    # a list names nothing: named by its content, matched at its index once that changed
    keyed = keyed_pointer(doc, "/forms/1/0/0")
    assert keyed is not None and keyed.startswith("/forms/[=sha256:") and keyed.endswith("/[1]")
    assert at_place(keyed, "/forms/1/0/0") == "/forms/1/0/[1]"
    assert keyed_pointer(doc, "/forms/2") == '/forms/["s"]'
    assert keyed_pointer(doc, "/forms/9") is None  # past the end: its own pointer
    assert keyed_pointer(doc, "/forms/\u00b2") is None


# A schema error on an object or array is about the value's type there, not its content (the
# message quotes the whole value: an edit inside it made the error new): the naming files' and the
# registry.json files' schema errors as the examples' (``bot.model.error_subject``)


def test_a_naming_schema_error_on_an_object_stays_pre_existing_when_the_object_is_edited(
    tmp_path: Path,
) -> None:
    repo = naming_repo(tmp_path, lambda v: v["docs"][0].update(url={"href": "https://x.org"}))
    repo.edit_json(POSTGRES, lambda v: v["docs"][0]["url"].update(rel="help"))
    repo.commit("edit inside the object")
    found = judged(repo, "naming/schema")
    assert found and {f.state for f in found} == {State.UNCHANGED}
    repo.edit_json(POSTGRES, lambda v: v["docs"][0].update(url=["https://x.org"]))
    repo.commit("an array there")
    assert {f.state for f in judged(repo, "naming/schema")} == {State.NEW}


def test_a_registry_schema_error_on_an_object_stays_pre_existing_when_the_object_is_edited(
    tmp_path: Path,
) -> None:
    composer = "spec/registry/gcp/composer/registry.json"
    repo = Repo.from_folder(CORPUS, tmp_path / "openlineage")
    repo.edit_json(composer, lambda r: r["producer"].update(root_doc_URL={"href": "https://x.org"}))
    repo.commit("an object for a URL", branch="main")
    repo.edit_json(composer, lambda r: r["producer"]["root_doc_URL"].update(rel="help"))
    repo.commit("edit inside the object")
    found = judged(repo, "entry/schema")
    assert found and {f.state for f in found} == {State.UNCHANGED}


def test_a_meta_schema_error_on_an_object_stays_pre_existing_when_the_object_is_edited(
    tmp_path: Path,
) -> None:
    facet = "spec/registry/gcp/composer/facets/GcpComposerJobFacet.json"
    repo = Repo.from_folder(CORPUS, tmp_path / "openlineage")

    def odd(schema: Any) -> Any:
        return schema["$defs"]["GcpComposerJobFacet"]["allOf"][1]["properties"]

    def odd_type(schema: Any) -> None:
        odd(schema)["odd"] = {"type": {"kind": "string"}}

    repo.edit_json(facet, odd_type)
    repo.commit("an object for a type", branch="main")
    repo.edit_json(facet, lambda s: odd(s)["odd"]["type"].update(alt="integer"))
    repo.commit("edit inside the object")
    found = judged(repo, "facets/meta-schema")
    assert found and {f.state for f in found} == {State.UNCHANGED}


def test_a_broken_reference_stays_pre_existing_when_a_branch_is_inserted_before_it(
    tmp_path: Path,
) -> None:
    """A schema branch that is a reference is named by it: a branch inserted before it in its
    allOf leaves its problem where it was."""
    facet = "spec/registry/gcp/composer/facets/GcpComposerJobFacet.json"
    repo = Repo.from_folder(CORPUS, tmp_path / "openlineage")

    def branches(schema: Any) -> Any:
        return schema["$defs"]["GcpComposerJobFacet"]["allOf"]

    repo.edit_json(facet, lambda s: branches(s).append({"$ref": "#/$defs/Missing"}))
    repo.commit("a reference to nothing", branch="main")
    repo.edit_json(facet, lambda s: branches(s).insert(0, {"description": "A job facet."}))
    repo.commit("a branch first")
    [found] = judged(repo, "facets/unresolved-ref")
    assert found.pointer.endswith("/allOf/3/$ref") and found.state is State.UNCHANGED


def test_a_problem_in_an_item_without_identity_stays_pre_existing_when_one_is_inserted_before_it(
    tmp_path: Path,
) -> None:
    """An inline ``allOf`` object branch has no naming member: before, it was matched by index,
    so a branch inserted before it made its pre-existing problem new. It is matched by its
    content first (its index only when its content changed): an insert leaves the problem
    pre-existing, an edit inside it alone too, both together make it new."""
    facet = "spec/registry/gcp/composer/facets/GcpComposerJobFacet.json"
    repo = Repo.from_folder(CORPUS, tmp_path / "openlineage")

    def branches(schema: Any) -> Any:
        return schema["$defs"]["GcpComposerJobFacet"]["allOf"]

    def odd_type(schema: Any) -> None:
        branches(schema)[1]["properties"]["odd"] = {"type": {"kind": "string"}}

    repo.edit_json(facet, odd_type)
    repo.commit("an object for a type", branch="main")
    repo.edit_json(facet, lambda s: branches(s).insert(0, {"description": "A job facet."}))
    repo.commit("a branch first")
    found = judged(repo, "facets/meta-schema")
    assert found and all("/allOf/2/" in f.pointer for f in found)
    assert {f.state for f in found} == {State.UNCHANGED}
    repo.edit_json(facet, lambda s: branches(s)[2]["properties"].update(extra={"type": "string"}))
    repo.commit("and a property in the branch")
    assert {f.state for f in judged(repo, "facets/meta-schema")} == {State.NEW}
