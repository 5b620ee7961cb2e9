"""Renames and moves in a change review: what the judge follows, who approves, what is compared.

Pull requests on a git repository of the real corpus with two entries owned by people without
write access (``tests/delegation_repo.py``: ``@dataproc-owner``, ``@iceberg-owner``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.core.changes import ChangeSet, Status, _file_changes, _parse_raw
from bot.core.findings import Report, State
from bot.core.snapshot import GitSnapshot, run_git
from bot.github.api import ChangedFile
from bot.github.local import LocalGitHub
from bot.github.pipeline import fetch, review_inputs, to_changeset
from bot.review import renames
from bot.review.engine import ReviewContext, review
from bot.service.worker import review_pull_request
from tests.delegation_repo import DATAPROC, DATAPROC_OWNER, ICEBERG, ICEBERG_OWNER, build
from tests.gitrepo import Repo, git
from tests.test_unpaired_renames import pair

SOURCE = f"{ICEBERG}/facets/IcebergScanReportInputDatasetFacet.json"
REPO = "OpenLineage/OpenLineage"


@pytest.fixture(scope="module")
def owned(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Repo:
    return build(corpus, tmp_path_factory.mktemp("rename-audit") / "repo")


def branch(repo: Repo, name: str, files: dict[str, bytes | None]) -> str:
    """A pull request branch ``name`` on ``main`` writing (``None``: deleting) ``files``."""
    git(repo.path, "checkout", "-q", "-B", name, "main")
    for path, content in files.items():
        if content is None:
            repo.delete(path)
        else:
            repo.write(path, content)
    repo.commit(name, branch=name)
    git(repo.path, "checkout", "-q", "main")
    return name


def judged(repo: Repo, head: str, changes: ChangeSet, author: str) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, head) as tip:
        return review(head=tip, base=base, changes=changes, context=ReviewContext(author=author))


def states(report: Report, path: str) -> dict[str, State | None]:
    return {f.rule: f.state for f in report.findings if f.path == path}


def facet_copy(repo: Repo, source: str, folder: str, name: str, key: str) -> dict[str, bytes]:
    """A new facet file ``name`` in ``folder``, copied from ``source`` (``$id``, ``$defs`` name and
    facet key its own)."""
    value: Any = json.loads((repo.path / source).read_text(encoding="utf-8"))
    old = next(iter(value["$defs"]))
    value["$id"] = value["$id"].rsplit("/", 1)[0] + f"/{name}.json"
    value["$defs"][name] = value["$defs"].pop(old)
    value["properties"] = {key: {"$ref": f"#/$defs/{name}"}}
    return {f"{folder}/facets/{name}.json": (json.dumps(value, indent=2) + "\n").encode()}


# -- a copy is an addition -------------------------------------------------------------------------


def test_a_copy_github_lists_is_an_addition_and_its_source_is_left_alone(owned: Repo) -> None:
    """GitHub lists a file copied from another as ``copied`` with ``previous_filename``. Taken as a
    rename, the source's problems were followed to the copy: the new facet's missing example was
    pre-existing (hidden) and the untouched source's blamed on the change (new), its owners asked to
    approve a change that left their file alone, and the copy "became" a new facet."""
    copy = facet_copy(owned, SOURCE, ICEBERG, "IcebergPlantedInputDatasetFacet", "x")
    [added] = copy
    head = branch(owned, "copied", dict(copy))
    listed = ChangeSet.from_git(owned.path, "main", head)
    assert [(f.path, f.status) for f in listed.files] == [(added, Status.ADDED)]
    files = [ChangedFile(f.path, "copied", SOURCE, f.patch) for f in listed.files]
    report = judged(owned, head, to_changeset(files), ICEBERG_OWNER)
    assert states(report, SOURCE).get("examples/missing") is State.UNCHANGED
    assert states(report, added).get("examples/missing") is State.NEW
    assert "versions/codegen" not in states(report, added)
    # a copy from another entry: that entry's owners are not asked, its file is unchanged
    other = f"{DATAPROC}/facets/GcpDataprocRunFacet.json"
    copy = facet_copy(owned, other, ICEBERG, "IcebergCopiedRunFacet", "iceberg_copied")
    head = branch(owned, "copied-across", dict(copy))
    files = [ChangedFile(p, "copied", other) for p in copy]
    report = judged(owned, head, to_changeset(files), ICEBERG_OWNER)
    assert not [f for f in report.findings if DATAPROC_OWNER in "".join(f.owners)]


def test_a_copy_git_lists_is_an_addition(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.json").write_text("\n".join(f'"line {i}"' for i in range(40)), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "b.json").write_text((repo / "a.json").read_text(encoding="utf-8"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "copy")
    raw = run_git(repo, "diff", "--raw", "-C", "--find-copies-harder", "-z", "HEAD~", "HEAD")
    [record] = _parse_raw(raw)
    assert (record.code[0], record.old_path) == ("C", "a.json")
    assert [(f.path, f.status, f.old_path) for f in _file_changes([record], {})] == [
        ("b.json", Status.ADDED, None)
    ]


# -- every door pairs an edited move as git does ---------------------------------------------------


def test_an_edited_move_pairs_by_similarity_the_most_similar_first() -> None:
    """As ``git diff -M`` pairs it: half of the larger file's lines held by the other file too."""

    def value(n: int, edited: int = -1) -> bytes:
        fields = {f"field{i}": "edited" if i == edited else i for i in range(n)}
        return json.dumps(fields, indent=2).encode()

    base = {"a/Old.json": value(10), "a/Other.json": value(10, edited=3)}
    # one line of ten edited: paired with the file it shares most with
    assert pair(base, {"b/New.json": value(10, edited=4)}) == {
        "-a/Other.json": None,
        "b/New.json": "a/Old.json",
    }
    # less than half shared: an addition and a deletion
    assert pair({"a/Old.json": value(10)}, {"b/New.json": value(4)}) == {
        "-a/Old.json": None,
        "b/New.json": None,
    }


def rename_commits(history: Path) -> list[str]:
    """The commits of the real history that move a JSON file (as git pairs it)."""
    out = git(history, "log", "--format=%H", "--diff-filter=R", "-M", "--", "*.json")
    return out.split()


def door(repo: Path, tmp: Path, *args: str) -> list[tuple[str, str, str, str]]:
    out = tmp / "report.json"
    main(["check", str(repo), "--base", "main", *args, "--format", "json", "-o", str(out)])
    found = json.loads(out.read_text(encoding="utf-8"))["findings"]
    return sorted((f["state"], f["rule"], f["path"], f["pointer"]) for f in found)


def test_the_working_tree_door_judges_the_real_moves_as_the_commit_does(
    history_clone: Path, tmp_path: Path
) -> None:
    """``check --worktree`` lists no rename (nor does the App's tree diff past GitHub's listing):
    the real history's moves git pairs with an edit (a facet renamed with a new ``$id``) had their
    problems all judged new there, and passed as a commit."""
    commits = rename_commits(history_clone)
    assert len(commits) >= 2
    for commit in commits:
        repo = tmp_path / commit[:7]
        git(tmp_path, "clone", "-q", str(history_clone), str(repo))
        git(repo, "checkout", "-q", "-B", "main", commit + "^")
        committed = door(repo, tmp_path, "--head", commit)
        # the commit's files written over the working tree, nothing staged
        git(repo, "checkout", "-q", commit, "--", ".")
        gone = git(repo, "diff", "--name-only", "--no-renames", "--diff-filter=D", "main", commit)
        for path in gone.splitlines():
            (repo / path).unlink()
        git(repo, "reset", "-q")
        assert door(repo, tmp_path, "--worktree") == committed, commit


def test_similarity_is_not_measured_past_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past what it may read or compare, no move pairs by similarity (its problems are judged new,
    never hidden), as git stops pairing past its rename limit."""
    lines = [f'  "field{i}": {i},' for i in range(20)]
    old = {"a/Old.json": ("{\n" + "\n".join(lines) + '\n  "x": 1\n}\n').encode()}
    new = {"b/New.json": ("{\n" + "\n".join(lines) + '\n  "y": 2\n}\n').encode()}
    paired = {"b/New.json": "a/Old.json"}
    assert pair(old, new) == paired
    unpaired = {"-a/Old.json": None, "b/New.json": None}
    with monkeypatch.context() as patched:
        patched.setattr(renames, "MAX_MEASURED", len(old["a/Old.json"]) * 2 - 1)
        assert pair(old, new) == unpaired
    monkeypatch.setattr(renames, "MAX_COMPARED", 10)
    assert pair(old, new) == unpaired


# -- a facet is renamed only into the same facet ---------------------------------------------------


def test_an_unrelated_new_facet_is_not_a_rename_of_a_deleted_one(
    tmp_path: Path, corpus: Path
) -> None:
    """Git pairs the real ``OwnershipDatasetFacet`` and ``SymlinksDatasetFacet`` at 53%, all of it
    the boilerplate every facet schema holds. Deleting the one (no example at base) while adding the
    other (no example either) was a rename: the new facet's missing example was pre-existing and
    passed. The facets' own fields share nothing: a deletion and an addition, on every door."""
    facets, examples = "spec/facets", "spec/tests"
    gone, added = f"{facets}/OwnershipDatasetFacet.json", f"{facets}/SymlinksDatasetFacet.json"
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    content, old = (repo.path / added).read_bytes(), (repo.path / gone).read_bytes()
    for path in (added, f"{examples}/SymlinksDatasetFacet", f"{examples}/OwnershipDatasetFacet"):
        repo.delete(path)
    repo.commit("facets without examples", branch="main")
    head = branch(repo, "swap", {gone: None, added: content})
    listed = ChangeSet.from_git(repo.path, "main", head)
    assert [(f.status, f.old_path) for f in listed.files if f.path == added] == [
        (Status.RENAMED, gone)  # git -M pairs them
    ]
    report = judged(repo, head, listed, "someone")
    assert states(report, added).get("examples/missing") is State.NEW
    assert pair({gone: old}, {added: content}) == {f"-{gone}": None, added: None}


# -- a waiver follows its finding ------------------------------------------------------------------


def renamed_facet(
    repo: Repo, source: str, folder: str, name: str, key: str
) -> dict[str, bytes | None]:
    """``source`` renamed to facet ``name`` in ``folder`` (as #3167 renamed one)."""
    return {source: None, **facet_copy(repo, source, folder, name, key)}


def test_a_waiver_follows_its_finding_across_a_rename(owned: Repo) -> None:
    """The owners waived the facet's missing example; the change renames the facet within the entry.
    The finding was followed to the new path (pre-existing) but the waiver was not: it no longer
    applied (blocking under --strict) and its `waivers/unmatched` warning was labelled
    pre-existing. Moved to another entry, out of the waiver's reach, the warning is the change's."""
    waiver = {
        "rule": "examples/missing",
        "path": SOURCE,
        "pointer": "",
        "reason": "examples come later",
        "granted_by": f"@{ICEBERG_OWNER}",
        "expires": "2999-12-31",
    }
    waivers = json.dumps({"waivers": [waiver]}).encode()
    base = branch(owned, "waived", {f"{ICEBERG}/waivers.json": waivers})
    for folder, name, moved_out in (
        (ICEBERG, "IcebergScanInputDatasetFacet", False),
        (DATAPROC, "GcpDataprocScanInputDatasetFacet", True),
    ):
        git(owned.path, "checkout", "-q", "-B", f"to-{name}", base)
        for path, content in renamed_facet(owned, SOURCE, folder, name, "scan").items():
            if content is None:
                owned.delete(path)
            else:
                owned.write(path, content)
        head = owned.commit(name, branch=f"to-{name}")
        git(owned.path, "checkout", "-q", "main")
        changes = ChangeSet.from_git(owned.path, base, head)
        new = f"{folder}/facets/{name}.json"
        assert [f.old_path for f in changes.files if f.path == new] == [SOURCE]
        with GitSnapshot(owned.path, base) as old, GitSnapshot(owned.path, head) as tip:
            context = ReviewContext(author=ICEBERG_OWNER, strict=True)
            report = review(head=tip, base=old, changes=changes, context=context)
        [missing] = [f for f in report.findings if f.rule == "examples/missing" and f.path == new]
        assert missing.state is State.UNCHANGED
        unmatched = [f.state for f in report.findings if f.rule == "waivers/unmatched"]
        if moved_out:
            assert missing.waived is None
            assert unmatched == [State.NEW]
        else:
            assert missing.waived is not None
            assert unmatched == []


# -- a file moved onto one the change deletes ------------------------------------------------------


def test_an_example_moved_onto_a_deleted_one_keeps_its_problems(
    tmp_path: Path, corpus: Path
) -> None:
    """Deleting example ``2.json`` and moving ``3.json`` onto it (renumbering) is listed by git and
    GitHub as ``2.json`` modified and ``3.json`` deleted (git pairs it only with ``-B``): the
    problems ``3.json`` had at base were judged new at ``2.json``, a false alarm."""
    folder = "spec/tests/JobTypeJobFacet"
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    value = json.loads((repo.path / folder / "3.json").read_text(encoding="utf-8"))
    value["jobType"]["emissionPattern"]["windowDuration"] = "not a number"
    moved = (json.dumps(value, indent=2) + "\n").encode()
    repo.write(f"{folder}/3.json", moved)
    repo.commit("an example with a problem", branch="main")
    head = branch(repo, "renumber", {f"{folder}/3.json": None, f"{folder}/2.json": moved})
    changes = ChangeSet.from_git(repo.path, "main", head)
    assert sorted((f.path, f.status) for f in changes.files) == [
        (f"{folder}/2.json", Status.MODIFIED),
        (f"{folder}/3.json", Status.DELETED),
    ]
    with GitSnapshot(repo.path, "main") as base:
        before = review(head=base).findings
    was = {f.rule for f in before if f.path == f"{folder}/3.json" and f.severity.name == "ERROR"}
    assert was  # the problem planted at base
    report = judged(repo, head, changes, "someone")
    now = [f for f in report.findings if f.path == f"{folder}/2.json" and f.rule in was]
    assert now
    assert {f.state for f in now} == {State.UNCHANGED}


# -- no annotation on a path the head no longer has ------------------------------------------------


def test_no_annotation_sits_on_a_file_the_change_moved_away(tmp_path: Path, corpus: Path) -> None:
    """A facet moved out of its entry: the old entry's owners must approve, a finding on the old
    path. As a check-run annotation it named a file the head does not have, which GitHub shows on
    no file; it is in the summary's tables, and the annotations name only the head's files."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    moved = f"{DATAPROC}/facets/IcebergScanReportInputDatasetFacet.json"
    git(repo.path, "checkout", "-q", "-B", "pr")
    git(repo.path, "mv", SOURCE, moved)
    repo.commit("move a facet to another entry")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=7, author="contributor")
    pr = gh.get_pull_request(REPO, 7)
    assert review_pull_request(gh, pr, "d-1") == "failure"
    [run] = gh.runs_for(pr.head_sha)
    assert gh.unplaced(run) == []
    assert any(a["path"] == moved for a in run.annotations)
    report = review_inputs(fetch(gh, pr))
    [owners] = [f for f in report.findings if f.path == SOURCE]
    assert owners.rule == "owners/approval-required"
    assert SOURCE in run.summary  # in the summary's tables
