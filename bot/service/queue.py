"""The durable job queue: huey (SQLite by default, Redis to scale out) plus a journal that survives
kill -9.

More in docs/module-notes.md (bot/service/queue.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from huey import RedisHuey, SqliteHuey
from huey.api import Huey, Task
from huey.constants import EmptyData
from huey.exceptions import RetryTask
from huey.signals import SIGNAL_INTERRUPTED
from huey.storage import RedisStorage, SqliteStorage
from redis import ConnectionPool
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from bot.github import metrics
from bot.github.events import Job
from bot.service import done_marks, leases, outage
from bot.service.done_marks import DoneMarks, RedisDoneMarks, SqliteDoneMarks
from bot.service.leases import (
    DEFAULT_TTL,
    Fence,
    LeaseLost,
    LeaseStore,
    RedisLeases,
    Renewer,
    SqliteLeases,
)

log = logging.getLogger(__name__)

# the events whose deliveries are re-requests (``Job.rerun`` without a requester)
REREQUESTS = frozenset({"check_run", "check_suite"})
DONE = done_marks.LEGACY_DONE  # a finished job's entry before done marks (still read as done)
# seconds between two prunings of expired done marks (SQLite; Redis expires them)
PRUNE_EVERY = 3600.0
# seconds a job may hold its pull request's lease: twice the worker's default job budget (840 s),
# past which its review has concluded; a job still holding it is hung (the worker passes twice its
# own ``--job-budget``)
MAX_HOLD = 1680.0
TASK_NAME = "registry_bot_process"
# A queued job names its task "<module>.<name>": the module is pinned to where the first release
# defined it, so that moving the code never renames the jobs that workers of another release read
# (huey rejects a name it does not know, and a mixed fleet would pass jobs between releases that
# cannot run them).
TASK_MODULE = "bot.app.queue"
WAL_PAGES = 1000
WAL_LIMIT = 1024 * 1024
READY_FREE_BYTES = 256 * 1024  # /readyz: the SQLite queue's disk has at least this much room
REDIS_TIMEOUT = 5.0  # seconds a Redis call may take (connect or answer) before it is tried again
# a call that fails this many more times counts as an outage (about 2 x REDIS_TIMEOUT)
REDIS_RETRIES = 1
OUTAGE_POLL = 1.0  # seconds a huey poll waits after finding Redis down
Handler = Callable[[Job], object]


class PullRequestBusy(RetryTask):
    """Another live worker reviews this pull request: retry shortly."""


def job_of(record: dict[str, Any]) -> Job:
    """The job of a journal entry (``JobQueue.accept``), with its ``not_before`` kept beside it."""
    return Job.of(record["job"], float(record.get("not_before") or 0.0))


class JobDeferred(RetryTask):
    """Run this job again at ``until`` (epoch seconds): what a handler raises when GitHub's rate
    limit resets later than it may wait. Not counted as a retry; bounded by the queue's
    ``max_age``."""

    def __init__(self, until: float, reason: str = "") -> None:
        super().__init__(reason or "deferred", eta=datetime.fromtimestamp(until, UTC))
        self.until = until
        self.reason = reason


class JournalSqliteStorage(SqliteStorage):
    """huey's SQLite storage in WAL mode with ``synchronous=NORMAL``, and a one-transaction
    ``accept``.

    Durability: in WAL mode a commit is complete once its frames are written to the WAL file, which
    the operating system holds even when the process is killed (kill -9, OOM, a crash): a restarted
    process, or any other one, sees every committed write. ``NORMAL`` only skips the fsync per
    commit, so a power cut or kernel crash may lose the last commits (never corrupt the file).
    ``FULL`` would add one fsync per delivery for that case.
    """

    def _create_connection(self) -> Any:
        conn = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        # The WAL is checkpointed every WAL_PAGES pages (about 4 MB) and then cut back to WAL_LIMIT:
        # by default SQLite keeps the file at its largest size for ever, which on a small disk fills
        # it again as soon as space is freed. (Checkpointing more often costs an fsync each time, on
        # the web's path.)
        conn.execute(f"pragma wal_autocheckpoint={WAL_PAGES}")
        conn.execute(f"pragma journal_size_limit={WAL_LIMIT}")
        return conn

    @contextlib.contextmanager
    def db(self, commit: bool = False, close: bool = False) -> Iterator[Any]:
        """huey's ``db``, except that a commit that fails (a full disk) is rolled back too: huey
        rolls back only what fails inside the block, so a failed ``COMMIT`` left the one connection
        every thread shares inside its transaction, holding the write lock and hiding the failed
        write's rows from no one but itself."""
        with self.lock:
            conn = self.conn
            cursor = conn.cursor()
            try:
                if commit:
                    cursor.execute(self.begin_sql)
                yield cursor
                if commit:
                    conn.commit()
            except BaseException:
                if commit and conn.in_transaction:
                    conn.rollback()
                raise
            finally:
                cursor.close()
                if close:
                    conn.close()
                    self._conn = None

    def reclaim(self) -> None:
        """After a failed write (a full disk): checkpoint and truncate the WAL to give its space
        back."""
        with self.db() as curs:
            curs.execute("pragma wal_checkpoint(TRUNCATE)")

    def accept(
        self,
        key: str,
        record: bytes,
        latest: tuple[str, bytes] | None,
        message: bytes,
        body: tuple[str, bytes, float] | None = None,
    ) -> bool:
        """Journal ``record`` under ``key`` unless present, set ``latest``, enqueue ``message``: one
        commit. ``body``: the mark of the delivery's body and its time, refused when marked at or
        after the third value (``done_marks``; rows older than the TTL are pruned)."""
        mark, marked, since = body if body is not None else ("", b"", 0.0)
        with self.db(commit=True) as curs:
            curs.execute(
                "select 1 from kv where queue = ? and (key = ? or (key = ? and "
                "cast(value as real) >= ?))",
                (self.name, "done:" + key.split(":", 1)[1], mark, since),
            )
            if curs.fetchone() is not None:
                return False
            curs.execute(
                "insert or ignore into kv (queue, key, value) values (?, ?, ?)",
                (self.name, key, record),
            )
            if curs.rowcount != 1:
                return False
            if body is not None:  # a re-request's older mark, past its window, is renewed
                curs.execute(
                    "insert or replace into kv (queue, key, value) values (?, ?, ?)",
                    (self.name, mark, marked),
                )
            if latest is not None:
                curs.execute(
                    "insert or replace into kv (queue, key, value) values (?, ?, ?)",
                    (self.name, *latest),
                )
            curs.execute(
                "insert into task (queue, data, priority) values (?, ?, 0)", (self.name, message)
            )
        return True


class JournalSqliteHuey(SqliteHuey):
    storage_class = JournalSqliteStorage


class OutageAwareRedisStorage(RedisStorage):
    """huey's Redis storage whose consumer-side calls (polling the queue and the schedule,
    scheduling a retry) wait an outage out quietly: huey logs a traceback for every failed poll of
    every thread. A retry that cannot be scheduled is not lost: its journal entry stays, and
    ``recover()`` re-enqueues it."""

    def _waited_out(self, call: Callable[[], Any], default: Any) -> Any:
        """``call()``, or ``default`` when the store fails it (``outage.is_infrastructure``)."""
        try:
            return call()
        except Exception as exc:
            if not outage.is_infrastructure(exc):
                raise
            outage.REDIS.failed(exc)
            return default

    def dequeue(self) -> Any:
        failed = object()
        data = self._waited_out(super().dequeue, failed)
        if data is failed:
            time.sleep(OUTAGE_POLL)
            return None
        outage.REDIS.succeeded()
        return data

    def read_schedule(self, ts: Any) -> Any:
        return self._waited_out(lambda: super(OutageAwareRedisStorage, self).read_schedule(ts), [])

    def add_to_schedule(self, data: Any, ts: Any) -> None:
        self._waited_out(
            lambda: super(OutageAwareRedisStorage, self).add_to_schedule(data, ts), None
        )

    def delete_data(self, key: str) -> bool:
        """huey deletes a task's revocation key after running it (this queue revokes nothing)."""
        return bool(
            self._waited_out(lambda: super(OutageAwareRedisStorage, self).delete_data(key), False)
        )


class OutageAwareRedisHuey(RedisHuey):
    storage_class = OutageAwareRedisStorage


def make_huey(url: str, name: str = "registry-bot") -> Huey:
    """``redis://...`` or ``rediss://...`` gives RedisHuey; anything else is a SQLite file path.

    A Redis call is tried ``1 + REDIS_RETRIES`` times, each for ``REDIS_TIMEOUT`` seconds (the URL's
    ``socket_timeout`` overrides it), then raises: without a timeout a stalled Redis would hold
    every thread, and its lease, for as long as it stalls; a blip shorter than a timeout goes
    unnoticed."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        pool = ConnectionPool.from_url(
            url,
            socket_timeout=REDIS_TIMEOUT,
            socket_connect_timeout=REDIS_TIMEOUT,
            health_check_interval=30,
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.1), REDIS_RETRIES),
        )
        return OutageAwareRedisHuey(name, connection_pool=pool, results=False)
    path = url.removeprefix("sqlite:///").removeprefix("sqlite://")
    return JournalSqliteHuey(name, filename=path, results=False, timeout=10)


def redis_refuses_writes(info: dict[str, Any]) -> str:
    """Why a Redis whose ``INFO`` (the default sections) is ``info`` refuses writes ("" when it
    takes them): its last write to disk failed (``MISCONF``), it is at its ``maxmemory`` and could
    not evict below it (``OOM``: Redis evicts before every command, ``INFO`` included, so memory
    still over the limit is what a write would meet), or it is a read-only replica
    (``READONLY``)."""
    for key in ("rdb_last_bgsave_status", "aof_last_write_status"):
        if info.get(key, "ok") != "ok":
            return f"{key} is {info[key]}"
    limit = int(info.get("maxmemory") or 0)
    used = int(info.get("used_memory") or 0) - int(info.get("mem_not_counted_for_evict") or 0)
    if 0 < limit < used:
        return f"used_memory {used} is over maxmemory {limit} ({info.get('maxmemory_policy')})"
    if info.get("role") == "slave" and str(info.get("slave_read_only", 1)) == "1":
        return "it is a read-only replica"
    return ""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def token_key(pr_key: str, token: int) -> str:
    return f"{token} {pr_key}"


class JobQueue:
    """Accepts jobs (web side) and runs them through a handler (worker side)."""

    def __init__(
        self,
        huey: Huey,
        lease_ttl: float = DEFAULT_TTL,
        retry_delay: float = 1.0,
        sweep_age: float = 60.0,
        max_age: float = 24 * 3600.0,
        clock: Callable[[], float] = time.time,
        max_hold: float = MAX_HOLD,
    ) -> None:
        """``max_hold``: seconds a job may hold its pull request's lease (``Fence.max_hold``)."""
        self.huey = huey
        self.lease_ttl = lease_ttl
        self.max_hold = max_hold
        # this process: unique on every host
        self.owner = f"{socket.gethostname()}:{uuid.uuid4().hex}"
        self.sweep_age = sweep_age
        self.max_age = max_age  # a job still deferred this long after it was accepted is given up
        self.clock = clock
        self._kv = huey.storage  # raw bytes in huey's key/value store (huey.put would pickle)
        self._handler: Handler | None = None
        self._on_give_up: Handler | None = None
        self._mutex = threading.Lock()
        # leases (pr key and token) this process's threads hold right now
        self._held: set[str] = set()
        redis = self.redis()
        self._leases: LeaseStore = (
            RedisLeases(redis, f"registry-bot:{self._kv.name}:lease")
            if redis is not None
            else SqliteLeases(self._kv, clock)
        )
        self._redis_done = (
            RedisDoneMarks(self._kv, f"registry-bot:{self._kv.name}:done", clock=clock)
            if redis is not None
            else None
        )
        self._done: DoneMarks = self._redis_done or SqliteDoneMarks(self._kv, clock=clock)
        self._pruned = 0.0
        # finished jobs found written the old way (an older release's worker writes here)
        self.legacy_done = 0
        self._renewer = Renewer()
        self._running: set[str] = set()  # deliveries running in this process
        self._fences: dict[str, Fence] = {}  # delivery -> the lease its job runs under here
        # deliveries whose run huey's consumer interrupted (it stops: SIGTERM)
        self._interrupted: set[str] = set()
        self._unreleased: dict[str, int] = {}  # pr key -> token of a lease whose release failed
        # finished deliveries whose ``done`` could not be written
        self._unsaved_done: set[str] = set()
        # deliveries whose ``running`` mark could not be cleared
        self._unsaved_idle: set[str] = set()
        # delivery -> attempts that met a store outage (the back-off)
        self._outages: dict[str, int] = {}
        self._task = huey.task(
            name=TASK_NAME, retries=3, retry_delay=retry_delay, context=True, __module__=TASK_MODULE
        )(self._run_task)
        huey.signal(SIGNAL_INTERRUPTED)(self._on_interrupted)

    @classmethod
    def from_url(cls, url: str, **options: Any) -> JobQueue:
        return cls(make_huey(url), **options)

    # -- web side ---------------------------------------------------------------------------------
    def accept(self, job: Job, body: bytes | None = None) -> bool:
        """Journal and enqueue ``job``. False when this delivery was already accepted (a
        redelivery), or when its ``body`` (the web's verified delivery) was, under another delivery
        id (a replay). Raises when the backend refuses the write (the web answers 503)."""
        try:
            return self._accept(job, body)
        except Exception:
            self._reclaim()
            raise

    def _accept(self, job: Job, body: bytes | None) -> bool:
        key = f"job:{job.delivery}"
        now = self.clock()
        stored: dict[str, Any] = {"job": job.record(), "at": now}
        # a job to run later: held in huey's schedule, so that no worker (of this release or the one
        # before, which knows no ``not_before``) takes it sooner; the time is kept beside the job,
        # where that release's workers read no field they would refuse, and ``deferred_until`` keeps
        # every release's sweep off it until then
        eta = {}
        if job.not_before:
            stored.update(not_before=job.not_before, deferred_until=job.not_before)
            eta["eta"] = datetime.fromtimestamp(job.not_before, UTC)
        record = orjson.dumps(stored)
        digest = hashlib.sha256(body).hexdigest() if body is not None else ""
        # a recheck may be refused: it must not supersede a real push
        latest = None if job.requester else (f"latest:{job.pr_key}", job.delivery.encode())
        # a re-request's body is the same again when GitHub changed nothing since (a Re-run whose
        # first one made no new run): refused as a replay only within a short window
        kept = done_marks.REREQUEST_WINDOW if job.event in REREQUESTS else None
        if isinstance(self._kv, JournalSqliteStorage):  # one transaction, one commit
            message = self.huey.serialize_task(self._task.s(job.delivery, **eta))
            since = now - kept if kept is not None else float("-inf")
            mark = (f"body:{digest}", f"{now:.0f}".encode(), since) if digest else None
            return self._kv.accept(key, record, latest, message, mark)
        # Redis: each step is one round trip; a crash between them is what recover() repairs
        if self._redis_done is None or not self._redis_done.accept(
            job.delivery, record, digest, kept
        ):
            return False
        if latest is not None:
            self._kv.put_data(*latest)
        self.huey.enqueue(self._task.s(job.delivery, **eta))
        return True

    def ready(self) -> bool:
        """Whether the backend takes writes (for ``/readyz``), judged by reading only: Redis answers
        ``INFO`` (one round trip) and would take a write (``redis_refuses_writes``); the SQLite file
        is writable and has ``READY_FREE_BYTES`` of room (a full disk still answers reads while
        every delivery would get a 503)."""
        try:
            conn = self.redis()
            if conn is not None:
                refused = redis_refuses_writes(conn.info())
                if refused:
                    log.warning("the queue's Redis refuses writes: %s", refused)
                return not refused
            path = Path(self._kv.filename).resolve()
            stat = os.statvfs(path.parent)
            room = stat.f_bavail * stat.f_frsize >= READY_FREE_BYTES
            if not room:
                log.warning("the queue's disk is full (%s)", path)
            return room and os.access(path, os.W_OK)
        except Exception:
            log.warning("the queue is not reachable", exc_info=True)
            return False

    def redis(self) -> Any:
        """The Redis client of a Redis queue (for the shared pacing), or None on SQLite."""
        return None if isinstance(self._kv, SqliteStorage) else getattr(self._kv, "conn", None)

    def pending(self) -> int:
        return int(self.huey.pending_count())

    def close(self) -> None:
        """Stop renewing leases and close the backend's connections (SQLite file, or the Redis
        connection pool)."""
        self._renewer.stop()
        pool = getattr(self._kv, "pool", None)
        if pool is not None:
            pool.disconnect()
        else:
            self._kv.close()

    # -- worker side ------------------------------------------------------------------------------
    def set_handler(self, handler: Handler, on_give_up: Handler | None = None) -> None:
        """``on_give_up(job)``: called when the queue gives a job up (its retries spent, or put
        off past ``max_age``), before it is marked done; what it raises is logged."""
        self._handler = handler
        self._on_give_up = on_give_up

    def _give_up(self, delivery: str) -> None:
        """Give the job up: ``on_give_up`` first (best effort), then mark it done."""
        if self._on_give_up is not None:
            try:
                job = self.job(delivery)
                if job is not None:
                    self._on_give_up(job)
            # (logged) the job is given up all the same
            except Exception as exc:  # noqa: BLE001
                log.warning(
                    "delivery %s: what it left open could not be settled: %s", delivery, exc
                )
        self._finish(delivery)

    def job(self, delivery: str) -> Job | None:
        """The journalled job, or None when unknown or done."""
        record = self._record(delivery)
        return None if record is None else job_of(record)

    def _record(self, delivery: str) -> dict[str, Any] | None:
        raw = self._kv.peek_data(f"job:{delivery}")
        if raw is EmptyData or raw == DONE:
            return None
        record: dict[str, Any] = json.loads(raw)
        return record

    def _update(self, delivery: str, job: dict[str, Any] | None = None, **fields: Any) -> None:
        record = self._record(delivery)
        if record is None:
            return
        record["job"].update(job or {})
        record.update(fields)
        self._kv.put_data(f"job:{delivery}", json.dumps(record).encode())

    def open_pull_requests(self) -> set[str]:
        """The pull requests (``Job.pr_key``) with a journalled job not done yet."""
        keys = set()
        for raw in self._done.open_jobs().values():
            if raw == DONE:
                continue
            with contextlib.suppress(ValueError, KeyError, TypeError):
                keys.add(job_of(json.loads(raw)).pr_key)
        return keys

    def note_check_run(self, job: Job, head_sha: str, check_run_id: int) -> None:
        """Remember the check run a job starts, so a retry after a crash concludes that one.

        Called twice: with ``check_run_id`` 0 *before* the check run is created (the intent: a
        recovered job looks for its own run on ``head_sha`` by ``external_id`` and adopts it, even
        when the process died before it learned the id), then with the id. Raises when the journal
        refuses the write.
        """
        self._update(job.delivery, {"check_run_id": check_run_id, "check_run_sha": head_sha})

    def is_done(self, delivery: str) -> bool:
        return delivery in self._unsaved_done or self._done.is_done(delivery)

    def mark_done(self, delivery: str) -> None:
        """Replace the job's journal entry with a done mark (``bot.service.done_marks``)."""
        record = self._record(delivery)
        pr_key = job_of(record).pr_key if record is not None else ""
        self._done.mark(delivery, pr_key)

    def _finish(self, delivery: str) -> None:
        """Mark done; when the backend refuses the write, remember it and write it later."""
        try:
            self.mark_done(delivery)
        except Exception as exc:  # noqa: BLE001 (logged by outage.log_failure)
            outage.log_failure(
                log, exc, "could not mark delivery %s done; will retry the write", delivery
            )
            with self._mutex:
                self._unsaved_done.add(delivery)
        else:
            with self._mutex:
                self._unsaved_done.discard(delivery)

    def _reclaim(self) -> None:
        reclaim = getattr(self._kv, "reclaim", None)
        if reclaim is not None:
            with contextlib.suppress(Exception):
                reclaim()

    def flush(self) -> int:
        """Write what failed to be written earlier (``done`` marks, lock deletions). Returns what is
        left."""
        with self._mutex:
            done, locks, idle = (
                sorted(self._unsaved_done),
                dict(self._unreleased),
                sorted(self._unsaved_idle),
            )
        if done or locks:
            self._reclaim()
        for delivery in idle:
            with contextlib.suppress(Exception):
                self._update(delivery, running=None)
                with self._mutex:
                    self._unsaved_idle.discard(delivery)
        for delivery in done:
            with contextlib.suppress(Exception):
                self.mark_done(delivery)
                with self._mutex:
                    self._unsaved_done.discard(delivery)
        for key, token in locks.items():
            with contextlib.suppress(Exception):
                self._leases.release(key, self.owner, token)
                with self._mutex:
                    self._unreleased.pop(key, None)
        with self._mutex:
            return len(self._unsaved_done) + len(self._unreleased)

    def superseded(self, job: Job) -> bool:
        """Whether a newer delivery for ``job``'s pull request was accepted. One put off to a later
        time (``Job.not_before``: a dashboard redone) supersedes nothing before its time."""
        if job.requester:
            return False
        latest = self._kv.peek_data(f"latest:{job.pr_key}")
        if latest is EmptyData or _text(latest) == job.delivery:
            return False
        newer = self._record(_text(latest))
        return newer is None or float(newer.get("not_before") or 0.0) <= self.clock()

    @contextlib.contextmanager
    def pr_lock(self, pr_key: str) -> Iterator[Fence]:
        """Hold the lease on ``pr_key`` for the block (``leases``), renewed in the background while
        it runs; yields its ``Fence``. Raises ``PullRequestBusy`` while another worker's lease is
        live. Released on every path: when the release itself fails (a full disk), it is retried by
        ``flush()``, and this process's next job for the pull request takes its own stale lease over
        at once (its owner id is this process's, and no thread of it holds that token)."""
        token = self._leases.acquire(pr_key, self.owner, self.lease_ttl)
        if token is None:
            token = self._take_own_stale(pr_key)
        if token is None:
            raise PullRequestBusy(delay=1)
        fence = Fence(
            self._leases, pr_key, self.owner, token, self.lease_ttl, max_hold=self.max_hold
        )
        with self._mutex:
            self._held.add(token_key(pr_key, token))
        self._renewer.add(fence)
        try:
            yield fence
        finally:
            self._renewer.remove(fence)
            fence.close()
            with self._mutex:
                self._held.discard(token_key(pr_key, token))
            try:
                self._leases.release(pr_key, self.owner, token)
            except Exception as exc:
                log.warning(
                    "could not release the lease on %s; will retry",
                    pr_key,
                    exc_info=not outage.is_infrastructure(exc),
                )
                with self._mutex:
                    self._unreleased[pr_key] = token

    def _take_own_stale(self, pr_key: str) -> int | None:
        """A lease this process holds but none of its threads uses (its release failed): free it and
        take it."""
        holder = self._leases.holder(pr_key)
        if holder is None:
            return self._leases.acquire(pr_key, self.owner, self.lease_ttl)
        token, owner = holder
        with self._mutex:
            ours_unused = owner == self.owner and token_key(pr_key, token) not in self._held
        if not ours_unused:
            return None
        log.warning("taking over this process's own unreleased lease on %s", pr_key)
        self._leases.release(pr_key, self.owner, token)
        with self._mutex:
            self._unreleased.pop(pr_key, None)
        return self._leases.acquire(pr_key, self.owner, self.lease_ttl)

    def process(self, delivery: str) -> None:
        """Run one journalled job through the handler (what the huey task does)."""
        if self.flush():
            log.warning("the queue still refuses some writes")
        if self.is_done(delivery):
            return
        job = self.job(delivery)
        if job is None:
            return
        # one that opened a check run goes to the handler, which settles that run
        if self.superseded(job) and not job.check_run_sha:
            log.info("delivery %s superseded by a newer one for %s; dropped", delivery, job.pr_key)
            self._finish(delivery)
            return
        with self.pr_lock(job.pr_key) as fence:
            if self.is_done(delivery):  # redone by recovery while another worker finished it
                return
            if self._handler is None:
                raise RuntimeError("the worker has no handler")
            self._mark_running(delivery)
            with self._mutex:
                interrupted = delivery in self._interrupted
                if not interrupted:
                    self._fences[delivery] = fence
            if interrupted:  # the consumer stopped before the job began
                self._clear_running(delivery)
                return
            self._note_owner(delivery)
            reset = leases.CURRENT.set(fence)
            try:
                self._handler(job)
            finally:
                with self._mutex:
                    self._fences.pop(delivery, None)
                leases.CURRENT.reset(reset)
                self._clear_running(delivery)
            fence.check()  # a lost lease: the new holder finishes the job and marks it done
            self._finish(delivery)

    def _clear_running(self, delivery: str) -> None:
        """Journal that the job no longer runs; when the store refuses (a full disk, Redis down),
        remember it and clear it at the next ``flush()``, so that the next attempt does not count a
        crash."""
        try:
            self._update(delivery, running=None)
        except Exception:
            log.warning(
                "could not journal that delivery %s stopped; cleared later",
                delivery,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            with self._mutex:
                self._unsaved_idle.add(delivery)

    def _mark_running(self, delivery: str) -> None:
        """Journal that the job runs; a ``running`` mark left by an earlier attempt means that
        attempt's process died running it (kill -9, the OOM killer): counted in ``crashes``, so that
        a job that kills every process running it is concluded instead of retried forever
        (``Worker``)."""
        record = self._record(delivery) or {}
        crashes = int(record.get("crashes") or 0)
        with self._mutex:
            unsaved = delivery in self._unsaved_idle
        # this process lives
        if record.get("running") and not unsaved and record["running"] != self.owner:
            crashes += 1
            log.warning(
                "delivery %s: its last attempt (%s) died while running it; crash %d",
                delivery,
                record["running"],
                crashes,
            )
        try:
            self._update(delivery, crashes=crashes, running=self.owner)
        # (logged below) a full disk or the store down: run it anyway
        except Exception as exc:  # noqa: BLE001
            outage.log_failure(log, exc, "could not journal that delivery %s runs", delivery)

    def crashes(self, job: Job) -> int:
        """How many attempts at ``job`` died with their process (see ``_mark_running``)."""
        record = self._record(job.delivery) or {}
        return int(record.get("crashes") or 0)

    def _note_owner(self, delivery: str) -> None:
        """Journal which process runs the job; one that finds another's name there took a dead
        worker's job over."""
        record = self._record(delivery) or {}
        before = record.get("lease_owner")
        if before and before != self.owner:
            log.warning("taking over delivery %s from %s, whose lease expired", delivery, before)
            metrics.LEASE_TAKEOVERS.inc()
        with contextlib.suppress(Exception):  # a hint for the metrics only
            self._update(delivery, lease_owner=self.owner)

    def _on_interrupted(self, _signal: str, task: Task) -> None:
        """huey's consumer stops (SIGTERM) while the job runs, and the process exits: no crash. The
        job's lease is released, so that its thread writes nothing more (``LeaseLost``) and another
        worker recovers the job at once, and its ``running`` mark is cleared (``crashes`` counts
        only a process that died running it, as after SIGKILL, whose lease lapses instead)."""
        delivery = str(task.args[0]) if task.args else ""
        with self._mutex:
            self._interrupted.add(delivery)
            fence = self._fences.pop(delivery, None)
        if fence is None:  # not begun, or over: ``process`` saw to it
            return
        log.warning("delivery %s interrupted: the worker stops; it runs again", delivery)
        self._renewer.remove(fence)
        fence.close()
        self._clear_running(delivery)  # first: once released, the job may be another worker's
        try:
            self._leases.release(fence.key, self.owner, fence.token)
        # (logged) the lease lapses instead, as after a kill
        except Exception as exc:  # noqa: BLE001
            outage.log_failure(log, exc, "could not release the lease on %s", fence.key)

    def _run_task(self, delivery: str, task: Task | None = None) -> None:
        with self._mutex:
            duplicate = delivery in self._running
            self._running.add(delivery)
        if duplicate:
            log.info("delivery %s is already running in this process; duplicate dropped", delivery)
            return
        try:
            self.process(delivery)
            with self._mutex:
                self._outages.pop(delivery, None)
        except JobDeferred as exc:
            self._defer(delivery, exc)
        except LeaseLost as exc:
            log.warning("delivery %s: %s; the worker holding it now finishes it", delivery, exc)
        except RetryTask:
            raise
        except Exception as exc:
            if outage.is_infrastructure(exc):
                self._wait_out(delivery, exc)
            if task is not None and task.retries > 0:
                raise  # huey retries it
            log.exception("delivery %s failed after its retries; given up", delivery)
            self._give_up(delivery)
        finally:
            with self._mutex:
                self._running.discard(delivery)

    def _wait_out(self, delivery: str, exc: BaseException) -> None:
        """The store failed the job (Redis down or stalled): run it again after a back-off, as often
        as needed. Nothing is concluded or marked done; if even the retry cannot be scheduled, the
        journal keeps the job and ``recover()`` re-enqueues it once the store is back."""
        outage.REDIS.failed(exc)
        with self._mutex:
            attempt = self._outages[delivery] = self._outages.get(delivery, 0) + 1
        delay = outage.backoff(attempt)
        log.info(
            "delivery %s waits %.0f s for the queue's store (%s)",
            delivery,
            delay,
            type(exc).__name__,
        )
        raise JobDeferred(self.clock() + delay, f"the queue's store is unreachable: {exc}")

    def _defer(self, delivery: str, exc: JobDeferred) -> None:
        """Reschedule at ``exc.until`` (raises it again for huey), or give up when the job is too
        old."""
        record = self._record(delivery) or {}
        try:
            accepted = float(record.get("at", 0.0))
        except (TypeError, ValueError):
            accepted = 0.0
        if exc.until - accepted > self.max_age:
            log.error(
                "delivery %s deferred for more than %.0f s (%s); given up",
                delivery,
                self.max_age,
                exc.reason,
            )
            self._give_up(delivery)
            return
        # the journal is the sweep's hint; huey's schedule holds the task
        with contextlib.suppress(Exception):
            deferrals = int(record.get("job", {}).get("deferrals", 0)) + 1
            self._update(delivery, {"deferrals": deferrals}, deferred_until=exc.until)
        log.warning(
            "delivery %s deferred %.0f s until %s: %s",
            delivery,
            exc.until - self.clock(),
            datetime.fromtimestamp(exc.until, UTC).strftime("%H:%M:%S UTC"),
            exc.reason,
        )
        raise exc

    def recover(self, min_age: float = 0.0) -> int:
        """Re-enqueue journal jobs lost by a dead process (kill -9, a full disk). Returns how many.

        Skipped: jobs done, queued, scheduled (a retry or a deferral), running in this process,
        deferred to a later time, or whose pull request is locked by a live worker (it may be this
        very job): the sweep never duplicates a live job.
        """
        self.flush()
        queued = {t.args[0] for t in self.huey.pending() if t.args}
        scheduled = {t.args[0] for t in self.huey.scheduled() if t.args}
        with self._mutex:
            live = self._running | self._unsaved_done
        now = self.clock()
        self._prune(now)
        count = 0
        entries = self._done.open_jobs()
        left = done_marks.migrate(self._done, entries)
        self.legacy_done += len(entries) - len(left)
        for key, raw in left.items():
            delivery = key[4:]
            if delivery in queued or delivery in scheduled or delivery in live:
                continue
            try:
                record = json.loads(raw)
                at = float(record["at"])
                pr_key = job_of(record).pr_key
                deferred = float(record.get("deferred_until") or 0.0)
                started = bool(record.get("lease_owner"))
            except (ValueError, KeyError, TypeError):
                at, pr_key, deferred, started = 0.0, "", 0.0, False
            # ``min_age`` covers a job between its acceptance and its first run; one that started (a
            # worker journalled its name) and holds no live lease was lost by a dead worker
            if (
                (now - at < min_age and not started)
                or deferred > now
                or (pr_key and self._locked(pr_key))
            ):
                continue
            try:
                self._enqueue_first(delivery)
            except Exception as exc:
                if outage.is_infrastructure(exc):
                    raise
                log.exception(
                    "the queue refuses writes; interrupted jobs are re-enqueued by a later sweep"
                )
                self._reclaim()
                break
            count += 1
        if count:
            log.warning("re-enqueued %d interrupted job(s)", count)
        return count

    def _prune(self, now: float) -> None:
        """Forget expired done marks, every ``PRUNE_EVERY`` seconds (a full disk: next time)."""
        if now - self._pruned < PRUNE_EVERY:
            return
        self._pruned = now
        try:
            pruned = self._done.prune()
        except Exception as exc:
            if outage.is_infrastructure(exc):
                raise
            log.warning(
                "could not prune the done marks; trying again in %.0f s", PRUNE_EVERY, exc_info=True
            )
        else:
            if pruned:
                log.info(
                    "forgot %d done mark(s) older than %.0f days", pruned, self._done.ttl / 86400
                )

    def _enqueue_first(self, delivery: str) -> None:
        """Put an interrupted job at the front of the queue: its pull request has waited a lease's
        TTL already (``RPUSH`` where huey pops from the right on Redis; a higher priority on
        SQLite)."""
        message = self.huey.serialize_task(self._task.s(delivery))
        redis = self.redis()
        if redis is not None:
            redis.rpush(self._kv.queue_key, message)
        else:
            self._kv.enqueue(message, priority=1)

    def _locked(self, pr_key: str) -> bool:
        """Whether a live lease holds ``pr_key`` and a thread uses it (this process's unused one
        does not count)."""
        holder = self._leases.holder(pr_key)
        if holder is None:
            return False
        with self._mutex:
            return not (holder[1] == self.owner and token_key(pr_key, holder[0]) not in self._held)
