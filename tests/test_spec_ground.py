"""The specification as the registry's ground (``docs/versions.md``, "The specification"): a change
that deletes, moves or breaks ``spec/OpenLineage.json`` never passes the registry as checked.

Every door composes the same review (``run_review``, tests/test_one_model.py), so these reviews are
the App's, the command line's and the history replay's alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.core.changes import ChangeSet
from bot.core.findings import Finding, Report, State, Verdict
from bot.core.snapshot import GitSnapshot
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo, git

SPEC = "spec/OpenLineage.json"
DATAPROC = "spec/registry/gcp/dataproc/facets"


def review(
    repo: Repo, author: str | None = None, approvers: frozenset[str] = frozenset()
) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        return run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author=author,
                approvers=approvers,
            )
        )


def blocking(report: Report) -> list[Finding]:
    return [f for f in report.findings if report.is_blocking(f)]


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "openlineage")


@pytest.mark.parametrize(
    "target", [None, f"{DATAPROC}/OpenLineage.json", "spec/OpenLineage-2.json", "OpenLineage.json"]
)
def test_a_change_deleting_or_moving_the_specification_fails(
    repo: Repo, target: str | None
) -> None:
    """Before: deleting it passed (every facet's ``$ref`` still resolved through the mirror, and no
    rule looked at a specification that is gone); moving it out of ``spec/`` passed too."""
    git(repo.path, "checkout", "-q", "-b", "pr")
    if target is None:
        git(repo.path, "rm", "-q", SPEC)
    else:
        git(repo.path, "mv", SPEC, target)
    repo.commit("the specification goes")
    report = review(repo)
    [removed] = [f for f in report.findings if f.rule == "spec/removed"]
    assert removed.state is State.NEW and report.is_blocking(removed)
    assert removed.path == (target or SPEC) and removed.entry == "core"
    assert ("deletes" if target is None else f"moves {SPEC} to {target}") in removed.message
    assert report.verdict is Verdict.FAILURE


def test_a_specification_left_in_place_says_nothing_of_removal(repo: Repo) -> None:
    doc = json.loads((repo.path / SPEC).read_text(encoding="utf-8"))
    doc["$id"] = doc["$id"].replace("/2-0-2/", "/2-0-3/")
    doc["description"] = "edited"
    repo.change({SPEC: json.dumps(doc, indent=2) + "\n"})
    assert not [f for f in review(repo).findings if f.rule == "spec/removed"]


def published_as(repo: Repo, version: str, edit: dict[str, object]) -> dict[str, str]:
    """The specification at a new version with ``edit`` merged in, and its identical mirror copy."""
    doc = json.loads((repo.path / SPEC).read_text(encoding="utf-8"))
    doc["$id"] = doc["$id"].replace("/2-0-2/", f"/{version}/")
    doc.update(edit)
    text = json.dumps(doc, indent=2) + "\n"
    return {SPEC: text, f"website/static/spec/{version}/OpenLineage.json": text}


def test_a_specification_that_is_not_a_schema_fails_even_bumped_and_published(repo: Repo) -> None:
    """Before: a new version whose root is not a JSON Schema (``"type": 12``), copied to the mirror,
    passed: only `spec/not-bumped` or `spec/not-published` ever looked at its content."""
    repo.change(published_as(repo, "3-0-0", {"type": 12}))
    report = review(repo)
    [meta] = [f for f in blocking(report) if f.rule == "spec/meta-schema"]
    assert meta.state is State.NEW and meta.path == SPEC and meta.entry == "core"
    assert report.verdict is Verdict.FAILURE
    # a valid new version, bumped and published, says nothing of it
    git(repo.path, "checkout", "-q", "-f", "main")
    repo.change(published_as(repo, "2-0-3", {"description": "edited"}))
    assert not [f for f in review(repo).findings if f.rule == "spec/meta-schema"]


@pytest.mark.parametrize(
    "run_facet", [{"type": 12}, {"$ref": 5}, {"minLength": "x"}, {"allOf": {}}]
)
def test_an_example_whose_ground_is_broken_is_unchecked_not_crashed_or_valid(
    repo: Repo, run_facet: dict[str, object]
) -> None:
    """The specification's ``RunFacet`` (which ErrorMessageRunFacet extends) made an invalid schema,
    with a core example touched. Before: ``"type": 12`` and ``"$ref": 5`` crashed the examples check
    (bot/internal-error, every other example left unchecked); ``"minLength": "x"`` and
    ``"allOf": {}`` let the example pass as valid against a ground that is no schema."""
    example = "spec/tests/ErrorMessageRunFacet/1.json"
    doc = json.loads((repo.path / SPEC).read_text(encoding="utf-8"))
    doc["$defs"]["RunFacet"] = run_facet
    text = (repo.path / example).read_text(encoding="utf-8")
    repo.change({SPEC: json.dumps(doc, indent=2) + "\n", example: text.rstrip() + "\n\n"})
    report = review(repo)
    assert not [f for f in report.findings if f.rule.startswith("bot/")]
    [unchecked] = [
        f
        for f in report.findings
        if f.path == example
        and f.rule.startswith("examples/")
        and f.rule != "examples/stale-schema-url"
    ]
    assert unchecked.rule == "examples/unchecked" and SPEC in unchecked.message
    assert unchecked.state is State.NEW and report.is_blocking(unchecked)
    assert "spec/meta-schema" in {f.rule for f in blocking(report)}


@pytest.mark.parametrize("how", ["edit", "delete", "move"])
def test_a_strangers_change_to_the_specification_needs_its_owners(repo: Repo, how: str) -> None:
    """Before: a stranger's pull request editing (bumped and published), deleting or moving
    ``spec/OpenLineage.json`` asked no one's approval: it is no entry, no steering file and not the
    mirror, and the recommended branch protection requires no code owner review (docs/owners.md)."""
    from tests.test_waivers import root_owner

    if how == "edit":
        edits: dict[str, str | None] = dict(published_as(repo, "2-0-3", {"description": "x"}))
        repo.change(edits)
    else:
        git(repo.path, "checkout", "-q", "-b", "pr")
        git(repo.path, *(["rm", "-q", SPEC] if how == "delete" else ["mv", SPEC, "spec/Old.json"]))
        repo.commit(how)
    owner = root_owner(repo)
    report = review(repo, "stranger")
    [finding] = [f for f in report.findings if f.rule == "ownership/spec-change"]
    assert finding.state is State.NEW and finding.owners == (owner,) and finding.path == SPEC
    assert {"edit": "edits", "delete": "deletes", "move": "moves"}[how] in finding.message
    assert report.is_blocking(finding) and report.verdict is Verdict.FAILURE
    # its owners pass it; without an author or approvers (the command line) approval is not
    # checked, as for an entry's files, and a notice says so
    approved = review(repo, "stranger", frozenset({owner.removeprefix("@")}))
    assert not [f for f in approved.findings if f.rule == "ownership/spec-change"]
    unchecked = {f.rule for f in review(repo).findings}
    assert "ownership/spec-change" not in unchecked and "owners/approval-not-checked" in unchecked


def test_an_example_unchecked_on_a_broken_ground_is_the_changes_only_when_it_touches_the_ground(
    repo: Repo,
) -> None:
    """The specification's ``RunFacet`` is no schema on the base, so every core example behind it
    could not be checked there already. A change to another core example leaves
    ErrorMessageRunFacet's example standing: pre-existing (before: new, failing every change of the
    core entry). The same change with the specification edited, still broken, makes it the
    change's: what the example stands on changed."""
    example = "spec/tests/ErrorMessageRunFacet/1.json"
    other = "spec/tests/NominalTimeRunFacet/1.json"
    doc = json.loads((repo.path / SPEC).read_text(encoding="utf-8"))
    doc["$defs"]["RunFacet"] = {"type": 12}
    (repo.path / SPEC).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    repo.commit("a specification that is no schema", branch="main")
    text = (repo.path / other).read_text(encoding="utf-8")
    repo.change({other: text.rstrip() + "\n\n"})
    [alone] = [f for f in review(repo).findings if f.path == example]
    assert alone.rule == "examples/unchecked" and alone.state is State.UNCHANGED
    git(repo.path, "checkout", "-q", "-f", "main")
    git(repo.path, "branch", "-q", "-D", "pr")
    doc["description"] = "edited, still no schema"
    repo.change({SPEC: json.dumps(doc, indent=2) + "\n", other: text.rstrip() + "\n\n"})
    report = review(repo)
    [grounded] = [f for f in report.findings if f.path == example]
    assert grounded.rule == "examples/unchecked" and grounded.state is State.NEW
    assert report.is_blocking(grounded)
