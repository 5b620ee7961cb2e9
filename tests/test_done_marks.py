"""The journal holds only open jobs: finished ones become done marks that expire (issue 31, item
2)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.service.done_marks import DONE_TTL, LEGACY_DONE, RedisDoneMarks
from bot.service.queue import JobQueue, make_huey
from tests.test_queue_contract import job


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "redis"])
def timed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[JobQueue, Clock]]:
    url = (
        str(tmp_path / "q.sqlite3")
        if request.param == "sqlite"
        else request.getfixturevalue("redis_url")
    )
    clock = Clock()
    made = JobQueue(make_huey(url, name=f"test-{uuid.uuid4().hex[:8]}"), clock=clock)
    made.set_handler(lambda j: None)
    yield made, clock
    made.close()


def test_a_finished_job_leaves_a_done_mark_not_a_journal_entry(
    timed: tuple[JobQueue, Clock],
) -> None:
    queue, _ = timed
    assert queue.accept(job("d1")) and queue.accept(job("d2", number=2))
    queue.process("d1")
    assert queue.is_done("d1") and not queue.is_done("d2")
    assert set(queue._done.open_jobs()) == {"job:d2"}  # what the sweep reads
    assert not queue.accept(job("d1"))  # a redelivery of a finished job is still refused
    latest = [k for k in queue.huey.storage.result_items() if k.startswith("latest:")]
    assert latest == ["latest:o/r#2"]  # the finished job's pull request's ``latest:`` went with it


def test_done_marks_expire_after_a_week(timed: tuple[JobQueue, Clock]) -> None:
    queue, clock = timed
    queue.accept(job("d1"))
    queue.process("d1")
    marks = queue._done
    if isinstance(marks, RedisDoneMarks):
        ttl = redis.Redis(connection_pool=queue.huey.storage.pool).ttl(marks.key("d1"))
        assert DONE_TTL - 60 < ttl <= DONE_TTL
        return
    clock.now += DONE_TTL - 60
    assert marks.prune() == 0 and queue.is_done("d1")
    clock.now += 120
    assert marks.prune() == 1 and not queue.is_done("d1")


def test_the_entries_of_the_old_layout_are_done_and_moved_to_marks(
    timed: tuple[JobQueue, Clock],
) -> None:
    queue, _ = timed
    for n in range(3):
        # what a worker before done marks wrote
        queue.huey.storage.put_data(f"job:old-{n}", LEGACY_DONE)
    queue.accept(job("d1"))
    assert queue.is_done("old-0") and not queue.accept(job("old-0"))
    queue.huey.dequeue()
    assert queue.recover() == 1  # d1 only
    assert set(queue._done.open_jobs()) == {"job:d1"}
    assert all(queue.is_done(f"old-{n}") for n in range(3))


def test_the_sweep_reads_the_open_jobs_whatever_the_history(timed: tuple[JobQueue, Clock]) -> None:
    queue, _ = timed
    for n in range(300):
        queue.accept(job(f"h{n}", number=n + 10))
        queue.mark_done(f"h{n}")
    queue.accept(job("open"))
    assert list(queue._done.open_jobs()) == ["job:open"]
    latest = [k for k in queue.huey.storage.result_items() if k.startswith("latest:")]
    assert latest == ["latest:o/r#1"]
