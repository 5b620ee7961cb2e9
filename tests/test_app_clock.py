"""The App's JWT follows GitHub's clock: a host clock ±300 s off is corrected from GitHub's ``Date``
header after one 401; a skew the correction cannot cure is one log line naming it and a failing
health check."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.api import GitHubError
from bot.github.client import AppClientFactory
from bot.github.local import LocalGitHub
from bot.service import health
from tests.standin.server import StandIn

REPO = "OpenLineage/OpenLineage"


@pytest.fixture
def standin(corpus_pr_repo: Path) -> Iterator[StandIn]:
    local = LocalGitHub(corpus_pr_repo, "main", "pr", repo=REPO, author="alice")
    with StandIn(local) as server:
        yield server
    local.close()


@pytest.fixture(autouse=True)
def heartbeat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "worker.heartbeat"
    monkeypatch.setenv("WORKER_HEARTBEAT", str(path))
    health.beat(path)
    return path


def factory_of(standin: StandIn) -> AppClientFactory:
    return AppClientFactory(
        standin.state.app_id,
        standin.state.private_key_pem,
        standin.url,
        sleep=lambda s: None,
        seconds_between_writes=0,
    )


def token_requests(standin: StandIn) -> list[int]:
    return [r["status"] for r in standin.state.requests if r["path"].endswith("/access_tokens")]


@pytest.mark.parametrize("skew", [300, -300])
def test_a_host_clock_300_s_off_is_corrected_after_one_refusal(
    standin: StandIn, skew: int, caplog: pytest.LogCaptureFixture
) -> None:
    # GitHub's time; the host's is ``skew`` behind it
    standin.state.clock = lambda: time.time() + skew
    factory = factory_of(standin)
    with caplog.at_level(logging.WARNING, logger="bot.github.app_clock"):
        pr = factory.for_installation(standin.state.installation_id).get_pull_request(REPO, 1)
        assert pr.number == 1
    assert token_requests(standin) == [401, 201]
    assert factory.bot_login() == "registry-bot[bot]"  # GET /app: signed with GitHub's time at once
    assert [r["status"] for r in standin.state.requests if r["path"] == "/app"] == [200]
    lines = [r.getMessage() for r in caplog.records]
    named = re.search(r"clock is ([+-]\d+) s off GitHub's", lines[0]) if len(lines) == 1 else None
    assert named and abs(int(named[1]) + skew) <= 1, lines  # GitHub's Date has whole seconds
    assert health.main(["worker"]) == 0


def test_a_skew_the_correction_cannot_cure_fails_the_health_check_and_is_logged_once(
    standin: StandIn, caplog: pytest.LogCaptureFixture
) -> None:
    drift = iter(range(600, 100_000, 600))
    # GitHub's clock runs away from the host's
    standin.state.clock = lambda: time.time() + next(drift)
    factory = factory_of(standin)
    with caplog.at_level(logging.ERROR, logger="bot.github.app_clock"):
        for installation in (1, 1, 1):
            with pytest.raises(GitHubError) as refused:
                factory.for_installation(installation).get_pull_request(REPO, 1)
            assert refused.value.status == 401
    errors = [r.getMessage() for r in caplog.records]
    assert len(errors) == 1 and "clock skew of" in errors[0] and "NTP" in errors[0], errors
    assert health.main(["worker"]) == 1

    standin.state.clock = lambda: time.time() + 600  # the host's time is fixed to a steady offset
    assert factory.for_installation(1).get_pull_request(REPO, 1).number == 1
    assert health.main(["worker"]) == 0


def test_a_refusal_with_the_clocks_in_agreement_is_not_blamed_on_time(
    standin: StandIn, caplog: pytest.LogCaptureFixture
) -> None:
    factory = factory_of(standin)
    standin.state.app_id = 99  # the worker signs for App 1: GitHub refuses it, whatever the time
    with (
        caplog.at_level(logging.WARNING, logger="bot.github.app_clock"),
        pytest.raises(GitHubError),
    ):
        factory.for_installation(1).get_pull_request(REPO, 1)
    assert caplog.records == [] and token_requests(standin) == [401]
    assert health.main(["worker"]) == 0


def test_a_request_signed_before_another_corrected_the_clock_is_signed_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two token requests signed with the host's time, both refused: the first refusal corrects the
    offset; the second, whose ``Date`` now agrees with the corrected time, is signed again (it was:
    "correcting did not help", and its review failed)."""
    from email.utils import formatdate

    from github import GithubException

    from bot.github.app_clock import GitHubClock

    clock = GitHubClock(clock=lambda: 1_000_000.0)
    refusal = {"Date": formatdate(1_000_300.0, usegmt=True)}  # GitHub is 300 s ahead

    def signed(name: str, inner: tuple[str, Any] | None = None) -> Any:
        def send() -> str:
            offset = clock.offset  # the JWT's time, taken when it is signed
            if inner is not None and offset == 0:
                clock.call(*inner)  # meanwhile another request is refused and corrects the offset
            if abs(offset - 300) > 1:
                raise GithubException(401, {"message": "'exp' must be in the future"}, refusal)
            return name

        return send

    with caplog.at_level(logging.WARNING, logger="bot.github.app_clock"):
        assert (
            clock.call("installation 2", signed("second", ("installation 1", signed("first"))))
            == "second"
        )
    assert clock.offset == pytest.approx(300.0)
    assert [r.levelname for r in caplog.records] == ["WARNING"]  # one correction, no "did not help"
