"""GitHub's pacing for one installation, shared by every worker process through Redis.

More in docs/module-notes.md (bot/github/pacing.py).
"""

from __future__ import annotations

import collections
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from bot.github import limits as github_limits
from bot.github import metrics
from bot.github.api import RateLimited

CONTENT_PER_MINUTE = github_limits.CONTENT_CREATION_PER_MINUTE
CONTENT_PER_HOUR = github_limits.CONTENT_CREATION_PER_HOUR
# seconds of an installation's pause a request waits out in its thread; a longer one raises
HOLD = 5.0


class ContentWindow:
    """GitHub's content-creation limits kept in one process: the creation times of the last hour."""

    def __init__(
        self, per_minute: int = CONTENT_PER_MINUTE, per_hour: int = CONTENT_PER_HOUR
    ) -> None:
        self.per_minute = per_minute
        self.per_hour = per_hour
        self._times: collections.deque[float] = collections.deque()

    def wait(self, now: float) -> float:
        """Seconds until one more creation fits both windows (0: now)."""
        while self._times and self._times[0] <= now - 3600:
            self._times.popleft()
        if len(self._times) >= self.per_hour:
            return self._times[len(self._times) - self.per_hour] + 3600 - now
        recent = [t for t in self._times if t > now - 60]
        if len(recent) >= self.per_minute:
            return recent[len(recent) - self.per_minute] + 60 - now
        return 0.0

    def add(self, now: float) -> None:
        self._times.append(now)


class Pacer(Protocol):
    def request(self, write: bool, creates: bool = False) -> Any:
        """A context manager around one HTTP request of the installation."""
        ...

    def hold_until(self, until: float, creation_only: bool = False) -> None:
        """Hold every request of the installation (``creation_only``: every creating one) until
        ``until`` (epoch seconds): a secondary rate limit."""
        ...


def paused(until: float, now: float, creation_only: bool = False) -> RateLimited:
    what = (
        "content creation of the installation is paused"
        if creation_only
        else "the installation is paused"
    )
    return RateLimited(
        f"{what} for GitHub's secondary rate limit ({until - now:.0f} s more)",
        403,
        reset_at=until,
        secondary=True,
        creation_only=creation_only,
    )


# ARGV: token, hold ms, pause ms, write (0/1), creates (0/1), per minute, per hour
# returns {1, 0} (go; also when ``busy`` holds the caller's token already: the call was carried
# out and sent again after its reply was lost), {0, ms} (another request is in flight: poll),
# {3, ms} (the pause or the minute's content window: wait that long), {2, ms} (the hour's content
# limit), {4, ms} (a secondary limit's pause), {5, ms} (a secondary limit's pause of content
# creation, for a creating request)
_ACQUIRE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return {1, 0} end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = redis.call('pttl', KEYS[4])
if paused > 0 then return {4, paused} end
if ARGV[5] == '1' then
  local creation = redis.call('pttl', KEYS[5])
  if creation > 0 then return {5, creation} end
end
local busy = redis.call('pttl', KEYS[1])
if busy > 0 or busy == -1 then return {0, busy > 0 and busy or 1000} end
if ARGV[4] == '1' then
  local ready = tonumber(redis.call('get', KEYS[2]) or '0') + tonumber(ARGV[3])
  if now < ready then return {3, ready - now} end
end
if ARGV[5] == '1' then
  redis.call('zremrangebyscore', KEYS[3], '-inf', now - 3600000)
  if redis.call('zcard', KEYS[3]) >= tonumber(ARGV[7]) then
    local oldest = redis.call('zrange', KEYS[3], 0, 0, 'WITHSCORES')
    return {2, tonumber(oldest[2]) + 3600000 - now}
  end
  local minute = redis.call('zrangebyscore', KEYS[3], now - 60000, '+inf', 'WITHSCORES')
  if #minute / 2 >= tonumber(ARGV[6]) then
    return {3, tonumber(minute[#minute - 2 * tonumber(ARGV[6]) + 2]) + 60000 - now}
  end
  redis.call('zadd', KEYS[3], now, ARGV[1])
  redis.call('pexpire', KEYS[3], 3700000)
end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, 0}
"""
# ARGV: token, write (0/1)
_RELEASE = """
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '1' then
  local t = redis.call('time')
  redis.call('set', KEYS[2], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), 'PX', 3600000)
end
return redis.call('del', KEYS[1])
"""  # noqa: E501


class RedisPacer:
    """The pacing of one installation in Redis (see the module docstring)."""

    def __init__(
        self,
        redis: Any,
        installation_id: int,
        pause: float = 1.0,
        *,
        hold: float = 10.0,
        max_wait: float = 180.0,
        poll: float = 0.02,
        per_minute: int = CONTENT_PER_MINUTE,
        per_hour: int = CONTENT_PER_HOUR,
        prefix: str = "registry-bot:pace",
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.pause = pause
        self.hold = hold
        self.max_wait = max_wait
        self.poll = poll
        self.per_minute = per_minute
        self.per_hour = per_hour
        self._keys = [
            f"{prefix}:{installation_id}:{k}"
            for k in ("busy", "last", "created", "paused", "paused-creates")
        ]
        self._redis = redis
        self._acquire = redis.register_script(_ACQUIRE)
        self._release = redis.register_script(_RELEASE)
        self._sleep = sleep
        self._clock = clock

    @contextmanager
    def request(self, write: bool, creates: bool = False) -> Iterator[None]:
        token = uuid.uuid4().hex
        args = [
            token,
            int(self.hold * 1000),
            int(self.pause * 1000),
            int(write),
            int(write and creates),
            self.per_minute,
            self.per_hour,
        ]
        started = time.monotonic()
        while True:
            state, wait_ms = (int(x) for x in self._acquire(keys=self._keys, args=args))
            if state == 1:
                break
            wait = max(wait_ms, 1) / 1000
            if state in (4, 5) and wait > HOLD:
                raise paused(self._clock() + wait, self._clock(), creation_only=state == 5)
            if state == 2 or time.monotonic() - started + wait > self.max_wait:
                raise RateLimited(
                    f"GitHub's content-creation limit for the installation ({self.per_minute} a "
                    f"minute, {self.per_hour} an hour) is reached",
                    403,
                    reset_at=self._clock() + wait,
                )
            self._sleep(wait if state == 3 else min(wait, self.poll))
        metrics.PACING_WAIT.labels(kind="write" if write else "read").inc(
            time.monotonic() - started
        )
        try:
            yield
        finally:
            self._release(keys=self._keys[:2], args=[token, int(write)])

    def hold_until(self, until: float, creation_only: bool = False) -> None:
        """Hold the installation's requests (``creation_only``: its creating ones), in every worker,
        until ``until`` (a later pause wins)."""
        key = self._keys[4 if creation_only else 3]
        ms = int((until - self._clock()) * 1000)
        if ms > 0 and int(self._redis.pttl(key)) < ms:
            self._redis.set(key, "1", px=ms)
