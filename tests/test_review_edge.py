"""Where a review's view of a change ends (issue 28): the whole-tree diff past GitHub's listing
(``bot/github/tree_diff.py``), and the git door marking what it cannot read
(``bot/review/checks/edge.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.changes import Status
from bot.github.lazy_snapshot import TreeSnapshot
from bot.github.tree_diff import tree_changes
from bot.github.tree_files import TreeFiles
from tests.conftest import ROOT
from tests.gitrepo import Repo, git


def tree(
    files: dict[str, bytes], skipped: dict[str, tuple[str, str]] | None = None, cut: str = ""
) -> TreeSnapshot:
    out = TreeFiles()
    out.update(files)
    for path, (why, object_id) in (skipped or {}).items():
        out.skipped[path], out.skipped_ids[path] = why, object_id
    out.cut = cut
    return TreeSnapshot(out, label="t")


BASE = {"spec/registry/x/registry.json": b"{}", "client/a.py": b"a", "old.txt": b"moved"}
HEAD = {
    "spec/registry/x/registry.json": b"{ }",
    "client/a.py": b"a",
    "new.txt": b"moved",
    ".github/workflows/pwn.yml": b"on: pull_request_target",
}


def test_every_changed_path_of_the_whole_tree_is_in_the_change_and_unreadable_ones_are_marked() -> (
    None
):
    base = tree(
        BASE,
        {"spec/registry/x/link": ("a symlink", "s1"), "spec/registry/x/same": ("a symlink", "s0")},
    )
    head = tree(
        HEAD,
        {
            "spec/registry/x/link": ("a symlink", "s2"),
            "spec/registry/x/same": ("a symlink", "s0"),
            "spec/registry/x/sub": ("a submodule", "c1"),
        },
    )
    changes = tree_changes(base, head)
    by_path = {f.path: f for f in changes.files}
    assert set(by_path) == {
        "spec/registry/x/registry.json",
        "new.txt",
        ".github/workflows/pwn.yml",
        "spec/registry/x/link",
        "spec/registry/x/sub",
    }
    assert by_path["new.txt"].status is Status.RENAMED and by_path["new.txt"].old_path == "old.txt"
    # its target changed: the object id did
    assert by_path["spec/registry/x/link"].unread == "a symlink"
    assert by_path["spec/registry/x/sub"].unread == "a submodule"
    assert not by_path[".github/workflows/pwn.yml"].unread
    assert not changes.truncated and not changes.complete


def test_a_tree_listing_cut_short_is_a_truncated_change_without_phantom_deletions() -> None:
    head = tree(
        {"spec/registry/x/registry.json": b"{ }"}, cut="GitHub's listing stops at 100,000 entries"
    )
    changes = tree_changes(tree(BASE), head)
    # the rest lies past the cut
    assert [f.path for f in changes.files] == ["spec/registry/x/registry.json"]
    assert changes.truncated and "100,000" in changes.cut and not changes.complete


def stage_with_a_submodule(repo: Path, path: str) -> None:
    """Stage the work tree, and at ``path`` a submodule (a commit of main)."""
    git(repo, "add", "-A")
    git(
        repo,
        "update-index",
        "--add",
        "--cacheinfo",
        f"160000,{git(repo, 'rev-parse', 'main')},{path}",
    )


def test_the_git_door_reports_a_symlink_and_a_submodule_in_an_entry(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    repo = Repo.from_folder(ROOT / "registry" / "reference", tmp_path / "repo")
    git(repo.path, "checkout", "-q", "-b", "pr")
    (repo.path / "spec/registry/marquez/link.json").symlink_to("../../../../etc/passwd")
    stage_with_a_submodule(repo.path, "spec/registry/marquez/sub")
    git(repo.path, "commit", "-q", "-m", "not files")
    assert (
        main(["check", str(repo.path), "--base", "main", "--head", "pr", "--format", "json"]) == 1
    )
    unread = {
        f["path"]: f["message"]
        for f in json.loads(capsys.readouterr().out)["findings"]
        if f["rule"] == "bot/unread-path"
    }
    assert set(unread) == {"spec/registry/marquez/link.json", "spec/registry/marquez/sub"}
    assert (
        "symlink" in unread["spec/registry/marquez/link.json"]
        and "submodule" in unread["spec/registry/marquez/sub"]
    )


def test_check_all_reports_what_it_cannot_read_as_a_change_review_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Folders linked into the registry (out of the repository, to another entry, a whole entry to
    /etc) were never walked: ``--all`` passed them with SUCCESS while the change that adds them
    fails with ``bot/unread-path``. Both trees, the folder and the commit, now say it, with the
    change review's message; the committed tree's submodule too."""
    repo = Repo.from_folder(ROOT / "registry" / "reference", tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "MarquezEvilRunFacet.json").write_text("{ broken")
    (repo.path / "spec/registry/marquez/facets").symlink_to(outside)
    (repo.path / "spec/registry/marquez/samples").symlink_to("../airflow")
    (repo.path / "spec/registry/newentry").symlink_to("/etc")
    stage_with_a_submodule(repo.path, "spec/registry/marquez/sub")
    git(repo.path, "commit", "-q", "-m", "links")
    links = {
        "spec/registry/marquez/facets",
        "spec/registry/marquez/samples",
        "spec/registry/newentry",
    }

    def unread(*args: str) -> dict[str, str]:
        assert main(["check", str(repo.path), *args, "--format", "json"]) == 1
        found = json.loads(capsys.readouterr().out)["findings"]
        return {f["path"]: f["message"] for f in found if f["rule"] == "bot/unread-path"}

    # --head HEAD reads the working tree; a branch name, the commit
    folder, commit = unread("--all"), unread("--all", "--head", "main")
    change = unread("--base", "main~1", "--head", "main")
    assert set(folder) == links  # a submodule is an empty folder in the working tree
    assert set(commit) == set(change) == {*links, "spec/registry/marquez/sub"}
    assert folder.items() <= commit.items() and commit == change
    assert commit["spec/registry/newentry"] == (
        "spec/registry/newentry is a symlink; the bot does not follow symlinks: the bot cannot "
        "read it as a file, so nothing about it was reviewed."
    )
