"""The durable job queue: huey (SQLite by default, Redis to scale out) plus a journal that survives kill -9.

huey's consumer deletes a task from the queue *before* running it, so a worker killed mid-run would
lose it. The journal closes that gap with huey's own key/value storage, the same on both backends:

- ``job:<delivery>``  the job, written atomically with ``put_if_empty`` (this is also the dedupe on
  ``X-GitHub-Delivery``); overwritten with ``done`` only after the job finished.
- ``latest:<pr>``     the newest delivery of a pull request; an older job finds it superseded.
- ``lock:<pr>``       who is reviewing the pull request (host, pid, time): no two workers review the
  same pull request at once. A lock whose process died, or older than ``lock_ttl``, is broken.

``recover()`` (worker start-up, then every minute) re-enqueues journal jobs that are neither done,
queued, scheduled (a retry or a deferral waiting for its time), running in this process, nor behind a
live lock: it never duplicates a live job. A duplicate that slips through anyway (between huey taking a
task and the job starting) finds the delivery running here and is dropped; across processes the lock
serialises it and it finds itself done.

Failing infrastructure (the disk fills, the backend refuses writes):

- a job whose handler raises ``JobDeferred`` (GitHub rate-limited it for longer than a request may wait)
  is rescheduled at that time, as often as needed, until ``max_age`` after it was accepted;
- a lock that cannot be deleted is treated as released by this process (its owner token is no longer
  held) and deleted later; a ``done`` that cannot be written is remembered and written later (at the
  next job and by the sweep), so a finished review is not redone;
- ``ready()`` writes, so ``/readyz`` fails when the backend refuses writes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
from huey import RedisHuey, SqliteHuey
from huey.api import Huey, Task
from huey.constants import EmptyData
from huey.exceptions import RetryTask
from huey.storage import SqliteStorage

from bot.app.events import Job

log = logging.getLogger(__name__)

DONE = b"done"
TASK_NAME = "registry_bot_process"
WAL_PAGES = 1000
WAL_LIMIT = 1024 * 1024
Handler = Callable[[Job], object]


class PullRequestBusy(RetryTask):
    """Another live worker reviews this pull request: retry shortly."""


class JobDeferred(RetryTask):
    """Run this job again at ``until`` (epoch seconds): what a handler raises when GitHub's rate limit
    resets later than it may wait. Not counted as a retry; bounded by the queue's ``max_age``."""

    def __init__(self, until: float, reason: str = "") -> None:
        super().__init__(reason or "deferred", eta=datetime.fromtimestamp(until, UTC))
        self.until = until
        self.reason = reason


class JournalSqliteStorage(SqliteStorage):
    """huey's SQLite storage in WAL mode with ``synchronous=NORMAL``, and a one-transaction ``accept``.

    Durability: in WAL mode a commit is complete once its frames are written to the WAL file, which
    the operating system holds even when the process is killed (kill -9, OOM, a crash): a restarted
    process, or any other one, sees every committed write. ``NORMAL`` only skips the fsync per commit,
    so a power cut or kernel crash may lose the last commits (never corrupt the file). ``FULL`` would
    add one fsync per delivery for that case.
    """

    def _create_connection(self) -> Any:
        conn = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        # The WAL is checkpointed every WAL_PAGES pages (about 4 MB) and then cut back to WAL_LIMIT: by
        # default SQLite keeps the file at its largest size for ever, which on a small disk fills it again
        # as soon as space is freed. (Checkpointing more often costs an fsync each time, on the web's path.)
        conn.execute(f"pragma wal_autocheckpoint={WAL_PAGES}")
        conn.execute(f"pragma journal_size_limit={WAL_LIMIT}")
        return conn

    def reclaim(self) -> None:
        """After a failed write (a full disk): checkpoint and truncate the WAL to give its space back."""
        with self.db() as curs:
            curs.execute("pragma wal_checkpoint(TRUNCATE)")

    def accept(self, key: str, record: bytes, latest: tuple[str, bytes] | None, message: bytes) -> bool:
        """Journal ``record`` under ``key`` unless present, set ``latest``, enqueue ``message``: one commit."""
        with self.db(commit=True) as curs:
            curs.execute("insert or ignore into kv (queue, key, value) values (?, ?, ?)", (self.name, key, record))
            if curs.rowcount != 1:
                return False
            if latest is not None:
                curs.execute("insert or replace into kv (queue, key, value) values (?, ?, ?)",
                             (self.name, *latest))
            curs.execute("insert into task (queue, data, priority) values (?, ?, 0)", (self.name, message))
        return True


class JournalSqliteHuey(SqliteHuey):
    storage_class = JournalSqliteStorage


def make_huey(url: str, name: str = "registry-bot") -> Huey:
    """``redis://...`` or ``rediss://...`` gives RedisHuey; anything else is a SQLite file path."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisHuey(name, url=url, results=False)
    path = url.removeprefix("sqlite:///").removeprefix("sqlite://")
    return JournalSqliteHuey(name, filename=path, results=False, timeout=10)


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class JobQueue:
    """Accepts jobs (web side) and runs them through a handler (worker side)."""

    def __init__(self, huey: Huey, lock_ttl: float = 900.0, retry_delay: float = 1.0,
                 sweep_age: float = 60.0, max_age: float = 24 * 3600.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.huey = huey
        self.lock_ttl = lock_ttl
        self.sweep_age = sweep_age
        self.max_age = max_age  # a job still deferred this long after it was accepted is given up
        self.clock = clock
        self._kv = huey.storage  # raw bytes in huey's key/value store (huey.put would pickle)
        self._handler: Handler | None = None
        self._mutex = threading.Lock()
        self._held: set[str] = set()  # tokens of the locks this process's threads hold right now
        self._running: set[str] = set()  # deliveries running in this process
        self._unreleased: dict[str, bytes] = {}  # lock key -> value whose delete failed
        self._unsaved_done: set[str] = set()  # finished deliveries whose ``done`` could not be written
        self._task = huey.task(name=TASK_NAME, retries=3, retry_delay=retry_delay, context=True)(self._run_task)

    @classmethod
    def from_url(cls, url: str, **options: Any) -> JobQueue:
        return cls(make_huey(url), **options)

    # -- web side ---------------------------------------------------------------------------------
    def accept(self, job: Job) -> bool:
        """Journal and enqueue ``job``. False when this delivery was already accepted (a redelivery).
        Raises when the backend refuses the write (the web answers 503)."""
        try:
            return self._accept(job)
        except Exception:
            self._reclaim()
            raise

    def _accept(self, job: Job) -> bool:
        key = f"job:{job.delivery}"
        record = orjson.dumps({"job": job, "at": self.clock()})  # orjson writes dataclasses
        # a recheck may be refused: it must not supersede a real push
        latest = None if job.requester else (f"latest:{job.pr_key}", job.delivery.encode())
        if isinstance(self._kv, JournalSqliteStorage):  # one transaction, one commit
            message = self.huey.serialize_task(self._task.s(job.delivery))
            return self._kv.accept(key, record, latest, message)
        # Redis: each step is one round trip; a crash between them is what recover() repairs
        if not self._kv.put_if_empty(key, record):
            return False
        if latest is not None:
            self._kv.put_data(*latest)
        self.huey.enqueue(self._task.s(job.delivery))
        return True

    def ready(self) -> bool:
        """Whether the backend accepts writes (for ``/readyz``): one small committed write, as ``accept`` does.

        A read is not enough: a full disk still answers reads while every delivery would get a 503.
        """
        try:
            self._kv.put_data("readyz", orjson.dumps({"owner": _owner(), "at": self.clock()}))
        except Exception:
            log.warning("the queue refuses writes", exc_info=True)
            self._reclaim()
            return False
        return True

    def pending(self) -> int:
        return int(self.huey.pending_count())

    def close(self) -> None:
        """Close the backend's connections (SQLite file, or the Redis connection pool)."""
        pool = getattr(self._kv, "pool", None)
        if pool is not None:
            pool.disconnect()
        else:
            self._kv.close()

    # -- worker side ------------------------------------------------------------------------------
    def set_handler(self, handler: Handler) -> None:
        self._handler = handler

    def job(self, delivery: str) -> Job | None:
        """The journalled job, or None when unknown or done."""
        record = self._record(delivery)
        return None if record is None else Job(**record["job"])

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

    def note_check_run(self, job: Job, head_sha: str, check_run_id: int) -> None:
        """Remember the check run a job starts, so a retry after a crash concludes that one.

        Called twice: with ``check_run_id`` 0 *before* the check run is created (the intent: a recovered
        job looks for its own run on ``head_sha`` by ``external_id`` and adopts it, even when the process
        died before it learned the id), then with the id. Raises when the journal refuses the write.
        """
        self._update(job.delivery, {"check_run_id": check_run_id, "check_run_sha": head_sha})

    def is_done(self, delivery: str) -> bool:
        return delivery in self._unsaved_done or bool(self._kv.peek_data(f"job:{delivery}") == DONE)

    def mark_done(self, delivery: str) -> None:
        self._kv.put_data(f"job:{delivery}", DONE)

    def _finish(self, delivery: str) -> None:
        """Mark done; when the backend refuses the write, remember it and write it later."""
        try:
            self.mark_done(delivery)
        except Exception:
            log.exception("could not mark delivery %s done; will retry the write", delivery)
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
        """Write what failed to be written earlier (``done`` marks, lock deletions). Returns what is left."""
        with self._mutex:
            done, locks = sorted(self._unsaved_done), dict(self._unreleased)
        if done or locks:
            self._reclaim()
        for delivery in done:
            with contextlib.suppress(Exception):
                self.mark_done(delivery)
                with self._mutex:
                    self._unsaved_done.discard(delivery)
        for key, value in locks.items():
            with contextlib.suppress(Exception):
                if self._kv.peek_data(key) == value:
                    self._kv.delete_data(key)
                with self._mutex:
                    self._unreleased.pop(key, None)
        with self._mutex:
            return len(self._unsaved_done) + len(self._unreleased)

    def superseded(self, job: Job) -> bool:
        if job.requester:
            return False
        latest = self._kv.peek_data(f"latest:{job.pr_key}")
        return latest is not EmptyData and _text(latest) != job.delivery

    @contextlib.contextmanager
    def pr_lock(self, pr_key: str) -> Iterator[None]:
        """Hold ``lock:<pr_key>`` for the block. Released on every path: when the delete itself fails (a
        full disk), this process stops holding it at once (its token leaves ``_held``, so its own next job
        breaks it) and the delete is retried by ``flush()``."""
        key = f"lock:{pr_key}"
        token = uuid.uuid4().hex
        value = json.dumps({"owner": _owner(), "at": time.time(), "token": token}).encode()
        if not self._kv.put_if_empty(key, value):
            held = self._kv.peek_data(key)
            if held is EmptyData or not self._stale(held):
                raise PullRequestBusy(delay=1)
            log.warning("breaking a stale lock on %s held by %s", pr_key, _text(held))
            if self._kv.peek_data(key) == held:
                self._kv.delete_data(key)
            if not self._kv.put_if_empty(key, value):
                raise PullRequestBusy(delay=1)
        with self._mutex:
            self._held.add(token)
        try:
            yield
        finally:
            with self._mutex:
                self._held.discard(token)
            try:
                if self._kv.peek_data(key) == value:
                    self._kv.delete_data(key)
            except Exception:
                log.exception("could not release the lock on %s; will retry the delete", pr_key)
                with self._mutex:
                    self._unreleased[key] = value

    def _stale(self, held: Any) -> bool:
        try:
            info = json.loads(held)
            host, _, pid = str(info["owner"]).rpartition(":")
            age = time.time() - float(info["at"])
        except (ValueError, KeyError, TypeError):
            return True
        if age > self.lock_ttl:
            return True
        if host == socket.gethostname() and int(pid) == os.getpid():
            with self._mutex:  # ours: live only while one of our threads holds it
                return info.get("token") not in self._held
        if host == socket.gethostname():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
        return False

    def process(self, delivery: str) -> None:
        """Run one journalled job through the handler (what the huey task does)."""
        if self.flush():
            log.warning("the queue still refuses some writes")
        if self.is_done(delivery):
            return
        job = self.job(delivery)
        if job is None:
            return
        if self.superseded(job):
            log.info("delivery %s superseded by a newer one for %s; dropped", delivery, job.pr_key)
            self._finish(delivery)
            return
        with self.pr_lock(job.pr_key):
            if self.is_done(delivery):  # redone by recovery while another worker finished it
                return
            if self._handler is None:
                raise RuntimeError("the worker has no handler")
            self._mark_running(delivery)
            try:
                self._handler(job)
            finally:
                with contextlib.suppress(Exception):  # a full disk: the job counts one crash too many at worst
                    self._update(delivery, running=None)
            self._finish(delivery)

    def _mark_running(self, delivery: str) -> None:
        """Journal that the job runs; a ``running`` mark left by an earlier attempt means that attempt's
        process died running it (kill -9, the OOM killer): counted in ``crashes``, so that a job that kills
        every process running it is concluded instead of retried forever (``Worker``)."""
        record = self._record(delivery) or {}
        crashes = int(record.get("crashes") or 0)
        if record.get("running"):
            crashes += 1
            log.warning("delivery %s: its last attempt (%s) died while running it; crash %d",
                        delivery, record["running"], crashes)
        try:
            self._update(delivery, crashes=crashes, running=_owner())
        except Exception:  # a full disk: run it anyway, unmarked
            log.exception("could not journal that delivery %s runs", delivery)

    def crashes(self, job: Job) -> int:
        """How many attempts at ``job`` died with their process (see ``_mark_running``)."""
        record = self._record(job.delivery) or {}
        return int(record.get("crashes") or 0)

    def _run_task(self, delivery: str, task: Task | None = None) -> None:
        with self._mutex:
            duplicate = delivery in self._running
            self._running.add(delivery)
        if duplicate:
            log.info("delivery %s is already running in this process; duplicate dropped", delivery)
            return
        try:
            self.process(delivery)
        except JobDeferred as exc:
            self._defer(delivery, exc)
        except RetryTask:
            raise
        except Exception:
            if task is not None and task.retries > 0:
                raise  # huey retries it
            log.exception("delivery %s failed after its retries; given up", delivery)
            self._finish(delivery)
        finally:
            with self._mutex:
                self._running.discard(delivery)

    def _defer(self, delivery: str, exc: JobDeferred) -> None:
        """Reschedule at ``exc.until`` (raises it again for huey), or give up when the job is too old."""
        record = self._record(delivery) or {}
        try:
            accepted = float(record.get("at", 0.0))
        except (TypeError, ValueError):
            accepted = 0.0
        if exc.until - accepted > self.max_age:
            log.error("delivery %s deferred for more than %.0f s (%s); given up", delivery, self.max_age, exc.reason)
            self._finish(delivery)
            return
        with contextlib.suppress(Exception):  # the journal is the sweep's hint; huey's schedule holds the task
            deferrals = int(record.get("job", {}).get("deferrals", 0)) + 1
            self._update(delivery, {"deferrals": deferrals}, deferred_until=exc.until)
        log.warning("delivery %s deferred %.0f s until %s: %s", delivery, exc.until - self.clock(),
                    datetime.fromtimestamp(exc.until, UTC).strftime("%H:%M:%S UTC"), exc.reason)
        raise exc

    def recover(self, min_age: float = 0.0) -> int:
        """Re-enqueue journal jobs lost by a dead process (kill -9, a full disk). Returns how many.

        Skipped: jobs done, queued, scheduled (a retry or a deferral), running in this process, deferred to
        a later time, or whose pull request is locked by a live worker (it may be this very job): the sweep
        never duplicates a live job.
        """
        self.flush()
        queued = {t.args[0] for t in self.huey.pending() if t.args}
        scheduled = {t.args[0] for t in self.huey.scheduled() if t.args}
        with self._mutex:
            live = self._running | self._unsaved_done
        now = self.clock()
        count = 0
        for key, raw in self._kv.result_items().items():
            if not key.startswith("job:") or raw == DONE:
                continue
            delivery = key[4:]
            if delivery in queued or delivery in scheduled or delivery in live:
                continue
            try:
                record = json.loads(raw)
                at = float(record["at"])
                pr_key = Job(**record["job"]).pr_key
                deferred = float(record.get("deferred_until") or 0.0)
            except (ValueError, KeyError, TypeError):
                at, pr_key, deferred = 0.0, "", 0.0
            if now - at < min_age or deferred > now or (pr_key and self._locked(pr_key)):
                continue
            try:
                self.huey.enqueue(self._task.s(delivery))
            except Exception:
                log.exception("the queue refuses writes; interrupted jobs are re-enqueued by a later sweep")
                self._reclaim()
                break
            count += 1
        if count:
            log.warning("re-enqueued %d interrupted job(s)", count)
        return count

    def _locked(self, pr_key: str) -> bool:
        held = self._kv.peek_data(f"lock:{pr_key}")
        return held is not EmptyData and not self._stale(held)
