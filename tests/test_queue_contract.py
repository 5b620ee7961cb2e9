"""The queue's contract on both backends (SQLite file, real Redis): accept, dedupe, supersede, lock,
recover."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis.exceptions
from huey import RedisHuey
from huey.api import Huey
from huey.storage import SqliteStorage

from bot.github.events import Job
from bot.service import leases
from bot.service.leases import Fence, LeaseLost
from bot.service.queue import (
    WAL_LIMIT,
    JobDeferred,
    JobQueue,
    PullRequestBusy,
    make_huey,
    redis_refuses_writes,
)
from tests.conftest import redis_out_of_memory

LATER = datetime(2100, 1, 1)  # huey's schedule read at this time: every retry, due or not


def job(delivery: str, number: int = 1, sha: str = "a" * 40, requester: str = "") -> Job:
    return Job(delivery, "pull_request", "synchronize", 1, "o/r", number, sha, requester)


@pytest.fixture(params=["sqlite", "redis"])
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobQueue]:
    """A fresh queue; on Redis under a name of its own, so tests share the session's server
    safely."""
    url = (
        str(tmp_path / "q.sqlite3")
        if request.param == "sqlite"
        else request.getfixturevalue("redis_url")
    )
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


def test_a_body_is_accepted_once_whatever_its_delivery_id(queue: JobQueue) -> None:
    """A replay of a verified body under a fresh delivery id is refused, in the same step as the
    delivery's own dedupe (one commit on SQLite, one script on Redis); the mark lasts as long as a
    done mark and is pruned with them."""
    body = b'{"action": "opened", "number": 1}'
    assert queue.accept(job("d1"), body)
    assert not queue.accept(job("d2"), body)  # the same body, another id: a replay
    assert not queue.accept(job("d1"), body)  # the same delivery again: a redelivery
    assert queue.accept(job("d3"), body + b" ")  # another body
    assert queue.accept(job("d4"))  # a job of the worker's (no body): delivery ids only
    assert queue.job("d2") is None and queue.pending() == 3
    queue.set_handler(lambda j: None)
    queue.process("d1")
    assert not queue.accept(job("d5"), body)  # done: still refused
    if isinstance(queue.huey.storage, SqliteStorage):  # Redis expires the mark by itself
        queue.clock = lambda: time.time() + queue._done.ttl + 1
        queue._done._clock = queue.clock  # type: ignore[attr-defined]
        queue._prune(queue.clock())
        assert queue.accept(job("d6"), body)
    else:
        digest = hashlib.sha256(body).hexdigest()
        expires = queue.redis().ttl(queue._redis_done.body_key(digest))  # type: ignore[union-attr]
        assert queue._done.ttl - 60 < expires <= queue._done.ttl


def test_a_re_request_body_is_refused_as_a_replay_only_within_a_short_window(
    queue: JobQueue,
) -> None:
    """Finding: a re-run does not update the check run it re-requests (GitHub: "The check run
    itself is not updated"), so the ``check_run.rerequested`` delivery of a second Re-run of a run
    whose first request made no new run (its job failed, was given up or refused) can be the first
    one byte for byte: it was refused as a replay for 7 days, and the Re-run did nothing. Now a
    re-request's body is refused only within ``REREQUEST_WINDOW`` (a double click, a burst of
    replays), then taken again; any other body still for 7 days."""
    from bot.service.done_marks import REREQUEST_WINDOW
    from tests.conftest import PAYLOADS

    body = (PAYLOADS / "check_run.rerequested.json").read_bytes()

    def rerun(delivery: str) -> Job:
        return Job(delivery, "check_run", "rerequested", 1, "o/r", 1, "a" * 40, rerun=True)

    assert queue.accept(rerun("r1"), body)
    assert not queue.accept(rerun("r2"), body)  # within the window: a replay or a double click
    queue.set_handler(lambda j: None)
    queue.process("r1")  # its review made no new run (say it was given up)
    if isinstance(queue.huey.storage, SqliteStorage):
        start = time.time()
        queue.clock = lambda: start + REREQUEST_WINDOW + 1
        queue._done._clock = queue.clock  # type: ignore[attr-defined]
    else:  # Redis's clock expires the mark: as if the window had passed
        digest = hashlib.sha256(body).hexdigest()
        key = queue._redis_done.body_key(digest)  # type: ignore[union-attr]
        assert 0 < queue.redis().ttl(key) <= REREQUEST_WINDOW
        queue.redis().delete(key)
    assert queue.accept(rerun("r3"), body)  # a Re-run clicked again later is reviewed
    assert not queue.accept(rerun("r4"), body)  # and a replay of it is refused again
    assert not queue.accept(rerun("r1"), body)  # a redelivery of the first: its id is done
    assert queue.job("r3") is not None and queue.job("r2") is None and queue.job("r4") is None


def test_newest_delivery_of_a_pull_request_wins(queue: JobQueue) -> None:
    seen: list[str] = []
    queue.set_handler(lambda j: seen.append(j.delivery))
    assert (
        queue.accept(job("d1"))
        and queue.accept(job("d2", sha="b" * 40))
        and queue.accept(job("d3", number=2))
    )
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


def other_worker(queue: JobQueue) -> JobQueue:
    """Another worker process (on any host) over the same queue: a queue object with its own owner
    id."""
    return JobQueue(same_backend(queue), lease_ttl=queue.lease_ttl)


def same_backend(queue: JobQueue) -> Huey:
    storage = queue.huey.storage
    if isinstance(storage, SqliteStorage):
        return make_huey(storage.filename, name=queue.huey.name)
    return RedisHuey(queue.huey.name, connection_pool=storage.pool, results=False)


def test_a_lease_its_holder_stopped_renewing_expires_whatever_its_host(queue: JobQueue) -> None:
    """Finding: liveness was judged by host name and PID; a worker dead on another host (or a second
    container with the same host name) kept, or broke, a live lock. A lease is judged by time
    only."""
    dead = other_worker(queue)
    # then it dies: nobody renews it
    assert dead._leases.acquire("o/r#1", dead.owner, 0.3) is not None
    queue.set_handler(lambda j: None)
    queue.accept(job("d1"))
    with pytest.raises(PullRequestBusy):
        queue.process("d1")
    time.sleep(0.4)
    queue.process("d1")
    assert queue.is_done("d1")


def test_a_lease_released_after_it_expired_leaves_nothing_behind(queue: JobQueue) -> None:
    """Finding: a release retried after its TTL (the disk was full when the job ended) was a no-op
    on SQLite, whose expired rows stay: the lease row was never deleted. Released late, it is gone,
    as on Redis; a lease another worker took over since is never touched."""
    token = queue._leases.acquire("o/r#9", queue.owner, 0.2)
    assert token is not None
    time.sleep(0.3)
    assert queue._leases.release("o/r#9", queue.owner, token) is False  # no longer live
    assert queue._leases.holder("o/r#9") is None
    assert not any(k.startswith("lease:o/r#9") for k in queue._kv.result_items())
    other = other_worker(queue)
    taken = other._leases.acquire("o/r#9", other.owner, 30)
    assert taken is not None and queue._leases.release("o/r#9", queue.owner, token) is False
    assert other._leases.holder("o/r#9") == (taken, other.owner)


def test_a_lease_that_lapsed_unrenewed_is_renewed_not_taken_as_lost(queue: JobQueue) -> None:
    """Finding: renewals that could not be written (a full disk) let the lease lapse; the next
    renewal found no live lease and the job took that as a takeover and dropped the review, with no
    other worker in sight. Only a newer token is a takeover: a lapsed lease nobody took is renewed,
    and the job writes on."""
    lapsing = JobQueue(same_backend(queue), lease_ttl=0.2)
    with lapsing.pr_lock("o/r#3") as fence:
        lapsing._renewer.remove(fence)  # as if every renewal had failed to write
        time.sleep(0.3)
        assert lapsing._leases.holder("o/r#3") is None  # lapsed
        assert fence.renew() and not fence.lost
        fence.check()  # ours again: no LeaseLost
        assert lapsing._leases.holder("o/r#3") == (fence.token, lapsing.owner)
    assert lapsing._leases.holder("o/r#3") is None  # released at the end as usual


def test_a_lapsed_lease_someone_else_took_and_released_stays_lost(queue: JobQueue) -> None:
    """The other half of the rule: a newer token was written (and even released again): renewing
    ours is a takeover, not a recovery, and nothing is written back."""
    stalled, other = JobQueue(same_backend(queue), lease_ttl=0.2), other_worker(queue)
    with stalled.pr_lock("o/r#4") as fence:
        stalled._renewer.remove(fence)
        time.sleep(0.3)
        with other.pr_lock("o/r#4"):
            pass
        assert not fence.renew() and fence.lost
        with pytest.raises(LeaseLost):
            fence.check()
        assert stalled._leases.holder("o/r#4") is None


def lose_lease_data(queue: JobQueue, key: str) -> None:
    """The store forgets the lease of ``key`` and its fencing counter, as a Redis restarted without
    its data (or a failover to a replica that lagged) does; a SQLite file restored from a backup."""
    store = queue._leases
    if isinstance(store, leases.RedisLeases):
        queue.redis().delete(*store._keys(key))
        return
    with queue._kv.db(commit=True) as curs:
        curs.execute(
            "delete from kv where queue = ? and key in (?, ?)",
            (queue._kv.name, f"lease:{key}", f"fence:{key}"),
        )


def test_a_lease_its_store_forgot_is_renewed_not_taken_for_a_takeover(queue: JobQueue) -> None:
    """Finding: Redis lost its data (a restart without it) while a job held its lease; the renewal
    found no lease and no fencing counter, read that as a newer token, and the job abandoned its
    run ("the worker holding it now finishes it", though none did). Nobody took it: it is taken
    back, the counter set back to its token, and a later acquisition still gets a newer token."""
    for _ in range(2):  # earlier reviews of the pull request: the job's token is 3
        with queue.pr_lock("o/r#6"):
            pass
    forgetful = JobQueue(same_backend(queue), lease_ttl=0.6)
    with forgetful.pr_lock("o/r#6") as fence:
        forgetful._renewer.remove(fence)
        assert fence.token == 3
        lose_lease_data(forgetful, "o/r#6")
        time.sleep(0.25)  # over a third of the TTL: the next write renews first
        fence.check()  # no LeaseLost
        assert not fence.lost
        assert forgetful._leases.holder("o/r#6") == (3, forgetful.owner)
    other = other_worker(queue)
    with other.pr_lock("o/r#6") as newer:
        assert newer.token == 4


def test_a_lease_another_worker_took_after_the_store_forgot_it_stays_lost(
    queue: JobQueue,
) -> None:
    """The other half: after the loss, another worker acquired the pull request (its token, counted
    again from 1, is below ours, but the lease is its): that is a takeover."""
    for _ in range(2):
        with queue.pr_lock("o/r#7"):
            pass
    forgetful, other = JobQueue(same_backend(queue), lease_ttl=0.6), other_worker(queue)
    with forgetful.pr_lock("o/r#7") as fence:
        forgetful._renewer.remove(fence)
        lose_lease_data(forgetful, "o/r#7")
        with other.pr_lock("o/r#7") as newer:
            assert newer.token == 1
            assert not fence.renew() and fence.lost
            with pytest.raises(LeaseLost):
                fence.check()
            newer.check()


def test_a_renewal_after_the_release_writes_nothing_back(queue: JobQueue) -> None:
    """A renewal racing the job's end must not write a released lease back (it would block the next
    review of the pull request for a TTL)."""
    with queue.pr_lock("o/r#5") as fence:
        pass
    assert not fence.renew()
    assert queue._leases.holder("o/r#5") is None


def test_a_worker_whose_lease_was_taken_over_writes_nothing(queue: JobQueue) -> None:
    """The fencing token: a stalled worker past its TTL finds a newer token and raises before any
    write."""
    stalled, other = JobQueue(same_backend(queue), lease_ttl=0.2), other_worker(queue)
    with stalled.pr_lock("o/r#1") as fence:
        stalled._renewer.remove(fence)  # stalled: neither its thread nor the renewer runs
        fence.check()  # still ours
        time.sleep(0.3)
        with other.pr_lock("o/r#1") as newer:
            assert newer.token > fence.token
            with pytest.raises(LeaseLost):
                fence.check()
            newer.check()
            # nor can it free the new lease
            assert not stalled._leases.release("o/r#1", stalled.owner, fence.token)
        assert other._leases.holder("o/r#1") is None


def test_a_lease_is_renewed_while_the_job_runs(queue: JobQueue) -> None:
    short = JobQueue(same_backend(queue), lease_ttl=0.3)
    short.set_handler(lambda j: time.sleep(1.0))  # three TTLs
    short.accept(job("d1"))
    short.process("d1")  # raises LeaseLost at its end if the lease had lapsed
    assert short.is_done("d1")


def test_a_closed_queue_leaves_no_renewer_thread_behind(queue: JobQueue) -> None:
    """Finding: every queue that held a lease kept its renewer thread for the life of the process
    (65 idle threads at the end of one test process)."""
    short = JobQueue(same_backend(queue), lease_ttl=0.3)
    short.set_handler(lambda j: time.sleep(0.2))
    short.accept(job("d1"))
    short.process("d1")
    renewers = [t for t in threading.enumerate() if t.name == "lease-renewer" and t.is_alive()]
    assert any(t is short._renewer._thread for t in renewers)
    short.close()
    assert short._renewer._thread is not None and not short._renewer._thread.is_alive()


def test_a_hung_job_frees_its_pull_request_once_it_held_it_past_the_bound(
    queue: JobQueue,
) -> None:
    """Finding: a hung job (a read that never returns) had its lease renewed for as long as its
    process lived, and every later review of the pull request waited behind it. Past ``max_hold``
    the lease is not renewed; once it lapses another worker reviews the pull request, and the hung
    job's next write is refused."""
    hung = JobQueue(same_backend(queue), lease_ttl=0.3, max_hold=0.6)
    inside, over = threading.Event(), threading.Event()
    refused: list[str] = []

    def review(j: Job) -> None:
        fence = leases.current()
        assert fence is not None
        inside.set()
        over.wait(30)
        try:
            fence.check()
        except LeaseLost:
            refused.append(j.delivery)
            raise

    hung.set_handler(review)
    hung.accept(job("hung"))
    thread = threading.Thread(target=hung.huey.execute, args=(hung.huey.dequeue(),), daemon=True)
    thread.start()
    try:
        assert inside.wait(10)
        start = time.monotonic()
        other = other_worker(queue)
        other.set_handler(lambda j: None)
        other.accept(job("next"))
        while True:
            try:
                other.process("next")
                break
            except PullRequestBusy:
                assert time.monotonic() - start < 10, "the hung job kept the pull request"
                time.sleep(0.05)
        assert time.monotonic() - start >= 0.6 - 0.1 and other.is_done("next")
    finally:
        over.set()
        thread.join(10)
    assert refused == ["hung"]


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


class Dying:
    """A worker process over ``queue``'s backend whose consumer thread takes the one queued job and
    stays in it until the process ends: stopped by huey's consumer (SIGTERM) or killed (SIGKILL)."""

    def __init__(self, queue: JobQueue) -> None:
        self.queue = JobQueue(same_backend(queue), lease_ttl=DYING_TTL)
        self.fences: list[Fence] = []
        self.inside, self.over = threading.Event(), threading.Event()
        self.queue.set_handler(self._review)
        task = self.queue.huey.dequeue()
        self.thread = threading.Thread(target=self.queue.huey.execute, args=(task,), daemon=True)
        self.thread.start()
        assert self.inside.wait(10)

    def _review(self, j: Job) -> None:
        fence = leases.current()
        assert fence is not None
        self.fences.append(fence)
        self.inside.set()
        self.over.wait(30)

    def stop(self) -> None:
        """SIGTERM: huey's consumer stops at once, emits SIGNAL_INTERRUPTED for the task in flight
        (``Consumer.run``), and the process exits."""
        self.queue.huey.notify_interrupted_tasks()
        self.kill()

    def kill(self) -> None:
        """The process ends: nothing of it runs any more, its leases are no longer renewed."""
        for fence in self.fences:
            self.queue._renewer.remove(fence)

    def end(self) -> None:
        self.over.set()
        self.thread.join(10)


DYING_TTL = 2.0


def test_a_worker_stopped_mid_review_is_no_crash_one_killed_is(queue: JobQueue) -> None:
    """Finding: a worker stopped by SIGTERM (a deploy) mid-review was taken for a crash: its lease
    kept the pull request for a TTL and the next attempt counted a crash (two conclude the job
    "could not finish"). Stopped, the job is free at once and runs again with no crash counted;
    killed, it waits out the lease and counts one."""
    crashes: dict[str, int] = {}
    queue.accept(job("stopped", number=1))
    stopped = Dying(queue)
    queue.accept(job("killed", number=2))
    killed = Dying(queue)
    try:
        stopped.stop()
        killed.kill()
        survivor = other_worker(queue)
        survivor.set_handler(lambda j: crashes.update({j.delivery: survivor.crashes(j)}))
        assert survivor.recover() == 1  # the stopped one's; the killed one's lease still holds
        survivor.huey.execute(survivor.huey.dequeue())
        assert crashes == {"stopped": 0} and survivor.is_done("stopped")
        time.sleep(DYING_TTL + 0.2)
        assert survivor.recover() == 1
        survivor.huey.execute(survivor.huey.dequeue())
        assert crashes == {"stopped": 0, "killed": 1} and survivor.is_done("killed")
    finally:
        stopped.end()
        killed.end()


# -- failing infrastructure: the sweep, a full disk, readiness -------------------------------------
def test_the_sweep_never_duplicates_a_running_job(queue: JobQueue) -> None:
    """Finding: the minute sweep re-enqueued a job while it ran; the duplicate spun on the lock."""
    swept: list[int] = []
    queue.set_handler(lambda j: swept.append(queue.recover()))
    queue.accept(job("d1"))
    task = queue.huey.dequeue()
    queue.huey.execute(task)
    assert swept == [0] and queue.is_done("d1") and queue.pending() == 0


def test_a_duplicate_of_a_running_job_is_dropped(queue: JobQueue) -> None:
    runs: list[str] = []

    def handler(j: Job) -> None:
        runs.append(j.delivery)
        queue._run_task(j.delivery)  # huey hands this process the same delivery again while it runs

    queue.set_handler(handler)
    queue.accept(job("d1"))
    queue._run_task(queue.huey.dequeue().args[0])
    assert runs == ["d1"] and queue.is_done("d1")


def test_the_sweep_never_duplicates_a_job_waiting_for_a_retry_or_a_deferral(
    queue: JobQueue,
) -> None:
    queue.accept(job("busy"))
    queue.accept(job("later", number=2))
    # another thread of this process reviews PR 1: "busy" waits for a retry
    with queue.pr_lock("o/r#1"):
        queue.huey.execute(queue.huey.dequeue())
    until = time.time() + 3600

    def defer(j: Job) -> None:
        raise JobDeferred(until, "rate limit")

    queue.set_handler(defer)
    queue.huey.execute(queue.huey.dequeue())
    assert queue.pending() == 0 and len(queue.huey.scheduled()) == 2
    assert queue.recover() == 0
    stored = queue.job("later")
    assert stored is not None and stored.deferrals == 1

    # even if the schedule were lost, the journal knows "later" waits
    queue.huey.storage.flush_schedule()
    assert queue.recover() == 1  # "busy" is recovered; "later" only once its time has come
    queue.clock = lambda: until + 1
    assert queue.recover() == 1


def test_the_sweep_leaves_a_pull_request_locked_by_a_live_process_alone(queue: JobQueue) -> None:
    queue.accept(job("d1"))
    queue.huey.dequeue()
    live = other_worker(queue)
    token = live._leases.acquire("o/r#1", live.owner, 30)
    assert token is not None and queue.recover() == 0
    live._leases.release("o/r#1", live.owner, token)
    assert queue.recover() == 1


class Disk:
    """Makes the queue's writes fail as on a full disk (SQLite's error; reads keep working)."""

    def __init__(self, queue: JobQueue, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        storage = queue.huey.storage
        for name in ("put_data", "put_if_empty", "delete_data", "enqueue", "add_to_schedule"):
            monkeypatch.setattr(storage, name, self._guard(getattr(storage, name)))
        for name in ("acquire", "renew", "release"):
            monkeypatch.setattr(queue._leases, name, self._guard(getattr(queue._leases, name)))
        # Redis: RPUSH
        monkeypatch.setattr(queue, "_enqueue_first", self._guard(queue._enqueue_first))
        monkeypatch.setattr(queue._done, "mark", self._guard(queue._done.mark))

    def _guard(self, method: Any) -> Any:
        def write(*args: Any, **kwargs: Any) -> Any:
            if self.full:
                raise sqlite3.OperationalError("database or disk is full")
            return method(*args, **kwargs)

        return write


def test_a_disk_that_fills_mid_review_leaves_no_lock_and_no_second_review(
    queue: JobQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: the per-PR lock was never released (its own live process never broke it before the
    900 s TTL)."""
    disk = Disk(queue, monkeypatch)
    reviews: list[str] = []

    def review(j: Job) -> None:
        reviews.append(j.delivery)
        if j.delivery == "d1":
            disk.full = True  # while the review runs

    queue.set_handler(review)
    queue.accept(job("d1"))
    # a recheck of the same PR, waiting behind it
    queue.accept(job("d2", sha="b" * 40, requester="carol"))
    # neither "done" nor the lock's delete can be written: no exception, no stuck lock
    queue.process("d1")
    assert queue._leases.holder("o/r#1") is not None  # still on disk...
    assert not queue._locked("o/r#1")  # ...but this process holds it no longer
    while queue.huey.dequeue() is not None:  # the consumer took both tasks off the queue
        pass
    # d1 is not redone, and a full disk enqueues nothing
    assert queue.is_done("d1") and queue.recover() == 0
    assert queue.job("d2") is not None  # d2 waits in the journal

    disk.full = False  # space freed
    # the sweep: first writes what was left unwritten, then re-enqueues d2 only
    assert queue.recover() == 1
    queue.process(queue.huey.dequeue().args[0])  # reviewed at once (no PullRequestBusy)
    assert reviews == ["d1", "d2"]
    assert queue._done.is_done("d1") and "job:d1" not in queue._done.open_jobs()
    assert queue._leases.holder("o/r#1") is None


def test_a_lock_left_by_this_process_is_broken_at_once(
    queue: JobQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(queue, monkeypatch)
    queue.set_handler(lambda j: setattr(disk, "full", True))
    queue.accept(job("d1"))
    queue.accept(job("d2", sha="b" * 40, requester="carol"))
    queue.process("d1")
    disk.full = False
    # even without the retried delete, our own stale lock does not block us
    queue._unreleased.clear()
    seen: list[str] = []
    queue.set_handler(lambda j: seen.append(j.delivery))
    queue.process("d2")
    assert seen == ["d2"]


def test_readiness_reads_and_sees_a_full_disk_or_a_failing_redis(
    queue: JobQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: /readyz wrote to the queue on every probe. It now only reads, and still says no when
    the queue could not take a write: a full SQLite disk, a Redis whose last write to disk
    failed."""
    storage = queue.huey.storage
    writes: list[str] = []
    for name in ("put_data", "put_if_empty", "enqueue"):
        method = getattr(storage, name)
        monkeypatch.setattr(
            storage, name, lambda *a, _m=method, _n=name, **k: writes.append(_n) or _m(*a, **k)
        )
    assert queue.ready() and writes == []
    if isinstance(storage, SqliteStorage):
        free = os.statvfs(Path(storage.filename).parent)
        full = os.statvfs_result((*free[:4], 0, *free[5:]))  # f_bavail: no block left for us
        monkeypatch.setattr(os, "statvfs", lambda path: full)
    else:
        info = storage.conn.info
        monkeypatch.setattr(
            storage.conn, "info", lambda *a: {**info(*a), "aof_last_write_status": "err"}
        )
    assert not queue.ready()
    monkeypatch.undo()
    assert queue.ready()


def test_readiness_says_no_while_redis_is_out_of_memory(redis_url: str) -> None:
    """Finding: ``ready()`` stayed True while a Redis at its ``maxmemory`` refused every delivery's
    write (each one a 503). It reads ``INFO`` (one round trip, no write) and says no while used
    memory is over the limit, and again yes once memory is freed."""
    queue = JobQueue(make_huey(redis_url, name=f"test-{uuid.uuid4().hex[:8]}"))
    try:
        assert queue.ready()
        with redis_out_of_memory(queue.redis()):
            with pytest.raises(redis.exceptions.OutOfMemoryError):
                queue.accept(job("d1"))
            assert not queue.ready()
        assert queue.ready() and queue.accept(job("d1"))
    finally:
        queue.close()


def test_readiness_says_no_on_a_read_only_replica() -> None:
    assert redis_refuses_writes({"role": "master", "used_memory": 10, "maxmemory": 0}) == ""
    assert redis_refuses_writes({"role": "slave", "slave_read_only": 1}) != ""
    assert redis_refuses_writes({"role": "slave", "slave_read_only": 0}) == ""
    # memory the eviction does not count (replication and AOF buffers) is left out, as Redis does
    assert (
        redis_refuses_writes(
            {"used_memory": 120, "mem_not_counted_for_evict": 30, "maxmemory": 100}
        )
        == ""
    )


def test_a_redis_out_of_memory_at_every_attempt_is_waited_out_not_given_up(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: OOM answered to the lease's acquisition at each of a job's attempts (a Redis
    hovering at its ``maxmemory``) spent huey's 3 retries and gave the job up: marked done, never
    reviewed. It is deferred with back-off as often as it happens, then runs."""
    queue = JobQueue(make_huey(redis_url, name=f"test-{uuid.uuid4().hex[:8]}"), retry_delay=0)
    handled: list[str] = []
    queue.set_handler(lambda j: handled.append(j.delivery))
    acquire = queue._leases.acquire

    def out_of_memory(*args: Any) -> Any:
        with redis_out_of_memory(queue.redis()):
            return acquire(*args)

    monkeypatch.setattr(queue._leases, "acquire", out_of_memory)
    assert queue.accept(job("d-oom"))
    try:
        for attempt in range(6):  # past huey's 3 retries
            if attempt == 5:
                monkeypatch.setattr(queue._leases, "acquire", acquire)  # memory freed
            tasks = [queue.huey.dequeue()] if attempt == 0 else queue.huey.read_schedule(LATER)
            [task] = tasks
            task.eta = None  # its back-off is over
            queue.huey.execute(task)
            assert handled == ([] if attempt < 5 else ["d-oom"])
            assert queue.is_done("d-oom") == (attempt == 5)
    finally:
        queue.close()


def test_the_sqlite_wal_does_not_keep_its_largest_size(tmp_path: Path) -> None:
    """Finding: on a small disk the WAL refilled it by itself (SQLite keeps the file at its
    high-water mark)."""
    made = JobQueue(make_huey(str(tmp_path / "q.sqlite3")))
    wal = tmp_path / "q.sqlite3-wal"
    sizes = []
    for n in range(3000):  # a burst: about 12,000 WAL pages, three checkpoints
        made.accept(job(f"d{n}", number=n + 1))
        sizes.append(wal.stat().st_size)
    made.close()
    # Between checkpoints the WAL grows to about 4 MB; each checkpoint cuts it back under the limit
    # (it was 4.1 MB, 1000 pages, for ever after the first). Where the burst ends in that cycle is
    # chance.
    # well into the first cycle
    grown = next(i for i, size in enumerate(sizes) if size > 2 * WAL_LIMIT)
    assert min(sizes[grown:]) <= WAL_LIMIT, (max(sizes), min(sizes[grown:]))


def test_an_interrupted_job_is_recovered_to_the_front_of_the_queue(queue: JobQueue) -> None:
    """Its pull request already waited a lease's TTL: it must not wait behind the whole backlog as
    well."""
    queue.accept(job("first", number=1))
    queue.huey.dequeue()  # taken by a worker that then died
    for n in range(2, 5):
        queue.accept(job(f"later-{n}", number=n))
    assert queue.recover() == 1
    task = queue.huey.dequeue()
    assert task is not None and task.args == ("first",)


def test_a_job_to_run_later_is_run_by_a_worker_of_the_release_before(
    queue: JobQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rolling upgrade: a dashboard redone later (``Job.not_before``) next to a worker of the
    release before, which reads a journal entry as ``Job(**record["job"])`` with a ``Job`` that has
    no ``not_before``. Before, the field was written inside ``job``: that worker's reading raised
    ``TypeError`` at each try and the job was given up, never run. Now the time is kept beside the
    job and huey's schedule holds the task until then: that worker reads it, runs it no sooner, and
    runs it once."""
    import dataclasses

    old_job = dataclasses.make_dataclass(
        "OldJob",
        [
            (f.name, f.type, dataclasses.field(default=f.default))
            for f in dataclasses.fields(Job)
            if f.name != "not_before"
        ],
        namespace={"pr_key": Job.pr_key},
        frozen=True,
    )
    # the release before's reading, and a job as the App's give-up hook enqueues it
    monkeypatch.setattr("bot.service.queue.job_of", lambda record: old_job(**record["job"]))
    later = time.time() + 600
    push = Job("p1.redo", "push", "", 1, "o/r", 0, "b" * 40, not_before=later)
    assert queue.accept(push)
    ran: list[Any] = []
    queue.set_handler(ran.append)
    assert queue.recover() == 0  # the sweep leaves it to its time
    task = queue.huey.dequeue()
    task.retries = 0  # were it refused, it would be given up at once
    queue.huey.execute(task)  # taken now: put back on huey's schedule, not run
    assert ran == [] and not queue.is_done("p1.redo")
    [held] = queue.huey.scheduled()
    assert abs(held.eta.replace(tzinfo=UTC).timestamp() - later) < 1
    for due in queue.huey.read_schedule(LATER):
        queue.huey.execute(due, LATER)
    assert [(j.delivery, j.head_sha) for j in ran] == [("p1.redo", "b" * 40)]
    assert queue.is_done("p1.redo")


def test_a_job_field_of_a_newer_release_is_left_out_not_refused() -> None:
    """A worker reads a journal entry a newer release wrote with a field it does not know: the
    job runs without it (before, ``Job(**fields)`` raised and the job was given up)."""
    from bot.service.queue import job_of

    fields = {**job("d1").record(), "newer": 1}
    assert job_of({"job": fields, "at": 0.0}) == job("d1")
    assert job_of({"job": fields, "not_before": 5.0}).not_before == 5.0
