"""The durable job queue: huey (SQLite by default, Redis to scale out) plus a journal that survives kill -9.

huey's consumer deletes a task from the queue *before* running it, so a worker killed mid-run would
lose it. The journal closes that gap with huey's own key/value storage, the same on both backends:

- ``job:<delivery>``  the job, written atomically with ``put_if_empty`` (this is also the dedupe on
  ``X-GitHub-Delivery``); overwritten with ``done`` only after the job finished.
- ``latest:<pr>``     the newest delivery of a pull request; an older job finds it superseded.
- ``lock:<pr>``       who is reviewing the pull request (host, pid, time): no two workers review the
  same pull request at once. A lock whose process died, or older than ``lock_ttl``, is broken.

``recover()`` (worker start-up, then every minute) re-enqueues journal jobs that are neither done
nor queued. A job redone by mistake is harmless: the lock serialises it and it finds itself done.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
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
Handler = Callable[[Job], object]


class PullRequestBusy(RetryTask):
    """Another live worker reviews this pull request: retry shortly."""


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
        return conn

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
                 sweep_age: float = 60.0) -> None:
        self.huey = huey
        self.lock_ttl = lock_ttl
        self.sweep_age = sweep_age
        self._kv = huey.storage  # raw bytes in huey's key/value store (huey.put would pickle)
        self._handler: Handler | None = None
        self._task = huey.task(name=TASK_NAME, retries=3, retry_delay=retry_delay, context=True)(self._run_task)

    @classmethod
    def from_url(cls, url: str, **options: Any) -> JobQueue:
        return cls(make_huey(url), **options)

    # -- web side ---------------------------------------------------------------------------------
    def accept(self, job: Job) -> bool:
        """Journal and enqueue ``job``. False when this delivery was already accepted (a redelivery)."""
        key = f"job:{job.delivery}"
        record = orjson.dumps({"job": job, "at": time.time()})  # orjson writes dataclasses
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
        """Whether the backend answers (for ``/readyz``)."""
        try:
            self._kv.peek_data("readyz")
        except Exception:
            log.warning("queue backend not reachable", exc_info=True)
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
        raw = self._kv.peek_data(f"job:{delivery}")
        if raw is EmptyData or raw == DONE:
            return None
        return Job(**json.loads(raw)["job"])

    def note_check_run(self, job: Job, head_sha: str, check_run_id: int) -> None:
        """Remember the check run a job started, so a retry after a crash concludes that one."""
        key = f"job:{job.delivery}"
        raw = self._kv.peek_data(key)
        if raw is EmptyData or raw == DONE:
            return
        record = json.loads(raw)
        record["job"].update(check_run_id=check_run_id, check_run_sha=head_sha)
        self._kv.put_data(key, json.dumps(record).encode())

    def is_done(self, delivery: str) -> bool:
        return bool(self._kv.peek_data(f"job:{delivery}") == DONE)

    def mark_done(self, delivery: str) -> None:
        self._kv.put_data(f"job:{delivery}", DONE)

    def superseded(self, job: Job) -> bool:
        if job.requester:
            return False
        latest = self._kv.peek_data(f"latest:{job.pr_key}")
        return latest is not EmptyData and _text(latest) != job.delivery

    @contextlib.contextmanager
    def pr_lock(self, pr_key: str) -> Iterator[None]:
        key = f"lock:{pr_key}"
        value = json.dumps({"owner": _owner(), "at": time.time()})
        if not self._kv.put_if_empty(key, value.encode()):
            held = self._kv.peek_data(key)
            if held is EmptyData or not self._stale(held):
                raise PullRequestBusy(delay=1)
            log.warning("breaking a stale lock on %s held by %s", pr_key, _text(held))
            if self._kv.peek_data(key) == held:
                self._kv.delete_data(key)
            if not self._kv.put_if_empty(key, value.encode()):
                raise PullRequestBusy(delay=1)
        try:
            yield
        finally:
            self._kv.delete_data(key)

    def _stale(self, held: Any) -> bool:
        try:
            info = json.loads(held)
            host, _, pid = str(info["owner"]).rpartition(":")
            age = time.time() - float(info["at"])
        except (ValueError, KeyError, TypeError):
            return True
        if age > self.lock_ttl:
            return True
        if host == socket.gethostname() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
        return False

    def process(self, delivery: str) -> None:
        """Run one journalled job through the handler (what the huey task does)."""
        job = self.job(delivery)
        if job is None:
            return
        if self.superseded(job):
            log.info("delivery %s superseded by a newer one for %s; dropped", delivery, job.pr_key)
            self.mark_done(delivery)
            return
        with self.pr_lock(job.pr_key):
            if self.is_done(delivery):  # redone by recovery while another worker finished it
                return
            if self._handler is None:
                raise RuntimeError("the worker has no handler")
            self._handler(job)
            self.mark_done(delivery)

    def _run_task(self, delivery: str, task: Task | None = None) -> None:
        try:
            self.process(delivery)
        except RetryTask:
            raise
        except Exception:
            if task is not None and task.retries > 0:
                raise  # huey retries it
            log.exception("delivery %s failed after its retries; given up", delivery)
            self.mark_done(delivery)

    def recover(self, min_age: float = 0.0) -> int:
        """Re-enqueue journal jobs that are neither done nor queued (after kill -9). Returns how many."""
        queued = {t.args[0] for t in self.huey.pending() if t.args}
        now = time.time()
        count = 0
        for key, raw in self._kv.result_items().items():
            if not key.startswith("job:") or raw == DONE:
                continue
            delivery = key[4:]
            try:
                at = float(json.loads(raw)["at"])
            except (ValueError, KeyError, TypeError):
                at = 0.0
            if delivery in queued or now - at < min_age:
                continue
            self.huey.enqueue(self._task.s(delivery))
            count += 1
        if count:
            log.warning("re-enqueued %d interrupted job(s)", count)
        return count
