"""Reviewing real repositories git cannot fully read: partial clones, a promisor remote that is
gone, git errors.

The repository is the real OpenLineage history, cloned with ``--filter=blob:none`` from a local copy
served with ``uploadpack.allowFilter``; each test first checks that the clone really lacks the
blobs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.findings import Report
from tests.gitrepo import GIT_ENV, git
from tests.history import commit_of, replay

PR = "#3167"  # renames a gcp facet and edits two registry.json files


def _missing_blobs(repo: Path, commit: str) -> int:
    out = git(repo, "rev-list", "--objects", "--no-walk", "--missing=print", commit)
    return sum(1 for line in out.splitlines() if line.startswith("?"))


@pytest.fixture
def partial(tmp_path: Path, history: Path) -> Path:
    source = tmp_path / "source.git"
    shutil.copytree(history, source)
    git(source, "config", "uploadpack.allowFilter", "true")
    target = tmp_path / "partial.git"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--bare",
            "--no-local",
            "--filter=blob:none",
            f"file://{source}",
            str(target),
        ],
        check=True,
        env=GIT_ENV,
    )
    assert _missing_blobs(target, "HEAD") > 100, (
        "the clone is not partial: the test would prove nothing"
    )
    return target


def _keyed(report: Report) -> list[tuple[str, str, str, str]]:
    return [(f.rule, f.severity.value, f.path, f.message) for f in report.findings]


def test_a_partial_clone_is_reviewed_like_a_full_one(partial: Path, history: Path) -> None:
    commit = commit_of(history, PR)
    missing_before = _missing_blobs(partial, commit)
    assert _keyed(replay(partial, commit)) == _keyed(replay(history, commit))
    missing_after = _missing_blobs(partial, commit)
    assert 0 < missing_after < missing_before  # fetched what the review read, not the whole tree


def test_a_gone_promisor_gives_findings_naming_each_unreadable_file(
    partial: Path, history: Path
) -> None:
    commit = commit_of(history, PR)
    git(partial, "remote", "set-url", "origin", str(partial.parent / "gone.git"))
    report = replay(partial, commit)
    assert not [f for f in report.findings if f.rule == "bot/internal-error"]
    unreadable = {f.path: f for f in report.findings if f.rule.endswith("/unreadable")}
    facet = "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"
    assert {facet, "spec/registry/gcp/dataproc/registry.json"} <= set(unreadable)
    assert unreadable[facet].severity.value == "error"
    assert (
        "not in this partial clone" in unreadable[facet].message
        and "gone.git" in unreadable[facet].message
    )


def test_the_cli_never_prints_a_traceback(
    partial: Path, history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = commit_of(history, PR)
    git(partial, "remote", "set-url", "origin", str(partial.parent / "gone.git"))
    assert main(["check", str(partial), "--base", f"{commit}^", "--head", commit]) == 1
    out, err = capsys.readouterr()
    assert "GcpDataprocRunFacet.json" in out and "Traceback" not in out + err


@pytest.mark.parametrize(
    "args",
    [
        ["--base", "no-such-branch"],
        ["--base", "HEAD", "--head", "0" * 40],
    ],
)
def test_git_failures_exit_2_with_one_line(
    history: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(history), *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    # not git's plumbing
    assert err.startswith("registry-bot check: --") and "no such branch, tag or commit in" in err


def test_not_a_repository_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path), "--base", "HEAD"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_git_missing_from_path_exits_2(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert main(["check", str(history), "--base", "HEAD^"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "git" in err


def test_a_blob_missing_from_a_complete_repository_is_an_unreadable_file(
    tmp_path: Path, history: Path
) -> None:
    """No promisor to fetch from (a damaged clone): the file the review needs is a finding naming
    it."""
    commit = commit_of(history, PR)
    repo = tmp_path / "damaged.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--no-local", str(history), str(repo)],
        check=True,
        env=GIT_ENV,
    )
    git(repo, "repack", "-a", "-d", "-q")  # the one pack below, then its blob goes
    blob = git(
        repo, "rev-parse", f"{commit}:spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"
    )
    kept = [
        line
        for line in git(
            repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"
        ).split()
        if line != blob
    ]
    packs = list((repo / "objects/pack").glob("*.pack"))
    subprocess.run(
        ["git", "-C", str(repo), "pack-objects", "-q", str(repo / "objects/pack/pack")],
        input="\n".join(kept) + "\n",
        text=True,
        check=True,
        capture_output=True,
    )
    for old in packs:
        for suffix in (".pack", ".idx", ".rev"):
            old.with_suffix(suffix).unlink(missing_ok=True)
    report = replay(repo, commit)
    (finding,) = [
        f
        for f in report.findings
        if f.path.endswith("GcpDataprocRunFacet.json") and "unreadable" in f.rule
    ]
    assert "missing from the repository" in finding.message
    assert not [f for f in report.findings if f.rule == "bot/internal-error"]
