"""The App's installation lifecycle and credentials: a private key GitHub refuses, an installation
suspended or uninstalled, and reconciliation across installations (docs/app.md, "Installations")."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import requests
import responses

from bot.github.api import GitHubError, InstallationUnavailable, PullRequest
from bot.github.client import AppClientFactory
from bot.github.local import LocalGitHub
from bot.service import reconcile
from bot.service.worker import CREDENTIALS_RETRY
from tests.standin import StandIn
from tests.test_conclude import (  # noqa: F401 (fixtures)
    REPO,
    Bot,
    OneInstallation,
    bot,
    job,
    loaded,
    pr_repo,
)
from tests.test_github_client import (  # noqa: F401 (fixtures)
    API,
    FakeTime,
    app_key,
    client,
    fake_time,
    mocked,
    token_endpoint,
)
from tests.test_standin import REPO as STANDIN_REPO
from tests.test_standin import factory, sleeps, standin  # noqa: F401 (fixtures)

JWT_REFUSED = "POST installation 1 token: 401 A JSON web token could not be decoded"
SUSPENDED = "POST installation 1 token: 403 This installation has been suspended"


def test_a_job_whose_app_key_github_refuses_waits_for_the_key_and_is_then_reviewed(
    bot: Bot,  # noqa: F811
    loaded: tuple[LocalGitHub, PullRequest],  # noqa: F811
) -> None:
    """Finding: the App's private key rotated (GitHub refuses its JWT, 401, at every token request):
    the job failed at once and at each of huey's three retries a second apart, then was given up:
    lost, though nothing was wrong with it. It now waits ``CREDENTIALS_RETRY`` seconds at a time
    (until the queue's ``max_age``) and is reviewed once the key is fixed."""
    gh, pr = loaded
    refusals = 4  # the first attempt and huey's three retries
    gh.fail("get_pull_request", GitHubError(JWT_REFUSED, 401), times=refusals)
    assert bot.queue.accept(job(pr)) and bot.run_queued() == 1
    start = bot.clock.now
    for step in range(1, 5):  # huey's retries would have come in these seconds
        bot.advance(start + 2 * step)
    assert not bot.queue.is_done("d-1") and gh.runs_for(pr.head_sha) == []
    for _ in range(refusals):
        bot.advance(bot.clock.now + CREDENTIALS_RETRY)
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "completed" and run.conclusion in ("success", "failure", "neutral")
    assert bot.queue.is_done("d-1")


def test_a_key_refused_mid_review_leaves_the_run_to_a_later_attempt_not_internal_error(
    bot: Bot,  # noqa: F811
    loaded: tuple[LocalGitHub, PullRequest],  # noqa: F811
) -> None:
    """Finding: GitHub refusing the App's credentials mid-review (a fresh token refused too) was
    taken for the review's failure: the run was concluded "internal error" had the write got
    through, and the job given up after huey's retries. Now the job waits for the credentials, then
    concludes the run it opened with a verdict."""
    gh, pr = loaded
    gh.fail("read_tree", GitHubError(JWT_REFUSED, 401))
    assert bot.queue.accept(job(pr)) and bot.run_queued() == 1
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "in_progress" and not bot.queue.is_done("d-1")
    assert bot.etas() == [bot.clock.now + CREDENTIALS_RETRY]
    bot.advance(bot.clock.now + CREDENTIALS_RETRY)
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "completed" and "internal error" not in run.title.lower()
    assert bot.queue.is_done("d-1")


def test_a_job_of_a_suspended_installation_is_dropped_after_one_token_request(
    bot: Bot,  # noqa: F811
    loaded: tuple[LocalGitHub, PullRequest],  # noqa: F811
) -> None:
    """A suspended installation (or the App uninstalled): GitHub gives it no token, so nothing of it
    can be read or written. Its job is dropped at the first refusal, not retried three times."""
    gh, pr = loaded
    gh.fail("get_pull_request", InstallationUnavailable(SUSPENDED, 403), times=10)
    before = len(gh.calls)
    assert bot.queue.accept(job(pr)) and bot.run_queued() == 1
    assert bot.queue.is_done("d-1") and bot.etas() == []
    assert gh.calls[before:] == ["get_pull_request"]


class Installations(OneInstallation):
    """Two installations: the first one's repositories cannot be listed."""

    def __init__(self, gh: LocalGitHub, error: GitHubError) -> None:
        super().__init__(gh)
        self.error = error

    def list_installations(self) -> list[int]:
        return [9, 1]

    def for_installation(self, installation: int) -> LocalGitHub:
        if installation == 9:
            broken = LocalGitHub.__new__(LocalGitHub)
            error = self.error

            def refuse() -> list[str]:
                raise error

            broken.list_installation_repositories = refuse  # type: ignore[method-assign]
            return broken
        return self.gh


@pytest.mark.parametrize(
    "error",
    [
        InstallationUnavailable(SUSPENDED, 403),
        InstallationUnavailable("POST installation 9 token: 404 Not Found", 404),
        GitHubError("GET /installation/repositories: 502 Bad Gateway", 502),
    ],
)
def test_one_installation_github_will_not_list_does_not_stop_the_others_reconciliation(
    bot: Bot,  # noqa: F811
    loaded: tuple[LocalGitHub, PullRequest],  # noqa: F811
    error: GitHubError,
) -> None:
    """Finding: an installation suspended or uninstalled since ``GET /app/installations`` (or a 5xx
    listing its repositories) raised out of the round: every installation after it went
    unreconciled, at every round for as long as it stayed suspended."""
    gh, pr = loaded
    assert reconcile.reconcile(Installations(gh, error), bot.queue) == 1
    assert bot.queue.open_pull_requests() == {f"{REPO}#{pr.number}"}


def _token_refused(rsps: responses.RequestsMock, status: int, message: str) -> list[int]:
    calls: list[int] = []

    def answer(_request: object) -> tuple[int, dict[str, str], str]:
        calls.append(status)
        return status, {}, json.dumps({"message": message})

    rsps.add_callback(responses.POST, f"{API}/app/installations/42/access_tokens", callback=answer)
    return calls


@pytest.mark.parametrize(
    ("status", "message"),
    [(403, "This installation has been suspended"), (404, "Not Found")],
)
def test_a_token_github_will_not_give_the_installation_is_installation_unavailable(
    mocked: responses.RequestsMock,  # noqa: F811
    app_key: str,  # noqa: F811
    fake_time: FakeTime,  # noqa: F811
    status: int,
    message: str,
) -> None:
    """GitHub's answers to a token request for a suspended installation (403) or one the App no
    longer has (404): ``InstallationUnavailable``, after one request."""
    calls = _token_refused(mocked, status, message)
    _, gh = client(app_key, fake_time)
    with pytest.raises(InstallationUnavailable) as caught:
        gh.get_pull_request(REPO, 5)
    assert caught.value.status == status and message in str(caught.value)
    assert calls == [status] and fake_time.sleeps == []


def test_suspended_installations_are_left_out_of_the_rounds(
    mocked: responses.RequestsMock,  # noqa: F811
    app_key: str,  # noqa: F811
    fake_time: FakeTime,  # noqa: F811
) -> None:
    """``GET /app/installations`` lists suspended installations too (``suspended_at`` set); GitHub
    gives them no token, so a round asking for one would fail at it every time."""
    suspended = datetime.fromtimestamp(fake_time.now - 60, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    mocked.get(
        f"{API}/app/installations",
        json=[
            {"id": 41, "suspended_at": suspended, "suspended_by": {"login": "admin"}},
            {"id": 42, "suspended_at": None, "suspended_by": None},
        ],
    )
    app, _ = client(app_key, fake_time)
    assert app.list_installations() == [42]


def test_a_write_to_a_renamed_repository_s_old_name_follows_github_s_307(
    mocked: responses.RequestsMock,  # noqa: F811
    app_key: str,  # noqa: F811
    fake_time: FakeTime,  # noqa: F811
) -> None:
    """Finding: a job queued under a repository's old name (renamed or transferred since): GitHub
    answers writes to the old name 307 Temporary Redirect (GETs 301, which PyGithub follows).
    PyGithub took the 307 for a success, so the check run's conclusion read as written while GitHub
    had written nothing: the run stayed in progress. The write is now sent to the ``Location``."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    old = f"{API}/repos/{REPO}/check-runs/9"
    new = f"{API}/repositories/123/check-runs/9"
    mocked.patch(
        old,
        status=307,
        headers={"Location": "https://api.github.com/repositories/123/check-runs/9"},
        json={"message": "Temporary Redirect", "url": new},
    )
    mocked.patch(new, json={"id": 9, "status": "completed", "conclusion": "success"})
    _, gh = client(app_key, fake_time)
    gh.update_check_run(REPO, 9, status="completed", conclusion="success")
    sent = [(c.request.method, c.request.url) for c in mocked.calls if c.request.method == "PATCH"]
    assert [url.split(":443")[-1] for _, url in sent] == [
        f"/repos/{REPO}/check-runs/9",
        "/repositories/123/check-runs/9",
    ]
    assert json.loads(mocked.calls[-1].request.body or b"{}")["conclusion"] == "success"


def test_a_redirect_elsewhere_is_an_error_not_a_success(
    mocked: responses.RequestsMock,  # noqa: F811
    app_key: str,  # noqa: F811
    fake_time: FakeTime,  # noqa: F811
) -> None:
    """A 3xx the client does not follow (another host) fails the request with its status: never a
    write taken as done."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.patch(
        f"{API}/repos/{REPO}/check-runs/9",
        status=307,
        headers={"Location": "https://elsewhere.example/repositories/123/check-runs/9"},
        json={"message": "Temporary Redirect"},
    )
    _, gh = client(app_key, fake_time)
    with pytest.raises(GitHubError) as caught:
        gh.update_check_run(REPO, 9, status="completed", conclusion="success")
    assert caught.value.status == 307


def test_a_suspended_installation_on_the_stand_in_gets_no_token_and_no_round(
    standin: StandIn,  # noqa: F811
    factory: AppClientFactory,  # noqa: F811
) -> None:
    """End to end over HTTP: the stand-in answers a suspended installation's token request as
    GitHub does (403 "This installation has been suspended") and lists it with ``suspended_at``;
    the client raises ``InstallationUnavailable`` and leaves it out of the rounds. Lifting the
    suspension brings both back."""
    requests.post(f"{standin.url}/_standin/settings", json={"suspended": True}, timeout=10)
    with pytest.raises(InstallationUnavailable) as caught:
        factory.for_installation(standin.state.installation_id).get_pull_request(STANDIN_REPO, 1)
    assert caught.value.status == 403 and "suspended" in str(caught.value)
    assert factory.list_installations() == []
    requests.post(f"{standin.url}/_standin/settings", json={"suspended": False}, timeout=10)
    assert factory.list_installations() == [standin.state.installation_id]
    assert factory.for_installation(standin.state.installation_id).get_pull_request(STANDIN_REPO, 1)
