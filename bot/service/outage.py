"""The queue's Redis down or stalled: a transient condition that jobs wait out, reported once.

A Redis timeout or lost connection (the pacer, the leases, the journal, huey's queue) is
infrastructure, not a bug in the review: the job is deferred with back-off (``backoff``) and its
check run is never concluded for it. ``Outage`` turns the stream of such errors into two log lines
per outage, one when it starts (the first error) and one when it ends (the first success after it),
instead of a traceback per poll of every thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import redis.exceptions

from bot.core.causes import caused

log = logging.getLogger("bot.outage")

# ConnectionError covers BusyLoadingError (a restarted Redis loading its data); ReadOnlyError is a
# replica that a failover has not promoted yet; OutOfMemoryError a Redis at its ``maxmemory`` that
# refuses writes (noeviction) until memory is freed; ClusterDownError (MasterDownError among them) a
# replica cut off from its master or a cluster without a quorum; TryAgainError a cluster moving a
# slot. Each is a ResponseError that clears by itself: the job waits, the review is not concluded.
INFRASTRUCTURE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
)
# the same for the errors redis-py has no class of (a plain ResponseError), by their error code:
# MISCONF (its last write to disk failed: writes refused until one succeeds), BUSY (a script or a
# module command runs too long), NOREPLICAS (fewer replicas than ``min-replicas-to-write``)
INFRASTRUCTURE_CODES = ("MISCONF ", "BUSY ", "NOREPLICAS ")
MAX_BACKOFF = 60.0


def _store_failed(exc: BaseException) -> bool:
    return isinstance(exc, INFRASTRUCTURE) or (
        type(exc) is redis.exceptions.ResponseError and str(exc).startswith(INFRASTRUCTURE_CODES)
    )


def is_infrastructure(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is the queue's store failing rather than the job."""
    return caused(exc, _store_failed)


def backoff(attempt: int) -> float:
    """Seconds before a job that met an outage runs again: 2, 4, 8 ... up to ``MAX_BACKOFF``."""
    return float(min(MAX_BACKOFF, 2.0 ** max(1, attempt)))


class Outage:
    """Whether a store is down, logged once when that starts and once when it ends."""

    def __init__(
        self, what: str, grace: float = 0.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """``grace``: an outage ends at the first success this long after its last failure, so that
        the late failures of calls made during it (their timeouts running out after the store is
        back) and a relapse within ``grace`` belong to the same outage instead of flapping the
        log."""
        self.what = what
        self.grace = grace
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self._last_failure = 0.0
        self._errors = 0

    @property
    def down(self) -> bool:
        return self._since is not None

    def failed(self, exc: BaseException) -> None:
        """Note a failure; the first one of an outage is logged (with its error, no traceback)."""
        with self._lock:
            self._last_failure = now = self._clock()
            self._errors += 1
            if self._since is not None:
                return
            self._since, self._errors = now, 1
        log.warning(
            "%s is unreachable (%s: %s); jobs wait for it", self.what, type(exc).__name__, exc
        )

    def succeeded(self) -> None:
        """Note a success; the first one ``grace`` seconds after the outage's last failure logs its
        end."""
        if self._since is None:
            return
        with self._lock:
            if self._since is None or self._clock() - self._last_failure < self.grace:
                return
            lasted, errors = self._last_failure - self._since, self._errors
            self._since, self._errors = None, 0
        log.warning("%s is back: it failed %d calls over %.1f s", self.what, errors, lasted)

    def wait_for(
        self,
        probe: Callable[[], Any],
        pause: float = 1.0,
        max_pause: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Call ``probe`` until it succeeds, sleeping between tries (doubling up to ``max_pause``):
        a worker started while its Redis is down waits for it instead of exiting."""
        while True:
            try:
                probe()
            except Exception as exc:
                if not is_infrastructure(exc):
                    raise
                self.failed(exc)
                sleep(pause)
                pause = min(max_pause, pause * 2)
            else:
                self.succeeded()
                return


# over a call's longest try (2 x the queue's REDIS_TIMEOUT)
REDIS = Outage("the queue's Redis", grace=15.0)


class QuietTracebacks(logging.Filter):
    """A handler's filter for what the bot cannot wrap: a thread of huey's consumer that logs a
    traceback for a failed Redis call (its scheduler moving a due retry back to the queue, which
    leaves the job to the journal's sweep). The failure counts toward the outage's one line and the
    record is kept as a warning without its traceback; every other record passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not is_infrastructure(exc):
            return True
        REDIS.failed(exc)
        record.msg = (
            f"{record.getMessage()} ({type(exc).__name__}: {exc}; the queue's Redis is "
            "unreachable, the journal's sweep enqueues the job again)"
        )
        record.args = None
        record.exc_info = record.exc_text = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def log_failure(logger: logging.Logger, exc: BaseException, message: str, *args: object) -> None:
    """A failed write that the job survives: during an outage of the queue's store, the outage's one
    line and a warning without a traceback; otherwise the error with its traceback."""
    if is_infrastructure(exc):
        REDIS.failed(exc)
        logger.warning(message + " (the queue's Redis is unreachable)", *args)
    else:
        logger.exception(message, *args)
