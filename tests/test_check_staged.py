"""``check --staged``, the pre-commit hook's view: what the index holds, what ``git commit``
records.

On a git repository of the real corpus: an untracked file, or an edit left unstaged, is no part of
the commit and changes nothing; ``--worktree`` (the working tree as it is) judges them, so the two
differ exactly there.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from tests.gitrepo import GIT_ENV, Repo, git

ENTRY = "spec/registry/gcp/dataproc/registry.json"
UNTRACKED = "spec/registry/gcp/dataproc/facets/UntrackedRunFacet.json"


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "repo")


def check(repo: Repo, mode: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check", str(repo.path), "--base", "HEAD", mode, "--color", "never"])
    out = capsys.readouterr()
    return code, out.out + out.err


def broken_entry(repo: Repo) -> str:
    entry = json.loads((repo.path / ENTRY).read_text(encoding="utf-8"))
    entry["producer"]["produced_facets"].append("ol:gcp:dataproc:GcpDataprocMissingFacet.json")
    return json.dumps(entry, indent=2) + "\n"


def test_an_untracked_file_is_no_part_of_the_commit(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo.path / UNTRACKED).write_text("{ not json\n", encoding="utf-8")
    worktree, said = check(repo, "--worktree", capsys)
    assert worktree == 1 and UNTRACKED in said, said
    staged, said = check(repo, "--staged", capsys)
    assert staged == 0 and UNTRACKED not in said, said


def test_the_staged_version_is_judged_not_the_working_copy(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (repo.path / ENTRY).read_text(encoding="utf-8")
    broken = broken_entry(repo)
    # a broken edit staged, then the working copy put right without staging it
    (repo.path / ENTRY).write_text(broken, encoding="utf-8")
    git(repo.path, "add", ENTRY)
    (repo.path / ENTRY).write_text(good, encoding="utf-8")
    staged, said = check(repo, "--staged", capsys)
    assert staged == 1 and "uris/unresolved" in said and ENTRY in said, said
    assert check(repo, "--worktree", capsys)[0] == 0
    # and the other way round: the fix staged, a broken working copy left
    git(repo.path, "add", ENTRY)
    (repo.path / ENTRY).write_text(broken, encoding="utf-8")
    assert check(repo, "--staged", capsys)[0] == 0
    assert check(repo, "--worktree", capsys)[0] == 1
    # nothing was committed, no branch moved
    assert git(repo.path, "rev-parse", "HEAD") == git(repo.path, "rev-parse", "main")
    assert git(repo.path, "diff", "--cached", "--name-only") == ""
    assert git(repo.path, "diff", "--name-only") == ENTRY


def findings(repo: Repo, *args: str, capsys: pytest.CaptureFixture[str]) -> list[object]:
    main(["check", str(repo.path), *args, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return sorted(json.dumps(f, sort_keys=True) for f in report["findings"])


def test_staged_judges_what_the_commit_then_holds_renames_followed(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rename and a broken edit staged, an untracked file beside them: ``--staged`` says exactly
    what the same review says of the commit once made."""
    facet = next(
        p
        for p in git(repo.path, "ls-files", "spec/registry/gcp/dataproc").splitlines()
        if "/facets/" in p and p.endswith(".json")
    )
    moved = facet.replace("/facets/", "/facets/moved/")
    (repo.path / moved).parent.mkdir()
    git(repo.path, "mv", facet, moved)
    (repo.path / ENTRY).write_text(broken_entry(repo), encoding="utf-8")
    git(repo.path, "add", ENTRY)
    (repo.path / UNTRACKED).write_text("{ not json\n", encoding="utf-8")
    before = findings(repo, "--base", "HEAD", "--staged", capsys=capsys)
    git(repo.path, "commit", "-q", "-m", "the staged change")
    after = findings(repo, "--base", "HEAD~1", "--head", "HEAD", capsys=capsys)
    assert before == after and before
    assert any(f"{facet} does not exist" in f for f in before)  # the move is in the view
    assert not any(UNTRACKED in f for f in before)


def test_an_index_with_unmerged_paths_is_one_line(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (repo.path / ENTRY).read_text(encoding="utf-8")
    repo.change({ENTRY: good.replace("dataproc", "dataproc-one", 1)}, "one side")
    git(repo.path, "checkout", "-q", "main")
    repo.write(ENTRY, good.replace("dataproc", "dataproc-two", 1))
    repo.commit("other side", branch="main")
    merge = subprocess.run(
        ["git", "-C", str(repo.path), "merge", "pr"], capture_output=True, env=GIT_ENV, check=False
    )
    assert merge.returncode != 0  # a conflict: the index holds unmerged entries
    code, said = check(repo, "--staged", capsys)
    assert code == 2 and said.strip().count("\n") == 0 and "--staged" in said, said


def test_staged_goes_with_base_not_all(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(repo.path), "--all", "--staged"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == "registry-bot check: --staged goes with --base, not --all"
