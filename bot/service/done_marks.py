"""Finished deliveries: remembered for ``DONE_TTL`` (a redelivery is still refused), then forgotten.

The journal (``job:<delivery>`` in huey's key/value store) holds only the jobs not done yet, so that
the sweep (``JobQueue.recover``) reads what is open, not the whole history. Finishing a job replaces
its entry with a done mark, and drops the pull request's ``latest:<pr>`` entry when it names that
delivery:

- Redis: a key ``<prefix>:<delivery>`` with an expiry (Redis forgets it by itself); one Lua script
  does the move, another accepts a delivery only when it is neither journalled nor done;
- SQLite: a ``done:<delivery>`` row of huey's ``kv`` table holding the time it was written, deleted
  by ``prune()`` once older than the TTL.

An entry ``job:<delivery> = done`` (how a finished job was kept before) still counts as done, and
``migrate`` moves it to a mark.

A delivery the web accepted also leaves a mark of its body (``body:<sha256>``, kept as long as a
done mark): a body already accepted under another ``X-GitHub-Delivery`` is refused, in the same step
as the delivery's own check (a signed body replayed under fresh delivery ids was a new job each
time; GitHub's own redelivery of an event keeps its delivery id, and two events have the same body
only when nothing changed between them). A re-request's body is refused only within
``REREQUEST_WINDOW``: a second Re-run of a run whose first one made no new run is the same body
(docs/app.md, "Replayed deliveries").
"""

from __future__ import annotations

import time
from typing import Any, Protocol

DONE_TTL = 7 * 24 * 3600.0  # longer than GitHub keeps a delivery for redelivery (3 days)
# how long the body of a re-request (``check_run`` rerequested or requested_action, ``check_suite``
# rerequested) is refused under another delivery id: GitHub does not update the run (or suite) a
# Re-run re-requests, so a later Re-run of it may send the very same body
REREQUEST_WINDOW = 300.0
LEGACY_DONE = b"done"

_MARK = """
redis.call('set', KEYS[2], ARGV[4], 'EX', ARGV[5])
redis.call('hdel', KEYS[1], ARGV[1])
if ARGV[2] ~= '' and redis.call('hget', KEYS[1], ARGV[2]) == ARGV[3] then redis.call('hdel', KEYS[1], ARGV[2]) end
return 1
"""  # noqa: E501
_ACCEPT = """
if redis.call('exists', KEYS[2]) == 1 then return 0 end
if KEYS[3] and redis.call('exists', KEYS[3]) == 1 then return 0 end
local added = redis.call('hsetnx', KEYS[1], ARGV[1], ARGV[2])
if added == 1 and KEYS[3] then redis.call('set', KEYS[3], ARGV[3], 'EX', ARGV[4]) end
return added
"""


class DoneMarks(Protocol):
    ttl: float

    def is_done(self, delivery: str) -> bool: ...

    def mark(self, delivery: str, pr_key: str = "") -> None:
        """Replace the job's journal entry with a done mark (and ``latest:<pr_key>`` if it names
        it)."""
        ...

    def open_jobs(self) -> dict[str, bytes]:
        """``job:<delivery>`` -> entry of every journalled job (done marks are not read)."""
        ...

    def prune(self) -> int:
        """Forget the marks older than the TTL; how many."""
        ...


class RedisDoneMarks:
    """Done marks as expiring Redis keys beside huey's result hash (see the module docstring)."""

    def __init__(
        self, storage: Any, prefix: str, ttl: float = DONE_TTL, clock: Any = time.time
    ) -> None:
        self._storage = storage
        self._hash = storage.result_key
        self._prefix = prefix
        self.ttl = ttl
        self._clock = clock
        self._mark = storage.conn.register_script(_MARK)
        self._accept = storage.conn.register_script(_ACCEPT)

    def key(self, delivery: str) -> str:
        return f"{self._prefix}:{delivery}"

    def body_key(self, digest: str) -> str:
        return f"{self._prefix}-body:{digest}"

    def is_done(self, delivery: str) -> bool:
        return (
            bool(self._storage.conn.exists(self.key(delivery)))
            or self._storage.conn.hget(self._hash, f"job:{delivery}") == LEGACY_DONE
        )

    def mark(self, delivery: str, pr_key: str = "") -> None:
        self._mark(
            keys=[self._hash, self.key(delivery)],
            args=[
                f"job:{delivery}",
                f"latest:{pr_key}" if pr_key else "",
                delivery,
                f"{self._clock():.0f}",
                int(self.ttl),
            ],
        )

    def accept(
        self, delivery: str, record: bytes, body: str = "", body_ttl: float | None = None
    ) -> bool:
        """Journal ``record`` unless the delivery is journalled or done, or its ``body`` (a digest)
        was accepted under another delivery within ``body_ttl`` (default: the TTL); one atomic
        step, one round trip."""
        keys = [self._hash, self.key(delivery)] + ([self.body_key(body)] if body else [])
        kept = int(self.ttl if body_ttl is None else body_ttl)
        return bool(self._accept(keys=keys, args=[f"job:{delivery}", record, delivery, kept]))

    def open_jobs(self) -> dict[str, bytes]:
        items = self._storage.conn.hgetall(self._hash)
        return {k.decode(): v for k, v in items.items() if k.startswith(b"job:")}

    def prune(self) -> int:
        return 0  # Redis expires the marks itself


class SqliteDoneMarks:
    """Done marks as ``done:<delivery>`` rows of huey's ``kv`` table, pruned by time."""

    def __init__(self, storage: Any, ttl: float = DONE_TTL, clock: Any = time.time) -> None:
        self._storage = storage
        self.ttl = ttl
        self._clock = clock

    def is_done(self, delivery: str) -> bool:
        with self._storage.db() as curs:
            curs.execute(
                "select key, value from kv where queue = ? and key in (?, ?)",
                (self._storage.name, f"done:{delivery}", f"job:{delivery}"),
            )
            return any(k.startswith("done:") or bytes(v) == LEGACY_DONE for k, v in curs.fetchall())

    def mark(self, delivery: str, pr_key: str = "") -> None:
        name = self._storage.name
        with self._storage.db(commit=True) as curs:
            curs.execute(
                "insert or replace into kv (queue, key, value) values (?, ?, ?)",
                (name, f"done:{delivery}", f"{self._clock():.0f}".encode()),
            )
            curs.execute("delete from kv where queue = ? and key = ?", (name, f"job:{delivery}"))
            if pr_key:
                curs.execute(
                    "delete from kv where queue = ? and key = ? and value = ?",
                    (name, f"latest:{pr_key}", delivery.encode()),
                )

    def open_jobs(self) -> dict[str, bytes]:
        # a range of the primary key (queue, key): only the open jobs are read
        with self._storage.db() as curs:
            curs.execute(
                "select key, value from kv where queue = ? and key >= 'job:' and key < 'job;'",
                (self._storage.name,),
            )
            return {k: bytes(v) for k, v in curs.fetchall()}

    def prune(self) -> int:
        """Forget the done marks, and the marks of accepted bodies, older than the TTL."""
        cutoff = self._clock() - self.ttl
        pruned = 0
        with self._storage.db(commit=True) as curs:
            for low, high in (("done:", "done;"), ("body:", "body;")):
                curs.execute(
                    "delete from kv where queue = ? and key >= ? and key < ? "
                    "and cast(value as real) < ?",
                    (self._storage.name, low, high, cutoff),
                )
                pruned += int(curs.rowcount) if low == "done:" else 0
        return pruned


def migrate(marks: DoneMarks, entries: dict[str, bytes]) -> dict[str, bytes]:
    """Move the legacy ``job:<delivery> = done`` entries among ``entries`` to marks; the open ones
    remain."""
    left = {}
    for key, raw in entries.items():
        if raw == LEGACY_DONE:
            marks.mark(key.removeprefix("job:"))
        else:
            left[key] = raw
    return left
