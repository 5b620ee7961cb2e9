"""Redis failures are told apart from bugs, and an outage is logged once when it starts and once
when it ends."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis.exceptions

from bot.github.api import GitHubError
from bot.github.events import Job
from bot.github.local import LocalGitHub
from bot.github.pacing import RedisPacer
from bot.service import outage
from bot.service.worker import Worker
from tests.conftest import redis_out_of_memory
from tests.fakes import FAKE_CHECKS
from tests.test_conclude import Factory
from tests.test_pipeline import REPO, load, make_pr_repo


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_redis_timeouts_and_lost_connections_are_infrastructure_a_bug_is_not() -> None:
    assert outage.is_infrastructure(redis.exceptions.TimeoutError("Timeout reading from socket"))
    assert outage.is_infrastructure(redis.exceptions.ConnectionError("Error 111 connecting"))
    assert outage.is_infrastructure(redis.exceptions.BusyLoadingError("loading the dataset"))
    try:
        try:
            raise redis.exceptions.TimeoutError("stalled")
        except redis.exceptions.TimeoutError as exc:
            raise RuntimeError("the pacer failed") from exc
    except RuntimeError as wrapped:
        assert outage.is_infrastructure(wrapped)
    assert not outage.is_infrastructure(KeyError("job"))
    assert not outage.is_infrastructure(redis.exceptions.ResponseError("WRONGTYPE"))
    assert not outage.is_infrastructure(GitHubError("502", status=502))


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
        redis.exceptions.ReadOnlyError("You can't write against a read only replica."),
        redis.exceptions.MasterDownError("Link with MASTER is down"),
        redis.exceptions.ClusterDownError("The cluster is down"),
        redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"),
        redis.exceptions.ResponseError("MISCONF Redis is configured to save RDB snapshots"),
        redis.exceptions.ResponseError("BUSY Redis is busy running a script."),
        redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write."),
    ],
    ids=lambda e: type(e).__name__ + ":" + str(e).split(" ", 1)[0],
)
def test_a_redis_that_refuses_writes_for_a_while_is_infrastructure(error: Exception) -> None:
    """Finding: a Redis at its ``maxmemory`` (noeviction, as docs/app.md asks) answers a write
    ``OOM``, a ResponseError that was taken for a bug: one during a review concluded the run "The
    bot hit an internal error". It, and the other refusals that clear by themselves, are waited
    out."""
    assert outage.is_infrastructure(error)


def test_a_response_error_that_a_retry_cannot_cure_stays_a_bug() -> None:
    for message in ("WRONGTYPE Operation against a key", "BUSYGROUP Consumer Group name exists"):
        assert not outage.is_infrastructure(redis.exceptions.ResponseError(message))
    assert not outage.is_infrastructure(redis.exceptions.NoPermissionError("NOPERM"))


def test_a_redis_out_of_memory_during_a_review_concludes_nothing(
    tmp_path: Path, corpus: Path, redis_url: str
) -> None:
    """The review's first request is paced through the real ``RedisPacer`` while the real Redis is
    out of memory: the error reaches the queue (which waits it out) and the check run stays open
    (a retry resumes it), never "internal error"."""
    conn = redis.Redis.from_url(redis_url)

    class Paced(LocalGitHub):
        calls = 0

        def list_pull_request_files(self, repo: str, number: int) -> Any:
            Paced.calls += 1
            if Paced.calls == 1:
                pacer = RedisPacer(conn, 1, 0.0, prefix=f"tests:{uuid.uuid4().hex}")
                with redis_out_of_memory(conn), pacer.request(False):
                    pass
            return super().list_pull_request_files(repo, number)

    gh, pr = load(make_pr_repo(tmp_path, corpus), github=Paced)
    worker = Worker(Factory(gh), checks=FAKE_CHECKS)
    with pytest.raises(redis.exceptions.OutOfMemoryError) as raised:
        worker.handle(Job("d-1", "pull_request", "opened", 1, REPO, pr.number, pr.head_sha))
    assert outage.is_infrastructure(raised.value)
    [run] = gh.runs_for(pr.head_sha)
    assert (run.status, run.conclusion) == ("in_progress", None)


def test_back_off_doubles_up_to_a_minute() -> None:
    assert [outage.backoff(n) for n in (1, 2, 3, 6, 7, 30)] == [2.0, 4.0, 8.0, 60.0, 60.0, 60.0]


def test_an_outage_is_two_log_lines_however_many_calls_fail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    tracker = outage.Outage("Redis", grace=10.0, clock=clock)
    error = redis.exceptions.ConnectionError("Connection refused")
    with caplog.at_level(logging.INFO, logger="bot.outage"):
        for _ in range(500):  # every poll of every thread, for 30 s
            tracker.failed(error)
            clock.now += 0.06
        assert tracker.down
        tracker.succeeded()  # the last failure was just now: a straggler may still come
        tracker.failed(error)
        clock.now += 11
        tracker.succeeded()
        tracker.succeeded()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert (
        lines[0] == "Redis is unreachable (ConnectionError: Connection refused); jobs wait for it"
    )
    assert lines[1].startswith("Redis is back: it failed 501 calls over 30.0 s")
    assert not tracker.down


def test_a_worker_waits_for_its_store_and_a_bug_still_raises() -> None:
    tracker = outage.Outage("Redis", clock=Clock())
    answers = [
        redis.exceptions.ConnectionError("down"),
        redis.exceptions.TimeoutError("slow"),
        None,
    ]
    pauses: list[float] = []

    def probe() -> None:
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    tracker.wait_for(probe, pause=1.0, sleep=pauses.append)
    assert pauses == [1.0, 2.0] and not tracker.down

    def bug() -> None:
        raise ValueError("a corrupt journal entry")

    with pytest.raises(ValueError, match="corrupt"):
        tracker.wait_for(bug, sleep=pauses.append)


def test_a_failed_write_during_an_outage_logs_no_traceback_and_any_other_failure_does(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write the job survives (journal, done mark) that meets the store down: a warning, no
    traceback (the outage has its own line); a failure of any other kind keeps its traceback."""
    monkeypatch.setattr(outage, "REDIS", outage.Outage("the queue's Redis"))
    log = logging.getLogger("test.writes")
    with caplog.at_level(logging.WARNING):
        try:
            raise redis.exceptions.TimeoutError("Timeout reading from socket")
        except redis.exceptions.TimeoutError as exc:
            outage.log_failure(log, exc, "could not journal %s", "d-1")
        try:
            raise ValueError("disk full")
        except ValueError as exc:
            outage.log_failure(log, exc, "could not journal %s", "d-2")
    mine = [r for r in caplog.records if r.name == "test.writes"]
    assert [(r.getMessage(), r.exc_info is not None) for r in mine] == [
        ("could not journal d-1 (the queue's Redis is unreachable)", False),
        ("could not journal d-2", True),
    ]
    assert outage.REDIS.down


def test_a_redis_traceback_from_hueys_consumer_is_one_warning_and_a_bug_keeps_its_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """huey's scheduler logs ``Error enqueueing`` with a traceback when Redis times out as it
    moves a due retry to the queue (seen in CI); the worker's handler filter makes that the
    outage's failure and a warning without the traceback."""
    import io

    from bot.service.logs import JsonFormatter

    tracker = outage.Outage("the queue's Redis", grace=15.0)
    monkeypatch.setattr(outage, "REDIS", tracker)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(outage.QuietTracebacks())
    scheduler = logging.getLogger("huey.consumer.Scheduler")
    scheduler.addHandler(handler)
    scheduler.propagate = False
    try:
        for error in (redis.exceptions.TimeoutError("Timeout reading from socket"), KeyError("x")):
            try:
                raise error
            except (redis.exceptions.TimeoutError, KeyError):
                scheduler.exception("Error enqueueing %s.", "registry_bot_process: 3068587a")
    finally:
        scheduler.removeHandler(handler)
        scheduler.propagate = True
    quiet, loud = (json.loads(line) for line in stream.getvalue().splitlines())
    assert tracker.down
    assert quiet["level"] == "warning" and "exception" not in quiet
    assert quiet["message"].startswith("Error enqueueing registry_bot_process: 3068587a. (")
    assert "Timeout reading from socket" in quiet["message"]
    assert loud["level"] == "error" and "KeyError" in loud["exception"]
