"""The real ``GitHubAPI``: PyGithub for App auth and transport, one retrying request path for every
call.

More in docs/module-notes.md (bot/github/client.py).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

import requests
from github import Auth, Github, GithubException, GithubIntegration
from github.Requester import Requester

from bot.github import graphql_errors, graphql_reads, required_checks
from bot.github import limits as github_limits
from bot.github.api import (
    REVIEW_STATES,
    ChangedFile,
    CheckConclusion,
    CheckRunInfo,
    CheckRunOutput,
    CheckStatus,
    CommentInfo,
    GitHubError,
    InlineComment,
    InstallationUnavailable,
    IssueInfo,
    NotFound,
    PullRequest,
    RateLimited,
    ReviewCommentInfo,
    ReviewEvent,
    ReviewInfo,
    StatusInfo,
    base_of,
)
from bot.github.app_clock import ClockedAppAuth, GitHubClock
from bot.github.lazy_snapshot import LazyTree
from bot.github.object_cache import ObjectCache
from bot.github.pacing import HOLD, ContentWindow, Pacer, paused
from bot.github.tree_files import (
    MAX_BLOB_BYTES,
    TreeFiles,
    normalise_prefixes,
    too_large,
    under_prefixes,
)

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.github.com"
# sent as X-GitHub-Api-Version: GitHub answers in the shape of this REST version
API_VERSION = "2022-11-28"
ENABLE_AUTO_MERGE = (
    "mutation($id: ID!, $head: GitObjectID!, $method: PullRequestMergeMethod!) { "
    "enablePullRequestAutoMerge(input: {pullRequestId: $id, expectedHeadOid: $head, "
    "mergeMethod: $method}) { pullRequest { number } } }"
)
DISABLE_AUTO_MERGE = (
    "mutation($id: ID!) { disablePullRequestAutoMerge(input: {pullRequestId: $id}) "
    "{ pullRequest { number } } }"
)
GRAPHQL = "graphql"  # the GraphQL endpoint, relative to the REST base as PyGithub derives it
MAX_PR_FILES = github_limits.PR_FILES  # GitHub lists at most 3000 files of a pull request
PER_PAGE = github_limits.PER_PAGE
TOKEN_MARGIN = 300.0  # refresh an installation token 5 minutes before it expires
TEAM_VISIBILITY_TTL = 3600.0  # a team GitHub showed the installation is taken as visible this long
# a team GitHub would not show the installation (403, 404) is not asked about this long
TEAM_REFUSAL_TTL = 600.0
_SERVER_ERRORS = frozenset({500, 502, 503, 504})
GRAPHQL_ATTEMPTS = 2  # a GraphQL query is retried once, then the job's reads fall back to REST

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``attempts`` requests at most, waits doubling from ``base_delay`` (capped at
    ``max_delay``), and at most ``max_wait`` seconds of waiting and retrying in total."""

    attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_wait: float = 180.0
    secondary_limit_wait: float = 60.0  # GitHub: wait at least a minute after a secondary limit
    # a longer secondary-limit wait pauses the installation and frees the thread
    secondary_hold: float = 10.0


class ClientStats:
    """Counters for metrics, shared by every client of one factory (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0  # HTTP requests sent, retries included
        self.retries = 0
        self.failures = 0  # calls that ended in a GitHubError
        self.token_refreshes = 0
        self.rate_limit_remaining: int | None = None

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)

    def as_dict(self) -> dict[str, int | None]:
        with self._lock:
            return {
                "requests": self.requests,
                "retries": self.retries,
                "failures": self.failures,
                "token_refreshes": self.token_refreshes,
                "rate_limit_remaining": self.rate_limit_remaining,
            }


def _lower(headers: Mapping[str, str] | None) -> dict[str, str]:
    return {k.lower(): v for k, v in (headers or {}).items()}


def is_rate_limit(status: int, headers: Mapping[str, str] | None, message: str) -> bool:
    """429, or a 403 that says it is a rate limit (``retry-after``, no requests left, or the
    message)."""
    h = _lower(headers)
    return status == 429 or (
        status == 403
        and (
            "retry-after" in h
            or h.get("x-ratelimit-remaining") == "0"
            or "rate limit" in message.lower()
        )
    )


def is_secondary(headers: Mapping[str, str] | None) -> bool:
    """A rate limit that is not the exhausted hourly quota (GitHub's secondary limits:
    ``retry-after``, or 403/429 with requests left)."""
    return _lower(headers).get("x-ratelimit-remaining") != "0"


def blocks_creation_only(message: str) -> bool:
    """GitHub's secondary limit on content creation says so ("... temporarily blocked from content
    creation"): it refuses creating requests only, not reads nor updates."""
    return "content creation" in message.lower()


def retry_delay(
    status: int,
    headers: Mapping[str, str] | None,
    message: str,
    attempt: int,
    now: float,
    policy: RetryPolicy,
) -> float | None:
    """Seconds to wait before retrying a failed request, or None when it must not be retried."""
    h = _lower(headers)
    backoff = min(policy.base_delay * 2.0 ** (attempt - 1), policy.max_delay)
    rate_limited = is_rate_limit(status, headers, message)
    if status not in _SERVER_ERRORS and status != 0 and not rate_limited:
        return None
    if "retry-after" in h:
        try:
            return max(float(h["retry-after"]), 0.0)
        except ValueError:
            pass
    if rate_limited and h.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in h:
        try:
            return max(float(h["x-ratelimit-reset"]) - now, 0.0) + 1.0
        except ValueError:
            pass
    if rate_limited and "secondary" in message.lower():
        return max(backoff, policy.secondary_limit_wait)
    return backoff


def _json(output: Any) -> Any:
    """A response body as PyGithub reads it: None when empty, ``{"data": text}`` when not JSON."""
    if isinstance(output, bytes):
        output = output.decode("utf-8")
    if not isinstance(output, str) or not output:
        return None
    try:
        return json.loads(output)
    except ValueError:
        if output.startswith(("{", "[")):
            raise
        return {"data": output}


def _message(data: Any) -> str:
    if not isinstance(data, dict):
        return str(data or "")
    text = str(data.get("message", ""))
    errors = data.get("errors")
    if errors:
        text += (
            " ("
            + "; ".join(
                e.get("message") or str(e) if isinstance(e, dict) else str(e) for e in errors
            )
            + ")"
        )
    return text


def _graphql_failed(headers: dict[str, Any], data: Any) -> None:
    """Raise a GraphQL answer's ``errors`` as the HTTP error REST would answer
    (``graphql_errors.status``), with the answer's rate-limit headers."""
    errors = data.get("errors") if isinstance(data, dict) else None
    if errors and isinstance(errors, list):
        raise GithubException(
            graphql_errors.status(errors), {"message": graphql_errors.message(errors)}, headers
        )


class _Retrying:
    """Runs one request at a time with the retry policy, counting requests into ``stats``."""

    def __init__(
        self,
        policy: RetryPolicy,
        stats: ClientStats,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self.policy = policy
        self.stats = stats
        self.sleep = sleep
        self.clock = clock

    def run(
        self,
        what: str,
        send: Callable[[], T],
        on_unauthorized: Callable[[], None] | None = None,
        attempts: int | None = None,
        recheck: Callable[[], T | None] | None = None,
    ) -> T:
        """``send()`` until it answers, by the policy. ``recheck``: before sending again after a 5xx
        or no answer (GitHub may have done it all the same), look for what it would have made; what
        it returns, when not None, is the answer."""
        start = self.clock()
        attempts = attempts or self.policy.attempts
        attempt = 0
        refreshed = False
        while True:
            attempt += 1
            self.stats.add(requests=1)
            try:
                return send()
            except GithubException as exc:
                status, headers, message = exc.status, exc.headers, _message(exc.data)
            except requests.RequestException as exc:
                status, headers, message = 0, None, f"network error: {exc}"
            if status == 401 and on_unauthorized is not None and not refreshed:
                refreshed = True
                log.info("%s: 401 %s; refreshing the installation token once", what, message)
                on_unauthorized()
                continue
            now = self.clock()
            delay = retry_delay(status, headers, message, attempt, now, self.policy)
            spent = now - start
            if delay is None or attempt >= attempts or spent + delay > self.policy.max_wait:
                self.stats.add(failures=1)
                why = (
                    "" if delay is None else f" (gave up after {attempt} attempt(s), {spent:.0f}s)"
                )
                text = f"{what}: {status or 'no response'} {message}{why}".strip()
                if delay is not None and is_rate_limit(status, headers, message):
                    # longer than this request may wait: the job is rescheduled at the reset instead
                    raise RateLimited(
                        text,
                        status,
                        reset_at=now + delay,
                        secondary=is_secondary(headers),
                        creation_only=blocks_creation_only(message),
                    )
                raise (NotFound if status == 404 else GitHubError)(text, status=status)
            if (
                delay > self.policy.secondary_hold
                and is_rate_limit(status, headers, message)
                and is_secondary(headers)
            ):
                self.stats.add(failures=1)
                raise RateLimited(
                    f"{what}: {status} {message} (a secondary rate limit: {delay:.0f} s)",
                    status,
                    reset_at=now + delay,
                    secondary=True,
                    creation_only=blocks_creation_only(message),
                )
            log.warning(
                "%s: %s %s; retry %d in %.1fs", what, status or "network", message, attempt, delay
            )
            self.stats.add(retries=1)
            self.sleep(delay)
            if recheck is not None and not is_rate_limit(status, headers, message):
                found = recheck()
                if found is not None:
                    log.warning("%s: GitHub did it despite the %s; not sent again", what, status)
                    return found


class WritePacer:
    """GitHub's advice: requests of an installation one at a time; mutative ones at least ``pause``
    seconds from the end of one to the start of the next, and content creation (POSTs) within 80 a
    minute and 500 an hour (``pacing.ContentWindow``; a longer wait than ``max_wait`` raises
    ``RateLimited``). One per installation, shared by its clients (and worker threads) in one
    process; ``pacing.RedisPacer`` across processes."""

    def __init__(
        self,
        pause: float,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait: float = RetryPolicy.max_wait,
    ) -> None:
        self.pause = pause
        self.max_wait = max_wait
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()  # writers, in turn
        self._busy = threading.Lock()  # the one request of the installation in flight
        self._last_end: float | None = None
        self._created = ContentWindow()
        self._paused_until = 0.0
        self._creation_paused_until = 0.0

    def hold_until(self, until: float, creation_only: bool = False) -> None:
        """Hold the installation's requests (``creation_only``: its creating ones) until ``until``
        (a secondary rate limit; see ``pacing``)."""
        if creation_only:
            self._creation_paused_until = max(self._creation_paused_until, until)
        else:
            self._paused_until = max(self._paused_until, until)

    def _wait_out_pause(self, creates: bool = False) -> None:
        until = max(self._paused_until, self._creation_paused_until if creates else 0.0)
        wait = until - self._clock()
        if wait > HOLD:
            raise paused(until, self._clock(), creation_only=until != self._paused_until)
        if wait > 0:
            self._sleep(wait)

    @contextmanager
    def write(self, creates: bool = False) -> Iterator[None]:
        self._wait_out_pause(creates)
        with self._lock:
            if self._last_end is not None:
                wait = self._last_end + self.pause - self._clock()
                if wait > 0:
                    self._sleep(wait)
            if creates:
                wait = self._created.wait(self._clock())
                if wait > self.max_wait:
                    raise RateLimited(
                        "GitHub's content-creation limit for the installation is reached",
                        403,
                        reset_at=self._clock() + wait,
                    )
                if wait > 0:
                    self._sleep(wait)
                self._created.add(self._clock())
            with self._busy:
                try:
                    yield
                finally:
                    self._last_end = self._clock()

    def request(self, write: bool, creates: bool = False) -> Any:
        """The ``Pacer`` interface (``bot.github.pacing``): writes paced, and every request of the
        installation one at a time (reads go on while a write waits for its pause)."""
        if not write:
            self._wait_out_pause()
        return self.write(creates) if write else self._busy


class InstallationToken:
    """One installation's access token, fetched with the App JWT and cached until near its
    expiry."""

    def __init__(
        self,
        integration: GithubIntegration,
        installation_id: int,
        retrying: _Retrying,
        github_clock: GitHubClock | None = None,
    ) -> None:
        self._integration = integration
        self._github_clock = github_clock or GitHubClock()
        self.installation_id = installation_id
        self._retrying = retrying
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires = 0.0

    def get(self) -> str:
        with self._lock:
            # GitHub states the expiry in its time
            now = self._retrying.clock() + self._github_clock.offset
            if self._token is None or now >= self._expires - TOKEN_MARGIN:
                what = f"POST installation {self.installation_id} token"
                try:
                    auth = self._retrying.run(
                        what,
                        lambda: self._github_clock.call(
                            what, lambda: self._integration.get_access_token(self.installation_id)
                        ),
                    )
                except RateLimited:
                    raise
                except GitHubError as exc:
                    if exc.status in (403, 404):  # suspended, or the App uninstalled
                        raise InstallationUnavailable(str(exc), exc.status) from exc
                    raise
                self._token = auth.token
                self._expires = auth.expires_at.timestamp() if auth.expires_at else now + 3600
                self._retrying.stats.add(token_refreshes=1)
            return self._token

    def invalidate(self) -> None:
        with self._lock:
            self._token = None


class AppClientFactory:
    """``GitHubClientFactory`` for a GitHub App: one cached token per installation.

    ``base_url`` is ``https://api.github.com`` or, for GitHub Enterprise Server,
    ``https://HOST/api/v3``. ``sleep`` and ``clock`` (epoch seconds) are injectable so tests never
    really wait.
    """

    def __init__(
        self,
        app_id: int | str,
        private_key_pem: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        timeout: int = 30,
        slug: str | None = None,
        seconds_between_requests: float = 0.0,
        seconds_between_writes: float = 1.0,
        pacers: Callable[[int], Pacer] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.stats = ClientStats()
        self._retrying = _Retrying(policy or RetryPolicy(), self.stats, sleep, clock)
        self._seconds_between_requests = seconds_between_requests
        self._write_pause = seconds_between_writes
        self._timeout = timeout
        # the JWT's time: the host's (not ``clock``), corrected to GitHub's
        self.github_clock = GitHubClock()
        self.app_id = int(app_id)
        self._app_auth = ClockedAppAuth(self.app_id, private_key_pem, self.github_clock)
        self._integration = GithubIntegration(
            auth=self._app_auth,
            base_url=self.base_url,
            retry=None,
            timeout=timeout,
            seconds_between_requests=seconds_between_requests,
            seconds_between_writes=seconds_between_writes,
            api_version=API_VERSION,
        )
        self._tokens: dict[int, InstallationToken] = {}
        self._pacers: dict[int, Pacer] = {}
        self._new_pacer = pacers or (
            lambda _: WritePacer(
                self._write_pause,
                self._retrying.sleep,
                self._retrying.clock,
                self._retrying.policy.max_wait,
            )
        )
        # (installation, team URL) -> when GitHub showed it
        self._visible_teams: dict[tuple[int, str], float] = {}
        # -> when, what GitHub said
        self._refused_teams: dict[tuple[int, str], tuple[float, GitHubError]] = {}
        self.objects = ObjectCache()  # blobs and tree listings by sha, kept across jobs
        self._lock = threading.Lock()
        self._slug = slug

    def for_installation(self, installation_id: int) -> GitHubClient:
        with self._lock:
            token = self._tokens.get(installation_id)
            if token is None:
                token = self._tokens[installation_id] = InstallationToken(
                    self._integration, installation_id, self._retrying, self.github_clock
                )
            pacer = self._pacers.get(installation_id)
            if pacer is None:
                pacer = self._pacers[installation_id] = self._new_pacer(installation_id)
        return GitHubClient(token, self, pacer)

    def connect(self, token: str) -> Requester:
        """A PyGithub requester authenticated with an installation token (writes are paced by
        ``WritePacer``, not by PyGithub, which would also pace GraphQL queries, being POSTs)."""
        gh = Github(
            auth=Auth.Token(token),
            base_url=self.base_url,
            retry=None,
            lazy=True,
            timeout=self._timeout,
            seconds_between_requests=self._seconds_between_requests,
            seconds_between_writes=0,
            api_version=API_VERSION,
        )
        return gh.requester

    def team_visible(self, installation_id: int, team: str, seen: bool = False) -> bool:
        """Whether GitHub showed ``team`` to the installation within ``TEAM_VISIBILITY_TTL``
        (``seen``: it just did)."""
        with self._lock:
            now = self._retrying.clock()
            if seen:
                self._visible_teams[(installation_id, team)] = now
            return (
                now - self._visible_teams.get((installation_id, team), -TEAM_VISIBILITY_TTL)
                < TEAM_VISIBILITY_TTL
            )

    def team_refusal(
        self, installation_id: int, team: str, refused: GitHubError | None = None
    ) -> GitHubError | None:
        """GitHub's refusal to show ``team`` to the installation within ``TEAM_REFUSAL_TTL``
        (``refused``: it just said so), as a new error of the same class, status and message; None
        when there is none to repeat."""
        with self._lock:
            now = self._retrying.clock()
            if refused is not None:
                self._refused_teams[(installation_id, team)] = (now, refused)
            when, said = self._refused_teams.get((installation_id, team), (-TEAM_REFUSAL_TTL, None))
            if said is None or now - when >= TEAM_REFUSAL_TTL:
                return None
            return type(said)(str(said), said.status)

    def list_installations(self) -> list[int]:
        """The ids of the App's installations (``GET /app/installations``, App JWT), suspended
        ones left out."""
        return self._retrying.run(
            "GET /app/installations",
            lambda: self.github_clock.call(
                "GET /app/installations",
                # a suspended installation is listed, but GitHub gives it no token
                lambda: [
                    i.id for i in self._integration.get_installations() if i.suspended_at is None
                ],
            ),
        )

    def _as_app(
        self, verb: str, url: str, params: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        """One REST call authenticated as the App (its JWT), retried like the others."""
        requester = Github(
            auth=self._app_auth,
            base_url=self.base_url,
            retry=None,
            lazy=True,
            timeout=self._timeout,
        ).requester
        what = f"{verb} {url.split('?')[0]}"
        return self._retrying.run(
            what,
            lambda: self.github_clock.call(
                what,
                lambda: requester.requestJsonAndCheck(
                    verb, url, parameters=dict(params) if params else None
                ),
            ),
        )

    def list_hook_deliveries(self, since: float, max_pages: int = 10) -> list[dict[str, Any]]:
        """The App's webhook delivery attempts (``GET /app/hook/deliveries``, newest first) made at
        ``since`` (epoch seconds) or later, at most ``max_pages`` pages of 100."""
        found: list[dict[str, Any]] = []
        next_url: str | None = "/app/hook/deliveries"
        params: dict[str, Any] | None = {"per_page": PER_PAGE}
        for _ in range(max_pages):
            if next_url is None:
                break
            headers, data = self._as_app("GET", next_url, params)
            for attempt in data or ():
                if _epoch(attempt.get("delivered_at")) < since:
                    return found
                found.append(attempt)
            next_url, params = _next_link(_lower(headers).get("link", "")), None
        return found

    def redeliver(self, delivery_id: int) -> None:
        """Ask GitHub to deliver a webhook again (``POST /app/hook/deliveries/{id}/attempts``)."""
        self._as_app("POST", f"/app/hook/deliveries/{delivery_id}/attempts")

    def bot_login(self) -> str:
        """``<slug>[bot]``; the slug comes from ``GET /app`` (App JWT) once, unless given."""
        with self._lock:
            if self._slug is None:
                self._slug = self._retrying.run(
                    "GET /app",
                    lambda: self.github_clock.call(
                        "GET /app", lambda: self._integration.get_app().slug
                    ),
                )
            return f"{self._slug}[bot]"


class GitHubClient:
    """``GitHubAPI`` for one installation, over GitHub's REST API."""

    def __init__(
        self, token: InstallationToken, factory: AppClientFactory, pacer: Pacer | None = None
    ) -> None:
        self._token = token
        self._factory = factory
        self._pacer = pacer or WritePacer(0.0)
        self._retrying = factory._retrying
        self._requester: Requester | None = None
        self._requester_token: str | None = None
        self._remaining: int | None = None
        self._changed_files: dict[tuple[str, int], int] = {}
        self._objects = factory.objects
        self._blob_lock = threading.RLock()
        # repo -> blob sha -> (a path, size) from trees
        self._listed: dict[str, dict[str, tuple[str, int]]] = {}
        self._rest_only: set[str] = set()  # blobs GraphQL could not give exactly
        self._graphql = True  # False once GraphQL refused or failed a query: REST only from then on
        # halved when GitHub finds a query too big or too slow
        self._batch = graphql_reads.MAX_OBJECTS

    # -- transport -----------------------------------------------------------------------------
    def _connection(self) -> Requester:
        token = self._token.get()
        if self._requester is None or token != self._requester_token:
            self._requester, self._requester_token = self._factory.connect(token), token
        return self._requester

    def _request(
        self,
        verb: str,
        url: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        write: bool | None = None,
        attempts: int | None = None,
        recheck: Callable[[], tuple[dict[str, Any], Any] | None] | None = None,
        answered: Callable[[dict[str, Any], Any], None] | None = None,
    ) -> tuple[dict[str, Any], Any]:
        """One REST call, retried; ``write`` (default: any verb but GET) paces it with the other
        writes; ``recheck``: see ``_Retrying.run``; ``answered(headers, data)`` may raise a
        ``GithubException`` for an answer that is a failure all the same (retried as one)."""

        def send() -> tuple[dict[str, Any], Any]:
            connection = self._connection()
            try:
                headers, data = self._answer(
                    connection,
                    verb,
                    connection.graphql_url if url == GRAPHQL else url,
                    dict(params) if params else None,
                    body,
                )
            except GithubException as exc:
                self._note(exc.headers)
                raise
            self._note(headers)
            if answered is not None:
                answered(headers, data)
            return headers, data

        mutative = verb != "GET" if write is None else write

        def paced() -> tuple[dict[str, Any], Any]:
            with self._pacer.request(mutative, creates=verb == "POST"):
                return send()

        try:
            return self._retrying.run(
                f"{verb} {url.split('?')[0]}",
                paced,
                on_unauthorized=self._token.invalidate,
                attempts=attempts,
                recheck=recheck,
            )
        except RateLimited as exc:
            hold_until = getattr(self._pacer, "hold_until", None)
            # every worker holds the installation's requests till then
            if exc.secondary and hold_until is not None:
                hold_until(exc.reset_at, creation_only=exc.creation_only)
            raise

    def _answer(
        self,
        connection: Requester,
        verb: str,
        url: str,
        params: dict[str, Any] | None,
        body: Any,
    ) -> tuple[dict[str, Any], Any]:
        """One request's headers and JSON; ``GithubException`` for any status but 2xx. GitHub
        answers a request to a renamed or transferred repository's old name 301 (GET, which PyGithub
        follows) or 307 (any other verb): a 307 or 308 on this host is sent once more, verb and body
        as they were, to its ``Location``. PyGithub took a 3xx for a success: a check run concluded
        over the old name read as done while GitHub had done nothing."""
        status, headers, output = connection.requestJson(verb, url, params, None, body)
        location = _lower(headers).get("location", "")
        if status in (307, 308) and location:
            moved = urllib.parse.urlparse(location)
            if moved.hostname == urllib.parse.urlparse(self._factory.base_url).hostname:
                log.info("%s %s: %d to %s; sent there", verb, url.split("?")[0], status, location)
                path = moved.path + (f"?{moved.query}" if moved.query else "")
                status, headers, output = connection.requestJson(verb, path, None, None, body)
        data = _json(output)
        if not 200 <= status < 300:
            raise connection.createException(status, headers, data)
        return headers, data

    def _graphql_objects(
        self, repo: str, fields: Sequence[tuple[str, str]], trees: bool = False
    ) -> list[Mapping[str, Any] | None] | None:
        """The objects named by ``fields`` in one GraphQL query; None when GraphQL refuses or fails
        (the caller uses REST, and so does every later read of this client, i.e. of this job):
        GitHub Enterprise without GraphQL (404), a GraphQL rate limit or 403, a 5xx or a timeout
        after one retry, an error in the answer. ``QueryTooBig`` when GitHub says the query exceeded
        its resource limits or timed out and a smaller batch may pass."""
        if not self._graphql:
            return None
        owner, _, name = repo.partition("/")
        query, variables = graphql_reads.objects_query(fields, trees)
        try:
            _, data = self._request(
                "POST",
                GRAPHQL,
                body={"query": query, "variables": {"owner": owner, "name": name, **variables}},
                write=False,
                attempts=GRAPHQL_ATTEMPTS,
            )
            return graphql_reads.answers(data, len(fields))
        except (GitHubError, ValueError) as exc:
            if graphql_reads.too_big(exc) and len(fields) > graphql_reads.MIN_OBJECTS:
                raise graphql_reads.QueryTooBig(str(exc)) from exc
            if isinstance(exc, GitHubError) and not (
                exc.status in (0, 403, 404, 429) or exc.status >= 500
            ):
                raise
            log.warning("GraphQL failed a read (%s); reading this job's files over REST", exc)
            self._graphql = False
            return None

    def _note(self, headers: Mapping[str, str] | None) -> None:
        """Record the REST rate limit left (GraphQL has its own points, ``x-ratelimit-resource:
        graphql``)."""
        lowered = _lower(headers)
        value = lowered.get("x-ratelimit-remaining")
        if (
            value is not None
            and value.isdigit()
            and lowered.get("x-ratelimit-resource") != "graphql"
        ):
            self._remaining = int(value)
            self._factory.stats.rate_limit_remaining = int(value)

    def _pages(
        self,
        url: str,
        limit: int | None = None,
        query: Mapping[str, str] | None = None,
        key: str | None = None,
    ) -> Iterator[Any]:
        """Every item of a paginated list, following ``Link: rel="next"`` (at most ``limit``
        items); with ``key``, the list is that member of each page's object (``check_runs``)."""
        next_url: str | None = url
        params: dict[str, Any] | None = {"per_page": PER_PAGE, **(query or {})}
        count = 0
        while next_url:
            headers, data = self._request("GET", next_url, params)
            if key is not None:
                data = data.get(key) if isinstance(data, dict) else None
            for item in data or ():
                if limit is not None and count >= limit:
                    return
                count += 1
                yield item
            next_url, params = _next_link(_lower(headers).get("link", "")), None

    # -- reading -------------------------------------------------------------------------------
    def list_installation_repositories(self) -> list[str]:
        """``owner/name`` of every repository the installation can access."""
        names: list[str] = []
        next_url: str | None = "/installation/repositories"
        params: dict[str, Any] | None = {"per_page": PER_PAGE}
        while next_url:
            headers, data = self._request("GET", next_url, params)
            names += [r["full_name"] for r in (data or {}).get("repositories", [])]
            next_url, params = _next_link(_lower(headers).get("link", "")), None
        return names

    def list_open_pull_requests(self, repo: str) -> list[tuple[int, str, str]]:
        """(number, head sha, base sha) of the repository's open pull requests."""
        return [
            (int(p["number"]), str(p["head"]["sha"]), str(p["base"]["sha"]))
            for p in self._pages(f"/repos/{repo}/pulls", query={"state": "open"})
        ]

    def get_pull_request(self, repo: str, number: int) -> PullRequest:
        _, data = self._request("GET", f"/repos/{repo}/pulls/{number}")
        if isinstance(data.get("changed_files"), int):
            self._changed_files[(repo, number)] = data["changed_files"]
        head, base = data["head"], data["base"]
        return PullRequest(
            repo=repo,
            number=number,
            head_sha=head["sha"],
            base_sha=base["sha"],
            base_ref=base["ref"],
            head_ref=head["ref"],
            author=_login(data.get("user")),
            state=data["state"],
            draft=bool(data.get("draft")),
            default_branch=(base.get("repo") or {}).get("default_branch", "main"),
            head_repo=(head.get("repo") or {}).get("full_name"),
            node_id=str(data.get("node_id") or ""),
            auto_merge=bool(data.get("auto_merge")),
            auto_merge_by=(
                _login(data["auto_merge"].get("enabled_by")) if data.get("auto_merge") else ""
            ),
            merged=bool(data.get("merged")),
        )

    def list_pull_request_files(self, repo: str, number: int) -> tuple[list[ChangedFile], bool]:
        files = [
            ChangedFile(
                f["filename"], f["status"], f.get("previous_filename"), f.get("patch"), f.get("sha")
            )
            for f in self._pages(f"/repos/{repo}/pulls/{number}/files", limit=MAX_PR_FILES)
        ]
        total = self._changed_files.get((repo, number))
        truncated = len(files) >= MAX_PR_FILES and (total is None or total > len(files))
        return files, truncated

    def merge_base(self, repo: str, base: str, head: str) -> str:
        # one commit per page: only ``merge_base_commit`` is read
        _, data = self._request("GET", f"/repos/{repo}/compare/{base}...{head}", {"per_page": 1})
        return str(data["merge_base_commit"]["sha"])

    def default_branch_head(self, repo: str) -> str:
        # without ``sha``, GitHub lists the default branch's commits from its head
        _, data = self._request("GET", f"/repos/{repo}/commits", {"per_page": 1})
        return str(data[0]["sha"])

    def list_open_pull_requests_for_sha(self, repo: str, head_sha: str) -> list[int]:
        return [
            p["number"]
            for p in self._pages(f"/repos/{repo}/commits/{head_sha}/pulls")
            if p.get("state") == "open"
        ]

    def read_tree(self, repo: str, ref: str, prefixes: Sequence[str]) -> Mapping[str, bytes]:
        """Files under ``prefixes`` at ``ref``: one recursive tree request now, then one request per
        blob when it is first read (``LazyTree``; cached by sha). Blobs over 10 MB, symlinks and
        submodules are named in ``skipped`` (see tree_files); a whole tree (prefix ``""``) too large
        for GitHub to list comes back with what was listed and ``cut`` saying so."""
        wanted = normalise_prefixes(prefixes)
        entries: dict[str, tuple[str, int]] = {}
        skipped: dict[str, str] = {}
        skipped_ids: dict[str, str] = {}
        installation = self._token.installation_id
        known_listing = self._objects.listing(installation, repo, ref, wanted)
        if known_listing is None:
            listed, cut = self._tree_entries(repo, ref, wanted)
            self._objects.add_listing(installation, repo, ref, wanted, listed, cut)
        else:
            listed, cut = list(known_listing[0]), known_listing[1]
        for entry in listed:
            path = entry["path"]
            if entry["type"] == "commit":
                skipped[path] = "a submodule (a commit of another repository, not a file)"
            elif entry["type"] != "blob":
                continue
            elif entry.get("mode") == "120000":
                skipped[path] = "a symlink; the bot does not follow symlinks"
            elif int(entry.get("size") or 0) > MAX_BLOB_BYTES:
                skipped[path] = too_large(int(entry["size"]))
            else:
                entries[path] = (entry["sha"], int(entry.get("size") or 0))
                continue
            skipped_ids[path] = str(entry.get("sha") or "")
        with self._blob_lock:
            known = self._listed.setdefault(repo, {})
            for path, (sha, size) in entries.items():
                known.setdefault(sha, (path, size))
        return LazyTree(
            entries,
            lambda sha: self._blob(repo, sha),
            skipped,
            skipped_ids,
            cut=f"GitHub's listing of the tree at {ref[:12]} stops at 100,000 entries"
            if cut
            else "",
        )

    def _tree_entries(
        self, repo: str, ref: str, wanted: tuple[str, ...]
    ) -> tuple[list[dict[str, Any]], bool]:
        """The entries under ``wanted`` and whether the listing was cut (only for the whole
        tree)."""
        _, data = self._request(
            "GET", f"/repos/{repo}/git/trees/{quote(ref, safe='/')}", {"recursive": "1"}
        )
        if not data.get("truncated"):
            return [e for e in data["tree"] if under_prefixes(e["path"], wanted)], False
        # the whole tree cannot be listed: say so, never pretend the listing is all of it
        if "" in wanted:
            return list(data["tree"]), True
        # Too big for one listing (over 100,000 entries): walk down to each prefix, list only below
        # it.
        found: list[dict[str, Any]] = []
        for prefix in wanted:
            found.extend(self._entries_below(repo, data["sha"], prefix))
        return found, False

    def _entries_below(self, repo: str, tree_sha: str, prefix: str) -> list[dict[str, Any]]:
        parts = [p for p in prefix.split("/") if p]
        walked: list[str] = []
        for i, part in enumerate(parts):
            _, data = self._request("GET", f"/repos/{repo}/git/trees/{tree_sha}")
            entry = next((e for e in data["tree"] if e["path"] == part), None)
            if entry is None and data.get("truncated"):
                # a cut listing does not say the folder is absent: nothing is known below it
                raise GitHubError(
                    f"the folder {'/'.join(walked) or '(root)'!r} has too many entries for GitHub "
                    f"to list; {part!r} may be past the cut",
                    status=0,
                )
            if entry is None:
                return []
            walked.append(part)
            if entry["type"] != "tree":
                return [{**entry, "path": "/".join(walked)}] if i == len(parts) - 1 else []
            tree_sha = entry["sha"]
        _, data = self._request("GET", f"/repos/{repo}/git/trees/{tree_sha}", {"recursive": "1"})
        if data.get("truncated"):
            raise GitHubError(
                f"the tree under {prefix!r} has too many files for GitHub to list", status=0
            )
        base = "/".join(walked)
        return [{**e, "path": f"{base}/{e['path']}" if base else e["path"]} for e in data["tree"]]

    def _blob(self, repo: str, sha: str) -> bytes:
        """A blob by sha: from the cache, else in a GraphQL batch with the listed blobs nearest to
        it (one request for many), else over REST."""
        installation = self._token.installation_id
        with self._blob_lock:
            cached = self._objects.blob(installation, sha)
            if cached is not None:
                return cached
            listed = self._listed.get(repo, {})
            if sha in listed and sha not in self._rest_only:
                wanted = [
                    s
                    for s in listed
                    if not self._objects.has_blob(installation, s) and s not in self._rest_only
                ]
                paths = {s: p for s, (p, _) in listed.items()}
                sizes = {s: n for s, (_, n) in listed.items()}
                while True:
                    batch = graphql_reads.nearest_first(sha, paths, sizes, wanted, self._batch)
                    try:
                        found = self._graphql_objects(repo, [("oid", s) for s in batch])
                        break
                    except graphql_reads.QueryTooBig as exc:
                        self._batch = max(graphql_reads.MIN_OBJECTS, len(batch) // 2)
                        log.warning(
                            "GraphQL: %s; batches of %d objects from now on", exc, self._batch
                        )
                for blob_sha, node in zip(batch, found or (), strict=False):
                    content = graphql_reads.blob_bytes(node)
                    if content is None:
                        self._rest_only.add(blob_sha)
                    else:
                        self._objects.add_blob(installation, blob_sha, content)
                cached = self._objects.blob(installation, sha)
                if cached is not None:
                    return cached
            _, data = self._request("GET", f"/repos/{repo}/git/blobs/{sha}")
            content = _decode(data)
            self._objects.add_blob(installation, sha, content)
            return content

    def read_file(self, repo: str, ref: str, path: str) -> bytes | None:
        try:
            _, data = self._request(
                "GET", f"/repos/{repo}/contents/{quote(path.strip('/'))}", {"ref": ref}
            )
        except NotFound:
            return None
        except GitHubError as exc:
            if exc.status == 403 and "too_large" in str(exc):
                # over 100 MB the contents API answers 403 (code ``too_large``): there, not read
                raise GitHubError(
                    f"{path} at {ref}: over the size GitHub serves ({exc})", 413
                ) from exc
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None  # a folder, a symlink or a submodule
        if "path" in data and str(data["path"]).strip("/") != path.strip("/"):
            # GitHub followed a symlink to another file: the bot does not follow symlinks
            return None
        if data.get("encoding") == "base64":
            return _decode(data)
        size = int(data.get("size") or 0)  # over 1 MB the contents API leaves the content out
        if size > MAX_BLOB_BYTES:
            raise GitHubError(f"{path} at {ref}: {too_large(size)}", status=413)
        return self._blob(repo, data["sha"])

    def read_files(self, repo: str, ref: str, paths: Sequence[str]) -> dict[str, bytes]:
        """The files among ``paths`` at ``ref`` in one GraphQL query (with their folders' listings,
        whose modes tell a symlink); what GraphQL cannot give exactly or failed to give (an error
        names the file or its folder), or all of them when it refuses, over REST."""
        wanted = [p.strip("/") for p in paths]
        folders = sorted({p.rpartition("/")[0] for p in wanted})
        found = self._graphql_objects(
            repo, [("expression", f"{ref}:{p}") for p in [*wanted, *folders]], trees=True
        )
        out = TreeFiles()  # ``skipped``: a file over the size GitHub serves
        for i, path in enumerate(wanted):
            folder, _, name = path.rpartition("/")
            listing = found[len(wanted) + folders.index(folder)] if found is not None else None
            if found is not None and not graphql_reads.failed(found[i], listing):
                node, mode = found[i], graphql_reads.entry_mode(listing, name)
                if (
                    node is None
                    or node.get("__typename") != "Blob"
                    or mode == graphql_reads.SYMLINK_MODE
                ):
                    continue  # missing, a folder, a submodule or a symlink: not a file
                content = graphql_reads.blob_bytes(node)
                if content is not None:
                    out[path] = content
                    continue
            try:
                data = self.read_file(repo, ref, path)
            except GitHubError as exc:
                if exc.status != 413:
                    raise
                out.skipped[path] = str(exc)  # over the size GitHub serves: there, not read
                continue
            if data is not None:
                out[path] = data
        return out

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        return [
            ReviewInfo(
                r["id"],
                _login(r.get("user")),
                r["state"],
                r.get("commit_id") or "",
                r.get("body") or "",
            )
            for r in self._pages(f"/repos/{repo}/pulls/{number}/reviews")
        ]

    def list_issue_comments(self, repo: str, number: int) -> list[CommentInfo]:
        return [
            CommentInfo(c["id"], _login(c.get("user")), c.get("body") or "")
            for c in self._pages(f"/repos/{repo}/issues/{number}/comments")
        ]

    def list_review_comments(self, repo: str, number: int) -> list[ReviewCommentInfo]:
        return [
            ReviewCommentInfo(
                c["id"],
                _login(c.get("user")),
                c["path"],
                c.get("line"),
                c.get("body") or "",
                c.get("commit_id") or "",
            )
            for c in self._pages(f"/repos/{repo}/pulls/{number}/comments")
        ]

    def get_permission(self, repo: str, login: str) -> str:
        try:
            _, data = self._request("GET", f"/repos/{repo}/collaborators/{quote(login)}/permission")
        except NotFound:
            return "none"
        return str(data.get("permission") or "none")

    def get_team_membership(self, org: str, team_slug: str, login: str) -> str | None:
        team = f"/orgs/{quote(org)}/teams/{quote(team_slug)}"
        installation = self._token.installation_id
        refused = self._factory.team_refusal(installation, team)
        # GitHub would not show this team lately: the same answer, not asked again
        if refused is not None:
            raise refused
        try:
            _, data = self._request("GET", f"{team}/memberships/{quote(login)}")
        except NotFound:
            # 404 means "not a member", but also "this team is hidden from you" (no members: read,
            # another organisation): only a team the App can see makes the 404 an answer. Raises
            # NotFound otherwise. The answer is kept an hour for the installation
            # (``AppClientFactory.team_visible``), a hidden team ten minutes (``team_refusal``).
            if not self._factory.team_visible(installation, team):
                try:
                    self._request("GET", team)
                except NotFound as exc:
                    self._factory.team_refusal(installation, team, exc)
                    raise
                self._factory.team_visible(installation, team, seen=True)
            return None
        # 403: the App lacks Members: read (a rate limit is not an answer)
        except GitHubError as exc:
            if exc.status == 403 and not isinstance(exc, RateLimited):
                self._factory.team_refusal(installation, team, exc)
            raise
        state = data.get("state") if isinstance(data, dict) else None
        return str(state) if state else None

    def bot_login(self) -> str:
        return self._factory.bot_login()

    def rate_limit_remaining(self) -> int | None:
        return self._remaining

    def list_commit_statuses(self, repo: str, ref: str) -> list[StatusInfo]:
        """The combined status's ``statuses`` (the latest of each context), every page, 100 a
        page; fewer than its ``total_count`` raises: a context past a cut may be the red one."""
        statuses: list[Any] = []
        total = 0
        next_url: str | None = f"/repos/{repo}/commits/{quote(ref, safe='')}/status"
        params: dict[str, Any] | None = {"per_page": PER_PAGE}
        while next_url:
            headers, data = self._request("GET", next_url, params)
            if isinstance(data, dict):
                statuses += data.get("statuses") or []
                total = max(total, int(data.get("total_count") or 0))
            next_url, params = _next_link(_lower(headers).get("link", "")), None
        if len(statuses) < total:
            raise GitHubError(
                f"GET /repos/{repo}/commits/{ref}/status: {len(statuses)} of {total} statuses read"
            )
        return [
            StatusInfo(str(s.get("context") or ""), str(s.get("state") or ""))
            for s in statuses
            if isinstance(s, dict)
        ]

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunInfo]:
        """Every run on ``head_sha``: all pages, 100 a page (a job finds the run it journalled
        behind newer re-runs); with ``name``, only this App's runs of that name (``app_id``:
        another App's or a workflow job's run of the same name is not the App's verdict)."""
        query = {"check_name": name, "app_id": str(self._factory.app_id)} if name else {}
        runs = self._pages(
            f"/repos/{repo}/commits/{quote(head_sha, safe='')}/check-runs",
            query={**query, "filter": "all"},
            key="check_runs",
        )
        return [
            CheckRunInfo(
                int(r["id"]),
                str(r.get("head_sha") or head_sha),
                str(r.get("name") or ""),
                str(r.get("status") or ""),
                r.get("conclusion"),
                str(r.get("external_id") or ""),
                int((r.get("output") or {}).get("annotations_count") or 0),
                str((r.get("output") or {}).get("title") or ""),
                base_of(str((r.get("output") or {}).get("summary") or "")),
            )
            for r in runs
        ]

    def check_states(
        self, repo: str, number: int, head_sha: str
    ) -> list[required_checks.CheckState] | None:
        if not self._graphql:
            return None
        owner, _, name = repo.partition("/")
        try:
            _, data = self._request(
                "POST",
                GRAPHQL,
                body={
                    "query": required_checks.QUERY,
                    "variables": {"owner": owner, "name": name, "head": head_sha, "number": number},
                },
                write=False,
                attempts=GRAPHQL_ATTEMPTS,
            )
            return required_checks.parse(data)
        except (GitHubError, ValueError) as exc:
            log.warning(
                "required checks could not be read over GraphQL (%s); listing check runs", exc
            )
            return None

    # -- writing -------------------------------------------------------------------------------
    def create_check_run(
        self,
        repo: str,
        head_sha: str,
        name: str,
        status: CheckStatus,
        output: CheckRunOutput | None = None,
        external_id: str = "",
        conclusion: CheckConclusion | None = None,
        actions: Sequence[Mapping[str, str]] = (),
    ) -> int:
        body: dict[str, Any] = {
            "name": name,
            "head_sha": head_sha,
            "status": "completed" if conclusion else status,
        }
        if external_id:
            body["external_id"] = external_id
        body.update(_check_fields(conclusion, output, actions))

        def created() -> tuple[dict[str, Any], Any] | None:
            """The open run that a POST answered 5xx (or not at all) created all the same."""
            return _adopt(
                r.id
                for r in self.list_check_runs(repo, head_sha, name)
                if (r.name, r.head_sha, r.external_id) == (name, head_sha, external_id)
                and r.status != "completed"
            )

        _, data = self._request(
            "POST",
            f"/repos/{repo}/check-runs",
            body=body,
            recheck=created if external_id and not conclusion else None,
        )
        return int(data["id"])

    def update_check_run(
        self,
        repo: str,
        check_run_id: int,
        status: CheckStatus | None = None,
        conclusion: CheckConclusion | None = None,
        output: CheckRunOutput | None = None,
        actions: Sequence[Mapping[str, str]] = (),
    ) -> None:
        body = _check_fields(conclusion, output, actions)
        if status is not None and conclusion is None:
            body["status"] = status
        self._request("PATCH", f"/repos/{repo}/check-runs/{check_run_id}", body=body)

    def create_review(
        self,
        repo: str,
        number: int,
        commit_sha: str,
        event: ReviewEvent,
        body: str,
        comments: Sequence[InlineComment] = (),
    ) -> int:
        payload: dict[str, Any] = {"commit_id": commit_sha, "event": event, "body": body}
        if comments:
            payload["comments"] = [
                {"path": c.path, "line": c.line, "side": "RIGHT", "body": c.body}
                | (
                    {"start_line": c.start_line, "start_side": "RIGHT"}
                    if c.start_line is not None and c.start_line < c.line
                    else {}
                )
                for c in comments
            ]
        state = REVIEW_STATES[event]

        def posted() -> tuple[dict[str, Any], Any] | None:
            """The review that a POST answered 5xx (or not at all) posted all the same."""
            me = self.bot_login()
            return _adopt(
                r.id
                for r in self.list_reviews(repo, number)
                if (r.user, r.commit_id, r.state, r.body) == (me, commit_sha, state, body)
            )

        _, data = self._request(
            "POST", f"/repos/{repo}/pulls/{number}/reviews", body=payload, recheck=posted
        )
        return int(data["id"])

    def dismiss_review(self, repo: str, number: int, review_id: int, message: str) -> None:
        self._request(
            "PUT",
            f"/repos/{repo}/pulls/{number}/reviews/{review_id}/dismissals",
            body={"message": message, "event": "DISMISS"},
        )

    def enable_auto_merge(
        self, repo: str, number: int, node_id: str, head_sha: str, merge_method: str
    ) -> None:
        self._mutate(ENABLE_AUTO_MERGE, {"id": node_id, "head": head_sha, "method": merge_method})

    def disable_auto_merge(self, repo: str, number: int, node_id: str) -> None:
        self._mutate(DISABLE_AUTO_MERGE, {"id": node_id})

    def _mutate(self, mutation: str, variables: dict[str, Any]) -> None:
        """A GraphQL mutation. GitHub answers its ``errors`` with 200; they are retried and raised
        as REST's answer would be (``_graphql_failed``): a rate limit ``RateLimited``, GitHub
        failing a 502 ``GitHubError``, a refusal a 403, 404 or 422 ``GitHubError``."""
        self._request(
            "POST",
            GRAPHQL,
            write=True,
            body={"query": mutation, "variables": variables},
            answered=_graphql_failed,
        )

    def merge_pull_request(self, repo: str, number: int, head_sha: str, merge_method: str) -> None:
        self._request(
            "PUT",
            f"/repos/{repo}/pulls/{number}/merge",
            body={"sha": head_sha, "merge_method": merge_method.lower()},
        )

    def create_issue_comment(self, repo: str, number: int, body: str) -> int:
        def posted() -> tuple[dict[str, Any], Any] | None:
            """The comment that a POST answered 5xx (or not at all) posted all the same: the App's,
            word for word (it posts a comment only where none of its own with the marker is)."""
            me = self.bot_login()
            return _adopt(
                c.id
                for c in self.list_issue_comments(repo, number)
                if (c.user, c.body) == (me, body)
            )

        _, data = self._request(
            "POST", f"/repos/{repo}/issues/{number}/comments", body={"body": body}, recheck=posted
        )
        return int(data["id"])

    def edit_issue_comment(self, repo: str, comment_id: int, body: str) -> None:
        self._request("PATCH", f"/repos/{repo}/issues/comments/{comment_id}", body={"body": body})

    def list_issues(self, repo: str, creator: str) -> list[IssueInfo]:
        return [
            IssueInfo(
                int(i["number"]),
                _login(i.get("user")),
                i.get("title") or "",
                i.get("body") or "",
                i.get("state") or "open",
            )
            for i in self._pages(
                f"/repos/{repo}/issues", query={"state": "all", "creator": creator}
            )
            if "pull_request" not in i and _login(i.get("user")) == creator
        ]

    def create_issue(self, repo: str, title: str, body: str) -> int:
        def opened() -> tuple[dict[str, Any], Any] | None:
            """The issue that a POST answered 5xx (or not at all) opened all the same."""
            return _adopt(
                (
                    i.number
                    for i in self.list_issues(repo, self.bot_login())
                    if (i.title, i.body, i.state) == (title, body, "open")
                ),
                field="number",
            )

        _, data = self._request(
            "POST", f"/repos/{repo}/issues", body={"title": title, "body": body}, recheck=opened
        )
        return int(data["number"])

    def edit_issue(self, repo: str, number: int, body: str) -> None:
        self._request("PATCH", f"/repos/{repo}/issues/{number}", body={"body": body})


def _adopt(found: Iterable[int], field: str = "id") -> tuple[dict[str, Any], Any] | None:
    """The answer a creation GitHub did despite its 5xx would have had: the first of ``found`` (the
    ids a recheck listed) as ``{field: id}``; None when there is none, so it is sent again."""
    first = next(iter(found), None)
    return None if first is None else ({}, {field: first})


def _check_fields(
    conclusion: str | None, output: CheckRunOutput | None, actions: Sequence[Mapping[str, str]]
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if conclusion is not None:
        body["status"] = "completed"
        body["conclusion"] = conclusion
    if output is not None:
        body["output"] = {"title": output.title, "summary": output.summary}
        if output.text:
            body["output"]["text"] = output.text
        if output.annotations:
            body["output"]["annotations"] = [_annotation(a) for a in output.annotations]
    if actions:
        body["actions"] = [dict(a) for a in actions]
    return body


def _annotation(a: Any) -> dict[str, Any]:
    raw = asdict(a)
    out = {k: v for k, v in raw.items() if v not in (None, "") and k != "level"}
    out["annotation_level"] = a.level
    return out


def _decode(data: Mapping[str, Any]) -> bytes:
    if data.get("encoding") == "base64":
        return base64.b64decode(data.get("content") or "")
    return str(data.get("content") or "").encode()


def _login(user: Mapping[str, Any] | None) -> str:
    return str((user or {}).get("login") or "ghost")  # a deleted account shows as "ghost" on GitHub


def _epoch(iso: Any) -> float:
    """Epoch seconds of GitHub's ``2024-01-02T03:04:05Z`` (0 when absent or unreadable)."""
    try:
        return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _next_link(header: str) -> str | None:
    for part in header.split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            return url.strip().strip("<>")
    return None
