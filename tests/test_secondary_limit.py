"""A secondary rate limit holds the installation in the shared pacer and frees the thread (issue 31,
item 6).

GitHub answers a request with a secondary rate limit (403, ``retry-after: 60``). The request does
not sleep the minute in its worker thread: it raises ``RateLimited`` at once with the end of the
limit (its job is rescheduled then), and every later request of the installation, in any worker
sharing the pacer, is held back without reaching GitHub until the limit ends.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
import redis
import responses

from bot.github.api import RateLimited
from bot.github.client import AppClientFactory
from bot.github.pacing import RedisPacer
from tests.hosts import WRITE_PAUSE, Hosts, hosts, repo
from tests.standin.fleet import Fleet
from tests.standin.server import Fault
from tests.test_e2e import wait_for
from tests.test_github_client import (
    API,
    NOW,
    REPO,
    FakeTime,
    app_key,
    fake_time,
    mocked,
    pr_json,
    token_endpoint,
)

# the fixtures this module uses
__all__ = ["app_key", "fake_time", "hosts", "mocked", "repo"]
SECONDARY = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again."
}


def factory(app_key: str, fake_time: FakeTime, pacers: object = None) -> AppClientFactory:
    return AppClientFactory(
        7,
        app_key,
        "https://api.github.com",
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        slug="registry-bot",
        seconds_between_writes=0,
        pacers=pacers,
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("shared", [False, True])
def test_a_secondary_limit_raises_at_once_and_holds_the_installation(
    mocked: responses.RequestsMock,
    app_key: str,
    fake_time: FakeTime,
    shared: bool,
    request: pytest.FixtureRequest,
) -> None:
    token_endpoint(mocked, app_key, fake_time, "ghs_1", "ghs_2")
    url = f"{API}/repos/{REPO}/pulls/5"
    limited = mocked.get(url, status=403, headers={"retry-after": "60"}, json=SECONDARY)
    pacers = None
    if shared:  # two worker processes: two factories, one Redis
        client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        prefix = f"test-{uuid.uuid4().hex[:8]}"
        pacers = lambda installation: RedisPacer(  # noqa: E731
            client,
            installation,
            0,
            prefix=prefix,
            sleep=fake_time.sleep,
            clock=fake_time.clock,
        )
    first, second = factory(app_key, fake_time, pacers), factory(app_key, fake_time, pacers)

    with pytest.raises(RateLimited) as caught:
        first.for_installation(42).get_pull_request(REPO, 5)
    assert caught.value.secondary and caught.value.reset_at == NOW + 60
    # the thread was not held for the minute
    assert fake_time.sleeps == [] and limited.call_count == 1

    mocked.replace(responses.GET, url, json=pr_json())
    gh = (second if shared else first).for_installation(42)
    with pytest.raises(RateLimited):  # held back: GitHub is not asked again while the limit lasts
        gh.get_pull_request(REPO, 5)
    assert limited.call_count == 1
    fake_time.now += 61
    if shared:
        # Redis's clock
        redis.Redis.from_url(request.getfixturevalue("redis_url")).delete(f"{prefix}:42:paused")
    assert gh.get_pull_request(REPO, 5).number == 5


CONTENT_BLOCKED = (
    "You have exceeded a secondary rate limit and have been temporarily blocked from content "
    "creation. Please retry your request again later."
)


def test_a_secondary_limit_on_content_creation_holds_creations_only(
    app_key: str, fake_time: FakeTime
) -> None:
    """GitHub's refusal says content creation is blocked: the installation's creating requests wait
    for the pause's end, its reads and updates (a check run's conclusion) go on."""
    from bot.github.client import WritePacer

    pacer = WritePacer(0, sleep=fake_time.sleep, clock=fake_time.clock)
    pacer.hold_until(NOW + 60, creation_only=True)
    with pacer.request(False):  # a read
        pass
    with pacer.request(True):  # an update (PATCH)
        pass
    with pytest.raises(RateLimited) as caught, pacer.request(True, creates=True):
        pass
    assert (
        caught.value.secondary and caught.value.creation_only and caught.value.reset_at == NOW + 60
    )


def test_a_redis_pause_of_content_creation_holds_creations_only_in_every_worker(
    redis_url: str, fake_time: FakeTime
) -> None:
    client = redis.Redis.from_url(redis_url)
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    first, second = (
        RedisPacer(client, 42, 0, prefix=prefix, sleep=fake_time.sleep, clock=fake_time.clock)
        for _ in range(2)
    )
    first.hold_until(NOW + 60, creation_only=True)
    with second.request(False):  # a read
        pass
    with second.request(True):
        pass
    with pytest.raises(RateLimited) as caught, second.request(True, creates=True):
        pass
    assert caught.value.creation_only and 59 <= caught.value.reset_at - NOW <= 60
    client.delete(f"{prefix}:42:paused-creates")
    with second.request(True, creates=True):
        pass


@pytest.mark.e2e
def test_a_content_creation_limit_on_a_check_run_post_pauses_creations_and_frees_the_threads(
    hosts: Hosts,
) -> None:
    """Real worker (2 threads) on a host of its own, real Redis, the stand-in fleet: three pull
    requests of one installation. GitHub refuses the second check-run POST with its content-creation
    limit (``retry-after: 30``). The pause holds every creation of the installation in the shared
    pacer: none reaches GitHub until it ends; no thread waits it out (the third pull request's job
    is tried and deferred meanwhile); a review already under way concludes its check run during the
    pause (an update, which the limit allows); when the pause ends every pull request is concluded
    exactly once with the review's verdict, with 0 pacing violations."""
    pause = 30.0
    repos = {f"org/repo-{n}": 1 for n in range(3)}
    fleet = hosts.github(
        Fleet(str(hosts.repo), "main", "pr", repos, latency=0.1, write_pause=WRITE_PAUSE)
    )
    first = next(iter(fleet.states.values()))
    first.add_faults(
        [
            Fault(
                "/repos/*/*/check-runs",
                status=403,
                method="POST",
                retry_after=pause,
                skip=1,
                message=CONTENT_BLOCKED,
            )
        ]
    )
    log = hosts.log("worker-0")
    with hosts.running():
        hosts.redis.start()
        hosts.workers(1)
        hosts.accept(repos)
        [refused] = wait_for(
            lambda: [r for r in first.requests if r["status"] == 403], 60, "the refusal"
        )
        ends = refused["at"] + pause
        during = wait_for(
            lambda: [
                r
                for r in fleet.states.values()
                if any(run.status == "completed" for run in r.local.check_runs)
            ],
            60,
            "a review to conclude",
        )
        assert time.time() < ends - 1, "a review under way concluded only after the pause"
        assert len(during) == 1
        wait_for(
            lambda: all(hosts.concluded(r) for r in repos), 180, "every pull request to conclude"
        )
        time.sleep(3)  # a duplicate would show now
    hosts.assert_concluded_once_with_the_verdict(repos)
    creating = [
        r
        for r in first.requests
        if r["method"] == "POST"
        and r["status"] < 400
        and r["path"].endswith(("/check-runs", "/comments", "/reviews"))
    ]
    # nothing created meanwhile
    assert not [r for r in creating if refused["at"] < r["at"] < ends - 1], creating
    text = log.read_text(errors="replace")
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    deferred = [
        r["message"]
        for r in records
        if r["logger"] == "bot.service.queue" and " deferred " in r["message"]
    ]
    # threads freed
    assert {m.split()[1] for m in deferred} >= {"d-org/repo-1", "d-org/repo-2"}, deferred
    assert all("content creation" in m for m in deferred), deferred
    assert "retry 1 in 30" not in text  # no thread slept the pause
