"""A secondary rate limit holds the installation in the shared pacer and frees the thread (issue 31, item 6).

GitHub answers a request with a secondary rate limit (403, ``retry-after: 60``). The request does not sleep
the minute in its worker thread: it raises ``RateLimited`` at once with the end of the limit (its job is
rescheduled then), and every later request of the installation, in any worker sharing the pacer, is held
back without reaching GitHub until the limit ends.
"""

from __future__ import annotations

import uuid

import pytest
import redis
import responses

from bot.github.api import RateLimited
from bot.github.client import AppClientFactory
from bot.github.pacing import RedisPacer
from tests.test_github_client import API, NOW, REPO, FakeTime, app_key, fake_time, mocked, pr_json, token_endpoint

__all__ = ["app_key", "fake_time", "mocked"]  # the fixtures this module uses
SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}


def factory(app_key: str, fake_time: FakeTime, pacers: object = None) -> AppClientFactory:
    return AppClientFactory(7, app_key, "https://api.github.com", sleep=fake_time.sleep, clock=fake_time.clock,
                            slug="registry-bot", seconds_between_writes=0, pacers=pacers)  # type: ignore[arg-type]


@pytest.mark.parametrize("shared", [False, True])
def test_a_secondary_limit_raises_at_once_and_holds_the_installation(
        mocked: responses.RequestsMock, app_key: str, fake_time: FakeTime, shared: bool,
        request: pytest.FixtureRequest) -> None:
    token_endpoint(mocked, app_key, fake_time, "ghs_1", "ghs_2")
    url = f"{API}/repos/{REPO}/pulls/5"
    limited = mocked.get(url, status=403, headers={"retry-after": "60"}, json=SECONDARY)
    pacers = None
    if shared:  # two worker processes: two factories, one Redis
        client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        prefix = f"test-{uuid.uuid4().hex[:8]}"
        pacers = lambda installation: RedisPacer(client, installation, 0, prefix=prefix,  # noqa: E731
                                                 sleep=fake_time.sleep, clock=fake_time.clock)
    first, second = factory(app_key, fake_time, pacers), factory(app_key, fake_time, pacers)

    with pytest.raises(RateLimited) as caught:
        first.for_installation(42).get_pull_request(REPO, 5)
    assert caught.value.secondary and caught.value.reset_at == NOW + 60
    assert fake_time.sleeps == [] and limited.call_count == 1  # the thread was not held for the minute

    mocked.replace(responses.GET, url, json=pr_json())
    gh = (second if shared else first).for_installation(42)
    with pytest.raises(RateLimited):  # held back: GitHub is not asked again while the limit lasts
        gh.get_pull_request(REPO, 5)
    assert limited.call_count == 1
    fake_time.now += 61
    if shared:
        redis.Redis.from_url(request.getfixturevalue("redis_url")).delete(f"{prefix}:42:paused")  # Redis's clock
    assert gh.get_pull_request(REPO, 5).number == 5
