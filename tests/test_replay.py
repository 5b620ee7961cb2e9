"""``registry-bot replay``: a recorded delivery through the whole pipeline against a local
repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import PAYLOADS
from tests.gitrepo import Repo, git
from tests.test_pipeline import ENTRY, broken_entry


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    r = Repo.from_folder(corpus, tmp_path_factory.mktemp("replay") / "repo")
    r.change({ENTRY: broken_entry()})
    return r.path


def test_replay_prints_what_would_be_posted(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "replay",
            str(PAYLOADS / "pull_request.opened.json"),
            "--repo",
            str(repo),
            "--head",
            "pr",
            "--checks",
            "tests.fakes:FAKE_CHECKS",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "completed, failure" in out and "OpenLineage registry" in out
    assert f"{ENTRY}:6" in out or f"{ENTRY} line 6" in out or f"{ENTRY}#L6" in out, out
    assert "CHANGES_REQUESTED" in out and "registry-bot:summary" in out
    assert "outcome: failure" in out


def test_replay_of_an_event_without_a_review(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["replay", str(PAYLOADS / "ping.json"), "--repo", str(repo), "--event", "ping"]) == 0
    )
    assert "nothing would be posted" in capsys.readouterr().out


def test_replay_of_an_unreadable_recording_is_a_usage_error(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["replay", str(bad), "--repo", str(repo)]) == 2
    assert "cannot read" in capsys.readouterr().err


# -- with the real checks --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    from tests.test_e2e_real import build_repo

    return build_repo(corpus, tmp_path_factory.mktemp("replay-real") / "repo").path


def recorded_delivery(tmp_path: Path, repo: Path, head: str) -> Path:
    """GitHub's recorded ``pull_request.opened`` delivery, pointed at the local repository and its
    PR branch."""
    payload = json.loads((PAYLOADS / "pull_request.opened.json").read_bytes())
    payload["repository"]["full_name"] = "OpenLineage/OpenLineage"
    pr = payload["pull_request"]
    pr["base"]["ref"], pr["head"]["ref"] = "main", head
    pr["head"]["sha"] = git(repo, "rev-parse", head)
    pr["user"]["login"] = "contributor"
    path = tmp_path / "delivery.json"
    path.write_text(
        json.dumps({"name": "pull_request", "id": "recorded-1", "payload": payload}),
        encoding="utf-8",
    )
    return path


def test_replay_with_the_real_checks_reports_each_mistake_on_its_line(
    real_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_e2e_real import expected_errors

    assert (
        main(
            ["replay", str(recorded_delivery(tmp_path, real_repo, "pr")), "--repo", str(real_repo)]
        )
        == 1
    )
    out = capsys.readouterr().out
    annotations = {
        line.split(" [failure] ")[0].strip(): line
        for line in out.splitlines()
        if " [failure] " in line
    }
    for path, line, rule in expected_errors(real_repo):
        assert f"{rule}:" in annotations.pop(f"{path}:{line}"), out
    # the entry's owners, and the mirror's for the published copy (the same team here)
    approvals = sorted(annotations.values())
    assert len(approvals) == 2 and all("@OpenLineage/committers" in a for a in approvals)
    assert any("owners/approval-required" in a for a in approvals)
    assert any("ownership/mirror-change" in a for a in approvals)
    assert "CHANGES_REQUESTED" in out and "outcome: failure" in out
    # replay knows no teams unless told: the summary says membership could not be verified
    assert "Team membership could not be verified" in out


def test_replay_of_the_fix_approved_by_a_team_member_passes(
    real_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    delivery = recorded_delivery(tmp_path, real_repo, "fix")
    assert (
        main(
            [
                "replay",
                str(delivery),
                "--repo",
                str(real_repo),
                "--approved-by",
                "carol",
                "--team-member",
                "OpenLineage/committers=carol",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "completed, success" in out and "outcome: success" in out and "[failure]" not in out
    assert (
        main(
            [
                "replay",
                str(delivery),
                "--repo",
                str(real_repo),
                "--approved-by",
                "mallory",
                # not a member: still needs an owner
                "--team-member",
                "OpenLineage/committers=carol",
            ]
        )
        == 1
    )
    assert "owners/approval-required" in capsys.readouterr().out


def test_replay_refuses_a_malformed_team_option(
    real_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    delivery = recorded_delivery(tmp_path, real_repo, "fix")
    assert (
        main(["replay", str(delivery), "--repo", str(real_repo), "--team-member", "committers"])
        == 2
    )
    assert "ORG/TEAM=LOGIN" in capsys.readouterr().err
