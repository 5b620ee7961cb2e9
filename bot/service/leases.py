"""Per-pull-request leases with fencing tokens: who reviews a pull request, judged by time, not by
host or PID.

More in docs/module-notes.md (bot/service/leases.py).
"""

from __future__ import annotations

import contextvars
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.service import outage

log = logging.getLogger(__name__)

DEFAULT_TTL = 30.0  # seconds; renewed every TTL/3 while the job runs


class LeaseLost(Exception):
    """This worker no longer holds the pull request's lease: another one took over. Write
    nothing."""


class LeaseStore(Protocol):
    def acquire(self, key: str, owner: str, ttl: float) -> int | None:
        """The new fencing token, or None when a live lease is held (by anyone)."""
        ...

    def renew(self, key: str, owner: str, token: int, ttl: float) -> bool:
        """Extend the lease to ``ttl`` from now unless another acquisition came after ``(token,
        owner)``.

        A lease that lapsed while nobody took it (its renewals could not be written: a full disk, a
        stalled store) is ours again: the fencing counter still stands at ``token``. So is one whose
        store lost its data (Redis restarted without it, a failover to a replica that lagged): no
        lease, and the counter gone or behind ``token``; it is set back to ``token``. Only a newer
        token, or a live lease of another, is a takeover, so False means exactly that."""
        ...

    def release(self, key: str, owner: str, token: int) -> bool: ...

    def holder(self, key: str) -> tuple[int, str] | None:
        """The live lease's ``(token, owner)``, or None."""
        ...


_ACQUIRE = """
if redis.call('exists', KEYS[1]) == 1 then return 0 end
local token = redis.call('incr', KEYS[2])
redis.call('set', KEYS[1], token .. ' ' .. ARGV[1], 'PX', ARGV[2])
return token
"""
_RENEW = """
local held = redis.call('get', KEYS[1])
if held == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if held ~= false then return 0 end
local fence = tonumber(redis.call('get', KEYS[2]) or '0')
if fence > tonumber(ARGV[3]) then return 0 end
if fence < tonumber(ARGV[3]) then redis.call('set', KEYS[2], ARGV[3]) end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class RedisLeases:
    """Leases as Redis keys with a TTL (``PX``); the fencing counter lives beside them, never
    expires."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def _keys(self, key: str) -> list[str]:
        return [f"{self._prefix}:{key}", f"{self._prefix}:fence:{key}"]

    def acquire(self, key: str, owner: str, ttl: float) -> int | None:
        token = int(self._acquire(keys=self._keys(key), args=[owner, int(ttl * 1000)]))
        return token or None

    def renew(self, key: str, owner: str, token: int, ttl: float) -> bool:
        return bool(
            self._renew(
                keys=self._keys(key), args=[f"{token} {owner}", int(ttl * 1000), str(token)]
            )
        )

    def release(self, key: str, owner: str, token: int) -> bool:
        return bool(self._release(keys=self._keys(key)[:1], args=[f"{token} {owner}"]))

    def holder(self, key: str) -> tuple[int, str] | None:
        raw = self._redis.get(self._keys(key)[0])
        if raw is None:
            return None
        token, _, owner = (raw.decode() if isinstance(raw, bytes) else str(raw)).partition(" ")
        return int(token), owner


class SqliteLeases:
    """Leases as rows of huey's ``kv`` table (``lease:<key>`` and ``fence:<key>``), each operation
    one exclusive transaction; expiry by ``clock`` (the queue's host)."""

    def __init__(self, storage: Any, clock: Callable[[], float] = time.time) -> None:
        self._storage = storage
        self._clock = clock

    def _get(self, curs: Any, key: str) -> bytes | None:
        curs.execute("select value from kv where queue = ? and key = ?", (self._storage.name, key))
        row = curs.fetchone()
        return None if row is None else bytes(row[0])

    def _put(self, curs: Any, key: str, value: bytes) -> None:
        curs.execute(
            "insert or replace into kv (queue, key, value) values (?, ?, ?)",
            (self._storage.name, key, value),
        )

    def _stored(self, curs: Any, key: str) -> dict[str, Any] | None:
        """The lease row of ``key``, live or expired (Redis drops an expired one itself; SQLite
        keeps it)."""
        raw = self._get(curs, f"lease:{key}")
        if raw is None:
            return None
        try:
            lease: dict[str, Any] = json.loads(raw)
            float(lease["expires"])
            return lease
        except (ValueError, KeyError, TypeError):
            return None

    def _live(self, curs: Any, key: str) -> dict[str, Any] | None:
        lease = self._stored(curs, key)
        return lease if lease is not None and float(lease["expires"]) > self._clock() else None

    def acquire(self, key: str, owner: str, ttl: float) -> int | None:
        with self._storage.db(commit=True) as curs:
            if self._live(curs, key) is not None:
                return None
            token = int(self._get(curs, f"fence:{key}") or 0) + 1
            self._put(curs, f"fence:{key}", str(token).encode())
            self._put(
                curs,
                f"lease:{key}",
                json.dumps(
                    {"token": token, "owner": owner, "expires": self._clock() + ttl}
                ).encode(),
            )
            return token

    def renew(self, key: str, owner: str, token: int, ttl: float) -> bool:
        with self._storage.db(commit=True) as curs:
            fence = int(self._get(curs, f"fence:{key}") or 0)
            if fence > token:
                return False  # acquired again since: a takeover
            lease = self._live(curs, key)
            if lease is not None and (lease["token"], lease["owner"]) != (token, owner):
                return False
            if fence < token:  # the counter was lost (a file restored from a backup): set it back
                self._put(curs, f"fence:{key}", str(token).encode())
            self._put(
                curs,
                f"lease:{key}",
                json.dumps(
                    {"token": token, "owner": owner, "expires": self._clock() + ttl}
                ).encode(),
            )
            return True

    def release(self, key: str, owner: str, token: int) -> bool:
        """Delete our lease, also once it has expired (a release retried after a full disk came
        later than its TTL: as on Redis, no row of it may stay behind). True when it was still
        live."""
        with self._storage.db(commit=True) as curs:
            lease = self._stored(curs, key)
            if lease is None or (lease["token"], lease["owner"]) != (token, owner):
                return False
            curs.execute(
                "delete from kv where queue = ? and key = ?", (self._storage.name, f"lease:{key}")
            )
            return float(lease["expires"]) > self._clock()

    def holder(self, key: str) -> tuple[int, str] | None:
        with self._storage.db() as curs:
            lease = self._live(curs, key)
        return None if lease is None else (int(lease["token"]), str(lease["owner"]))


@dataclass
class Fence:
    """A held lease: ``check()`` before each write raises ``LeaseLost`` unless it is still ours."""

    store: LeaseStore
    key: str
    owner: str
    token: int
    ttl: float
    lost: bool = False
    closed: bool = False
    renewed: float = field(default_factory=time.monotonic)
    # seconds after which the lease is no longer renewed: a job still in it is taken as hung, and
    # the pull request is free again once the lease lapses (its writes then raise ``LeaseLost``)
    max_hold: float = float("inf")
    taken: float = field(default_factory=time.monotonic)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def check(self) -> None:
        """Raise ``LeaseLost`` unless this lease still holds, renewing it first when a third of its
        TTL has passed (so the write that follows starts with at least two thirds of a TTL in hand).

        When the store refuses the renewal (a full disk under SQLite) the lease may lapse, but
        nobody can take it either (taking it is a write): the job goes on while no other worker
        holds it."""
        refused = False
        if not self.lost and time.monotonic() - self.renewed > self.ttl / 3:
            try:
                self.renew()
            except Exception as exc:
                log.warning(
                    "could not renew the lease on %s; going on while no one else holds it",
                    self.key,
                    exc_info=not outage.is_infrastructure(exc),
                )
                refused = True
        holder = self.store.holder(self.key)
        if self.lost or not (holder == (self.token, self.owner) or (holder is None and refused)):
            self.lost = True
            raise LeaseLost(f"the lease on {self.key} (token {self.token}) is no longer ours")

    def renew(self) -> bool:
        """Extend the lease; False (and ``lost``) only when a newer token was written or the lease
        was held past ``max_hold``: a renewal that could not be written raises instead, and leaves
        the lease ours to renew again."""
        with self._guard:
            if self.lost or self.closed:
                return False
            if time.monotonic() - self.taken > self.max_hold:
                self.lost = True
                log.error(
                    "the job has held the lease on %s for over %.0f s: taken as hung, the lease is "
                    "not renewed and lapses; its writes are refused from now on",
                    self.key,
                    self.max_hold,
                )
                return False
            if self.store.renew(self.key, self.owner, self.token, self.ttl):
                self.renewed = time.monotonic()
                return True
            self.lost = True
        log.warning(
            "lost the lease on %s (token %d): another worker took it over", self.key, self.token
        )
        return False

    def close(self) -> None:
        """No renewal from now on (the job is over and releases the lease): a renewal racing the
        release would otherwise write the released lease back."""
        with self._guard:
            self.closed = True


CURRENT: contextvars.ContextVar[Fence | None] = contextvars.ContextVar(
    "registry_bot_fence", default=None
)


def current() -> Fence | None:
    """The fence of the job running in this thread (set by the queue around the handler)."""
    return CURRENT.get()


class Renewer:
    """One daemon thread renewing every held lease each third of its TTL (started on first use)."""

    def __init__(self) -> None:
        self._held: dict[int, Fence] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def add(self, fence: Fence) -> None:
        with self._lock:
            self._held[id(fence)] = fence
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._run, name="lease-renewer", daemon=True)
                self._thread.start()
        self._wake.set()

    def remove(self, fence: Fence) -> None:
        with self._lock:
            self._held.pop(id(fence), None)

    def stop(self) -> None:
        """End the thread (its queue is closed): leases still held are no longer renewed."""
        with self._lock:
            self._stopped = True
            thread = self._thread
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._lock:
                fences = list(self._held.values())
            pause = min((f.ttl / 3 for f in fences), default=10.0)
            self._wake.wait(pause)
            self._wake.clear()
            with self._lock:
                if self._stopped:
                    return
            for fence in fences:
                with self._lock:
                    held = id(fence) in self._held  # released while this thread waited: not renewed
                if held and time.monotonic() - fence.renewed >= fence.ttl / 3 - 0.05:
                    try:
                        fence.renew()
                    except Exception as exc:
                        if outage.is_infrastructure(exc):  # logged once for the whole outage
                            outage.REDIS.failed(exc)
                        else:
                            log.exception(
                                "could not renew the lease on %s; trying again", fence.key
                            )
