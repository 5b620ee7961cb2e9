"""How versions are judged (``docs/versions.md``), on the real history of OpenLineage's spec and
registry.

Each mechanism is shown on the merged pull request that needs it, and next to a change that it must
still catch, so a test passes only while the mechanism both lets the real change through and keeps
the rule.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.core.changes import ChangeSet
from bot.core.config import Config, ConfigError, VersionsPolicy, parse_config
from bot.core.findings import Finding, Report, Severity, State, Verdict
from bot.core.snapshot import GitSnapshot
from bot.model.evolution.schema_diff import Bump, required_bump
from bot.model.schemas import SchemaStore
from bot.review.engine import ReviewContext, review
from tests.gitrepo import GIT_ENV, Repo, git
from tests.history import commit_of, replay, review_branch

DATAPROC = "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"


# notices on what a change means, not on its bump
INFORMATIONAL = ("versions/forward-break", "versions/codegen")


def versions(report: Report) -> list[Finding]:
    return [
        f for f in report.findings if f.rule.startswith("versions/") and f.rule not in INFORMATIONAL
    ]


def show(repo: Path, rev: str, path: str) -> Any:
    return json.loads(git(repo, "show", f"{rev}:{path}"))


def work_tree(history: Path, target: Path, rev: str) -> Repo:
    """A non-bare clone of the history, on a ``pr`` branch started at ``rev``."""
    subprocess.run(["git", "clone", "-q", str(history), str(target)], check=True, env=GIT_ENV)
    git(target, "checkout", "-q", "-b", "pr", rev)
    return Repo(target)


def resolver(store: SchemaStore) -> Any:
    def resolve(url: str) -> Any:
        stored = store.lookup(url)
        return None if stored is None else stored.schema

    return resolve


# -- renames: a new file name with a new facet $id is a new facet ----------------------------------


@pytest.mark.parametrize("pr", ["#2987", "#3167"])
def test_a_facet_renamed_with_a_new_id_is_a_new_facet(history: Path, pr: str) -> None:
    report = replay(history, commit_of(history, pr))
    assert versions(report) == []
    # To generated code it is a new type: said as a notice, on the renamed file.
    renamed = [
        f for f in report.findings if f.rule == "versions/codegen" and "new $id" in f.message
    ]
    assert (
        renamed
        and {f.severity for f in renamed} == {Severity.NOTICE}
        and renamed[0].category == "codegen"
    )


def test_a_renamed_file_keeping_its_facet_id_is_still_versioned(
    history: Path, tmp_path: Path
) -> None:
    """#3167's rename and edit, but the $id keeps naming the old facet: the same facet, changed at
    1-0-0."""
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
    # its key was renamed
    assert "MODEL" in found[0].message and "gcp_dataproc_spark" in found[0].message


# -- local $refs are followed ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pr", "path"),
    [
        ("#2548", "spec/facets/SchemaDatasetFacet.json"),
        ("#3098", "spec/facets/ColumnLineageDatasetFacet.json"),
    ],
)
def test_a_schema_moved_behind_a_local_ref_is_compared_by_what_it_accepts(
    history: Path, pr: str, path: str
) -> None:
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


# -- a $ref to another published version: judged by what differs between the two -------------------


def test_2520_without_a_mirror_cannot_compare_its_new_base_refs(history: Path) -> None:
    """At #2520 the repository had no published mirror: 1-0-2/OpenLineage.json is nowhere to compare
    with."""
    found = versions(replay(history, commit_of(history, "#2520")))
    # #2520 also took ExternalQueryRunFacet 1-0-0 -> 1-0-2 and ExtractionErrorRunFacet 1-1-0 ->
    # 1-1-2: the only two skips of the whole history (the mirror's gaps), notices
    skips = sorted(f.path.rsplit("/", 1)[1] for f in found if f.rule == "versions/skipped")
    assert skips == ["ExternalQueryRunFacet.json", "ExtractionErrorRunFacet.json"]
    found = [f for f in found if f.rule != "versions/skipped"]
    assert found and {f.rule for f in found} == {"versions/ref-not-compared"}
    assert {f.severity for f in found} == {Severity.NOTICE}
    assert all(f.pointer.endswith("/allOf/0/$ref") for f in found)


def test_2520_with_the_published_mirror_needs_only_what_the_definitions_gained(
    history: Path,
) -> None:
    """The same change against the mirror OpenLineage published (#2948): every bump #2520 made
    suffices."""
    commit = commit_of(history, "#2520")
    with GitSnapshot(history, commit_of(history, "#2948")) as published:
        resolve = resolver(SchemaStore(published, Config()))
        paths = git(
            history, "diff", "--name-only", f"{commit}^", commit, "--", "spec/facets"
        ).splitlines()
        assert len(paths) >= 20
        for path in paths:
            old, new = show(history, f"{commit}^", path), show(history, commit, path)
            needed, changes = required_bump(old, new, resolve, resolve)
            assert needed <= Bump.ADDITION and not [c for c in changes if c.unverified], (
                path,
                changes,
            )
        dataset = "spec/facets/SymlinksDatasetFacet.json"
        needed, changes = required_bump(
            show(history, f"{commit}^", dataset), show(history, commit, dataset), resolve, resolve
        )
        assert [c.what for c in changes if c.bump is Bump.ADDITION] == [
            "new optional field '_deleted'"
        ]
        # Back from 2-0-2 to 1-0-2 removes that field: a MODEL change.
        needed, changes = required_bump(
            show(history, commit, dataset), show(history, f"{commit}^", dataset), resolve, resolve
        )
        assert needed is Bump.MODEL and any("'_deleted' removed" in c.what for c in changes)


# -- a required list that named undeclared fields, corrected ---------------------------------------


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


# -- published copies ------------------------------------------------------------------------------

ICEBERG = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"


def _add_field(schema: dict[str, Any]) -> None:
    schema["$defs"]["IcebergScanReportInputDatasetFacet"]["allOf"][1]["properties"]["planner"] = {
        "type": "string"
    }


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
    corpus_repo.change(
        {ICEBERG: original.replace("Snapshot ID of the iceberg table", "Snapshot id")}
    )
    assert [f.rule for f in versions(review_branch(corpus_repo.path, "main"))] == [
        "versions/not-bumped"
    ]


def test_a_version_that_skips_versions_is_a_notice(corpus_repo: Repo) -> None:
    """An optional field added to iceberg's scan report, 1-0-1 -> 1-0-5: the bump is enough, but
    1-0-2 to 1-0-4 never exist (before: nothing said). 1-0-2 and 1-1-0 say nothing."""

    def bumped(version: str) -> str:
        corpus_repo.edit_json(ICEBERG, _add_field)
        text = (corpus_repo.path / ICEBERG).read_text(encoding="utf-8")
        return text.replace("/1-0-1/", f"/{version}/", 1)

    corpus_repo.change({ICEBERG: bumped("1-0-5")})
    report = review_branch(corpus_repo.path, "main")
    [skip] = [f for f in report.findings if f.rule == "versions/skipped"]
    assert skip.severity is Severity.NOTICE and skip.path == ICEBERG
    assert "1-0-1 -> 1-0-5 skips versions: the next ADDITION version is 1-0-2" in skip.message
    for version in ("1-0-2", "1-1-0"):
        git(corpus_repo.path, "checkout", "-q", "-f", "main")
        corpus_repo.change({ICEBERG: bumped(version)})
        found = review_branch(corpus_repo.path, "main").findings
        assert not [f for f in found if f.rule == "versions/skipped"], version


def test_a_schema_reverted_to_an_older_published_version_is_not_an_increase(
    corpus_repo: Repo, corpus: Path
) -> None:
    """The published-copy exemption is for a base that drifted from its own version: a head that
    is the mirror's copy of an *older* version (iceberg's commit report at 1-0-2 put back to its
    published 1-0-0, a renamed facet key among what that undoes) moves the version backwards."""
    path = "spec/registry/iceberg/facets/IcebergCommitReportOutputDatasetFacet.json"
    mirror = corpus / "website/static/spec/facets"
    assert '"$id": "https://openlineage.io/spec/facets/1-0-2/' in (corpus / path).read_text(
        encoding="utf-8"
    )
    corpus_repo.change({path: (mirror / "1-0-0" / Path(path).name).read_text(encoding="utf-8")})
    report = review_branch(corpus_repo.path, "main")
    found = versions(report)
    assert [(f.rule, f.path) for f in found] == [("versions/not-increased", path)]
    assert "from 1-0-2 to 1-0-0" in found[0].message
    assert report.verdict is Verdict.FAILURE
    # the $id alone moved back, nothing else changed: no bump is needed, and it is still no increase
    text = (corpus / path).read_text(encoding="utf-8")
    corpus_repo.change({path: text.replace("/1-0-2/", "/1-0-1/", 1)})
    found = versions(review_branch(corpus_repo.path, "main"))
    assert [(f.rule, f.path) for f in found] == [("versions/not-increased", path)]
    assert found[0].fix is not None and "1-0-2" in found[0].fix.description


def test_the_specification_put_back_to_an_older_published_version_is_not_an_increase(
    corpus_repo: Repo, corpus: Path
) -> None:
    """spec/OpenLineage.json at 2-0-2 replaced by the mirror's 2-0-1: identical to a published copy
    of its (older) version, so no other spec rule sees it."""
    spec = "spec/OpenLineage.json"
    assert show_id(corpus / spec).endswith("/2-0-2/OpenLineage.json")
    older = corpus / "website/static/spec/2-0-1/OpenLineage.json"
    corpus_repo.change({spec: older.read_text(encoding="utf-8")})
    report = review_branch(corpus_repo.path, "main")
    found = [f for f in report.findings if f.rule.startswith("spec/")]
    assert [(f.rule, f.path) for f in found] == [("spec/not-bumped", spec)]
    assert "from 2-0-2 to 2-0-1" in found[0].message and report.is_blocking(found[0])


def test_the_specification_skipping_versions_is_a_notice_as_for_facets(
    corpus_repo: Repo, corpus: Path
) -> None:
    """spec/OpenLineage.json 2-0-2 -> 2-0-5 with a new optional property: facets got
    `versions/skipped` for such a skip, the specification nothing. The next version, 2-0-3, says
    nothing."""
    spec = "spec/OpenLineage.json"

    def bumped(version: str) -> str:
        doc = json.loads((corpus / spec).read_text(encoding="utf-8"))
        doc["$id"] = doc["$id"].replace("/2-0-2/", f"/{version}/")
        doc["description"] = doc.get("description", "") + " (edited)"
        return json.dumps(doc, indent=2) + "\n"

    corpus_repo.change({spec: bumped("2-0-5")})
    [skip] = [
        f
        for f in review_branch(corpus_repo.path, "main").findings
        if f.path == spec and f.rule == "versions/skipped"
    ]
    assert skip.severity is Severity.NOTICE and skip.entry == "core"
    assert "2-0-2 -> 2-0-5 skips versions: the next ADDITION version is 2-0-3" in skip.message
    git(corpus_repo.path, "checkout", "-q", "-f", "main")
    corpus_repo.change({spec: bumped("2-0-3")})
    found = review_branch(corpus_repo.path, "main").findings
    assert not [f for f in found if f.rule == "versions/skipped"]


def show_id(path: Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8"))["$id"])


def test_a_change_to_a_facet_whose_id_names_no_version_is_not_passed_unjudged(
    corpus_repo: Repo,
) -> None:
    """A $id already malformed on the base (`http://`) is a pre-existing facets/id: a field made
    required under it was passed, its bump never judged."""
    corpus_repo.edit_json(ICEBERG, lambda d: d.update({"$id": d["$id"].replace("https", "http")}))
    corpus_repo.commit("a malformed $id", branch="main")

    def require(schema: dict[str, Any]) -> None:
        schema["$defs"]["IcebergScanReportInputDatasetFacet"]["allOf"][1]["required"] = [
            "snapshotId"
        ]

    corpus_repo.edit_json(ICEBERG, require)
    corpus_repo.commit("a field made required")
    report = review_branch(corpus_repo.path, "main")
    [found] = versions(report)
    assert (found.rule, found.path) == ("versions/not-bumped", ICEBERG)
    assert "names no version" in found.message and report.verdict is Verdict.FAILURE


def test_one_edit_is_reported_once(corpus_repo: Repo) -> None:
    """Editing 1-0-1 in place also makes it differ from its published copy: one cause, one
    finding."""
    corpus_repo.edit_json(ICEBERG, _add_field)
    corpus_repo.commit("edit in place")
    found = versions(review_branch(corpus_repo.path, "main"))
    assert [f.rule for f in found] == ["versions/not-bumped"]


def test_3555_an_unversioned_file_of_the_mirror_may_change(history: Path) -> None:
    commit = commit_of(history, "#3555")
    assert "website/static/spec/OpenLineage.yml" in git(
        history, "show", "--name-only", "--format=", commit
    )
    assert versions(replay(history, commit)) == []


def test_registry_facets_are_copied_at_release_unless_configured(history: Path) -> None:
    commit = commit_of(history, "#2987")
    assert versions(replay(history, commit)) == []
    every = Config(versions=VersionsPolicy(require_published_copy=("*",)))
    found = versions(replay(history, commit, config=every))
    assert {(f.rule, f.path.rsplit("/", 1)[1]) for f in found} == {
        ("versions/not-published", "GcpDataprocSparkRunFacet.json"),
        ("versions/not-published", "GcpLineageJobFacet.json"),
    }


def test_a_core_facet_copies_its_new_version_in_the_same_change(
    history: Path, tmp_path: Path
) -> None:
    """#3819 as merged, then without its mirror copy: core facets copy each version in the pull
    request."""
    commit = commit_of(history, "#3819")
    assert versions(replay(history, commit)) == []
    repo = work_tree(history, tmp_path / "wt", f"{commit}^")
    git(repo.path, "checkout", commit, "--", "spec")
    repo.commit("#3819 without its published copy", branch="pr")
    found = versions(review_branch(repo.path, f"{commit}^"))
    assert [(f.rule, f.path) for f in found] == [
        ("versions/not-published", "spec/facets/SQLJobFacet.json")
    ]


def test_the_versions_section_of_the_configuration() -> None:
    config = parse_config("versions:\n  require_published_copy: []\n", "registry-bot.yml")
    assert not config.versions.requires_copy("core")
    assert Config().versions.requires_copy("core") and not Config().versions.requires_copy(
        "iceberg"
    )
    with pytest.raises(ConfigError):
        parse_config("versions:\n  require_published_copy: yes\n", "registry-bot.yml")


# -- the whole history -----------------------------------------------------------------------------


@pytest.mark.no_cover
def test_no_merged_pull_request_is_blocked_by_a_version_rule(history: Path) -> None:
    """Every commit of the history that touches a schema or the mirror, replayed: no versions
    error."""
    commits = git(
        history,
        "log",
        "--format=%H",
        "--",
        "spec/facets",
        "spec/registry",
        "website/static/spec",
        "spec/OpenLineage.json",
    ).splitlines()
    assert len(commits) >= 40
    blocked = [
        (c[:7], f.rule, f.path)
        for c in commits
        if git(history, "rev-list", "--parents", "-n1", c).count(" ")
        for f in versions(replay(history, c))
        if f.severity is Severity.ERROR
    ]
    assert blocked == []


# -- $ref graphs that could loop or explode --------------------------------------------------------


def _versions_of(doc: dict[str, Any], change: Any) -> dict[str, Any]:
    """Two published versions of ``doc`` (1-0-0 and 1-0-1, the second edited by ``change``), by
    URL."""
    old = json.loads(json.dumps(doc))
    old["$id"] = "https://openlineage.io/spec/1-0-0/Doc.json"
    new = json.loads(json.dumps(old))
    new["$id"] = "https://openlineage.io/spec/1-0-1/Doc.json"
    change(new)
    return {old["$id"]: old, new["$id"]: new}


def _facet(version: str, fragment: str) -> dict[str, Any]:
    return {
        "properties": {
            "x": {"$ref": f"https://openlineage.io/spec/{version}/Doc.json#/$defs/{fragment}"}
        }
    }


def test_a_recursive_definition_behind_a_moved_ref_is_compared_once() -> None:
    docs = _versions_of(
        {
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                    },
                }
            }
        },
        lambda d: d["$defs"]["Node"]["properties"].update(label={"type": "string"}),
    )
    needed, changes = required_bump(
        _facet("1-0-0", "Node"), _facet("1-0-1", "Node"), docs.get, docs.get
    )
    assert needed is Bump.ADDITION and [c.what for c in changes] == ["new optional field 'label'"]


def test_a_ref_graph_that_fans_out_is_walked_in_linear_time() -> None:
    depth = 60  # 2**60 paths if every path were followed
    defs: dict[str, Any] = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(depth)
    }
    defs[f"D{depth}"] = {"type": "string"}
    docs = _versions_of({"$defs": defs}, lambda d: d["$defs"][f"D{depth}"].update(type="integer"))
    needed, changes = required_bump(
        _facet("1-0-0", "D0"), _facet("1-0-1", "D0"), docs.get, docs.get
    )
    assert needed is Bump.MODEL and len(changes) == 1


# -- evidence: category, witness, directions, transitive (docs/versions.md) ------------------------

MIRROR_FACETS = "website/static/spec/facets"
COMMIT_REPORT = "spec/registry/iceberg/facets/IcebergCommitReportOutputDatasetFacet.json"
DATASET_TYPE = "spec/facets/DatasetTypeDatasetFacet.json"


def _revalidated(finding: Finding, valid: Any, invalid: Any, store_root: Path) -> None:
    """The finding's witness, checked again by both validators against the two whole schema
    files."""
    import jsonschema
    import jsonschema_rs
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    assert finding.witness is not None and finding.category == "data"
    instance = json.loads(finding.witness.instance)

    def published(url: str) -> Any:
        return json.loads(
            (
                store_root / url.removeprefix("https://openlineage.io/spec/").split("#")[0]
            ).read_text()
        )

    base_url = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
    for schema, expected in ((valid, True), (invalid, False)):
        registry: Registry[Any] = Registry().with_resource(
            base_url, DRAFT202012.create_resource(published(base_url))
        )
        py = jsonschema.Draft202012Validator(
            schema, registry=registry, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        rs = jsonschema_rs.validator_for(
            schema,
            validate_formats=True,
            registry=jsonschema_rs.Registry([(base_url, published(base_url))]),
        )
        assert py.is_valid(instance) is expected and rs.is_valid(instance) is expected, (
            instance,
            expected,
        )


def test_held_out_4069_a_facet_key_changed_without_a_bump(corpus_repo: Repo) -> None:
    """#4069 (after the replayed history): the commit report's key changed and $id stayed 1-0-0.
    Rebuilt from the published copies: the base holds the published 1-0-0, the head the same with
    the new key."""
    published = (
        corpus_repo.path / MIRROR_FACETS / "1-0-0/IcebergCommitReportOutputDatasetFacet.json"
    ).read_text()
    corpus_repo.write(COMMIT_REPORT, published)
    corpus_repo.commit("base: the published 1-0-0", branch="main")
    head = json.loads(published)
    head["properties"] = {"icebergCommitReport": head["properties"].pop("iceberg_scan_report")}
    corpus_repo.change({COMMIT_REPORT: json.dumps(head, indent=2) + "\n"})
    report = review_branch(corpus_repo.path, "main")
    (found,) = versions(report)
    assert found.rule == "versions/not-bumped" and "MODEL" in found.message
    assert "facet key 'iceberg_scan_report' renamed to 'icebergCommitReport'" in found.message
    # Events carry the key; no example-shaped instance validates differently: wire, and no witness
    # claimed.
    assert (
        found.category == "wire"
        and found.witness is None
        and "keys and fields events carry" in found.message
    )
    assert found.to_json()["category"] == "wire" and "witness" not in found.to_json()
    (codegen,) = [f for f in report.findings if f.rule == "versions/codegen"]
    assert "icebergCommitReport" in codegen.message and codegen.category == "codegen"


def test_held_out_4092_two_keys_and_a_field_renamed_with_an_addition_bump(
    corpus_repo: Repo,
) -> None:
    """#4092: the scan report went 1-0-0 -> 1-0-1 renaming its key and `filter`; the commit report
    went 1-0-0 -> 1-0-2 renaming its key. Rebuilt from the published copies (the base publishes only
    1-0-0)."""
    scan = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"
    head_files = {}
    for path, new in ((scan, "1-0-1"), (COMMIT_REPORT, "1-0-2")):
        name = path.rsplit("/", 1)[1]
        corpus_repo.write(path, (corpus_repo.path / MIRROR_FACETS / "1-0-0" / name).read_text())
        head_files[path] = (corpus_repo.path / MIRROR_FACETS / new / name).read_text()
        corpus_repo.delete(f"{MIRROR_FACETS}/{new}/{name}")
    corpus_repo.commit("base: 1-0-0 of both, as published before #4092", branch="main")
    corpus_repo.change(head_files)
    found = versions(review_branch(corpus_repo.path, "main"))
    assert sorted((f.rule, f.path) for f in found) == [
        ("versions/insufficient-bump", COMMIT_REPORT),
        ("versions/insufficient-bump", scan),
    ]
    by_path = {f.path: f for f in found}
    assert "an ADDITION bump but the change needs MODEL" in by_path[scan].message
    assert (
        "'filter' renamed to 'filterDescription'" in by_path[scan].message
        or "renamed to 'icebergScanReport'" in by_path[scan].message
    )
    assert {f.category for f in found} == {"wire"} and all(f.witness is None for f in found)


def test_a_field_removed_then_re_added_with_another_type_is_caught_against_the_first(
    corpus_repo: Repo,
) -> None:
    """SchemaVer is transitive within a MODEL: 1-1-0 drops subType (published, merged), 1-2-0 brings
    it back as an integer. Against 1-1-0 that is a new optional field; against the published 1-0-0
    and 1-0-1 it turns their strings into failures: caught against the first, with an instance
    showing it."""

    def version(value: Any, v: str) -> str:
        value["$id"] = f"https://openlineage.io/spec/facets/{v}/DatasetTypeDatasetFacet.json"
        return json.dumps(value, indent=2) + "\n"

    original = json.loads((corpus_repo.path / DATASET_TYPE).read_text())
    body = original["$defs"]["DatasetTypeDatasetFacet"]["allOf"][1]["properties"]
    published_1_0_0 = json.loads(
        (corpus_repo.path / MIRROR_FACETS / "1-0-0/DatasetTypeDatasetFacet.json").read_text()
    )
    subtype = body.pop("subType")
    removed = version(original, "1-1-0")
    corpus_repo.write(DATASET_TYPE, removed)
    corpus_repo.write(f"{MIRROR_FACETS}/1-1-0/DatasetTypeDatasetFacet.json", removed)
    corpus_repo.commit("1-1-0: subType removed (merged)", branch="main")
    body["subType"] = {**subtype, "type": "integer"}
    readded = version(original, "1-2-0")
    corpus_repo.change(
        {DATASET_TYPE: readded, f"{MIRROR_FACETS}/1-2-0/DatasetTypeDatasetFacet.json": readded}
    )
    report = review_branch(corpus_repo.path, "main")
    found = versions(report)
    assert [(f.rule, f.severity) for f in found] == [("versions/transitive-break", Severity.ERROR)]
    (finding,) = found
    assert (
        finding.state is State.NEW
        and report.is_blocking(finding)
        and report.verdict is Verdict.FAILURE
    )
    assert "against published 1-0-0" in finding.message and "properties/subType" in finding.message
    assert finding.witness is not None and finding.witness.valid.startswith(
        "https://openlineage.io/spec/facets/1-0-0/DatasetTypeDatasetFacet.json"
    )
    _revalidated(
        finding, published_1_0_0, json.loads(readded), corpus_repo.path / "website/static/spec"
    )
    assert finding.to_json()["witness"]["instance"] == json.loads(finding.witness.instance)


def test_a_data_level_verdict_shows_its_witness_and_names_the_consumers(corpus_repo: Repo) -> None:
    """A facet's field narrowed in place: not-bumped with a witness; the forward notice names who
    reads it."""

    def narrow(value: Any) -> None:
        value["$defs"]["DatasetTypeDatasetFacet"]["allOf"][1]["properties"]["datasetType"][
            "enum"
        ] = ["TABLE"]

    corpus_repo.edit_json(DATASET_TYPE, narrow)
    corpus_repo.edit_json(
        "spec/registry/gcp/lineage/registry.json",
        lambda d: d["consumer"]["consumed_facets"].append("ol:core:DatasetTypeDatasetFacet.json"),
    )
    corpus_repo.commit("narrow datasetType in place")
    report = review_branch(corpus_repo.path, "main")
    (found,) = versions(report)
    assert (
        found.rule == "versions/not-bumped"
        and found.category == "data"
        and found.witness is not None
    )
    assert (
        "an instance the old version accepts and the new one rejects (checked with jsonschema and"
        in found.message
    )
    old = json.loads(git(corpus_repo.path, "show", f"main:{DATASET_TYPE}"))
    _revalidated(
        found,
        old,
        json.loads((corpus_repo.path / DATASET_TYPE).read_text()),
        corpus_repo.path / "website/static/spec",
    )
    from bot.outputs.render.markdown import render_markdown
    from bot.outputs.render.text import render_text

    assert "```json" in render_markdown(report) and "witness (valid against" in render_text(report)
    # Extending a type breaks no historical data (an ADDITION), but readers of 1-0-1 meet the new
    # values.
    corpus_repo.change({DATASET_TYPE: git(corpus_repo.path, "show", f"main:{DATASET_TYPE}")})

    def extend(value: Any) -> None:
        value["$id"] = value["$id"].replace("1-0-1", "1-0-2")
        value["$defs"]["DatasetTypeDatasetFacet"]["allOf"][1]["properties"]["datasetType"][
            "type"
        ] = ["string", "null"]

    corpus_repo.edit_json(DATASET_TYPE, extend)
    corpus_repo.write(
        f"{MIRROR_FACETS}/1-0-2/DatasetTypeDatasetFacet.json",
        (corpus_repo.path / DATASET_TYPE).read_text(),
    )
    corpus_repo.commit("datasetType may be null")
    report = review_branch(corpus_repo.path, "main")
    assert [
        f
        for f in report.findings
        if f.rule.startswith("versions/") and f.severity is Severity.ERROR
    ] == []
    (forward,) = [f for f in report.findings if f.rule == "versions/forward-break"]
    assert (
        forward.severity is Severity.NOTICE
        and "gcp:lineage" in forward.message
        and forward.category == "data"
    )
    assert (
        forward.witness is not None
        and json.loads(forward.witness.instance)["datasetType"]["datasetType"] is None
    )
    assert forward.witness.valid.endswith("(head: spec/facets/DatasetTypeDatasetFacet.json)")


def test_the_open_model_policy_and_severity_overrides_are_configured() -> None:
    from bot.core.config import known_rules_only
    from bot.core.severity import overridden, section
    from bot.review.checks import all_rules

    config = parse_config(
        "versions:\n  open_model_optional_add: revision\nseverity:\n  versions/codegen: warning\n",
        ".github/registry-bot.yml",
    )
    assert (
        config.versions.open_model_optional_add == "revision"
        and Config().versions.open_model_optional_add == "addition"
    )
    with pytest.raises(ConfigError):
        parse_config("versions:\n  open_model_optional_add: sometimes\n", "registry-bot.yml")
    # an unknown rule id is refused against the checks that run, not here
    # (tests/test_config_rules.py)
    unknown = parse_config("severity:\n  versions/no-such-rule: warning\n", "registry-bot.yml")
    assert known_rules_only(unknown, all_rules())[0].severity == ()
    with pytest.raises(ConfigError):
        parse_config("severity:\n  versions/codegen: fatal\n", "registry-bot.yml")
    notice = Finding(rule="versions/codegen", severity=Severity.NOTICE, path="x.json", message="m")
    other = Finding(
        rule="versions/forward-break", severity=Severity.NOTICE, path="x.json", message="m"
    )
    assert [f.severity for f in overridden([notice, other], config)] == [
        Severity.WARNING,
        Severity.NOTICE,
    ]
    audit = section(config, [notice])
    assert audit is not None and "`versions/codegen`: warning (1 finding(s)" in audit.markdown
    assert ".github/registry-bot.yml" in audit.markdown and section(Config(), [notice]) is None


def test_severity_overrides_change_the_verdict_and_are_named_in_the_report(
    corpus_repo: Repo,
) -> None:
    corpus_repo.edit_json(ICEBERG, _add_field)
    corpus_repo.write(".github/registry-bot.yml", "severity:\n  versions/not-bumped: warning\n")
    corpus_repo.commit("config", branch="main")
    corpus_repo.edit_json(
        ICEBERG,
        lambda s: s["$defs"]["IcebergScanReportInputDatasetFacet"]["allOf"][1]["properties"].update(
            other={"type": "string"}
        ),
    )
    corpus_repo.commit("edit in place")
    with GitSnapshot(corpus_repo.path, "main") as b, GitSnapshot(corpus_repo.path, "pr") as h:
        report = review(
            head=h,
            base=b,
            changes=ChangeSet.from_git(corpus_repo.path, b.commit, h.commit),
            context=ReviewContext(),
        )
    (found,) = versions(report)
    assert found.rule == "versions/not-bumped" and found.severity is Severity.WARNING
    assert report.verdict.value == "success"
    assert [s.title for s in report.sections] == ["Severity overrides"]
    assert report.to_json()["sections"][0]["data"]["overrides"] == {
        "versions/not-bumped": "warning"
    }


@pytest.mark.parametrize("where", ["facet", "root"])
def test_a_schema_with_a_type_that_is_no_type_is_judged_not_crashed_on(where: str) -> None:
    """Issue 28: the witness search sampled ``"type": 5`` to None and raised a TypeError (an
    internal error)."""
    import copy

    from bot.core.changes import FileChange, Status
    from bot.core.snapshot import MemorySnapshot
    from tests import registry_cases as rc

    schema = copy.deepcopy(rc.FACET_SCHEMA)
    (schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1] if where == "facet" else schema)["type"] = 5
    base = {path: text.encode() for path, text in rc.good_files().items()}
    head = {**base, rc.FACET: rc.dump(schema).encode()}
    report = review(
        head=MemorySnapshot(head),
        base=MemorySnapshot(base),
        config=Config(),
        changes=ChangeSet(files=(FileChange(rc.FACET, Status.MODIFIED),)),
    )
    # no check crashes on it: versions (the witness search), examples (the explaining validator)
    crashes = [f.message for f in report.findings if f.rule == "bot/internal-error"]
    assert not crashes, crashes
    # judged: the schema is invalid, and its $id was not bumped
    assert report.verdict is Verdict.FAILURE


@pytest.mark.parametrize(
    ("field", "limit"),
    [
        ("widgetId", "400000000"),
        ("widgetId", "1200000000"),
        ("widgetId", "1e400"),
        ("labels", "30000000"),
    ],
)
def test_a_limit_too_large_to_build_a_value_past_is_judged_not_crashed_on(
    field: str, limit: str
) -> None:
    """The witness search built a string or array one past the limit: 818 MB for a maxLength of
    400,000,000, a MemoryError (an internal error) for 1,200,000,000, an OverflowError for 1e400,
    9 s and 946 MB for a maxItems of 30,000,000. The verdict is the schema diff's."""
    import copy

    from bot.core.changes import FileChange, Status
    from bot.core.snapshot import MemorySnapshot
    from tests import registry_cases as rc

    schema = copy.deepcopy(rc.FACET_SCHEMA)
    props = schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]["properties"]
    node = props[field] if field == "widgetId" else props["settings"]["properties"][field]
    node["maxLength" if field == "widgetId" else "maxItems"] = 123456789
    base = {path: text.encode() for path, text in rc.good_files().items()}
    head = {**base, rc.FACET: rc.dump(schema).replace("123456789", limit).encode()}
    report = review(
        head=MemorySnapshot(head),
        base=MemorySnapshot(base),
        config=Config(),
        changes=ChangeSet(files=(FileChange(rc.FACET, Status.MODIFIED),)),
    )
    assert not [f.message for f in report.findings if f.rule.startswith("bot/")]
    (found,) = versions(report)
    assert found.rule == "versions/not-bumped" and "needs a REVISION bump" in found.message
    assert found.witness is None and "No instance showing it was found" in found.message
