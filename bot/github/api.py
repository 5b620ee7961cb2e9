"""The contract between the bot and GitHub: a Protocol and the plain data it exchanges.

``GitHubAPI`` is the only way the bot talks to GitHub. The real implementation wraps PyGithub
(``bot.github.client``); tests use the one in-memory GitHub, ``bot.github.local``; end-to-end tests
point the real implementation at a local stand-in server. Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from bot.github.required_checks import CheckState

CheckStatus = Literal["queued", "in_progress", "completed"]
CheckConclusion = Literal[
    "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"
]
AnnotationLevel = Literal["notice", "warning", "failure"]
ReviewEvent = Literal["REQUEST_CHANGES", "COMMENT", "APPROVE"]
# the state GitHub lists a review in, by the event it was posted with
REVIEW_STATES: Mapping[str, str] = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}


class GitHubError(Exception):
    """GitHub refused or failed a request after retries. ``status`` is the HTTP status (0:
    network)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class NotFound(GitHubError):
    """404: the object does not exist (or the installation cannot see it)."""


class InstallationUnavailable(GitHubError):
    """GitHub will not give the installation a token: it is suspended (403) or the App was
    uninstalled (404). Nothing of it can be read or written: its jobs are dropped, not retried
    (docs/app.md, "Installations")."""


class RateLimited(GitHubError):
    """GitHub's rate limit (403 or 429) lasts longer than the client may wait: try again at
    ``reset_at``.

    ``reset_at`` is epoch seconds, from ``retry-after`` or ``x-ratelimit-reset`` (plus a second).
    """

    def __init__(
        self,
        message: str,
        status: int,
        reset_at: float,
        secondary: bool = False,
        creation_only: bool = False,
    ) -> None:
        super().__init__(message, status)
        self.reset_at = reset_at
        # a secondary limit: the installation's pacer pauses it until ``reset_at``
        self.secondary = secondary
        # GitHub said only content creation is blocked ("temporarily blocked from content
        # creation"): reads and updates (a check run's conclusion) go on; only the installation's
        # creating requests are held
        self.creation_only = creation_only


@dataclass(frozen=True)
class PullRequest:
    repo: str  # "owner/name"
    number: int
    head_sha: str
    base_sha: str
    base_ref: str
    head_ref: str
    author: str
    state: str  # "open" | "closed"
    draft: bool = False
    default_branch: str = "main"
    head_repo: str | None = None  # differs from repo for forks
    node_id: str = ""  # the GraphQL id (auto-merge is GraphQL only)
    auto_merge: bool = False  # GitHub's auto-merge is enabled
    auto_merge_by: str = ""  # who enabled it (REST ``auto_merge.enabled_by``); "" when not said
    merged: bool = False


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str  # GitHub's: added, modified, removed, renamed, copied, changed, unchanged
    previous_path: str | None = None
    patch: str | None = None  # missing for large diffs
    # the file's blob at the head GitHub listed (GitHub's ``sha``; None when not given): the listing
    # takes no commit, so this is what ties it to the head the review read (``bot.github.listing``)
    sha: str | None = None


@dataclass(frozen=True)
class ReviewInfo:
    id: int
    user: str
    state: str  # APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
    commit_id: str
    body: str = ""


@dataclass(frozen=True)
class CommentInfo:
    id: int
    user: str
    body: str


@dataclass(frozen=True)
class IssueInfo:
    """An issue (never a pull request) as listed: the App finds its dashboard issue by a marker in
    ``body``."""

    number: int
    user: str
    title: str
    body: str
    state: str  # open | closed


@dataclass(frozen=True)
class ReviewCommentInfo:
    id: int
    user: str
    path: str
    line: int | None
    body: str
    commit_id: str = ""


@dataclass(frozen=True)
class InlineComment:
    path: str
    line: int
    body: str
    # a multi-line comment spans start_line..line (a suggestion replaces them)
    start_line: int | None = None


@dataclass(frozen=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    level: AnnotationLevel
    message: str
    title: str = ""
    start_column: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class CheckRunInfo:
    """A check run as listed for a commit: enough to find the bot's own by ``external_id``."""

    id: int
    head_sha: str
    name: str
    status: str  # queued, in_progress, completed
    conclusion: str | None = None
    external_id: str = ""
    annotations: int = 0  # annotations it holds (``output.annotations_count``)
    title: str = ""  # ``output.title``: the verdict's headline once concluded
    base_sha: str = ""  # the base a verdict judged the head against (``base_of`` its summary)


_BASE_LINE = re.compile(r"<!-- registry-bot:base ([0-9a-f]{40}|[0-9a-f]{64}) -->")


def base_line(base_sha: str) -> str:
    """The hidden first line of a verdict's check run summary: the base it judged the head
    against (a force-push back to a head reviewed before may find the base moved since)."""
    return f"<!-- registry-bot:base {base_sha} -->"


def base_of(summary: str) -> str:
    """The base a check run's summary says its verdict judged (``base_line``, its first line
    only: quoted content further down cannot forge it); "" when it says none."""
    found = _BASE_LINE.fullmatch(summary.partition("\n")[0])
    return found.group(1) if found else ""


@dataclass(frozen=True)
class StatusInfo:
    """A commit status (the legacy Statuses API): its context and state (``error``, ``failure``,
    ``pending`` or ``success``)."""

    context: str
    state: str


@dataclass(frozen=True)
class CheckRunOutput:
    title: str
    summary: str
    text: str = ""
    annotations: Sequence[Annotation] = field(default_factory=tuple)


class GitHubAPI(Protocol):
    """What the bot needs from GitHub, for one installation."""

    # -- reading -------------------------------------------------------------------------------
    def get_pull_request(self, repo: str, number: int) -> PullRequest: ...

    def list_pull_request_files(self, repo: str, number: int) -> tuple[list[ChangedFile], bool]:
        """All changed files (every page). The flag is True when GitHub's 3000-file cap was hit."""
        ...

    def merge_base(self, repo: str, base: str, head: str) -> str:
        """The merge base of commits ``base`` and ``head``, what GitHub diffs a pull request from
        (``GET /repos/{repo}/compare/{base}...{head}``: ``merge_base_commit``)."""
        ...

    def list_open_pull_requests_for_sha(self, repo: str, head_sha: str) -> list[int]: ...

    def list_open_pull_requests(self, repo: str) -> list[tuple[int, str, str]]:
        """(number, head sha, base sha) of the repository's open pull requests (``GET
        /repos/{repo}/pulls?state=open``)."""
        ...

    def default_branch_head(self, repo: str) -> str:
        """The commit the repository's default branch is at now (``GET /repos/{repo}/commits``, one
        commit per page: the list starts at the default branch's head)."""
        ...

    def read_tree(self, repo: str, ref: str, prefixes: Sequence[str]) -> Mapping[str, bytes]:
        """Every file under the given folders (or exact paths) at ``ref``: path -> content."""
        ...

    def read_file(self, repo: str, ref: str, path: str) -> bytes | None:
        """One file at ``ref``, or None when it does not exist."""
        ...

    def read_files(self, repo: str, ref: str, paths: Sequence[str]) -> dict[str, bytes]:
        """The files among ``paths`` that exist at ``ref`` (as ``read_file``), in as few requests as
        possible; one over the size GitHub serves is named in the answer's ``skipped`` (a
        ``TreeFiles``), never left out as if absent."""
        ...

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]: ...

    def list_issue_comments(self, repo: str, number: int) -> list[CommentInfo]: ...

    def list_review_comments(self, repo: str, number: int) -> list[ReviewCommentInfo]: ...

    def get_permission(self, repo: str, login: str) -> str:
        """The user's permission on the repository: admin, maintain, write, triage, read or none."""
        ...

    def get_team_membership(self, org: str, team_slug: str, login: str) -> str | None:
        """``login``'s membership state in the team (``active`` or ``pending``), None when not a
        member.

        ``GET /orgs/{org}/teams/{team_slug}/memberships/{username}``: needs the App's ``members:
        read`` organization permission. None only when GitHub confirms that the user is not a
        member; a missing permission (403) or a team the App cannot see (404) raises ``GitHubError``
        / ``NotFound``.
        """
        ...

    def bot_login(self) -> str:
        """The login the App posts as (``<slug>[bot]``), to recognise its own reviews and
        comments."""
        ...

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunInfo]:
        """The App's own check runs called ``name`` on commit ``head_sha``, newest first
        (``GET /repos/{repo}/commits/{sha}/check-runs?check_name=...&app_id=...&filter=all``):
        another App's run (a workflow job) of the same name is not the App's. ``name`` "": every
        App's runs."""
        ...

    def list_commit_statuses(self, repo: str, ref: str) -> list[StatusInfo]:
        """The latest status of each context on ``ref``: the combined status (``GET
        /repos/{repo}/commits/{ref}/status``), every page; a listing not read in full raises."""
        ...

    def check_states(self, repo: str, number: int, head_sha: str) -> list[CheckState] | None:
        """The checks reported on ``head_sha`` and whether each is required for pull request
        ``number`` (GraphQL ``statusCheckRollup``, ``isRequired``); None when that cannot be read
        (the caller falls back to ``list_check_runs``)."""
        ...

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
    ) -> int: ...

    def update_check_run(
        self,
        repo: str,
        check_run_id: int,
        status: CheckStatus | None = None,
        conclusion: CheckConclusion | None = None,
        output: CheckRunOutput | None = None,
        actions: Sequence[Mapping[str, str]] = (),
    ) -> None:
        """Annotations beyond 50 are the caller's job: send them in further updates."""
        ...

    def create_review(
        self,
        repo: str,
        number: int,
        commit_sha: str,
        event: ReviewEvent,
        body: str,
        comments: Sequence[InlineComment] = (),
    ) -> int: ...

    def dismiss_review(self, repo: str, number: int, review_id: int, message: str) -> None: ...

    def enable_auto_merge(
        self, repo: str, number: int, node_id: str, head_sha: str, merge_method: str
    ) -> None:
        """GraphQL ``enablePullRequestAutoMerge`` of the pull request ``node_id`` (``MERGE``,
        ``SQUASH``, ``REBASE``), refused unless its head is still ``head_sha``
        (``expectedHeadOid``). GitHub refuses it too for a pull request that can merge at once
        ("clean status")."""
        ...

    def disable_auto_merge(self, repo: str, number: int, node_id: str) -> None:
        """GraphQL ``disablePullRequestAutoMerge`` of the pull request ``node_id``: GitHub then
        merges it only when someone merges it or enables auto-merge again."""
        ...

    def merge_pull_request(self, repo: str, number: int, head_sha: str, merge_method: str) -> None:
        """``PUT /repos/{repo}/pulls/{number}/merge``, only if the head is still ``head_sha``."""
        ...

    def create_issue_comment(self, repo: str, number: int, body: str) -> int: ...

    def edit_issue_comment(self, repo: str, comment_id: int, body: str) -> None: ...

    def list_issues(self, repo: str, creator: str) -> list[IssueInfo]:
        """Issues opened by ``creator``, open and closed, pull requests left out
        (``GET /repos/{repo}/issues?creator=...&state=all``)."""
        ...

    def create_issue(self, repo: str, title: str, body: str) -> int:
        """``POST /repos/{repo}/issues``; returns the issue's number."""
        ...

    def edit_issue(self, repo: str, number: int, body: str) -> None:
        """``PATCH /repos/{repo}/issues/{number}`` with a new body."""
        ...

    def rate_limit_remaining(self) -> int | None:
        """The last ``x-ratelimit-remaining`` seen, for metrics (None before any request)."""
        ...


class GitHubClientFactory(Protocol):
    """Gives a ``GitHubAPI`` scoped to one installation (installation tokens cached inside)."""

    def for_installation(self, installation_id: int) -> GitHubAPI: ...
