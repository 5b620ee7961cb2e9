"""The queue's contract on both backends (SQLite file, real Redis): accept, dedupe, supersede, lock, recover."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.events import Job
from bot.app.queue import JobQueue, PullRequestBusy, make_huey


def job(delivery: str, number: int = 1, sha: str = "a" * 40, requester: str = "") -> Job:
    return Job(delivery, "pull_request", "synchronize", 1, "o/r", number, sha, requester)


@pytest.fixture(params=["sqlite", "redis"])
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobQueue]:
    """A fresh queue; on Redis under a name of its own, so tests share the session's server safely."""
    url = str(tmp_path / "q.sqlite3") if request.param == "sqlite" else request.getfixturevalue("redis_url")
    made = JobQueue(make_huey(url, name=f"test-{uuid.uuid4().hex[:8]}"))
    yield made
    made.close()


def test_accept_journals_and_enqueues_once(queue: JobQueue) -> None:
    assert queue.accept(job("d1", sha="c" * 40))
    assert not queue.accept(job("d1", sha="c" * 40))  # a redelivery keeps its X-GitHub-Delivery
    assert queue.pending() == 1
    stored = queue.job("d1")
    assert stored is not None and stored.head_sha == "c" * 40 and not queue.is_done("d1")
    assert queue.ready()


def test_newest_delivery_of_a_pull_request_wins(queue: JobQueue) -> None:
    seen: list[str] = []
    queue.set_handler(lambda j: seen.append(j.delivery))
    assert queue.accept(job("d1")) and queue.accept(job("d2", sha="b" * 40)) and queue.accept(job("d3", number=2))
    for d in ("d1", "d2", "d3"):
        queue.process(d)
    assert seen == ["d2", "d3"]
    assert all(queue.is_done(d) for d in ("d1", "d2", "d3"))


def test_a_recheck_never_supersedes_a_push(queue: JobQueue) -> None:
    seen: list[str] = []
    queue.set_handler(lambda j: seen.append(j.delivery))
    queue.accept(job("push"))
    queue.accept(job("recheck", requester="someone"))
    queue.process("push")
    queue.process("recheck")
    assert seen == ["push", "recheck"]


def test_a_pull_request_under_review_is_retried_later(queue: JobQueue) -> None:
    queue.set_handler(lambda j: None)
    queue.accept(job("d1"))
    with queue.pr_lock("o/r#1"), pytest.raises(PullRequestBusy):
        queue.process("d1")
    queue.process("d1")
    assert queue.is_done("d1")


def test_a_lock_of_a_dead_process_is_broken(queue: JobQueue) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    queue.huey.storage.put_data("lock:o/r#1", json.dumps({"owner": f"{socket.gethostname()}:{dead}",
                                                          "at": time.time()}).encode())
    queue.set_handler(lambda j: None)
    queue.accept(job("d1"))
    queue.process("d1")
    assert queue.is_done("d1")


def test_recover_requeues_a_job_that_was_taken_but_not_finished(queue: JobQueue) -> None:
    queue.accept(job("d1"))
    assert queue.huey.dequeue() is not None  # what the consumer does before it runs a task
    assert queue.pending() == 0
    assert queue.recover() == 1 and queue.pending() == 1
    assert queue.recover() == 0  # already queued: not twice
    queue.set_handler(lambda j: None)
    queue.process("d1")
    assert queue.recover() == 0


def test_handler_failure_is_retried_then_given_up(queue: JobQueue) -> None:
    def boom(j: Job) -> None:
        raise RuntimeError("bug")
    queue.set_handler(boom)
    queue.accept(job("d1"))
    task = queue.huey.dequeue()
    task.retries = 0  # the last attempt
    queue.huey.execute(task)
    assert queue.is_done("d1")


def test_the_check_run_of_an_interrupted_attempt_is_remembered(queue: JobQueue) -> None:
    queue.accept(job("d1"))
    queue.note_check_run(job("d1"), "f" * 40, 77)
    stored = queue.job("d1")
    assert stored is not None and (stored.check_run_id, stored.check_run_sha) == (77, "f" * 40)
