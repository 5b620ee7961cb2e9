"""The version of the queue's state in Redis: a worker never runs beside workers of an incompatible
one.

More in docs/module-notes.md (bot/service/queue_schema.py).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
READS_FROM = 1  # the oldest stored version this release can take over
WORKER_TTL = 60.0  # seconds a worker's registration lives unless its sweep renews it
OLD_LOCK_TTL = 900.0  # the lock_ttl of the releases that held lock: fields


class Incompatible(Exception):
    """This worker must not run on this queue now; the message says why and what to do."""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class Registry:
    """The schema key and the live workers' registrations of one queue on Redis."""

    def __init__(
        self, redis: Any, queue_name: str, owner: str, version: int = SCHEMA_VERSION
    ) -> None:
        self._redis = redis
        self._prefix = f"registry-bot:{queue_name}"
        self._queue = queue_name  # huey's (cleaned) name: its key/value hash is huey.results.<name>
        self.owner = owner
        self.version = version

    def live_workers(self) -> dict[str, int]:
        """owner -> schema version of every registered worker (this one included once
        registered)."""
        found: dict[str, int] = {}
        for key in self._redis.scan_iter(f"{self._prefix}:workers:*", count=500):
            raw = self._redis.get(key)
            if raw is not None:
                found[_text(key).split(":workers:", 1)[1]] = int(_text(raw))
        return found

    def unregistered_lease_holders(self, registered: set[str]) -> set[str]:
        """Owners of live leases that never registered: workers of a release from before
        versions, whether they hold ``lease:`` keys or, older still, ``lock:`` fields."""
        owners = set()
        for key in self._redis.scan_iter(f"{self._prefix}:lease:*", count=500):
            if ":fence:" in _text(key):
                continue
            raw = self._redis.get(key)
            if raw is not None:
                owners.add(_text(raw).partition(" ")[2])
        return (owners | self._lock_holders()) - registered - {self.owner}

    def _lock_holders(self) -> set[str]:
        """Holders of the ``lock:<repo>#<number>`` fields that releases before leases (44bc861 and
        earlier) kept in huey's key/value hash, ``{"owner", "at", "token"}``; a lock older than
        those releases' ``lock_ttl`` is one they would break themselves (its worker died)."""
        owners = set()
        hashed = self._redis.hscan_iter(f"huey.results.{self._queue}", match="lock:*", count=500)
        for _, raw in hashed:
            try:
                held = json.loads(raw)
                owner, age = str(held["owner"]), time.time() - float(held["at"])
            except (ValueError, KeyError, TypeError):
                continue  # not such a lock: those releases broke it too
            if age <= OLD_LOCK_TTL:
                owners.add(owner)
        return owners

    def join(self) -> None:
        """Check that this worker may run here, then store the version and register; raises
        ``Incompatible``."""
        stored = self._redis.get(f"{self._prefix}:schema")
        stored_version = int(_text(stored)) if stored is not None else 1
        if stored_version > self.version:
            raise Incompatible(
                f"the queue holds schema version {stored_version}, newer than this worker's "
                f"{self.version}: run the newer release (a downgrade cannot read its state)"
            )
        if stored_version < READS_FROM:
            raise Incompatible(
                f"the queue holds schema version {stored_version}; this release reads {READS_FROM} "
                "and later: upgrade through the release in between"
            )
        workers = self.live_workers()
        others = {
            owner: v for owner, v in workers.items() if v != self.version and owner != self.owner
        }
        if others:
            raise Incompatible(
                f"{len(others)} worker(s) of schema version(s) {sorted(set(others.values()))} run "
                f"on this queue (this one is {self.version}): stop them first (docs/app.md, "
                f"Upgrades)"
            )
        old = self.unregistered_lease_holders(set(workers))
        if old:
            raise Incompatible(
                f"worker(s) of a release from before schema versions hold leases "
                f"({sorted(old)[:3]}): "
                "stop every old worker first (docs/app.md, Upgrades)"
            )
        self._redis.set(f"{self._prefix}:schema", str(self.version))
        self.beat()

    def beat(self) -> None:
        """Renew this worker's registration (each sweep)."""
        self._redis.set(
            f"{self._prefix}:workers:{self.owner}", str(self.version), px=int(WORKER_TTL * 1000)
        )

    def leave(self) -> None:
        self._redis.delete(f"{self._prefix}:workers:{self.owner}")
