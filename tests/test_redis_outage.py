"""The queue's Redis stalls, stops and restarts under real worker processes (issue 31, item 1).

A real ``redis-server`` with its append-only file, two real workers (``python -m
bot.service.worker``), each a host of its own in its own network namespace (``tests/hosts.py``), and
the stand-in GitHub serving several pull requests over two installations; Redis and the stand-in
listen on the bridge between them.
Redis is stalled with ``DEBUG SLEEP`` (longer than the workers' ``REDIS_TIMEOUT``: their calls time
out mid-review) or stopped and started again. Then every pull request has one check run, concluded
once with the review's verdict (never "internal error"), and a summary comment; no two writes of an
installation are less than the pause apart; each worker logs an outage in a few lines, not a
traceback per poll.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
import redis

from bot.service.queue import REDIS_RETRIES, REDIS_TIMEOUT
from tests.hosts import Hosts, hosts, outage_lines, repo
from tests.test_e2e import wait_for

__all__ = ["hosts", "repo"]  # the fixtures this module uses
pytestmark = pytest.mark.e2e


def test_three_redis_stalls_mid_review_defer_the_jobs_and_every_pull_request_concludes_once(
    hosts: Hosts,
) -> None:
    _, repos = hosts.two_installations(8, latency=0.1)
    with hosts.running():
        hosts.reviews_under_way(repos)
        stall_for = REDIS_TIMEOUT * (1 + REDIS_RETRIES) + 2
        admin = redis.Redis.from_url(hosts.redis.url, socket_timeout=stall_for + 10)
        for _ in range(3):  # each stall outlasts the workers' timeouts: their calls fail mid-review
            stall = threading.Thread(
                target=admin.execute_command, args=("DEBUG", "SLEEP", stall_for)
            )
            stall.start()
            stall.join()
            time.sleep(2)
        admin.close()
        wait_for(
            lambda: all(hosts.concluded(r) for r in repos), 240, "every pull request to conclude"
        )
        time.sleep(REDIS_TIMEOUT * 4)  # a duplicate would show now
        # an outage ends at the first success a grace period after its last failure (late timeouts
        # included)
        logs = [hosts.log(f"worker-{n}") for n in range(2)]
        with contextlib.suppress(AssertionError):  # the assertion below says what is missing
            wait_for(
                lambda: all(outage_lines(log)[1] >= outage_lines(log)[0] for log in logs),
                60,
                "the end of each outage in the logs",
            )
    hosts.assert_concluded_once_with_the_verdict(repos)
    seen = [outage_lines(hosts.log(f"worker-{n}")) for n in range(2)]
    assert any(started for started, _, _ in seen), hosts.tails()
    for started, ended, tracebacks in seen:
        # a string, not a tuple: pytest shows a string message whole
        assert started <= 3 and ended == started and tracebacks == 0, f"{seen}\n{hosts.tails()}"


def test_a_worker_waits_for_a_redis_that_is_down_and_reviews_once_it_is_back_with_its_data(
    hosts: Hosts,
) -> None:
    _, repos = hosts.two_installations(4, latency=0.05)
    log = hosts.log("worker-0")
    with hosts.running():
        worker = hosts.worker("worker-0")  # Redis is not running yet
        wait_for(
            lambda: b"is unreachable" in log.read_bytes(), 60, "the worker to notice Redis is down"
        )
        time.sleep(3)
        assert worker.poll() is None, hosts.tails()  # it waits, it does not exit
        hosts.redis.start()
        hosts.started("worker-0")
        hosts.accept(repos)
        wait_for(lambda: any(hosts.runs(r) for r in repos), 60, "a review to start")
        hosts.redis.stop()  # mid-review; its append-only file keeps the journal
        time.sleep(REDIS_TIMEOUT)
        hosts.redis.start()
        wait_for(
            lambda: all(hosts.concluded(r) for r in repos), 240, "every pull request to conclude"
        )
        time.sleep(REDIS_TIMEOUT * 4)  # the outage's end is logged once no call failed for a while
    hosts.assert_concluded_once_with_the_verdict(repos)
    started, ended, tracebacks = outage_lines(log)
    assert 1 <= started <= 2 and ended == started and tracebacks == 0, hosts.tails()
