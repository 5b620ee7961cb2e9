"""The stand-in GitHub server: the REST endpoints the bot's client uses, over ``LocalGitHub``.

Realistic where it matters to the client: App auth (a JWT signed with the App's key for the token
call and ``GET /app``, an installation token afterwards, tokens that expire), pagination with
``Link`` headers, rate-limit headers, GitHub's 422s (through ``LocalGitHub``'s rules), faults
injected at run time, and GitHub's latency: ``latency`` seconds added to every request, and every
write checked against GitHub's pacing advice (``Pacing``). Inspection endpoints live under
``/_standin/``.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import posixpath
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from email.utils import formatdate
from typing import Any
from urllib.parse import urlencode

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, Response, has_request_context, jsonify, request
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from bot.core.snapshot import GitError, run_git
from bot.github import limits as github_limits
from bot.github.api import Annotation, CheckRunOutput, GitHubError, InlineComment, NotFound
from bot.github.local import OTHER_APP, LocalGitHub, Unprocessable
from bot.github.local_merge import BranchProtection
from tests.standin.graphql_api import automerge_mutations, execute, is_mutation
from tests.standin.shapes import Shapes

# the stand-in's administrator: dismisses reviews through /_standin/dismissals
ADMIN = "repository-admin"
JWT_MAX_LIFETIME = 600 + 60  # GitHub: exp at most 10 minutes ahead, iat may be 60 s in the past
CONTENTS_INLINE_LIMIT = github_limits.CONTENTS_INLINE_BYTES
# the contents API's "no" to a file it does not serve, as public clients report it (the words of
# the 1 MB era; GitHub's words past 100 MB are not documented), with ``code: too_large``
TOO_LARGE = (
    "This API returns blobs up to 1 MB in size. The requested blob is too large to fetch via the "
    "API, but you can use the Git Data API to request blobs up to 100 MB in size."
)
RATE_LIMIT = 5000
REST_DOCS = "https://docs.github.com/rest"
SECONDARY_LIMIT_DOCS = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
# each operation's documentation, as GitHub names it in an error's ``documentation_url`` (the
# ``externalDocs`` of @octokit/openapi's api.github.com description), by the view serving it
DOCUMENTATION = {
    view: f"{REST_DOCS}/{page}"
    for view, page in {
        "get_app": "apps/apps#get-the-authenticated-app",
        "installations": "apps/apps#list-installations-for-the-authenticated-app",
        "installation_repositories": (
            "apps/installations#list-repositories-accessible-to-the-app-installation"
        ),
        "hook_deliveries": "apps/webhooks#list-deliveries-for-an-app-webhook",
        "redeliver": "apps/webhooks#redeliver-a-delivery-for-an-app-webhook",
        "access_token": "apps/apps#create-an-installation-access-token-for-an-app",
        "manifest_conversion": "apps/apps#create-a-github-app-from-a-manifest",
        "list_pulls": "pulls/pulls#list-pull-requests",
        "get_pull": "pulls/pulls#get-a-pull-request",
        "pull_files": "pulls/pulls#list-pull-requests-files",
        "commits": "commits/commits#list-commits",
        "pulls_for_commit": "commits/commits#list-pull-requests-associated-with-a-commit",
        "reviews": "pulls/reviews#list-reviews-for-a-pull-request",
        "create_review": "pulls/reviews#create-a-review-for-a-pull-request",
        "dismiss": "pulls/reviews#dismiss-a-review-for-a-pull-request",
        "review_comments": "pulls/comments#list-review-comments-on-a-pull-request",
        "issue_comments": "issues/comments#list-issue-comments",
        "create_comment": "issues/comments#create-an-issue-comment",
        "edit_comment": "issues/comments#update-an-issue-comment",
        "issues": "issues/issues#list-repository-issues",
        "create_issue": "issues/issues#create-an-issue",
        "edit_issue": "issues/issues#update-an-issue",
        "permission": "collaborators/collaborators#get-repository-permissions-for-a-user",
        "get_team": "teams/teams#get-a-team-by-name",
        "team_membership": "teams/members#get-team-membership-for-a-user",
        "create_check_run": "checks/runs#create-a-check-run",
        "list_check_runs": "checks/runs#list-check-runs-for-a-git-reference",
        "combined_status": "commits/statuses#get-the-combined-status-for-a-specific-reference",
        "update_check_run": "checks/runs#update-a-check-run",
        "tree": "git/trees#get-a-tree",
        "compare": "commits/commits#compare-two-commits",
        "blob": "git/blobs#get-a-blob",
        "contents": "repos/contents#get-repository-content",
        "merge": "pulls/pulls#merge-a-pull-request",
    }.items()
}
# operations whose 422 is "Validation Error Simple" (``errors``: strings)
SIMPLE_ERRORS = frozenset({"create_review", "dismiss"})
OTHER_APP_ID = 15368  # the App of check runs the bot did not make (a CI's)
# "Get repository permissions for a user"
LEGACY_PERMISSION = {"maintain": "write", "triage": "read"}


def generate_private_key_pem() -> str:
    """A throwaway RSA key for the App (PEM, PKCS#1 as GitHub issues them)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@dataclass
class Fault:
    """Answer the next ``count`` requests whose path matches ``path`` (a glob) with ``status``.

    ``skip`` lets that many matching requests through first; ``expires_in`` ends the fault that many
    seconds after it was added (a rate limit until its reset: ``count`` large, ``expires_in`` =
    ``reset_in``); ``hold`` (seconds) makes matching requests *succeed* but holds each answer that
    long, so a client can be killed after GitHub did a write and before it learned the result;
    ``written`` performs the request and answers ``status`` all the same (a 502 from GitHub's edge
    after GitHub did the write). ``graphql`` answers as GitHub's GraphQL does: HTTP 200 with an
    ``errors`` entry of that ``type`` ("RATE_LIMITED"; "" for none, as an internal error comes);
    ``mutations`` matches GraphQL mutations only, not the queries that read.
    """

    path: str
    status: int = 500
    count: int = 1
    method: str | None = None
    retry_after: float | None = None  # seconds, sent as ``retry-after``
    # seconds after the fault was added, sent as ``x-ratelimit-reset`` (remaining 0)
    reset_in: float | None = None
    message: str = ""
    skip: int = 0
    expires_in: float | None = None
    hold: float | None = None
    written: bool = False
    graphql: str | None = None
    mutations: bool = False
    added: float = 0.0  # epoch seconds, set when the fault is added

    def matches(self, method: str, path: str, mutation: bool = False) -> bool:
        return (
            (self.method is None or self.method.upper() == method)
            and fnmatch.fnmatchcase(path, self.path)
            and (mutation or not self.mutations)
        )


@dataclass
class Pacing:
    """GitHub's advice for writes (REST best practices): one at a time, ``pause`` seconds between
    them.

    Every mutative request made with an installation token (POST, PATCH, PUT, DELETE, except a
    GraphQL query, which only reads) is logged with its gap: from the end of the previous write's
    answer to this write's arrival. A write that arrives while another is in progress, or sooner
    than ``pause`` after the previous one ended, is a violation (only flagged: GitHub answers it,
    perhaps later with a secondary rate limit). ``pause`` 0 flags only concurrent writes.
    """

    pause: float = 0.0
    writes: list[dict[str, Any]] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    _open: int = 0
    _last_end: float | None = None

    def begin(self, method: str, path: str, now: float) -> dict[str, Any]:
        """Log a write arriving at ``now`` (monotonic seconds); the caller holds the state lock."""
        gap = None if self._open or self._last_end is None else round(now - self._last_end, 4)
        write = {"method": method, "path": path, "gap": gap, "concurrent": bool(self._open)}
        if self._open or (gap is not None and gap < self.pause):
            self.violations.append(write)
        self.writes.append(write)
        self._open += 1
        return write

    def end(self, now: float) -> None:
        self._open -= 1
        self._last_end = now

    def as_dict(self) -> dict[str, Any]:
        return {
            "pause": self.pause,
            "writes": list(self.writes),
            "violations": list(self.violations),
        }


@dataclass
class ContentLimit:
    """GitHub's secondary rate limit on content creation ("Rate limits for the REST API": no more
    than 80 content-generating requests per minute, 500 per hour): at most ``count`` creating
    requests (POSTs of comments, reviews, check runs) per ``seconds``; the next is answered
    ``status`` (403, or 429: GitHub answers either) with ``retry-after``."""

    count: int
    seconds: float
    # GitHub answers a secondary rate limit "with a 403 or 429" ("Rate limits for the REST API")
    status: int = 403
    # monotonic times of the creations in the window
    created: list[float] = field(default_factory=list)
    refused: int = 0

    CREATING = (
        "/repos/*/*/issues/*/comments",
        "/repos/*/*/pulls/*/reviews",
        "/repos/*/*/check-runs",
        "/repos/*/*/issues",
    )

    def take(self, method: str, path: str, now: float) -> float | None:
        """Seconds to wait when this request is over the limit (counted as refused), else None
        (counted)."""
        if method != "POST" or not any(fnmatch.fnmatchcase(path, p) for p in self.CREATING):
            return None
        self.created[:] = [t for t in self.created if now - t < self.seconds]
        if len(self.created) >= self.count:
            self.refused += 1
            return max(self.created[0] + self.seconds - now, 0.0)
        self.created.append(now)
        return None


@dataclass
class StandInState:
    """Everything the server knows besides the pull request: App, tokens, faults, request log."""

    local: LocalGitHub
    private_key_pem: str
    app_id: int = 1
    slug: str = "registry-bot"
    installation_id: int = 1
    token_ttl: float = 3600.0
    # when an administrator suspended the installation (GitHub's ``suspended_at``); None: active
    suspended_at: float | None = None
    tree_limit: int = github_limits.TREE_ENTRIES
    # the contents API's largest file (GitHub: 100 MB; a test makes it small)
    contents_limit: int = github_limits.CONTENTS_BYTES
    clock: Callable[[], float] = time.time
    tokens: dict[str, float] = field(default_factory=dict)  # token -> expiry (epoch seconds)
    # token -> the installation it is for
    token_installations: dict[str, int] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    fault_hits: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    remaining: int = RATE_LIMIT
    latency: float = 0.0  # seconds added to every API request (real GitHub: about 0.05-0.3)
    pacing: Pacing = field(default_factory=Pacing)
    content_limit: ContentLimit | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # code -> (manifest, issued)
    manifests: dict[str, tuple[dict[str, Any], float]] = field(default_factory=dict)
    # the App the manifest flow created (its secret)
    registered: dict[str, Any] = field(default_factory=dict)
    # where GitHub delivers webhooks: {"url", "secret"}
    hook: dict[str, str] = field(default_factory=dict)
    # every attempt, as GET /app/hook/deliveries
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    payloads: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # guid -> (event, body)
    # every request with its answer, and every payload sent to /_standin/deliveries, for the
    # conformance check (tests/conformance.py): kept here by the in-thread stand-in (``StandIn``),
    # else in $STANDIN_RECORD
    recorded: list[dict[str, Any]] | None = None

    def deliver(
        self, guid: str, event: str, body: bytes, redelivery: bool = False
    ) -> dict[str, Any]:
        """POST a webhook to ``hook`` as GitHub does and record the attempt (status code 0: no
        connection)."""
        import hashlib
        import hmac
        import urllib.error
        import urllib.request

        self.payloads[guid] = (event, body)
        signature = (
            "sha256=" + hmac.new(self.hook["secret"].encode(), body, hashlib.sha256).hexdigest()
        )
        started = time.monotonic()
        request = urllib.request.Request(
            self.hook["url"],
            data=body,
            method="POST",
            headers={
                "X-GitHub-Event": event,
                "X-GitHub-Delivery": guid,
                "X-Hub-Signature-256": signature,
                "Content-Type": "application/json",
                "User-Agent": "GitHub-Hookshot/standin",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                code, status = response.status, "OK"
        except urllib.error.HTTPError as exc:
            code, status = exc.code, f"Invalid HTTP Response: {exc.code}"
        except OSError:
            code, status = 0, "failed to connect to host"
        data = json.loads(body)
        with self.lock:
            attempt = {
                "id": len(self.deliveries) + 1,
                "guid": guid,
                "delivered_at": _iso(self.clock()),
                "redelivery": redelivery,
                "duration": round(time.monotonic() - started, 3),
                "status": status,
                "status_code": code,
                "event": event,
                "action": data.get("action"),
                "installation_id": (data.get("installation") or {}).get("id"),
                "repository_id": (data.get("repository") or {}).get("id"),
                "throttled_at": None,
            }
            self.deliveries.append(attempt)
        return attempt

    def public_key(self) -> Any:
        return serialization.load_pem_private_key(
            self.private_key_pem.encode(), password=None
        ).public_key()

    def issue_token(self) -> tuple[str, float]:
        token = "ghs_" + secrets.token_hex(18)
        expires = self.clock() + self.token_ttl
        with self.lock:
            self.tokens[token] = expires
            self.token_installations[token] = self.installation_id
        return token, expires

    def expire_tokens(self) -> int:
        with self.lock:
            for token in self.tokens:
                self.tokens[token] = 0.0
            return len(self.tokens)

    def add_faults(self, faults: Sequence[Fault]) -> None:
        with self.lock:
            for fault in faults:
                fault.added = fault.added or self.clock()
            self.faults.extend(faults)

    def take_fault(self, method: str, path: str, mutation: bool = False) -> Fault | None:
        with self.lock:
            now = self.clock()
            self.faults[:] = [
                f for f in self.faults if f.expires_in is None or now < f.added + f.expires_in
            ]
            for fault in self.faults:
                if fault.count > 0 and fault.matches(method, path, mutation):
                    if fault.skip > 0:
                        fault.skip -= 1
                        continue
                    fault.count -= 1
                    self.fault_hits.append({"method": method, "path": path, "status": fault.status})
                    if fault.count == 0:
                        self.faults.remove(fault)
                    return fault
        return None

    def snapshot(self) -> dict[str, Any]:
        state = self.local.state()
        with self.lock:
            state.update(
                requests=list(self.requests),
                fault_hits=list(self.fault_hits),
                faults=[asdict(f) for f in self.faults],
                rate_limit_remaining=self.remaining,
                latency=self.latency,
                pacing=self.pacing.as_dict(),
                deliveries=list(self.deliveries),
                content_limit_refused=self.content_limit.refused if self.content_limit else 0,
            )
        return state


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def create_app(state: StandInState) -> Flask:
    """The Flask application of the stand-in; ``state`` is shared with the caller for inspection."""
    app = Flask("standin")
    local = state.local

    # -- plumbing --------------------------------------------------------------------------
    @app.before_request
    def latency_pacing_and_faults() -> Response | None:
        if request.path.startswith("/_standin/"):
            return None
        if is_write():
            with state.lock:
                request.environ["standin.write"] = state.pacing.begin(
                    request.method, request.path, time.monotonic()
                )
        if state.latency > 0:
            time.sleep(state.latency)
        if state.content_limit is not None:
            with state.lock:
                wait = state.content_limit.take(request.method, request.path, time.monotonic())
            if wait is not None:
                return _error(
                    state.content_limit.status,
                    "You have exceeded a secondary rate limit and have been temporarily blocked "
                    "from content creation. Please retry your request again later.",
                    {"retry-after": str(int(wait) + 1)},
                    documentation=SECONDARY_LIMIT_DOCS,
                )
        mutation = request.path == "/graphql" and is_mutation(request.get_data(as_text=True))
        fault = state.take_fault(request.method, request.path, mutation)
        if fault is None:
            return None
        if fault.written:  # performed; its answer is replaced after the request
            request.environ["standin.written"] = fault
        if fault.hold is not None:
            request.environ["standin.hold"] = fault.hold
        if fault.written or fault.hold is not None:
            return None
        return _fault_answer(fault)

    @app.after_request
    def log_and_rate_limit(response: Response) -> Response:
        written = request.environ.get("standin.written")
        if written is not None and response.status_code < 400:
            response = _fault_answer(written)
        # GitHub's clock, as GitHub sends it
        response.headers["Date"] = formatdate(state.clock(), usegmt=True)
        hold = request.environ.get("standin.hold")
        if hold:
            time.sleep(float(hold))  # the write is done; the client waits for its answer
        if not request.path.startswith("/_standin/"):
            record(response)
            with state.lock:
                state.requests.append(
                    {
                        "method": request.method,
                        "path": request.path,
                        "status": response.status_code,
                        "api_version": request.headers.get("X-GitHub-Api-Version"),
                        "at": time.time(),
                    }
                )  # when it was answered (epoch seconds)
                # The App's own (JWT) calls have their own limit; installation calls share this one.
                if "x-ratelimit-remaining" not in response.headers and not request.path.startswith(
                    "/app"
                ):
                    state.remaining = max(0, state.remaining - 1)
                    response.headers["x-ratelimit-limit"] = str(RATE_LIMIT)
                    response.headers["x-ratelimit-remaining"] = str(state.remaining)
                    response.headers["x-ratelimit-reset"] = str(int(state.clock()) + 3600)
                    response.headers["x-ratelimit-resource"] = (
                        "graphql" if request.path == "/graphql" else "core"
                    )
        return response

    recording = os.environ.get("STANDIN_RECORD")

    def record(response: Response) -> None:
        """Append the request and the answer (status, JSON body) to ``$STANDIN_RECORD`` (JSON lines)
        for the conformance check (tests/conformance.py)."""
        if not recording and state.recorded is None:
            return
        answer = (
            response.get_json(silent=True)
            if response.is_json and not response.direct_passthrough
            else None
        )
        line = json.dumps(
            {
                "method": request.method,
                "path": request.path,
                "query": dict(request.args),
                "json": request.get_json(silent=True) if request.content_length else None,
                "status": response.status_code,
                "answer": answer,
            }
        )
        keep(line)

    def keep(line: str) -> None:
        with state.lock:
            if state.recorded is not None:
                state.recorded.append(json.loads(line))
            elif recording:
                with open(recording, "a", encoding="utf-8") as out:
                    out.write(line + "\n")

    @app.teardown_request
    def end_write(_: BaseException | None) -> None:
        if "standin.write" in request.environ:
            with state.lock:
                state.pacing.end(time.monotonic())

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> Response:
        return _error(exc.status, exc.message, exc.headers)

    @app.errorhandler(NotFound)
    def not_found(exc: NotFound) -> Response:
        return _error(404, "Not Found")

    @app.errorhandler(GitHubError)
    def github_error(exc: GitHubError) -> Response:
        if isinstance(exc, Unprocessable):  # GitHub's 422: its message and its errors apart
            return _error(422, exc.reason, errors=exc.errors)
        return _error(exc.status or 500, str(exc))

    def is_write() -> bool:
        """A mutative request of the installation (the App's own JWT calls are paced apart)."""
        if request.method not in ("POST", "PATCH", "PUT", "DELETE") or request.path.startswith(
            "/app"
        ):
            return False
        return request.path != "/graphql" or is_mutation(request.get_data(as_text=True))

    def require_jwt() -> None:
        token = _bearer()
        try:
            claims = jwt.decode(
                token,
                state.public_key(),
                algorithms=["RS256"],
                leeway=0,
                options={
                    "require": ["iat", "exp", "iss"],
                    "verify_exp": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError as exc:
            raise ApiError(401, f"A JSON web token could not be decoded ({exc})") from exc
        now = state.clock()  # GitHub's time, which a worker's host clock may be off from
        if claims["iat"] > now:
            raise ApiError(
                401,
                "'Issued at' claim ('iat') must be an Integer representing the time that the "
                "assertion was issued",
            )
        if claims["exp"] <= now:
            raise ApiError(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the future "
                "time at which the assertion expires",
            )
        if str(claims["iss"]) != str(state.app_id):
            raise ApiError(401, f"'Issuer' claim ('iss') must be the App id {state.app_id}")
        if claims["exp"] - claims["iat"] > JWT_MAX_LIFETIME:
            raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")

    def require_token() -> None:
        token = _bearer()
        with state.lock:
            expiry = state.tokens.get(token)
        if expiry is None or expiry <= state.clock():
            raise ApiError(401, "Bad credentials")

    def repo_of(owner: str, name: str) -> str:
        require_token()
        repo = f"{owner}/{name}"
        if repo != local.repo:
            raise ApiError(404, "Not Found")
        return repo

    # -- the App ---------------------------------------------------------------------------
    @app.get("/app")
    def get_app() -> Response:
        require_jwt()
        return jsonify(the_app())

    @app.get("/app/installations")
    def installations() -> Response:
        require_jwt()
        listed = shapes().installation(
            state.installation_id,
            state.app_id,
            state.slug,
            local.repo.split("/")[0],
            local.app_permissions or {},
        )
        if state.suspended_at is not None:  # GitHub still lists it, saying since when
            listed["suspended_at"] = _iso(state.suspended_at)
            listed["suspended_by"] = shapes().user(ADMIN)
        return _paged([listed])

    @app.get("/installation/repositories")
    def installation_repositories() -> Response:
        require_token()
        return jsonify(
            total_count=1,
            repository_selection="selected",
            repositories=[shapes().repository(local.repo, local.default_branch)],
        )

    @app.get("/app/hook/deliveries")
    def hook_deliveries() -> Response:
        require_jwt()
        with state.lock:
            newest_first = [dict(d) for d in reversed(state.deliveries)]
        return _paged(newest_first)

    @app.post("/app/hook/deliveries/<int:delivery_id>/attempts")
    def redeliver(delivery_id: int) -> tuple[Response, int]:
        require_jwt()
        with state.lock:
            attempt = next((d for d in state.deliveries if d["id"] == delivery_id), None)
        if attempt is None:
            raise ApiError(404, "Not Found")
        event, body = state.payloads[attempt["guid"]]
        threading.Thread(
            target=state.deliver, args=(attempt["guid"], event, body, True), daemon=True
        ).start()
        return jsonify({}), 202

    @app.post("/app/installations/<int:installation_id>/access_tokens")
    def access_token(installation_id: int) -> tuple[Response, int]:
        require_jwt()
        if installation_id != state.installation_id:
            raise ApiError(404, "Not Found")
        if state.suspended_at is not None:
            raise ApiError(403, "This installation has been suspended")
        token, expires = state.issue_token()
        return jsonify(
            token=token,
            expires_at=_iso(expires),
            permissions=local.app_permissions or {},
            repository_selection="all",
        ), 201

    # -- the manifest flow (github.com's page, then the API's one-time exchange) ------------------
    @app.post("/settings/apps/new")
    @app.post("/organizations/<org>/settings/apps/new")
    def new_app_from_manifest(org: str = "") -> Response:
        """What github.com does once its user confirms: create the App, redirect with a one-hour
        code."""
        try:
            manifest = json.loads(request.form.get("manifest", ""))
        except ValueError as exc:
            raise ApiError(422, f"the manifest is not JSON ({exc})") from exc
        missing = (
            [k for k in ("url", "hook_attributes", "redirect_url") if not manifest.get(k)]
            if isinstance(manifest, dict)
            else ["a JSON object"]
        )
        if missing:
            raise ApiError(422, f"the manifest lacks {', '.join(missing)}")
        code = secrets.token_hex(10)
        with state.lock:
            state.manifests[code] = (manifest, state.clock())
        query = urlencode(
            {"code": code, **({"state": request.args["state"]} if "state" in request.args else {})}
        )
        return Response(status=302, headers={"Location": f"{manifest['redirect_url']}?{query}"})

    @app.post("/app-manifests/<code>/conversions")
    def manifest_conversion(code: str) -> tuple[Response, int]:
        with state.lock:
            manifest, issued = state.manifests.pop(code, (None, 0.0))
        if manifest is None or state.clock() - issued > 3600:
            raise ApiError(404, "Not Found")
        secret = secrets.token_hex(20)
        state.slug = str(manifest.get("name") or state.slug).lower().replace(" ", "-")
        state.registered = {"manifest": manifest, "webhook_secret": secret}
        app = shapes().app(
            state.app_id,
            state.slug,
            org_or_user(),
            manifest.get("default_permissions", {}),
            manifest.get("default_events", []),
        )
        return jsonify(
            {
                **app,
                "name": manifest.get("name") or state.slug,
                "client_id": "Iv1.standin",
                "client_secret": secrets.token_hex(20),
                "webhook_secret": secret,
                "pem": state.private_key_pem,
            }
        ), 201

    def org_or_user() -> str:
        return "standin"

    # -- GitHub's objects, as its answers carry them (tests/standin/shapes.py) ---------------------
    def shapes() -> Shapes:
        return Shapes(request.url_root)

    def the_app() -> dict[str, Any]:
        return shapes().app(state.app_id, state.slug, "standin", local.app_permissions or {})

    def another_app(slug: str) -> dict[str, Any]:
        """The App of a check run the bot did not make (a CI): another id."""
        return shapes().app(OTHER_APP_ID, slug, "standin", {"checks": "write"})

    def pull_simple(pr: Any) -> dict[str, Any]:
        auto_merge = None
        if local.auto_merge:
            auto_merge = {
                "enabled_by": shapes().user(local.auto_merge_by or local.bot),
                "merge_method": local.auto_merge.lower(),
                "commit_title": f"PR {pr.number}",
                "commit_message": "",
            }
        return shapes().pull_request_simple(
            pr.repo,
            pr.default_branch,
            pr.number,
            pr.state,
            pr.author,
            pr.head_ref,
            pr.head_sha,
            pr.base_ref,
            pr.base_sha,
            draft=pr.draft,
            node_id=pr.node_id,
            auto_merge=auto_merge,
            head_repo=pr.head_repo or "",
        )

    def check_run_shape(run_id: int) -> dict[str, Any]:
        """A check run as GitHub answers it, from the stand-in's record of it."""
        record = next(r for r in list(local.check_runs) if r.id == run_id)
        return shapes().check_run(
            local.repo,
            record.id,
            record.head_sha,
            record.name,
            record.status,
            record.conclusion,
            record.external_id,
            the_app() if not record.app else another_app(record.app),
            record.title,
            record.summary,
            record.text,
            len(record.annotations),
        )

    # -- pull requests ---------------------------------------------------------------------
    @app.get("/repos/<owner>/<name>/pulls")
    def list_pulls(owner: str, name: str) -> Response:
        pr = local.get_pull_request(repo_of(owner, name), local.number)
        wanted = request.args.get("state", "open")
        listed = [pr] if wanted == "all" or wanted == pr.state else []
        return _paged([pull_simple(p) for p in listed])

    @app.get("/repos/<owner>/<name>/pulls/<int:number>")
    def get_pull(owner: str, name: str, number: int) -> Response:
        pr = local.get_pull_request(repo_of(owner, name), number)
        merged = local.merged or {}
        return jsonify(
            shapes().pull_request(
                pull_simple(pr),
                merged=pr.merged,
                mergeable_state=local.mergeable_state(),
                changed_files=local.changed_files_count(),  # all of them: the listing stops at 3000
                merged_sha=merged.get("sha"),
                merged_by=shapes().user(merged["by"]) if merged.get("by") else None,
            )
        )

    @app.get("/repos/<owner>/<name>/pulls/<int:number>/files")
    def pull_files(owner: str, name: str, number: int) -> Response:
        files, _ = local.list_pull_request_files(repo_of(owner, name), number)
        head = local.get_pull_request(local.repo, number).head_sha
        blobs = {}  # path -> blob at the head (a removed file: the zero id)
        for line in run_git(local.repo_path, "ls-tree", "-r", "-z", head).split(b"\x00"):
            meta, _, path = line.partition(b"\t")
            if meta:
                blobs[path.decode("utf-8", "replace")] = meta.decode().split()[2]
        return _paged(
            [
                shapes().diff_entry(
                    local.repo,
                    head,
                    f.path,
                    f.status,
                    f.patch,
                    f.previous_path,
                    blobs.get(f.path, "0" * 40),
                )
                for f in files
            ]
        )

    @app.get("/repos/<owner>/<name>/commits")
    def commits(owner: str, name: str) -> Response:
        """The commits of ``sha`` (default: the default branch), newest first, as GitHub pages them
        (first parents only: the bot reads the head)."""
        repo_of(owner, name)
        start = request.args.get("sha") or local.default_branch
        try:
            listed = run_git(local.repo_path, "log", "--first-parent", "--format=%H %T %P", start)
        except GitError as exc:
            raise ApiError(404, "Not Found") from exc
        found = []
        for line in listed.decode().splitlines():
            sha, tree, *parents = line.split()
            found.append(shapes().commit(local.repo, sha, tree, parents))
        return _paged(found)

    @app.get("/repos/<owner>/<name>/commits/<sha>/pulls")
    def pulls_for_commit(owner: str, name: str, sha: str) -> Response:
        numbers = local.list_open_pull_requests_for_sha(repo_of(owner, name), sha)
        return _paged([pull_simple(local.get_pull_request(local.repo, n)) for n in numbers])

    @app.get("/repos/<owner>/<name>/pulls/<int:number>/reviews")
    def reviews(owner: str, name: str, number: int) -> Response:
        found = local.list_reviews(repo_of(owner, name), number)
        return _paged(
            [
                shapes().review(local.repo, number, r.id, r.user, r.state, r.commit_id, r.body)
                for r in found
            ]
        )

    @app.post("/repos/<owner>/<name>/pulls/<int:number>/reviews")
    def create_review(owner: str, name: str, number: int) -> Response:
        body = _json()
        comments = [
            InlineComment(
                c["path"],
                int(c["line"]),
                c.get("body", ""),
                int(c["start_line"]) if c.get("start_line") is not None else None,
            )
            for c in body.get("comments", [])
        ]
        review_id = local.create_review(
            repo_of(owner, name),
            number,
            body.get("commit_id") or "",
            body.get("event", "COMMENT"),
            body.get("body", ""),
            comments,
        )
        review = next(r for r in local.list_reviews(local.repo, number) if r.id == review_id)
        return jsonify(
            shapes().review(
                local.repo,
                number,
                review.id,
                review.user,
                review.state,
                review.commit_id,
                review.body,
            )
        )

    @app.put("/repos/<owner>/<name>/pulls/<int:number>/reviews/<int:review_id>/dismissals")
    def dismiss(owner: str, name: str, number: int, review_id: int) -> Response:
        local.dismiss_review(repo_of(owner, name), number, review_id, _json().get("message", ""))
        review = next(r for r in local.list_reviews(local.repo, number) if r.id == review_id)
        return jsonify(
            shapes().review(
                local.repo,
                number,
                review.id,
                review.user,
                review.state,
                review.commit_id,
                review.body,
            )
        )

    @app.get("/repos/<owner>/<name>/pulls/<int:number>/comments")
    def review_comments(owner: str, name: str, number: int) -> Response:
        found = local.list_review_comments(repo_of(owner, name), number)
        review_of = {c.id: r.id for r in list(local.reviews) for c in r.comments}
        return _paged(
            [
                shapes().review_comment(
                    local.repo,
                    number,
                    c.id,
                    review_of.get(c.id, 0),
                    c.user,
                    c.path,
                    c.line,
                    c.body,
                    c.commit_id,
                )
                for c in found
            ]
        )

    # -- issue comments --------------------------------------------------------------------
    @app.get("/repos/<owner>/<name>/issues/<int:number>/comments")
    def issue_comments(owner: str, name: str, number: int) -> Response:
        found = local.list_issue_comments(repo_of(owner, name), number)
        return _paged(
            [shapes().issue_comment(local.repo, number, c.id, c.user, c.body) for c in found]
        )

    @app.post("/repos/<owner>/<name>/issues/<int:number>/comments")
    def create_comment(owner: str, name: str, number: int) -> tuple[Response, int]:
        body = _json().get("body", "")
        comment_id = local.create_issue_comment(repo_of(owner, name), number, body)
        return jsonify(shapes().issue_comment(local.repo, number, comment_id, local.bot, body)), 201

    @app.patch("/repos/<owner>/<name>/issues/comments/<int:comment_id>")
    def edit_comment(owner: str, name: str, comment_id: int) -> Response:
        body = _json().get("body", "")
        local.edit_issue_comment(repo_of(owner, name), comment_id, body)
        return jsonify(
            shapes().issue_comment(local.repo, local.number, comment_id, local.bot, body)
        )

    # -- issues (the dashboard issue) -------------------------------------------------------
    @app.get("/repos/<owner>/<name>/issues")
    def issues(owner: str, name: str) -> Response:
        creator = request.args.get("creator", "")
        found = [
            i
            for i in local.list_issues(repo_of(owner, name), creator)
            if request.args.get("state", "open") in ("all", i.state)
        ]
        return _paged(
            [shapes().issue(local.repo, i.number, i.user, i.title, i.body, i.state) for i in found]
        )

    @app.post("/repos/<owner>/<name>/issues")
    def create_issue(owner: str, name: str) -> tuple[Response, int]:
        data = _json()
        number = local.create_issue(
            repo_of(owner, name), data.get("title", ""), data.get("body", "")
        )
        return jsonify(
            shapes().issue(
                local.repo, number, local.bot, data.get("title", ""), data.get("body", ""), "open"
            )
        ), 201

    @app.patch("/repos/<owner>/<name>/issues/<int:number>")
    def edit_issue(owner: str, name: str, number: int) -> Response:
        body = _json().get("body", "")
        local.edit_issue(repo_of(owner, name), number, body)
        found = next(i for i in local.issues if i.number == number)
        return jsonify(
            shapes().issue(local.repo, number, found.user, found.title, found.body, found.state)
        )

    # -- permissions -----------------------------------------------------------------------
    @app.get("/repos/<owner>/<name>/collaborators/<login>/permission")
    def permission(owner: str, name: str, login: str) -> Response:
        role = local.get_permission(repo_of(owner, name), login)
        # GitHub's ``permission`` is the legacy level (maintain reads write, triage reads read);
        # ``role_name`` the role
        return jsonify(
            permission=LEGACY_PERMISSION.get(role, role),
            role_name=role,
            user=shapes().collaborator(login, role),
        )

    # -- organisation teams ----------------------------------------------------------------
    @app.get("/orgs/<org>/teams/<team>")
    def get_team(org: str, team: str) -> Response:
        require_token()
        if f"{org}/{team}".casefold() not in local.team_members:
            raise ApiError(404, "Not Found")
        return jsonify(shapes().team(org, team))

    @app.get("/orgs/<org>/teams/<team>/memberships/<login>")
    def team_membership(org: str, team: str, login: str) -> Response:
        require_token()
        found = local.get_team_membership(org, team, login)  # NotFound for an unknown team
        if found is None:
            raise ApiError(404, "Not Found")
        return jsonify(state=found, role="member", url=request.base_url)

    # -- check runs ------------------------------------------------------------------------
    @app.post("/repos/<owner>/<name>/check-runs")
    def create_check_run(owner: str, name: str) -> tuple[Response, int]:
        body = _json()
        run_id = local.create_check_run(
            repo_of(owner, name),
            body.get("head_sha", ""),
            body.get("name", ""),
            body.get("status", "queued"),
            _output(body.get("output")),
            body.get("external_id", ""),
            body.get("conclusion"),
            body.get("actions", ()),
        )
        return jsonify(check_run_shape(run_id)), 201

    @app.get("/repos/<owner>/<name>/commits/<ref>/check-runs")
    def list_check_runs(owner: str, name: str, ref: str) -> Response:
        repo_of(owner, name)
        wanted = request.args.get("app_id")
        try:
            app = None if wanted is None else "" if int(wanted) == state.app_id else OTHER_APP
        except ValueError as exc:
            raise ApiError(422, "Validation Failed: app_id is not an integer") from exc
        runs = local.runs_listed(ref, request.args.get("check_name", ""), app)
        # paged as GitHub pages it (at most 100 a page), newest first
        return _paged(
            [r.id for r in runs],
            lambda ids: {
                "total_count": len(runs),
                "check_runs": [check_run_shape(run_id) for run_id in ids],
            },
        )

    @app.get("/repos/<owner>/<name>/commits/<ref>/status")
    def combined_status(owner: str, name: str, ref: str) -> Response:
        """The latest status of each context, paged (``statuses``; ``total_count``: every
        context), and the combined ``state``: failure when one is error or failure, pending when
        one is pending or there are none, else success."""
        full = repo_of(owner, name)
        try:
            sha = local.resolve(ref)
        except GitHubError as exc:
            raise ApiError(422, f"No commit found for SHA: {ref}") from exc
        statuses = local.list_commit_statuses(full, sha)
        states = {s.state for s in statuses}
        combined = (
            "failure"
            if states & {"error", "failure"}
            else "pending"
            if not states or "pending" in states
            else "success"
        )
        api = f"{request.url_root.rstrip('/')}/repos/{full}"
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        ids = {(c, s): i for i, on, c, s in local.statuses if on == sha}

        def shape(s: Any) -> dict[str, Any]:
            status_id = ids[(s.context, s.state)]
            return {
                "url": f"{api}/statuses/{sha}",
                "avatar_url": None,
                "id": status_id,
                "node_id": f"SC_{status_id}",
                "state": s.state,
                "description": None,
                "target_url": None,
                "context": s.context,
                "created_at": stamp,
                "updated_at": stamp,
            }

        return _paged(
            statuses,
            lambda page: {
                "state": combined,
                "statuses": [shape(s) for s in page],
                "sha": sha,
                "total_count": len(statuses),
                "repository": shapes().repository(full, local.default_branch),
                "commit_url": f"{api}/commits/{sha}",
                "url": f"{api}/commits/{sha}/status",
            },
        )

    @app.patch("/repos/<owner>/<name>/check-runs/<int:run_id>")
    def update_check_run(owner: str, name: str, run_id: int) -> Response:
        body = _json()
        local.update_check_run(
            repo_of(owner, name),
            run_id,
            body.get("status"),
            body.get("conclusion"),
            _output(body.get("output")),
            body.get("actions", ()),
        )
        return jsonify(check_run_shape(run_id))

    # -- git data --------------------------------------------------------------------------
    @app.get("/repos/<owner>/<name>/git/trees/<path:ref>")
    def tree(owner: str, name: str, ref: str) -> Response:
        repo_of(owner, name)
        recursive = request.args.get("recursive") not in (None, "", "0", "false")
        try:
            sha = run_git(
                local.repo_path, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{tree}}"
            )
            listing = run_git(
                local.repo_path,
                "ls-tree",
                "-l",
                "-z",
                *(["-r", "-t"] if recursive else []),
                sha.decode().strip(),
            )
        except GitError as exc:
            raise ApiError(404, "Not Found") from exc
        entries = []
        for record in listing.split(b"\x00"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, kind, obj, size = meta.decode().split()
            entry = {
                "path": path.decode("utf-8", "replace"),
                "mode": mode,
                "type": kind,
                "sha": obj,
            }
            if kind == "blob":
                entry["size"] = int(size)
            entries.append(entry)
        limit = state.tree_limit
        truncated = len(entries) > limit
        return jsonify(
            sha=sha.decode().strip(),
            tree=entries[:limit] if truncated else entries,
            truncated=truncated,
        )

    @app.get("/repos/<owner>/<name>/compare/<basehead>")
    def compare(owner: str, name: str, basehead: str) -> Response:
        """Two commits compared: the merge base and how far each side is from it (no commits nor
        files are listed; the bot reads the merge base only)."""
        repo_of(owner, name)
        base, dots, head = basehead.partition("...")
        if not dots:
            raise ApiError(404, "Not Found")

        def commit(ref: str) -> dict[str, Any]:
            fields = run_git(local.repo_path, "log", "-1", "--format=%H %T %P", ref).split()
            sha, tree, *parents = (f.decode() for f in fields)
            return shapes().commit(local.repo, sha, tree, parents)

        def count(spec: str) -> int:
            return int(run_git(local.repo_path, "rev-list", "--count", spec).decode().strip())

        try:
            found = run_git(local.repo_path, "merge-base", base, head).decode().strip()
            return jsonify(
                shapes().comparison(
                    local.repo,
                    basehead,
                    commit(base),
                    commit(found),
                    count(f"{found}..{head}"),
                    count(f"{found}..{base}"),
                )
            )
        except GitError as exc:
            raise ApiError(404, "Not Found") from exc

    @app.get("/repos/<owner>/<name>/git/blobs/<sha>")
    def blob(owner: str, name: str, sha: str) -> Response:
        repo_of(owner, name)
        try:
            if run_git(local.repo_path, "cat-file", "-t", sha).strip() != b"blob":
                raise ApiError(404, "Not Found")
            data = run_git(local.repo_path, "cat-file", "blob", sha)
        except GitError as exc:
            raise ApiError(404, "Not Found") from exc
        return jsonify(shapes().blob(local.repo, sha, len(data), _b64(data)))

    @app.get("/repos/<owner>/<name>/contents/<path:path>")
    def contents(owner: str, name: str, path: str) -> Response:
        """A file, as GitHub's contents API serves it: a symlink to a normal file of the repository
        is followed (the answer is that file, under its own ``path``); any other symlink is
        described."""
        repo_of(owner, name)
        ref = request.args.get("ref") or local.default_branch
        entry = tree_entry(ref, path)
        if entry is None:
            raise ApiError(404, "Not Found")
        mode, kind, obj, found = entry
        if kind == "tree":
            return jsonify([])  # a folder (its listing: the bot only reads files)
        data = run_git(local.repo_path, "cat-file", "blob", obj)
        if mode == "120000":
            target = posixpath.normpath(
                posixpath.join(posixpath.dirname(found), data.decode("utf-8", "replace"))
            )
            followed = (
                None
                if target.startswith(("../", "/")) or target == ".."
                else tree_entry(ref, target)
            )
            if followed is None or followed[0] in ("120000", "160000") or followed[1] != "blob":
                return jsonify(
                    shapes().content(
                        local.repo,
                        ref,
                        found,
                        obj,
                        len(data),
                        "symlink",
                        target=data.decode("utf-8", "replace"),
                    )
                )
            mode, kind, obj, found = followed
            data = run_git(local.repo_path, "cat-file", "blob", obj)
        if len(data) > state.contents_limit:  # GitHub's "no" over 100 MB: read, never absent
            response = _error(403, TOO_LARGE)
            body = response.get_json()
            body["errors"] = [{"resource": "Blob", "field": "data", "code": "too_large"}]
            response.set_data(json.dumps(body))
            return response
        inline = len(data) <= CONTENTS_INLINE_LIMIT
        return jsonify(
            shapes().content(
                local.repo,
                ref,
                found,
                obj,
                len(data),
                "file",
                encoding="base64" if inline else "none",
                content=_b64(data) if inline else "",
            )
        )

    def tree_entry(ref: str, path: str) -> tuple[str, str, str, str] | None:
        """(mode, type, object, path) of ``path`` at ``ref``; None when it is not there."""
        try:
            listing = run_git(
                local.repo_path, "ls-tree", "-l", "-z", "--end-of-options", ref, "--", path
            )
        except GitError as exc:
            raise ApiError(404, f"No commit found for the ref {ref}") from exc
        record = listing.split(b"\x00")[0]
        if not record:
            return None
        meta, _, found = record.partition(b"\t")
        mode, kind, obj, _ = meta.decode().split()
        return mode, kind, obj, found.decode()

    @app.post("/graphql")
    def graphql() -> Response:
        require_token()
        return jsonify(
            execute(
                request.get_json(silent=True),
                local.repo,
                str(local.repo_path),
                mutations=automerge_mutations(local),
                checks=local,
            )
        )

    @app.put("/repos/<owner>/<name>/pulls/<int:number>/merge")
    def merge(owner: str, name: str, number: int) -> Response:
        body = _json()
        local.merge_pull_request(
            repo_of(owner, name),
            number,
            body.get("sha", ""),
            str(body.get("merge_method") or "merge"),
        )
        return jsonify(
            merged=True,
            sha=(local.merged or {}).get("sha"),
            message="Pull Request successfully merged",
        )

    # -- inspection and control ------------------------------------------------------------
    @app.get("/_standin/state")
    def inspect() -> Response:
        return jsonify(state.snapshot())

    @app.get("/_standin/render")
    def render() -> Response:
        return Response(local.render(), mimetype="text/plain")

    @app.get("/_standin/app")
    def app_info() -> Response:
        return jsonify(
            app_id=state.app_id,
            slug=state.slug,
            installation_id=state.installation_id,
            private_key_pem=state.private_key_pem,
            repo=local.repo,
            number=local.number,
        )

    @app.post("/_standin/hook")
    def set_hook() -> Response:
        state.hook = {"url": str(request.json["url"]), "secret": str(request.json["secret"])}  # type: ignore[index]
        return jsonify(state.hook)

    @app.post("/_standin/deliveries")
    def send_delivery() -> Response:
        """GitHub sends a webhook now (``{"event", "payload"}``) to the configured hook; the attempt
        is listed."""
        event = str(request.json["event"])  # type: ignore[index]
        body = json.dumps(request.json["payload"]).encode()  # type: ignore[index]
        keep(json.dumps({"event": event, "payload": request.json["payload"]}))  # type: ignore[index]
        return jsonify(state.deliver(secrets.token_hex(16), event, body))

    @app.post("/_standin/faults")
    def add_faults() -> Response:
        body = request.get_json(force=True)
        items = body if isinstance(body, list) else [body]
        try:
            faults = [Fault(**item) for item in items]
        except TypeError as exc:
            raise ApiError(400, f"bad fault: {exc}") from exc
        state.add_faults(faults)
        with state.lock:
            return jsonify(faults=[asdict(f) for f in state.faults])

    @app.delete("/_standin/faults")
    def clear_faults() -> Response:
        with state.lock:
            state.faults.clear()
        return jsonify(faults=[])

    @app.post("/_standin/push")
    def push() -> Response:
        head = _json().get("head", "")
        return jsonify(head_sha=local.push(head))

    @app.post("/_standin/reviews")
    def add_review() -> Response:
        body = _json()
        review_id = local.add_review(
            body["user"], body.get("event", "APPROVE"), body.get("body", ""), body.get("commit_id")
        )
        return jsonify(id=review_id)

    @app.post("/_standin/dismissals")
    def dismiss_someones_review() -> Response:
        """Someone dismisses a review (``{"review_id", "message", "user"}``; default: the
        repository's admin)."""
        body = _json()
        local.dismiss_as(
            str(body.get("user") or ADMIN), int(body["review_id"]), body.get("message", "dismissed")
        )
        return jsonify(id=body["review_id"], state="DISMISSED")

    @app.post("/_standin/comments")
    def add_comment() -> Response:
        body = _json()
        return jsonify(id=local.add_issue_comment(body["user"], body["body"]))

    @app.post("/_standin/expire-tokens")
    def expire() -> Response:
        return jsonify(expired=state.expire_tokens())

    @app.post("/_standin/settings")
    def settings() -> Response:
        body = _json()
        if "tree_limit" in body:
            state.tree_limit = int(body["tree_limit"])
        if "contents_limit" in body:
            state.contents_limit = int(body["contents_limit"])
        if "token_ttl" in body:
            state.token_ttl = float(body["token_ttl"])
        if "latency" in body:
            state.latency = float(body["latency"])
        # an administrator suspends the installation (true) or lifts the suspension (false)
        if "suspended" in body:
            state.suspended_at = state.clock() if body["suspended"] else None
        if "write_pause" in body:
            state.pacing.pause = float(body["write_pause"])
        # an administrator grants the App more (as accepting its new permissions on GitHub)
        if "grant" in body:
            local.app_permissions = {**(local.app_permissions or {}), **body["grant"]}
        # an administrator changes the base branch's protection (``BranchProtection``'s fields)
        if "protection" in body:
            local.protection = _protection(local.protection, body["protection"])
        # the repository's "Allow auto-merge" (GitHub's default: off)
        if "allow_auto_merge" in body:
            local.allow_auto_merge = bool(body["allow_auto_merge"])
        # the merge methods the repository allows (GitHub's default: all three)
        if "merge_methods" in body:
            local.merge_methods = frozenset(str(m).upper() for m in body["merge_methods"])
        # the repository's Issues feature; the pull request's conversation locked
        if "has_issues" in body:
            local.has_issues = bool(body["has_issues"])
        if "locked" in body:
            local.locked = bool(body["locked"])
        return jsonify(
            tree_limit=state.tree_limit,
            token_ttl=state.token_ttl,
            latency=state.latency,
            write_pause=state.pacing.pause,
            app_permissions=local.app_permissions,
            protection=asdict(local.protection) if local.protection is not None else None,
            allow_auto_merge=local.allow_auto_merge,
            merge_methods=sorted(local.merge_methods),
            has_issues=local.has_issues,
            locked=local.locked,
            contents_limit=state.contents_limit,
        )

    @app.post("/_standin/check-runs")
    def add_others_check_run() -> Response:
        """Another App's check run on the head (``{"name", "status", "conclusion"}``), e.g. a CI
        that fails."""
        body = _json()
        run_id = local.add_check_run(
            str(body["name"]), str(body.get("status", "completed")), body.get("conclusion")
        )
        return jsonify(id=run_id)

    return app


def _protection(protection: BranchProtection | None, change: dict[str, Any]) -> BranchProtection:
    """``protection`` with the fields in ``change`` (lists as tuples); 400 for an unprotected branch
    or an unknown field."""
    if protection is None:
        raise ApiError(400, "the base branch is not protected (--protect)")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in change.items()}
    try:
        return replace(protection, **fields)
    except TypeError as exc:
        raise ApiError(400, f"bad protection: {exc}") from exc


def _fault_answer(fault: Fault) -> Response:
    headers = {}
    if fault.retry_after is not None:
        headers["retry-after"] = f"{fault.retry_after:g}"
    if fault.reset_in is not None:
        headers["x-ratelimit-remaining"] = "0"
        headers["x-ratelimit-reset"] = str(int(fault.added + fault.reset_in))
    message = fault.message or {
        403: "You have exceeded a secondary rate limit.",
        429: "API rate limit exceeded",
    }.get(fault.status, "Server Error")
    if fault.graphql is not None:
        return _graphql_error(fault.graphql, fault.message or "API rate limit exceeded", headers)
    return _error(fault.status, message, headers)


def _graphql_error(kind: str, message: str, headers: dict[str, str]) -> Response:
    """GitHub's GraphQL answer to a request it failed or rate-limited: 200, ``errors``."""
    response = jsonify(errors=[{"message": message, **({"type": kind} if kind else {})}])
    for key, value in headers.items():
        response.headers[key] = value
    return response


def _error(
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
    errors: Sequence[str] = (),
    documentation: str | None = None,
) -> Response:
    """GitHub's error body: ``message``, the ``documentation_url`` of the operation refused and,
    for a 422, its ``errors`` (strings where the operation's description says "Validation Error
    Simple", else objects with a ``code``)."""
    endpoint = (request.endpoint or "") if has_request_context() else ""
    body: dict[str, Any] = {
        "message": message,
        "documentation_url": documentation or DOCUMENTATION.get(endpoint, REST_DOCS),
        "status": str(status),
    }
    if errors:
        body["errors"] = (
            list(errors)
            if endpoint in SIMPLE_ERRORS
            else [{"resource": "Request", "code": "custom", "message": e} for e in errors]
        )
    response = jsonify(body)
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _bearer() -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() not in ("bearer", "token") or not token:
        raise ApiError(401, "Requires authentication")
    return token.strip()


def _json() -> dict[str, Any]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ApiError(400, "Problems parsing JSON")
    return body


def _paged(items: Sequence[Any], wrap: Callable[[list[Any]], Any] = list) -> Response:
    """One page of ``items`` as GitHub serves it (``per_page`` up to 100, ``Link`` to the next and
    last); ``wrap``: the body around the page's items (a listing that is an object, as check
    runs' ``{"total_count": N, "check_runs": [...]}``)."""
    try:
        per_page = min(max(int(request.args.get("per_page", 30)), 1), 100)
        page = max(int(request.args.get("page", 1)), 1)
    except ValueError as exc:
        raise ApiError(400, "per_page and page must be numbers") from exc
    response = jsonify(wrap(list(items[(page - 1) * per_page : page * per_page])))
    last = max(1, -(-len(items) // per_page))
    links = []
    args = {k: v for k, v in request.args.items() if k not in ("page", "per_page")}
    if page < last:
        links.append(
            f"<{request.base_url}?{urlencode({**args, 'per_page': per_page, 'page': page + 1})}>; "
            f'rel="next"'
        )
        links.append(
            f"<{request.base_url}?{urlencode({**args, 'per_page': per_page, 'page': last})}>; "
            f'rel="last"'
        )
    if links:
        response.headers["Link"] = ", ".join(links)
    return response


def _output(raw: Any) -> CheckRunOutput | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ApiError(422, "Invalid request: output must be an object")
    try:
        annotations = tuple(
            Annotation(
                a["path"],
                int(a["start_line"]),
                int(a["end_line"]),
                a["annotation_level"],
                a["message"],
                a.get("title", ""),
                a.get("start_column"),
                a.get("end_column"),
            )
            for a in raw.get("annotations", [])
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ApiError(422, f"Invalid request: bad annotation ({exc})") from exc
    return CheckRunOutput(
        raw.get("title", ""), raw.get("summary", ""), raw.get("text", ""), annotations
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class QuietHandler(WSGIRequestHandler):
    """No access log lines: ``/_standin/state`` holds the request log."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass

    def send_response(self, code: int, message: str | None = None) -> None:
        """The status line and ``Server``, without http.server's own ``Date``: the app sends its
        clock's."""
        self.send_response_only(code, message)
        self.send_header("Server", self.version_string())


def serve(state: StandInState, port: int = 0) -> BaseWSGIServer:
    """A threaded HTTP server for the stand-in on 127.0.0.1 (``port`` 0: a free one)."""
    return make_server(
        "127.0.0.1", port, create_app(state), threaded=True, request_handler=QuietHandler
    )


class ServedInThread:
    """A WSGI server run by a daemon thread of this process (the stand-in, the fleet of
    stand-ins)."""

    _server: BaseWSGIServer | None = None
    _thread: threading.Thread | None = None

    def _serve(self, server: BaseWSGIServer, name: str) -> None:
        self._server = server
        self._thread = threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.05), name=name, daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.server_port)

    def _stop_serving(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


class StandIn(ServedInThread):
    """The stand-in served from a thread of this process on a free port of 127.0.0.1."""

    def __init__(
        self, local: LocalGitHub, private_key_pem: str | None = None, **options: Any
    ) -> None:
        self.state = StandInState(local, private_key_pem or generate_private_key_pem(), **options)
        self.state.recorded = []  # checked against GitHub's descriptions when it stops

    def start(self, port: int = 0) -> StandIn:
        self._serve(serve(self.state, port), "standin")
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_fault(self, fault: Fault) -> None:
        self.state.add_faults([fault])

    def stop(self) -> None:
        """Stop serving; what it was sent and answered must be what GitHub's descriptions allow."""
        from tests import conformance

        self._stop_serving()
        with self.state.lock:
            recorded, self.state.recorded = list(self.state.recorded or ()), []
        # tests of its refusals send refused requests
        drift = conformance.check_end_to_end(recorded, probes=True)
        assert not drift, (
            "requests, answers or payloads GitHub's descriptions do not allow:\n" + "\n".join(drift)
        )

    def __enter__(self) -> StandIn:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
