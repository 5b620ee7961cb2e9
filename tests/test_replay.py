"""``registry-bot replay``: a recorded delivery through the whole pipeline against a local repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import PAYLOADS
from tests.gitrepo import Repo
from tests.test_pipeline import ENTRY, broken_entry


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    r = Repo.from_folder(corpus, tmp_path_factory.mktemp("replay") / "repo")
    r.change({ENTRY: broken_entry()})
    return r.path


def test_replay_prints_what_would_be_posted(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", str(PAYLOADS / "pull_request.opened.json"), "--repo", str(repo), "--head", "pr",
                 "--checks", "tests.fakes:FAKE_CHECKS"])
    out = capsys.readouterr().out
    assert code == 1
    assert "completed, failure" in out and "OpenLineage registry" in out
    assert f"{ENTRY}:6" in out or f"{ENTRY} line 6" in out or f"{ENTRY}#L6" in out, out
    assert "CHANGES_REQUESTED" in out and "registry-bot:summary" in out
    assert "outcome: failure" in out


def test_replay_of_an_event_without_a_review(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(PAYLOADS / "ping.json"), "--repo", str(repo), "--event", "ping"]) == 0
    assert "nothing would be posted" in capsys.readouterr().out


def test_replay_of_an_unreadable_recording_is_a_usage_error(repo: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["replay", str(bad), "--repo", str(repo)]) == 2
    assert "cannot read" in capsys.readouterr().err
