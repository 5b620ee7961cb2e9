"""How versions are judged (``docs/versions.md``), on the real history of OpenLineage's spec and registry.

Each mechanism is shown on the merged pull request that needs it, and next to a change that it must still
catch, so a test passes only while the mechanism both lets the real change through and keeps the rule.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.changes import ChangeSet
from bot.config import Config, ConfigError, VersionsPolicy, parse_config
from bot.engine import ReviewContext, review
from bot.findings import Finding, Report, Severity
from bot.schema_diff import Bump, required_bump
from bot.schemas import SchemaStore
from bot.snapshot import GitSnapshot
from tests.gitrepo import GIT_ENV, Repo, git
from tests.history import commit_of, replay

DATAPROC = "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"


INFORMATIONAL = ("versions/forward-break", "versions/codegen")  # notices on what a change means, not on its bump


def versions(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule.startswith("versions/") and f.rule not in INFORMATIONAL]


def show(repo: Path, rev: str, path: str) -> Any:
    return json.loads(git(repo, "show", f"{rev}:{path}"))


def work_tree(history: Path, target: Path, rev: str) -> Repo:
    """A non-bare clone of the history, on a ``pr`` branch started at ``rev``."""
    subprocess.run(["git", "clone", "-q", str(history), str(target)], check=True, env=GIT_ENV)
    git(target, "checkout", "-q", "-b", "pr", rev)
    return Repo(target)


def review_branch(repo: Path, base: str, head: str = "pr", config: Config | None = None) -> Report:
    with GitSnapshot(repo, base) as b, GitSnapshot(repo, head) as h:
        return review(head=h, base=b, changes=ChangeSet.from_git(repo, b.commit, h.commit),
                      context=ReviewContext(), config=config)


def resolver(store: SchemaStore) -> Any:
    def resolve(url: str) -> Any:
        stored = store.lookup(url)
        return None if stored is None else stored.schema
    return resolve


# -- renames: a new file name with a new facet $id is a new facet -----------------------------------------

@pytest.mark.parametrize("pr", ["#2987", "#3167"])
def test_a_facet_renamed_with_a_new_id_is_a_new_facet(history: Path, pr: str) -> None:
    report = replay(history, commit_of(history, pr))
    assert versions(report) == []
    # To generated code it is a new type: said as a notice, on the renamed file.
    renamed = [f for f in report.findings if f.rule == "versions/codegen" and "new $id" in f.message]
    assert renamed and {f.severity for f in renamed} == {Severity.NOTICE} and renamed[0].category == "codegen"


def test_a_renamed_file_keeping_its_facet_id_is_still_versioned(history: Path, tmp_path: Path) -> None:
    """#3167's rename and edit, but the $id keeps naming the old facet: the same facet, changed at 1-0-0."""
    commit = commit_of(history, "#3167")
    repo = work_tree(history, tmp_path / "wt", f"{commit}^")
    old = "spec/registry/gcp/dataproc/facets/GcpDataprocSparkRunFacet.json"
    git(repo.path, "mv", old, DATAPROC)
    head = show(history, commit, DATAPROC)
    head["$id"] = head["$id"].replace("GcpDataprocRunFacet", "GcpDataprocSparkRunFacet")
    repo.write(DATAPROC, json.dumps(head, indent=2) + "\n")
    repo.commit("rename keeping the facet id", branch="pr")
    found = versions(review_branch(repo.path, f"{commit}^"))
    assert [(f.rule, f.path) for f in found] == [("versions/not-bumped", DATAPROC)]
    assert "MODEL" in found[0].message and "gcp_dataproc_spark" in found[0].message  # its key was renamed


# -- local $refs are followed --------------------------------------------------------------------------------

@pytest.mark.parametrize(("pr", "path"), [("#2548", "spec/facets/SchemaDatasetFacet.json"),
                                          ("#3098", "spec/facets/ColumnLineageDatasetFacet.json")])
def test_a_schema_moved_behind_a_local_ref_is_compared_by_what_it_accepts(history: Path, pr: str, path: str) -> None:
    commit = commit_of(history, pr)
    needed, changes = required_bump(show(history, f"{commit}^", path), show(history, commit, path))
    assert needed is Bump.ADDITION, changes
    assert not [c for c in changes if "removed" in c.what or "type" in c.what]
    assert versions(replay(history, commit)) == []


def test_a_tightened_definition_behind_a_local_ref_still_needs_model(history: Path) -> None:
    commit = commit_of(history, "#3098")
    path = "spec/facets/ColumnLineageDatasetFacet.json"
    new = show(history, commit, path)
    new["$defs"]["InputField"]["required"].append("transformations")
    needed, changes = required_bump(show(history, f"{commit}^", path), new)
    assert needed is Bump.MODEL
    assert any("transformations" in c.what and c.bump is Bump.MODEL for c in changes)


# -- a $ref to another published version: judged by what differs between the two ------------------------------

def test_2520_without_a_mirror_cannot_compare_its_new_base_refs(history: Path) -> None:
    """At #2520 the repository had no published mirror: 1-0-2/OpenLineage.json is nowhere to compare with."""
    found = versions(replay(history, commit_of(history, "#2520")))
    assert found and {f.rule for f in found} == {"versions/ref-not-compared"}
    assert {f.severity for f in found} == {Severity.NOTICE}
    assert all(f.pointer.endswith("/allOf/0/$ref") for f in found)


def test_2520_with_the_published_mirror_needs_only_what_the_definitions_gained(history: Path) -> None:
    """The same change against the mirror OpenLineage published (#2948): every bump #2520 made suffices."""
    commit = commit_of(history, "#2520")
    with GitSnapshot(history, commit_of(history, "#2948")) as published:
        resolve = resolver(SchemaStore(published, Config()))
        paths = git(history, "diff", "--name-only", f"{commit}^", commit, "--", "spec/facets").splitlines()
        assert len(paths) >= 20
        for path in paths:
            old, new = show(history, f"{commit}^", path), show(history, commit, path)
            needed, changes = required_bump(old, new, resolve, resolve)
            assert needed <= Bump.ADDITION and not [c for c in changes if c.unverified], (path, changes)
        dataset = "spec/facets/SymlinksDatasetFacet.json"
        needed, changes = required_bump(show(history, f"{commit}^", dataset), show(history, commit, dataset),
                                        resolve, resolve)
        assert [c.what for c in changes if c.bump is Bump.ADDITION] == ["new optional field '_deleted'"]
        # Back from 2-0-2 to 1-0-2 removes that field: a MODEL change.
        needed, changes = required_bump(show(history, commit, dataset), show(history, f"{commit}^", dataset),
                                        resolve, resolve)
        assert needed is Bump.MODEL and any("'_deleted' removed" in c.what for c in changes)


# -- a required list that named undeclared fields, corrected ----------------------------------------------------

def test_1997_correcting_a_required_list_of_undeclared_fields_is_a_revision(history: Path) -> None:
    commit = commit_of(history, "#1997")
    path = "spec/facets/ExtractionErrorRunFacet.json"
    old, new = show(history, f"{commit}^", path), show(history, commit, path)
    needed, changes = required_bump(old, new)
    assert needed is Bump.REVISION and any("never declared" in c.what for c in changes)
    assert versions(replay(history, commit)) == []
    # The same newly required fields, when the old list named only declared ones: MODEL.
    old["$defs"]["ExtractionErrorRunFacet"]["allOf"][1]["required"] = ["errors"]
    assert required_bump(old, new)[0] is Bump.MODEL


# -- published copies ---------------------------------------------------------------------------------------

ICEBERG = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"


def _add_field(schema: dict[str, Any]) -> None:
    schema["$defs"]["IcebergScanReportInputDatasetFacet"]["allOf"][1]["properties"]["planner"] = {"type": "string"}


@pytest.fixture
def corpus_repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "openlineage")


def test_a_schema_made_identical_to_its_published_copy_needs_no_bump(corpus_repo: Repo) -> None:
    original = (corpus_repo.path / ICEBERG).read_text(encoding="utf-8")
    corpus_repo.edit_json(ICEBERG, _add_field)  # the base drifted from the published 1-0-1
    corpus_repo.commit("drift", branch="main")
    corpus_repo.change({ICEBERG: original})
    assert versions(review_branch(corpus_repo.path, "main")) == []
    # Restoring something else than the published copy is still a change of 1-0-1.
    corpus_repo.change({ICEBERG: original.replace("Snapshot ID of the iceberg table", "Snapshot id")})
    assert [f.rule for f in versions(review_branch(corpus_repo.path, "main"))] == ["versions/not-bumped"]


def test_one_edit_is_reported_once(corpus_repo: Repo) -> None:
    """Editing 1-0-1 in place also makes it differ from its published copy: one cause, one finding."""
    corpus_repo.edit_json(ICEBERG, _add_field)
    corpus_repo.commit("edit in place")
    found = versions(review_branch(corpus_repo.path, "main"))
    assert [f.rule for f in found] == ["versions/not-bumped"]


def test_3555_an_unversioned_file_of_the_mirror_may_change(history: Path) -> None:
    commit = commit_of(history, "#3555")
    assert "website/static/spec/OpenLineage.yml" in git(history, "show", "--name-only", "--format=", commit)
    assert versions(replay(history, commit)) == []


def test_registry_facets_are_copied_at_release_unless_configured(history: Path) -> None:
    commit = commit_of(history, "#2987")
    assert versions(replay(history, commit)) == []
    every = Config(versions=VersionsPolicy(require_published_copy=("*",)))
    found = versions(replay(history, commit, config=every))
    assert {(f.rule, f.path.rsplit("/", 1)[1]) for f in found} == {
        ("versions/not-published", "GcpDataprocSparkRunFacet.json"),
        ("versions/not-published", "GcpLineageJobFacet.json")}


def test_a_core_facet_copies_its_new_version_in_the_same_change(history: Path, tmp_path: Path) -> None:
    """#3819 as merged, then without its mirror copy: core facets copy each version in the pull request."""
    commit = commit_of(history, "#3819")
    assert versions(replay(history, commit)) == []
    repo = work_tree(history, tmp_path / "wt", f"{commit}^")
    git(repo.path, "checkout", commit, "--", "spec")
    repo.commit("#3819 without its published copy", branch="pr")
    found = versions(review_branch(repo.path, f"{commit}^"))
    assert [(f.rule, f.path) for f in found] == [("versions/not-published", "spec/facets/SQLJobFacet.json")]


def test_the_versions_section_of_the_configuration() -> None:
    config = parse_config("versions:\n  require_published_copy: []\n", "registry-bot.yml")
    assert not config.versions.requires_copy("core")
    assert Config().versions.requires_copy("core") and not Config().versions.requires_copy("iceberg")
    with pytest.raises(ConfigError):
        parse_config("versions:\n  require_published_copy: yes\n", "registry-bot.yml")


# -- the whole history ---------------------------------------------------------------------------------------

def test_no_merged_pull_request_is_blocked_by_a_version_rule(history: Path) -> None:
    """Every commit of the history that touches a schema or the mirror, replayed: no versions error."""
    commits = git(history, "log", "--format=%H", "--", "spec/facets", "spec/registry", "website/static/spec",
                  "spec/OpenLineage.json").splitlines()
    assert len(commits) >= 40
    blocked = [(c[:7], f.rule, f.path) for c in commits if git(history, "rev-list", "--parents", "-n1", c).count(" ")
               for f in versions(replay(history, c)) if f.severity is Severity.ERROR]
    assert blocked == []



# -- $ref graphs that could loop or explode ------------------------------------------------------------------

def _versions_of(doc: dict[str, Any], change: Any) -> dict[str, Any]:
    """Two published versions of ``doc`` (1-0-0 and 1-0-1, the second edited by ``change``), by URL."""
    old = json.loads(json.dumps(doc))
    old["$id"] = "https://openlineage.io/spec/1-0-0/Doc.json"
    new = json.loads(json.dumps(old))
    new["$id"] = "https://openlineage.io/spec/1-0-1/Doc.json"
    change(new)
    return {old["$id"]: old, new["$id"]: new}


def _facet(version: str, fragment: str) -> dict[str, Any]:
    return {"properties": {"x": {"$ref": f"https://openlineage.io/spec/{version}/Doc.json#/$defs/{fragment}"}}}


def test_a_recursive_definition_behind_a_moved_ref_is_compared_once() -> None:
    docs = _versions_of({"$defs": {"Node": {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}},
        lambda d: d["$defs"]["Node"]["properties"].update(label={"type": "string"}))
    needed, changes = required_bump(_facet("1-0-0", "Node"), _facet("1-0-1", "Node"), docs.get, docs.get)
    assert needed is Bump.ADDITION and [c.what for c in changes] == ["new optional field 'label'"]


def test_a_ref_graph_that_fans_out_is_walked_in_linear_time() -> None:
    depth = 60  # 2**60 paths if every path were followed
    defs: dict[str, Any] = {f"D{i}": {"type": "object", "properties": {
        "a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}}} for i in range(depth)}
    defs[f"D{depth}"] = {"type": "string"}
    docs = _versions_of({"$defs": defs}, lambda d: d["$defs"][f"D{depth}"].update(type="integer"))
    needed, changes = required_bump(_facet("1-0-0", "D0"), _facet("1-0-1", "D0"), docs.get, docs.get)
    assert needed is Bump.MODEL and len(changes) == 1
