"""What the GitHub Action reads from GitHub with the token it is given: a pull request's approvals
and whether its author or approvers belong to the teams that own the change.

The App reads the same through its installation (``bot.github.pipeline``); the Action has only a
token (``GITHUB_TOKEN`` by default) and the runner's environment (``GITHUB_EVENT_PATH``,
``GITHUB_API_URL``, ``GITHUB_REPOSITORY``). The workflow token can list a pull request's reviews but
cannot see organisation teams: a team that cannot be checked is reported, and the approval of an
entry whose missing owners are all such teams is "not checked" rather than missing
(``Approvals.teams``, ``compose.approval_not_checked``). A team the lookup cap left unasked is no
such team: its members' approvals are missing, as in the App.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import quote

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Finding
from bot.core.incomplete import incomplete
from bot.core.snapshot import Snapshot
from bot.github.api import GitHubAPI, GitHubError, RateLimited, ReviewInfo
from bot.github.client import RetryPolicy, is_rate_limit, is_secondary, retry_delay
from bot.github.pipeline import approvers
from bot.github.refusals import is_retryable
from bot.github.teams import TeamMembership, membership

DEFAULT_API = "https://api.github.com"
TIMEOUT = 20  # seconds per request
# every page is read, as the App reads them (a later review may withdraw an approval); past this
# many pages (100,000 reviews) the listing is not seen in full and nothing is judged from it
MAX_PAGES = 1_000
# GitHub failing (5xx, no answer) or a rate limit: retried as the App's client retries
# (bot.github.client), then the review cannot finish
RETRY = RetryPolicy()
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class ListingCut(GitHubError):
    """A listing longer than the reader follows: what it holds past the cut is unknown (a later
    review may withdraw an approval), so nothing is judged from it."""


class _Failed(Exception):
    def __init__(self, status: int, headers: Mapping[str, str] | None, message: str) -> None:
        super().__init__(message)
        self.status, self.headers, self.message = status, headers, message


def _message(exc: urllib.error.HTTPError) -> str:
    """GitHub's ``message`` of an error answer (it says "rate limit"), else the HTTP reason."""
    try:
        data = json.loads(exc.read() or b"null")
    except (OSError, ValueError):
        data = None
    found = data.get("message") if isinstance(data, dict) else None
    return str(found or exc.reason)


class TokenReader:
    """GitHub's REST API read with one token. GitHub failing or a rate limit is retried by the
    App's policy (``RETRY``); what still fails raises ``GitHubError``, never hidden."""

    def __init__(
        self,
        token: str,
        api_url: str = DEFAULT_API,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.token = token
        self.api_url = api_url.rstrip("/")
        self.sleep, self.clock = sleep, clock

    def _get(self, url: str) -> tuple[Any, Mapping[str, str]]:
        policy, start, attempt = RETRY, self.clock(), 0
        while True:
            attempt += 1
            try:
                return self._send(url)
            except _Failed as failed:
                status, headers, message = failed.status, failed.headers, failed.message
            now = self.clock()
            delay = retry_delay(status, headers, message, attempt, now, policy)
            spent = now - start
            if delay is None or attempt >= policy.attempts or spent + delay > policy.max_wait:
                why = (
                    "" if delay is None else f" (gave up after {attempt} attempt(s), {spent:.0f}s)"
                )
                text = f"GET {url}: {status or 'no response'} {message}{why}"
                if delay is not None and is_rate_limit(status, headers, message):
                    raise RateLimited(text, status, now + delay, is_secondary(headers))
                raise GitHubError(text, status=status)
            self.sleep(delay)

    def _send(self, url: str) -> tuple[Any, Mapping[str, str]]:
        request = urllib.request.Request(
            url if url.startswith("http") else self.api_url + url,
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "openlineage-registry-bot-action",
                **({"Authorization": f"Bearer {self.token}"} if self.token else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return json.loads(response.read() or b"null"), dict(response.headers)
        except urllib.error.HTTPError as exc:
            raise _Failed(exc.code, dict(exc.headers or {}), _message(exc)) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise _Failed(0, None, str(getattr(exc, "reason", exc))) from None

    def _pages(self, path: str) -> Iterator[Any]:
        """Every item of a paginated list; ``ListingCut`` past ``MAX_PAGES`` pages."""
        url: str | None = f"{path}?per_page=100"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            data, headers = self._get(url)
            yield from data if isinstance(data, list) else ()
            match = _NEXT.search(headers.get("Link") or headers.get("link") or "")
            url = match.group(1) if match else None
        if url is not None:
            raise ListingCut(f"GET {path}: more than {MAX_PAGES} pages, not read in full")

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        return [
            ReviewInfo(
                int(r.get("id") or 0),
                str((r.get("user") or {}).get("login") or ""),
                str(r.get("state")),
                str(r.get("commit_id") or ""),
            )
            for r in self._pages(f"/repos/{repo}/pulls/{number}/reviews")
            if isinstance(r, dict)
        ]

    def get_team_membership(self, org: str, team_slug: str, login: str) -> str | None:
        """``active``/``pending``, None for "not a member"; a team the token cannot see raises (a
        404 for a member lookup is "not a member" only once the team itself is visible)."""
        team = f"/orgs/{quote(org)}/teams/{quote(team_slug)}"
        try:
            data, _ = self._get(f"{team}/memberships/{quote(login)}")
        except GitHubError as exc:
            if exc.status != 404:
                raise
            self._get(team)  # raises when the token cannot see the team
            return None
        state = data.get("state") if isinstance(data, dict) else None
        return str(state) if state else None


# who reads the teams, what lets it see them, and what the summary says of a team it cannot see
TOKEN_ACCESS = ("the token", "read:org scope")
TOKEN_ADVICE = (
    "A workflow's `GITHUB_TOKEN` never can read a team's members: give the action a token with the "
    "`read:org` scope as its `token` input. Until then an entry whose missing owners are all such "
    "teams is left to GitHub's own CODEOWNERS review."
)


@dataclass(frozen=True)
class Approvals:
    """Who approved (logins and the ``org/team`` owners they stand for), why approval could not be
    read at all (``unchecked``, empty when it could), and what the team lookups found."""

    approvers: frozenset[str] = frozenset()
    unchecked: tuple[str, ...] = ()
    teams: TeamMembership = field(default_factory=TeamMembership)

    def hidden_teams(self) -> tuple[str, ...]:
        """The ``org/team`` owners whose members the token could not read (never those the lookup
        cap left unasked)."""
        return tuple(team for team, _ in self.teams.unverified)


def pull_request_number(event: Mapping[str, Any]) -> int | None:
    """The pull request of a ``pull_request``/``pull_request_target``/``pull_request_review`` event
    payload."""
    pr = event.get("pull_request")
    number = pr.get("number") if isinstance(pr, dict) else None
    return number if isinstance(number, int) else None


def read_approvals(
    reader: TokenReader,
    repo: str,
    number: int,
    author: str,
    change: tuple[Snapshot, Snapshot, ChangeSet, Config],
) -> Approvals:
    """The pull request's approvers, plus each owning team (base side) of ``change`` (base, head,
    changes, configuration) the author or an approver is an active member of. Reviews GitHub does
    not send (failing after the retries, or refusing the token: 401/403/404) or a listing not read
    in full (``ListingCut``) raise: nothing can be said about the approvals, and the review cannot
    finish (``reviews_unread``)."""
    logins = approvers(reader.list_reviews(repo, number))
    home = repo.partition("/")[0]
    teams = membership(cast(GitHubAPI, reader), *change, author, logins, TOKEN_ACCESS, home)
    return Approvals(logins | teams.approving, teams=teams)


def reviews_unread(exc: GitHubError) -> Finding:
    """The could-not-finish finding of approvals ``read_approvals`` could not read, with what to
    change: the token when GitHub refused it, else nothing but a re-run."""
    hint = (
        "Re-run the job once GitHub answers again."
        if is_retryable(exc) or isinstance(exc, ListingCut)
        else "Give the workflow `pull-requests: read` (its `permissions:`), or a token that can "
        "read this pull request's reviews as the action's `token` input, then re-run the job."
    )
    return incomplete(
        "the approvals could not be read in full, so the owners' approval could not be judged: "
        f"{exc}",
        hint=hint,
    )
