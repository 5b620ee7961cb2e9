"""A file moved and re-written in one change: git and GitHub list a deletion and an addition (the
two share no line), and the review pairs them as the rename they are (``bot/review/renames.py``), on
the command line and in the App alike.

The base misnames an entry's facet file of the real corpus (``<stem>1.json``); the pull request
moves it back to its right name and re-indents it. Its problems at base (no example) must stay
pre-existing, as they do when git pairs the move.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.config import Config
from bot.core.findings import State
from bot.core.snapshot import MemorySnapshot
from bot.github.local import LocalGitHub
from bot.github.pipeline import fetch, review_inputs
from bot.review import renames
from bot.review.renames import paired_renames
from bot.service.worker import review_pull_request
from tests.gitrepo import Repo, git

ENTRY = "spec/registry/iceberg"
REPO = "OpenLineage/OpenLineage"
TEAM = "OpenLineage/committers"  # owns everything in the corpus's root CODEOWNERS


def misnamed(tmp_path: Path, corpus: Path) -> tuple[Repo, str, str]:
    """The corpus with the entry's first facet file misnamed on ``main``: the repository, the wrong
    path and the right one."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    right = sorted(p.relative_to(repo.path) for p in (repo.path / ENTRY / "facets").glob("*.json"))
    path = right[0].as_posix()
    wrong = path.removesuffix(".json") + "1.json"
    git(repo.path, "mv", path, wrong)
    repo.commit("a misnamed facet file", branch="main")
    return repo, wrong, path


def fix_name(repo: Repo, wrong: str, right: str, rewrite: bool) -> None:
    """``git mv wrong right`` on ``pr``, the file re-indented by 4 spaces when ``rewrite``."""
    git(repo.path, "checkout", "-q", "-B", "pr")
    git(repo.path, "mv", wrong, right)
    if rewrite:
        value = json.loads((repo.path / right).read_text(encoding="utf-8"))
        repo.write(right, json.dumps(value, indent=4) + "\n")
    repo.commit("fix the file name")


@pytest.fixture(params=[False, True], ids=["moved", "moved-and-reindented"])
def fixed_name(request: pytest.FixtureRequest, tmp_path: Path, corpus: Path) -> tuple[Repo, str]:
    repo, wrong, right = misnamed(tmp_path, corpus)
    fix_name(repo, wrong, right, rewrite=request.param)
    listed = {f.path: f.status for f in ChangeSet.from_git(repo.path, "main", "pr").files}
    # git pairs the plain move; the re-indented one shares no line with its old self
    assert listed == (
        {wrong: Status.DELETED, right: Status.ADDED} if request.param else {right: Status.RENAMED}
    )
    return repo, right


def test_check_keeps_a_moved_files_problems_pre_existing(
    fixed_name: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, right = fixed_name
    out = tmp_path / "report.json"
    args = ["check", str(repo.path), "--base", "main", "--head", "pr", "--author", "x"]
    code = main([*args, "--approved-by", TEAM, "--format", "json", "-o", str(out)])
    findings = json.loads(out.read_text(encoding="utf-8"))["findings"]
    new_errors = [f["rule"] for f in findings if f["state"] == "new" and f["severity"] == "error"]
    assert (code, new_errors) == (0, [])
    old = {f["rule"] for f in findings if f["path"] == right and f["state"] == "unchanged"}
    assert "examples/missing" in old


def test_the_app_keeps_a_moved_files_problems_pre_existing(fixed_name: tuple[Repo, str]) -> None:
    """GitHub lists the re-indented move as ``removed`` and ``added``, as git does."""
    repo, right = fixed_name
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=7, author="contributor")
    gh.set_team(TEAM, ["carol"])
    gh.add_review("carol")
    pr = gh.get_pull_request(REPO, 7)
    assert review_pull_request(gh, pr, "d-1") == "success"
    [run] = gh.runs_for(pr.head_sha)
    assert [a["title"] for a in run.annotations if a["level"] == "failure"] == []
    report = review_inputs(fetch(gh, pr))
    old = {f.rule for f in report.findings if f.path == right and f.state is State.UNCHANGED}
    assert "examples/missing" in old


# -- the pairing itself ----------------------------------------------------------------------------

FACET = "https://openlineage.io/spec/facets/{version}/{name}.json"


def schema(name: str, version: str = "1-0-0", **more: Any) -> bytes:
    return json.dumps({"$id": FACET.format(version=version, name=name), **more}).encode()


def pair(base: dict[str, bytes], head: dict[str, bytes]) -> dict[str, str | None]:
    """new path -> old path of what ``paired_renames`` lists (None: an addition); deletions as
    ``-path``."""
    files = [FileChange(p, Status.DELETED) for p in sorted(set(base) - set(head))]
    files += [FileChange(p, Status.ADDED) for p in sorted(set(head) - set(base))]
    changes = paired_renames(
        ChangeSet(files=tuple(files)),
        MemorySnapshot(base, "base"),
        MemorySnapshot(head, "head"),
        Config(),
    )
    return {
        ("-" + f.path if f.status is Status.DELETED else f.path): f.old_path for f in changes.files
    }


def test_the_same_json_value_is_a_rename_whatever_its_spelling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(renames, "SIMILAR", 2.0)  # no pair by similarity: the values alone
    old = b'{"a": [1, 2], "b": {"c": true}}'
    assert pair({"x/A.json": old}, {"y/B.json": b'{\n    "b": {"c": true},\n "a": [1,2]}\n'}) == {
        "y/B.json": "x/A.json"
    }
    # a different value, a number of another type, a file that is not JSON: no rename
    for other in (b'{"a": [1, 2], "b": {"c": 1}}', b'{"a": [1, 2.0], "b": {"c": true}}', b"{"):
        assert pair({"x/A.json": old}, {"y/B.json": other}) == {
            "-x/A.json": None,
            "y/B.json": None,
        }


def test_the_same_facet_id_is_a_rename_only_when_one_file_on_each_side_names_it() -> None:
    moved = {"a/F1.json": schema("F", description="old")}
    edited = {"b/F.json": schema("F", "1-0-1", description="new")}
    assert pair(moved, edited) == {"b/F.json": "a/F1.json"}
    two = {**edited, "c/F.json": schema("F", "1-0-2")}
    assert pair(moved, two) == {"-a/F1.json": None, "b/F.json": None, "c/F.json": None}
    assert pair(moved, {"b/G.json": schema("G")}) == {"-a/F1.json": None, "b/G.json": None}


def test_identical_files_pair_in_path_order_and_before_ids() -> None:
    same = schema("F")
    base = {"a/1.json": same, "a/2.json": same, "a/3.json": schema("F", description="x")}
    head = {"b/2.json": same, "b/1.json": same, "b/3.json": schema("F", "1-0-1")}
    assert pair(base, head) == {
        "b/1.json": "a/1.json",
        "b/2.json": "a/2.json",
        "b/3.json": "a/3.json",
    }


def test_only_json_files_a_listing_left_unpaired_are_read_at_most_max_files_none_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(renames, "MAX_FILES", 2)
    same = b'{"a": 1}'
    base = {"a.txt": same, "x/1.json": b"[1]", "x/2.json": b"[2]", "x/3.json": same}
    head = {"b.txt": same, "y/3.json": same}
    # x/3.json is past the first two deleted JSON files: not read, not paired
    assert pair(base, head) == {
        "-a.txt": None,
        "-x/1.json": None,
        "-x/2.json": None,
        "-x/3.json": None,
        "b.txt": None,
        "y/3.json": None,
    }
    assert pair({"x/3.json": same}, {"y/3.json": same}) == {"y/3.json": "x/3.json"}
    monkeypatch.setattr(renames, "MAX_FILE_BYTES", len(same) - 1)
    assert pair({"x/3.json": same}, {"y/3.json": same}) == {"-x/3.json": None, "y/3.json": None}
