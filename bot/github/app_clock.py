"""GitHub's time for the App's JSON web tokens: the host clock corrected by GitHub's ``Date``
header.

GitHub refuses an App JWT whose ``iat`` lies in its future or whose ``exp`` has passed, so a worker
whose host clock is off by more than a minute gets 401 on every token request and reviews nothing.
As Octokit does, a 401 to a JWT request whose ``Date`` header shows the clocks apart
(``SKEW_NOTICED`` seconds or more) sets the offset to GitHub's time, and the request is made once
more with a token signed with it. A skew that the correction does not cure (GitHub still refuses, or
sends no ``Date``) is logged once, naming it, and makes the worker's health check fail
(``health.problem``) until a token request succeeds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from github import Auth, Consts, GithubException

from bot.core import health_marks as health

log = logging.getLogger(__name__)
# seconds between GitHub's Date and the host clock that can explain a refused JWT
SKEW_NOTICED = 30.0
T = TypeVar("T")


class GitHubClock:
    """The host clock plus the offset to GitHub's, learned from a refused JWT request's ``Date``
    header."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.offset = 0.0
        self.uncorrected: float | None = None  # the skew GitHub still refused tokens for

    def now(self) -> float:
        return self._clock() + self.offset

    def skew(self, headers: Mapping[str, str] | None) -> float | None:
        """GitHub's ``Date`` minus our corrected time, or None without a readable ``Date``."""
        date = {k.lower(): v for k, v in (headers or {}).items()}.get("date")
        if not date:
            return None
        try:
            return parsedate_to_datetime(date).timestamp() - self.now()
        except (TypeError, ValueError):
            return None

    def call(self, what: str, send: Callable[[], T]) -> T:
        """``send()`` (a request signed with an App JWT); a 401 whose ``Date`` shows the clocks
        apart corrects the offset and sends once more. Raises what GitHub answered when that does
        not help."""
        signed_with = self.offset
        try:
            result = send()
        except GithubException as exc:
            if exc.status != 401:
                raise
            skew = self.skew(exc.headers)
            if self.offset != signed_with and (skew is None or abs(skew) < SKEW_NOTICED):
                # another request corrected the offset after this one was signed: sign again
                skew = 0.0
            elif skew is None or abs(skew) < SKEW_NOTICED:
                self._refused(what, skew)
                raise
            else:
                with self._lock:
                    self.offset += skew
                log.warning(
                    "%s: GitHub refused the App's token; this host's clock is %+.0f s off GitHub's "
                    "(its Date header): tokens are signed with GitHub's time from now on",
                    what,
                    -skew,
                )
            try:
                result = send()
            except GithubException as again:
                if again.status == 401:
                    self._refused(what, -skew)
                raise
        self._accepted()
        return result

    def _refused(self, what: str, skew: float | None) -> None:
        """A JWT refused although GitHub's time was used (or could not be learned): say so once,
        fail health."""
        if skew is None or abs(skew) < SKEW_NOTICED:
            skew = -self.offset if abs(self.offset) >= SKEW_NOTICED else None
        if skew is None:
            return  # the clocks agree: a wrong key or App id, which the 401 itself says
        with self._lock:
            first = self.uncorrected is None
            self.uncorrected = skew
        if first:
            log.error(
                "%s: GitHub refuses the App's token and correcting this host's clock skew of %+.0f "
                "s did not help; fix the host's time (NTP)",
                what,
                skew,
            )
        health.problem(
            f"this host's clock is {skew:+.0f} s off GitHub's and App tokens are refused"
        )

    def _accepted(self) -> None:
        if self.uncorrected is None:
            return
        with self._lock:
            self.uncorrected = None
        log.warning("GitHub accepts the App's tokens again")
        health.problem(None)


class ClockedAppAuth(Auth.AppAuth):
    """PyGithub's App auth with the JWT's ``iat``/``exp`` taken from ``GitHubClock`` instead of the
    host."""

    def __init__(self, app_id: int | str, private_key: str, clock: GitHubClock) -> None:
        super().__init__(app_id, private_key)
        self._github_clock = clock

    def create_jwt(self, expiration: int | None = None) -> str:
        now = int(self._github_clock.now())
        payload = {
            "iat": now + Consts.DEFAULT_JWT_ISSUED_AT,
            "exp": now + (expiration if expiration is not None else Consts.DEFAULT_JWT_EXPIRY),
            "iss": self.app_id,
        }
        signed: Any = self._sign_func(payload)  # type: ignore[misc]
        return signed.decode("utf-8") if isinstance(signed, bytes) else str(signed)
