"""``LocalGitHub``: a ``GitHubAPI`` over a local git repository that keeps every write in memory.

More in docs/module-notes.md (bot/github/local.py).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.core.changes import ChangeSet, Status, diff_lines, in_one_hunk
from bot.core.inert import markdown_line
from bot.core.quoting import utf8_size
from bot.core.snapshot import SUBMODULE, GitError, GitSnapshot, SnapshotError, run_git
from bot.github import limits as github_limits
from bot.github.api import (
    REVIEW_STATES,
    Annotation,
    ChangedFile,
    CheckConclusion,
    CheckRunInfo,
    CheckRunOutput,
    CheckStatus,
    CommentInfo,
    GitHubError,
    InlineComment,
    IssueInfo,
    NotFound,
    PullRequest,
    ReviewCommentInfo,
    ReviewEvent,
    ReviewInfo,
    StatusInfo,
    base_of,
)
from bot.github.app_permissions import NEEDS
from bot.github.app_permissions import check as check_permissions
from bot.github.local_merge import (
    MERGE_METHODS,
    MERGEABLE,
    METHOD_NOT_ALLOWED,
    WRITERS,
    BranchProtection,
    StatusCheck,
    merge_blockers,
    mergeable_state,
    rollup_contexts,
)
from bot.github.required_checks import CheckState, state_of
from bot.github.tree_files import (
    MAX_BLOB_BYTES,
    TreeFiles,
    normalise_prefixes,
    too_large,
    under_prefixes,
)

MAX_ANNOTATIONS_PER_REQUEST = github_limits.ANNOTATIONS_PER_REQUEST
MAX_OUTPUT_BYTES = github_limits.OUTPUT_BYTES
MAX_BODY_CHARS = github_limits.BODY_CHARS
MAX_FILES = github_limits.PR_FILES
MAX_ACTIONS = github_limits.ACTIONS_PER_RUN
_STATUS = {
    Status.ADDED: "added",
    Status.MODIFIED: "modified",
    Status.RENAMED: "renamed",
    Status.DELETED: "removed",
}
_CONCLUSIONS = {
    "success",
    "failure",
    "neutral",
    "cancelled",
    "skipped",
    "timed_out",
    "action_required",
}
_LEVELS = {"notice", "warning", "failure"}
PERMISSIONS = ("admin", "maintain", "write", "triage", "read", "none")


OTHER_APP = "ci"  # the slug of another App's check runs (``add_check_run``)
# GraphQL ``enablePullRequestAutoMerge`` where the repository's "Allow auto-merge" is off
AUTO_MERGE_NOT_ALLOWED = "Auto merge is not allowed for this repository"
# GitHub's "no" on a locked conversation: an issue comment (403, as public clients report it) and a
# review (422; one public report's words, GitHub documents neither)
LOCKED_COMMENT = "Unable to create comment because issue is locked."
LOCKED_REVIEW = "lock prevents review"
# a draft pull request's merge (REST 405, GraphQL ``mergePullRequest``) as public clients report it;
# GitHub documents neither, nor the words of ``enablePullRequestAutoMerge``'s refusal on a draft
STILL_A_DRAFT = "Pull Request is still a draft"
# the issues API where the repository's Issues feature is off ("Gone", 410)
ISSUES_DISABLED = "Issues are disabled for this repo"


class Unprocessable(GitHubError):
    """GitHub's 422: its ``message`` (``reason``) and ``errors``, folded into the text as the
    client reads them (the stand-in answers them apart, as GitHub does)."""

    def __init__(self, reason: str, errors: Sequence[str] = ()) -> None:
        detail = f" ({'; '.join(errors)})" if errors else ""
        super().__init__(f"Unprocessable Entity: {reason}{detail}", status=422)
        self.reason, self.errors = reason, tuple(errors)


def unprocessable(message: str, *errors: str) -> GitHubError:
    """GitHub's 422, with its ``errors`` folded into the message."""
    return Unprocessable(message, errors)


@dataclass
class CheckRunRecord:
    id: int
    head_sha: str
    name: str
    status: str
    conclusion: str | None
    external_id: str
    title: str = ""
    summary: str = ""
    text: str = ""
    annotations: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, str]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)  # one per create/update call
    app: str = ""  # the App that made it: "" the bot's, else another App's slug (a CI)


@dataclass
class ReviewCommentRecord:
    id: int
    review_id: int
    user: str
    path: str
    line: int
    body: str
    commit_id: str
    start_line: int | None = None


@dataclass
class ReviewRecord:
    id: int
    user: str
    state: str
    commit_id: str
    body: str
    event: str = ""
    comments: list[ReviewCommentRecord] = field(default_factory=list)
    dismissal_message: str | None = None


@dataclass
class IssueCommentRecord:
    id: int
    user: str
    body: str
    history: list[str] = field(default_factory=list)  # earlier bodies, oldest first


@dataclass
class IssueRecord:
    number: int
    user: str
    title: str
    body: str
    state: str = "open"
    history: list[str] = field(default_factory=list)  # earlier bodies, oldest first


class LocalGitHub:
    """One repository with one pull request, backed by git; every write kept in memory."""

    def __init__(
        self,
        repo_path: str | os.PathLike[str],
        base: str,
        head: str,
        *,
        repo: str = "owner/repo",
        number: int = 1,
        author: str = "contributor",
        bot: str = "registry-bot[bot]",
        default_branch: str | None = None,
        permissions: Mapping[str, str] | None = None,
        default_permission: str = "read",
        max_files: int = MAX_FILES,
        team_members: Mapping[str, Sequence[str]] | None = None,
        protection: BranchProtection | None = None,
        app_permissions: Mapping[str, str] | None = None,
    ) -> None:
        self.repo_path = str(repo_path)
        self.repo = repo
        self.number = number
        self.author = author
        self.bot = bot
        self.base = base
        self.head = head
        self.default_branch = default_branch or base
        self.permissions = dict(permissions or {})
        self.default_permission = default_permission
        self.max_files = max_files
        # "org/team" (case-folded) -> logins (case-folded)
        self.team_members: dict[str, set[str]] = {}
        self.state_open = True
        self.draft = False  # a draft pull request (``convert_to_draft``, ``mark_ready``)
        # the head repository (``owner/name``) when the pull request comes from a fork
        self.fork: str | None = None
        # the base branch's protection (``bot.github.local_merge``); None: none
        self.protection = protection
        # the pull request's ``base.sha`` as GitHub keeps it, once ``pin_base`` is called: where the
        # base branch was at the pull request's last push, not following merges; None: the base
        # branch's tip
        self.base_pin: str | None = None
        # the App's granted permissions (``bot.github.app_permissions``: app.yml's); None:
        # everything
        self.app_permissions = dict(app_permissions) if app_permissions is not None else None
        # the repository's "Allow auto-merge" (off on GitHub until an administrator turns it on)
        self.allow_auto_merge = True
        # the merge methods the repository's settings allow (GitHub's default: all three)
        self.merge_methods: frozenset[str] = MERGE_METHODS
        self.has_issues = True  # the repository's Issues feature (off: 410 for the issues API)
        self.locked = False  # the pull request's conversation is locked
        self.auto_merge: str | None = None  # the merge method, while auto-merge is enabled
        self.auto_merge_by: str | None = None  # who enabled it, while it is enabled
        self.merged: dict[str, str] | None = None  # {"sha", "method", "by"} once merged
        self.check_runs: list[CheckRunRecord] = []
        # commit statuses (the legacy Statuses API) others set: (id, sha, context, state)
        self.statuses: list[tuple[int, str, str, str]] = []
        self.reviews: list[ReviewRecord] = []
        self.issue_comments: list[IssueCommentRecord] = []
        # issues (not pull requests); numbers after the pull request's
        self.issues: list[IssueRecord] = []
        self._ids = itertools.count(1001)
        self._lock = threading.RLock()
        for team, logins in (team_members or {}).items():
            self.set_team(team, logins)
        self._snapshots: dict[str, GitSnapshot] = {}
        self._files: dict[tuple[str, str], list[ChangedFile]] = {}
        self._merges: dict[tuple[str, str], bool] = {}  # (base, head) -> the merge conflicts
        # (head, base) -> the head contains the base
        self._ancestry: dict[tuple[str, str], bool] = {}
        self.calls: list[str] = []  # every GitHubAPI call, in order
        self.log: list[tuple[str, dict[str, Any]]] = []  # the same calls with their arguments
        # every write call with its arguments, in order
        self.writes: list[tuple[str, dict[str, Any]]] = []
        # method -> errors its next calls raise (``fail``)
        self._failures: dict[str, list[Exception]] = {}
        self.resolve(base)
        self.resolve(head)

    # -- git ---------------------------------------------------------------------------------
    def resolve(self, ref: str) -> str:
        """The commit sha of a branch name or sha; NotFound when git does not know it."""
        try:
            return (
                run_git(
                    self.repo_path, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"
                )
                .decode()
                .strip()
            )
        except GitError as exc:
            raise NotFound(f"No commit found for {ref!r}", status=404) from exc

    def _snapshot(self, ref: str) -> GitSnapshot:
        sha = self.resolve(ref)
        with self._lock:
            if sha not in self._snapshots:
                self._snapshots[sha] = GitSnapshot(self.repo_path, sha)
            return self._snapshots[sha]

    def close(self) -> None:
        with self._lock:
            for snap in self._snapshots.values():
                snap.close()
            self._snapshots.clear()

    def _enter(self, method: str, arguments: dict[str, Any]) -> None:
        """Before every ``GitHubAPI`` call: log it (``calls``, ``writes``), raise an injected
        failure (``fail``), then GitHub's 403 for a call the App's permissions do not cover
        (``bot.github.app_permissions``)."""
        with self._lock:
            self.calls.append(method)
            self.log.append((method, arguments))
            if method in WRITE_CALLS:
                self.writes.append((method, arguments))
            queued = self._failures.get(method)
            error = queued.pop(0) if queued else None
        if error is not None:
            raise error
        check_permissions(self.app_permissions, method)

    def fail(self, method: str, error: Exception, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` raise ``error`` (a test's fault
        injection)."""
        with self._lock:
            self._failures.setdefault(method, []).extend([error] * times)

    def methods_written(self) -> list[str]:
        """The write calls made so far, in order."""
        with self._lock:
            return [method for method, _ in self.writes]

    def runs_for(self, head_sha: str) -> list[CheckRunRecord]:
        """The check runs on ``head_sha``, oldest first."""
        sha = self.resolve(head_sha)
        with self._lock:
            return [r for r in self.check_runs if r.head_sha == sha]

    def unplaced(self, run: CheckRunRecord) -> list[dict[str, Any]]:
        """The run's annotations on a path its commit does not have: GitHub takes them but shows
        them on no file (actions/toolkit#470, #2223)."""
        head = self._snapshot(run.head_sha)
        return [a for a in run.annotations if head.size(a["path"]) is None]

    def _check_pr(self, repo: str, number: int | None = None) -> None:
        if repo != self.repo or (number is not None and number != self.number):
            raise NotFound(
                f"Not Found: {repo}#{number}" if number is not None else f"Not Found: {repo}",
                status=404,
            )

    def pin_base(self) -> str:
        """Keep the pull request's ``base.sha`` where the base branch is now until the next
        ``push``, as GitHub does (it does not follow merges to the base branch); returns it."""
        self.base_pin = self.resolve(self.base)
        return self.base_pin

    def base_sha(self) -> str:
        """The pull request's ``base.sha`` (``pin_base``)."""
        return self.base_pin or self.resolve(self.base)

    def _changed_files(self, head_sha: str) -> list[ChangedFile]:
        """Every file the PR changes at ``head_sha`` (merge base of base and head -> head),
        uncapped."""
        base_sha = self.base_sha()
        key = (base_sha, head_sha)
        with self._lock:
            cached = self._files.get(key)
        if cached is not None:
            return cached
        changes = ChangeSet.from_git(self.repo_path, base_sha, head_sha)
        head = self._snapshot(head_sha)
        files = []
        for change in changes.files:
            # a copy is listed as an addition (``ChangeSet.from_git``): GitHub's ``copied`` is read
            # by ``to_changeset`` (tests/test_rename_audit.py gives it one)
            status = _STATUS[change.status]
            # GitHub's ``sha``: the blob at the head (a removed file: the zero id, as the stand-in)
            sha = (
                "0" * 40 if change.status is Status.DELETED else head.object_id(change.path) or None
            )
            files.append(ChangedFile(change.path, status, change.old_path, change.patch, sha))
        with self._lock:
            self._files[key] = files
        return files

    # -- reading -----------------------------------------------------------------------------
    def get_pull_request(self, repo: str, number: int) -> PullRequest:
        self._check_pr(repo, number)
        return self._pull()

    def _pull(self) -> PullRequest:
        return PullRequest(
            repo=self.repo,
            number=self.number,
            head_sha=self.resolve(self.head),
            base_sha=self.base_sha(),
            base_ref=self.base,
            head_ref=self.head,
            author=self.author,
            state="open" if self.state_open else "closed",
            draft=self.draft,
            default_branch=self.default_branch,
            head_repo=self.fork or self.repo,
            node_id=self.node_id,
            auto_merge=self.auto_merge is not None,
            auto_merge_by=self.auto_merge_by or "",
            merged=self.merged is not None,
        )

    @property
    def node_id(self) -> str:
        return f"PR_{self.repo}#{self.number}"

    def list_pull_request_files(self, repo: str, number: int) -> tuple[list[ChangedFile], bool]:
        self._check_pr(repo, number)
        files = self._changed_files(self.resolve(self.head))
        return files[: self.max_files], len(files) > self.max_files

    def changed_files_count(self) -> int:
        """How many files the pull request changes (GitHub's ``changed_files``: not capped like the
        listing)."""
        return len(self._changed_files(self.resolve(self.head)))

    def merge_base(self, repo: str, base: str, head: str) -> str:
        self._check_pr(repo)
        try:
            return run_git(self.repo_path, "merge-base", base, head).decode().strip()
        except GitError as exc:
            raise NotFound(f"No common ancestor between {base} and {head}", status=404) from exc

    def default_branch_head(self, repo: str) -> str:
        self._check_pr(repo)
        return self.resolve(self.default_branch)

    def list_open_pull_requests_for_sha(self, repo: str, head_sha: str) -> list[int]:
        """``GET /repos/{repo}/commits/{sha}/pulls``: nothing for a fork's head commit, which is
        not the base repository's (as public clients report it; GitHub documents no exception)."""
        self._check_pr(repo)
        if self.fork is not None:
            return []
        return [self.number] if self.state_open and self.resolve(self.head) == head_sha else []

    def list_open_pull_requests(self, repo: str) -> list[tuple[int, str, str]]:
        self._check_pr(repo)
        return (
            [(self.number, self.resolve(self.head), self.base_sha())]
            if self.state_open and self.merged is None
            else []
        )

    def read_tree(self, repo: str, ref: str, prefixes: Sequence[str]) -> Mapping[str, bytes]:
        self._check_pr(repo)
        snap = self._snapshot(ref)
        wanted = normalise_prefixes(prefixes)
        out = TreeFiles()
        for path, commit in snap.submodules.items():
            if under_prefixes(path, wanted):
                out.skipped[path] = SUBMODULE
                out.skipped_ids[path] = commit
        for path in snap.files():
            if not under_prefixes(path, wanted):
                continue
            size = snap.size(path) or 0
            if size > MAX_BLOB_BYTES:
                out.skipped[path] = too_large(size)
                out.skipped_ids[path] = snap.object_id(path) or ""
                continue
            try:
                data = snap.read(path)
            except SnapshotError as exc:
                out.skipped[path] = str(exc)
                out.skipped_ids[path] = snap.object_id(path) or ""
                continue
            if data is not None:
                out[path] = data
        return out

    def read_file(self, repo: str, ref: str, path: str) -> bytes | None:
        """As the client reads it: a file over the size GitHub serves raises its 413."""
        self._check_pr(repo)
        try:
            size = self._snapshot(ref).size(path) or 0
            if size > MAX_BLOB_BYTES:
                raise GitHubError(f"{path} at {ref}: {too_large(size)}", status=413)
            return self._snapshot(ref).read(path)
        except SnapshotError:
            return None

    def read_files(self, repo: str, ref: str, paths: Sequence[str]) -> dict[str, bytes]:
        """As GitHub serves them: a file over its size limit is named in ``skipped``, not read."""
        out = TreeFiles()
        for path in paths:
            try:
                size = self._snapshot(ref).size(path) or 0
            except SnapshotError:
                size = 0
            if size > MAX_BLOB_BYTES:
                out.skipped[path] = f"{path} at {ref}: {too_large(size)}"
                continue
            data = self.read_file(repo, ref, path)
            if data is not None:
                out[path] = data
        return out

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        self._check_pr(repo, number)
        with self._lock:
            return [ReviewInfo(r.id, r.user, r.state, r.commit_id, r.body) for r in self.reviews]

    def list_issue_comments(self, repo: str, number: int) -> list[CommentInfo]:
        self._check_pr(repo, number)
        with self._lock:
            return [CommentInfo(c.id, c.user, c.body) for c in self.issue_comments]

    def list_review_comments(self, repo: str, number: int) -> list[ReviewCommentInfo]:
        self._check_pr(repo, number)
        with self._lock:
            return [
                ReviewCommentInfo(c.id, c.user, c.path, c.line, c.body, c.commit_id)
                for r in self.reviews
                for c in r.comments
            ]

    def get_permission(self, repo: str, login: str) -> str:
        self._check_pr(repo)
        return self._permission(login)

    def _permission(self, login: str) -> str:
        return (
            "write" if login == self.bot else self.permissions.get(login, self.default_permission)
        )

    def get_team_membership(self, org: str, team_slug: str, login: str) -> str | None:
        with self._lock:
            members = self.team_members.get(f"{org}/{team_slug}".casefold())
        if members is None:
            raise NotFound(f"Not Found: team {org}/{team_slug}", status=404)
        return "active" if login.casefold() in members else None

    def set_team(self, team: str, logins: Sequence[str]) -> None:
        """Make ``logins`` the active members of ``team`` (``org/team-slug``)."""
        with self._lock:
            self.team_members[team.removeprefix("@").casefold()] = {
                x.removeprefix("@").casefold() for x in logins
            }

    def bot_login(self) -> str:
        return self.bot

    def rate_limit_remaining(self) -> int | None:
        return None  # no HTTP, no rate limit

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunInfo]:
        """The App's own runs of ``name`` (GitHub's ``app_id``), every App's runs for ``""``."""
        self._check_pr(repo)
        return [
            CheckRunInfo(
                r.id,
                r.head_sha,
                r.name,
                r.status,
                r.conclusion,
                r.external_id,
                len(r.annotations),
                r.title,
                base_of(r.summary),
            )
            for r in self.runs_listed(head_sha, name, "" if name else None)
        ]

    def runs_listed(self, head_sha: str, name: str, app: str | None) -> list[CheckRunRecord]:
        """The runs on ``head_sha`` (of ``name``; made by ``app``: "" the bot, None any), newest
        first, as "List check runs for a Git reference" lists them."""
        sha = self.resolve(head_sha)
        with self._lock:
            return [
                r
                for r in reversed(self.check_runs)
                if r.head_sha == sha
                and (not name or r.name == name)
                and (app is None or r.app == app)
            ]

    # -- writing: check runs -----------------------------------------------------------------
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
        self._check_pr(repo)
        try:
            sha = self.resolve(head_sha)
        except NotFound as exc:
            raise unprocessable(f"No commit found for SHA: {head_sha}") from exc
        if not name:
            raise unprocessable("Invalid request", "name wasn't supplied")
        state, result = _check_status(status, conclusion)
        _check_output(output)
        _check_actions(actions)
        with self._lock:
            run = CheckRunRecord(next(self._ids), sha, name, state, result, external_id)
            self._apply(run, "create", state, result, output, actions)
            self.check_runs.append(run)
            self._settle()
            return run.id

    def add_check_run(
        self, name: str, status: str = "completed", conclusion: str | None = None
    ) -> int:
        """Another App's check run on the head (a CI), outside the bot's permissions."""
        state, result = _check_status(status, conclusion)
        with self._lock:
            run = CheckRunRecord(
                next(self._ids), self.resolve(self.head), name, state, result, "", app=OTHER_APP
            )
            self.check_runs.append(run)
            self._settle()
            return run.id

    def add_status(self, context: str, state: str, ref: str | None = None) -> None:
        """A commit status another service sets on ``ref`` (the head by default): ``error``,
        ``failure``, ``pending`` or ``success``."""
        with self._lock:
            self.statuses.append((next(self._ids), self.resolve(ref or self.head), context, state))
            self._settle()

    def list_commit_statuses(self, repo: str, ref: str) -> list[StatusInfo]:
        """The latest status of each context on ``ref``, newest first, as the combined status
        gives them."""
        self._check_pr(repo)
        sha = self.resolve(ref)
        latest: dict[str, StatusInfo] = {}
        with self._lock:
            for _, on, context, state in reversed(self.statuses):
                if on == sha and context not in latest:
                    latest[context] = StatusInfo(context, state)
        return list(latest.values())

    def update_check_run(
        self,
        repo: str,
        check_run_id: int,
        status: CheckStatus | None = None,
        conclusion: CheckConclusion | None = None,
        output: CheckRunOutput | None = None,
        actions: Sequence[Mapping[str, str]] = (),
    ) -> None:
        self._check_pr(repo)
        with self._lock:
            run = next((r for r in self.check_runs if r.id == check_run_id), None)
            if run is None:
                raise NotFound(f"Not Found: check run {check_run_id}", status=404)
            state: str | None = None
            result: str | None = None
            if status is not None or conclusion is not None:
                state, result = _check_status(status or run.status, conclusion)
            _check_output(output)
            _check_actions(actions)
            self._apply(run, "update", state, result, output, actions)
            self._settle()

    @staticmethod
    def _apply(
        run: CheckRunRecord,
        kind: str,
        status: str | None,
        conclusion: str | None,
        output: CheckRunOutput | None,
        actions: Sequence[Mapping[str, str]],
    ) -> None:
        if status is not None:
            run.status = status
        if conclusion is not None:
            run.conclusion = conclusion
        if output is not None:
            run.title, run.summary = output.title, output.summary
            if output.text:
                run.text = output.text
            run.annotations.extend(asdict(a) for a in output.annotations)
        if actions:
            run.actions = [dict(a) for a in actions]
        run.requests.append(
            {
                "kind": kind,
                "status": status,
                "conclusion": conclusion,
                "title": output.title if output else None,
                "annotations": len(output.annotations) if output else 0,
                "actions": len(actions),
            }
        )

    # -- writing: reviews --------------------------------------------------------------------
    def create_review(
        self,
        repo: str,
        number: int,
        commit_sha: str,
        event: ReviewEvent,
        body: str,
        comments: Sequence[InlineComment] = (),
    ) -> int:
        self._check_pr(repo, number)
        if self.locked:
            raise unprocessable(LOCKED_REVIEW)
        return self._add_review(self.bot, event, body, commit_sha, comments)

    def add_review(
        self,
        user: str,
        event: ReviewEvent = "APPROVE",
        body: str = "",
        commit_sha: str | None = None,
    ) -> int:
        """A review by someone else (an approval by default), on the current head unless told."""
        return self._add_review(user, event, body, commit_sha or self.resolve(self.head), ())

    def _add_review(
        self, user: str, event: str, body: str, commit_sha: str, comments: Sequence[InlineComment]
    ) -> int:
        if event not in ("APPROVE", "REQUEST_CHANGES", "COMMENT"):
            raise unprocessable(f"Invalid event {event!r}")
        if event == "REQUEST_CHANGES" and not body:
            raise unprocessable("Body is required for REQUEST_CHANGES events")
        if event == "COMMENT" and not body and not comments:
            raise unprocessable("Body is required for COMMENT events without comments")
        if user == self.author and event != "COMMENT":  # GitHub's words, as public clients report
            raise unprocessable(
                "Unprocessable Entity",
                "Review Can not approve your own pull request"
                if event == "APPROVE"
                else "Review Can not request changes on your own pull request",
            )
        _check_body(body)
        try:
            sha = self.resolve(commit_sha)
        except NotFound as exc:
            raise unprocessable(f"No commit found for SHA: {commit_sha}") from exc
        diff = {f.path: f for f in self._changed_files(sha)}
        for comment in comments:
            changed = diff.get(comment.path)
            if changed is None:
                raise unprocessable("Path could not be resolved", f"{comment.path}:{comment.line}")
            if comment.line not in diff_lines(changed.patch):
                raise unprocessable(
                    "Line could not be resolved",
                    f"{comment.path}:{comment.line} must be part of the diff",
                )
            if comment.start_line is not None and not in_one_hunk(
                changed.patch, comment.start_line, comment.line
            ):
                raise unprocessable(
                    "Start line could not be resolved",
                    f"{comment.path}:{comment.start_line}-"
                    f"{comment.line} must be lines of one hunk of the diff",
                )
            _check_body(comment.body)
        state = REVIEW_STATES[event]
        with self._lock:
            review = ReviewRecord(next(self._ids), user, state, sha, body, event)
            review.comments = [
                ReviewCommentRecord(
                    next(self._ids), review.id, user, c.path, c.line, c.body, sha, c.start_line
                )
                for c in comments
            ]
            self.reviews.append(review)
            self._settle()
            return review.id

    def dismiss_review(self, repo: str, number: int, review_id: int, message: str) -> None:
        self._check_pr(repo, number)
        self.dismiss_as(self.bot, review_id, message)

    def dismiss_as(self, user: str, review_id: int, message: str) -> None:
        """``user`` dismisses a review; on a protected branch that restricts dismissals only admins
        and the allowed actors may (GitHub: 403)."""
        with self._lock:
            review = next((r for r in self.reviews if r.id == review_id), None)
            if review is None:
                raise NotFound(f"Not Found: review {review_id}", status=404)
            if self.protection is not None and not self.protection.may_dismiss(
                user, self._permission(user)
            ):
                raise GitHubError(
                    "Forbidden: only repository administrators and the actors allowed to dismiss "
                    "pull request reviews may dismiss reviews on this protected branch",
                    status=403,
                )
            if review.state not in ("APPROVED", "CHANGES_REQUESTED"):
                raise unprocessable(f"Can not dismiss a {review.state.lower()} pull request review")
            if not message:
                raise unprocessable("message wasn't supplied")
            review.state = "DISMISSED"
            review.dismissal_message = message
            self._settle()

    # -- writing: issue comments -------------------------------------------------------------
    def create_issue_comment(self, repo: str, number: int, body: str) -> int:
        self._check_pr(repo, number)
        if self.locked:
            raise GitHubError(LOCKED_COMMENT, status=403)
        return self.add_issue_comment(self.bot, body)

    def add_issue_comment(self, user: str, body: str) -> int:
        """A comment by anyone (tests use it for other people's comments)."""
        _check_body(body)
        if not body:
            raise unprocessable("Body cannot be blank")
        with self._lock:
            comment = IssueCommentRecord(next(self._ids), user, body)
            self.issue_comments.append(comment)
            return comment.id

    def edit_issue_comment(self, repo: str, comment_id: int, body: str) -> None:
        self._check_pr(repo)
        _check_body(body)
        with self._lock:
            comment = next((c for c in self.issue_comments if c.id == comment_id), None)
            if comment is None:
                raise NotFound(f"Not Found: comment {comment_id}", status=404)
            comment.history.append(comment.body)
            comment.body = body

    # -- writing: issues ---------------------------------------------------------------------
    def _check_issues(self, repo: str) -> None:
        self._check_pr(repo)
        if not self.has_issues:
            raise GitHubError(ISSUES_DISABLED, status=410)

    def list_issues(self, repo: str, creator: str) -> list[IssueInfo]:
        self._check_issues(repo)
        with self._lock:
            return [
                IssueInfo(i.number, i.user, i.title, i.body, i.state)
                for i in self.issues
                if i.user == creator
            ]

    def create_issue(self, repo: str, title: str, body: str) -> int:
        self._check_issues(repo)
        _check_body(body)
        if not title:
            raise unprocessable("Title cannot be blank")
        with self._lock:
            number = max([self.number, *(i.number for i in self.issues)]) + 1
            self.issues.append(IssueRecord(number, self.bot, title, body))
            return number

    def edit_issue(self, repo: str, number: int, body: str) -> None:
        self._check_issues(repo)
        _check_body(body)
        with self._lock:
            issue = next((i for i in self.issues if i.number == number), None)
            if issue is None:
                raise NotFound(f"Not Found: issue {number}", status=404)
            issue.history.append(issue.body)
            issue.body = body

    # -- the pull request moves --------------------------------------------------------------
    def push(self, head: str, pusher: str | None = None) -> str:
        """Move the PR head to another branch or commit (a push by ``pusher``, default the author);
        returns the new head sha. Branch protection may dismiss the approvals, and a pusher without
        write access disables auto-merge, as on GitHub."""
        sha = self.resolve(head)
        with self._lock:
            if self.merged is not None or not self.state_open:
                raise unprocessable("the pull request is closed")
            self.head = head
            if self.protection is not None and self.protection.dismiss_stale_reviews:
                for review in self.reviews:
                    if review.state == "APPROVED" and review.commit_id != sha:
                        review.state = "DISMISSED"
                        review.dismissal_message = (
                            "Stale: new commits were pushed (branch protection)"
                        )
            if self._permission(pusher or self.author) not in WRITERS:
                self.auto_merge = self.auto_merge_by = None
            if self.base_pin is not None:  # GitHub compares the pushed head with the base anew
                self.base_pin = self.resolve(self.base)
        return sha

    def convert_to_draft(self) -> None:
        """The author converts the pull request to a draft: GitHub turns its auto-merge off (public
        clients' reports: "automatically disables auto-merge for closed and draft PRs")."""
        with self._lock:
            self.draft = True
            self.auto_merge = self.auto_merge_by = None

    def mark_ready(self) -> None:
        """The author marks the draft ready for review."""
        with self._lock:
            self.draft = False
            self._settle()

    def close_pull_request(self) -> None:
        """Someone closes the pull request unmerged: GitHub turns its auto-merge off (public
        clients' reports, as for a draft), so a reopened one merges nothing before it is enabled
        again."""
        with self._lock:
            self.state_open = False
            self.auto_merge = self.auto_merge_by = None

    def reopen(self) -> None:
        """Someone reopens the closed pull request (a merged one stays merged)."""
        with self._lock:
            if self.merged is not None:
                raise unprocessable("A merged pull request cannot be reopened")
            self.state_open = True

    def retarget(self, base: str, by: str | None = None) -> None:
        """``by`` (default the author) changes the base branch: "if someone who does not have write
        permissions to the repository ... switches the base branch of the pull request, auto-merge
        will be disabled" ("Automatically merging a pull request")."""
        self.resolve(base)
        with self._lock:
            if self.merged is not None or not self.state_open:
                raise unprocessable("the pull request is closed")
            self.base = base
            if self._permission(by or self.author) not in WRITERS:
                self.auto_merge = self.auto_merge_by = None
            self._settle()

    # -- merging -----------------------------------------------------------------------------
    def merge_blockers(self) -> list[str]:
        """Why the pull request cannot merge now under the branch protection (empty: it can)."""
        with self._lock:
            return merge_blockers(
                self.protection,
                self.reviews,
                self._checks(),
                self.resolve(self.head),
                self._permission,
            )

    def mergeable_state(self) -> str:
        """GitHub's ``mergeable_state``: draft, dirty, blocked, behind, unstable or clean
        (``bot.github.local_merge``)."""
        with self._lock:
            if self.draft:
                return "draft"
            head, base = self.resolve(self.head), self.resolve(self.base)
            return mergeable_state(
                self.protection,
                self.merge_blockers(),
                self._checks(),
                head,
                self._conflicts(base, head),
                not self._contains(head, base),
            )

    def _conflicts(self, base: str, head: str) -> bool:
        """Whether merging ``head`` into ``base`` conflicts (``git merge-tree --write-tree`` exits
        1)."""
        key = (base, head)
        if key not in self._merges:
            try:
                run_git(self.repo_path, "merge-tree", "--write-tree", "--no-messages", base, head)
                self._merges[key] = False
            except GitError:
                self._merges[key] = True
        return self._merges[key]

    def _contains(self, head: str, base: str) -> bool:
        """Whether ``base`` is an ancestor of ``head`` (the head is up to date with the base); kept
        per pair."""
        key = (head, base)
        if key not in self._ancestry:
            try:
                run_git(self.repo_path, "merge-base", "--is-ancestor", base, head)
                self._ancestry[key] = True
            except GitError:
                self._ancestry[key] = False
        return self._ancestry[key]

    def rollup_contexts(self, head_sha: str) -> list[dict[str, Any]]:
        """The head commit's check contexts in GraphQL's shape (what the stand-in's ``/graphql``
        serves)."""
        with self._lock:
            return rollup_contexts(self.protection, self._checks(), self.resolve(head_sha))

    def _checks(self) -> list[CheckRunRecord | StatusCheck]:
        """The check runs and commit statuses (oldest first), which branch protection weighs
        alike (the lock held)."""
        return [
            *self.check_runs,
            *(StatusCheck(sha, context, state) for _, sha, context, state in self.statuses),
        ]

    def check_states(self, repo: str, number: int, head_sha: str) -> list[CheckState] | None:
        self._check_pr(repo, number)
        return [state_of(node) for node in self.rollup_contexts(head_sha)]

    def enable_auto_merge(
        self, repo: str, number: int, node_id: str, head_sha: str, merge_method: str
    ) -> None:
        self._check_pr(repo, number)
        with self._lock:
            if node_id != self.node_id:
                raise unprocessable(
                    f"Could not resolve to a node with the global id of '{node_id}'"
                )
            if head_sha and head_sha != self.resolve(self.head):
                raise unprocessable(f"Head sha didn't match expected head sha {head_sha}")
            if merge_method not in MERGE_METHODS:
                raise unprocessable(f"Invalid merge method {merge_method!r}")
            if self.merged is not None or not self.state_open:
                raise unprocessable("Pull request is closed")
            if self.draft:
                raise unprocessable(STILL_A_DRAFT)
            if not self.allow_auto_merge:
                raise unprocessable(AUTO_MERGE_NOT_ALLOWED)
            if self.auto_merge is not None:  # as GitHub answers a second enable
                raise unprocessable("Pull request Auto merge is already enabled")
            state = self.mergeable_state()
            if state in MERGEABLE:
                raise unprocessable(f"Pull request is in {state} status")
            # after the state (GitHub's order is not documented): a pull request that can merge now
            # meets the method's refusal at the merge (405)
            if merge_method not in self.merge_methods:
                raise unprocessable(METHOD_NOT_ALLOWED[merge_method])
            self.auto_merge, self.auto_merge_by = merge_method, self.bot

    def enable_auto_merge_as(self, user: str, merge_method: str = "MERGE") -> None:
        """A person (``user``, with write access) enables auto-merge in GitHub's merge box (no
        ``GitHubAPI`` call; GitHub's rules as for the App's, without an expected head)."""
        with self._lock:
            if self._permission(user) not in WRITERS:
                raise GitHubError("Must have write access to enable auto-merge", status=403)
            if self.merged is not None or not self.state_open:
                raise unprocessable("Pull request is closed")
            if self.draft:
                raise unprocessable(STILL_A_DRAFT)
            if not self.allow_auto_merge:
                raise unprocessable(AUTO_MERGE_NOT_ALLOWED)
            if self.mergeable_state() in MERGEABLE:
                raise unprocessable(f"Pull request is in {self.mergeable_state()} status")
            if merge_method not in self.merge_methods:
                raise unprocessable(METHOD_NOT_ALLOWED[merge_method])
            self.auto_merge, self.auto_merge_by = merge_method, user

    def disable_auto_merge(self, repo: str, number: int, node_id: str) -> None:
        self._check_pr(repo, number)
        with self._lock:
            if node_id != self.node_id:
                raise unprocessable(
                    f"Could not resolve to a node with the global id of '{node_id}'"
                )
            if self.merged is not None or not self.state_open:
                raise unprocessable("Pull request is closed")
            self.auto_merge = self.auto_merge_by = None  # already off: nothing to do

    def merge_pull_request(self, repo: str, number: int, head_sha: str, merge_method: str) -> None:
        self._check_pr(repo, number)
        with self._lock:
            if self.merged is not None or not self.state_open:
                raise GitHubError("Pull Request is not mergeable", status=405)
            if self.draft:
                raise GitHubError(STILL_A_DRAFT, status=405)
            if head_sha and self.resolve(self.head) != head_sha:
                raise GitHubError(
                    "Head branch was modified. Review and try the merge again.", status=409
                )
            method = merge_method.upper()
            if method in METHOD_NOT_ALLOWED and method not in self.merge_methods:
                raise GitHubError(METHOD_NOT_ALLOWED[method], status=405)
            state = self.mergeable_state()
            if state == "dirty":
                raise GitHubError(
                    "Pull Request is not mergeable: the head conflicts with the base", status=405
                )
            if state == "blocked":
                raise GitHubError(
                    f"Pull Request is not mergeable: {'; '.join(self.merge_blockers())}", status=405
                )
            if state == "behind":
                raise GitHubError("Head branch is out of date with the base branch", status=405)
            self._merge(merge_method.upper(), self.bot)

    def _merge(self, method: str, by: str) -> None:
        self.merged = {"sha": self.resolve(self.head), "method": method, "by": by}
        self.state_open = False
        self.auto_merge = self.auto_merge_by = None

    def _settle(self) -> None:
        """Auto-merge: merge as soon as nothing blocks (called, lock held, after every change of
        state)."""
        if (
            self.auto_merge is not None
            and self.merged is None
            and self.state_open
            and self.mergeable_state() in MERGEABLE
        ):
            self._merge(self.auto_merge, "auto-merge")

    # -- inspection --------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything posted, as JSON-ready plain data."""
        with self._lock:
            return {
                "pull_request": asdict(self._pull()),
                "check_runs": [asdict(r) for r in self.check_runs],
                "reviews": [asdict(r) for r in self.reviews],
                "issue_comments": [asdict(c) for c in self.issue_comments],
                "issues": [asdict(i) for i in self.issues],
                "auto_merge": self.auto_merge,
                "auto_merge_by": self.auto_merge_by,
                "merged": self.merged,
                "merge_blockers": self.merge_blockers(),
                "mergeable_state": self.mergeable_state() if self.merged is None else "merged",
            }

    def render(self) -> str:
        """Everything posted, as readable text (what ``replay`` prints)."""
        with self._lock:
            text = render_posts(self.check_runs, self.reviews, self.issue_comments)
            if self.merged is not None:
                text += (
                    f"== Merged {self.merged['sha'][:12]} ({self.merged['method']}, by "
                    f"{self.merged['by']})\n"
                )
            elif self.auto_merge is not None:
                text += (
                    f"== Auto-merge enabled ({self.auto_merge}, by {self.auto_merge_by}), "
                    "waiting for: "
                    f"{'; '.join(self.merge_blockers())}\n"
                )
            return text


WRITE_CALLS = frozenset(
    {
        "create_check_run",
        "update_check_run",
        "create_review",
        "dismiss_review",
        "enable_auto_merge",
        "disable_auto_merge",
        "merge_pull_request",
        "create_issue_comment",
        "edit_issue_comment",
        "create_issue",
        "edit_issue",
    }
)


def _entered(method: str, call: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(call)

    @functools.wraps(call)
    def entered(self: LocalGitHub, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        self._enter(method, {k: v for k, v in bound.arguments.items() if k != "self"})
        return call(self, *args, **kwargs)

    return entered


for _method in NEEDS:  # every GitHubAPI call goes through ``LocalGitHub._enter``
    setattr(LocalGitHub, _method, _entered(_method, getattr(LocalGitHub, _method)))


def render_posts(
    check_runs: Sequence[CheckRunRecord],
    reviews: Sequence[ReviewRecord],
    comments: Sequence[IssueCommentRecord],
) -> str:
    out: list[str] = []
    if not (check_runs or reviews or comments):
        return "Nothing was posted.\n"
    for run in check_runs:
        out.append(
            f"== Check run #{run.id} {run.name!r} on {run.head_sha[:12]}: {run.status}"
            + (f", {run.conclusion}" if run.conclusion else "")
            + f" ({len(run.requests)} request(s))"
        )
        if run.title:
            out.append(f"title: {run.title}")
        if run.summary:
            out += ["summary:", _indent(run.summary)]
        if run.text:
            out += ["text:", _indent(run.text)]
        if run.annotations:
            out.append(f"annotations ({len(run.annotations)}):")
            out += [
                f"  {a['path']}:{_span(a)} [{a['level']}] "
                + (f"{a['title']}: " if a["title"] else "")
                + a["message"].replace("\n", " ")
                for a in run.annotations
            ]
        if run.actions:
            out.append("actions: " + ", ".join(a.get("label", "") for a in run.actions))
        out.append("")
    for review in reviews:
        out.append(
            f"== Review #{review.id} by {review.user} on {review.commit_id[:12]}: {review.state}"
        )
        if review.body:
            out.append(_indent(review.body))
        for c in review.comments:
            out.append(f"  inline {c.path}:{c.line}: {c.body.replace(chr(10), ' ')}")
        if review.dismissal_message is not None:
            out.append(f"  dismissed: {review.dismissal_message}")
        out.append("")
    for comment in comments:
        edits = f" (edited {len(comment.history)} time(s))" if comment.history else ""
        out += [f"== Comment #{comment.id} by {comment.user}{edits}", _indent(comment.body), ""]
    # paths, bodies: from the PR
    return "\n".join(markdown_line(line) for line in "\n".join(out).split("\n"))


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _span(a: Mapping[str, Any]) -> str:
    span = (
        str(a["start_line"])
        if a["start_line"] == a["end_line"]
        else f"{a['start_line']}-{a['end_line']}"
    )
    return span + (f":{a['start_column']}" if a.get("start_column") else "")


def _check_status(status: str, conclusion: str | None) -> tuple[str, str | None]:
    if conclusion is not None:
        if conclusion not in _CONCLUSIONS:
            raise unprocessable(f"Invalid conclusion {conclusion!r}")
        return "completed", conclusion
    if status not in ("queued", "in_progress", "completed"):
        raise unprocessable(f"Invalid status {status!r}")
    if status == "completed":
        raise unprocessable("Invalid request", "conclusion is required when status is completed")
    return status, None


def _check_output(output: CheckRunOutput | None) -> None:
    if output is None:
        return
    if not output.title or not output.summary:
        raise unprocessable("Invalid request", "output needs a title and a summary")
    for name, value in (("summary", output.summary), ("text", output.text)):
        if utf8_size(value) > MAX_OUTPUT_BYTES:
            raise unprocessable(
                "Validation Failed", f"{name} exceeds a maximum bytesize of {MAX_OUTPUT_BYTES}"
            )
    if len(output.annotations) > MAX_ANNOTATIONS_PER_REQUEST:
        raise unprocessable(
            "Invalid request",
            f"{len(output.annotations)} annotations; at most {MAX_ANNOTATIONS_PER_REQUEST} "
            "per request",
        )
    for a in output.annotations:
        _check_annotation(a)


def _check_annotation(a: Annotation) -> None:
    if not a.path or a.start_line < 1 or a.end_line < a.start_line:
        raise unprocessable(
            "Invalid request", f"annotation {a.path}:{a.start_line}-{a.end_line} has a bad location"
        )
    if a.level not in _LEVELS:
        raise unprocessable(
            "Invalid request", f"annotation_level {a.level!r} is not one of {sorted(_LEVELS)}"
        )
    if (a.start_column is not None or a.end_column is not None) and a.start_line != a.end_line:
        raise unprocessable(
            "Invalid request", "start_column and end_column need start_line == end_line"
        )
    if len(a.title) > github_limits.ANNOTATION_TITLE_CHARS:
        raise unprocessable(
            "Invalid request",
            f"annotation title is too long (maximum is {github_limits.ANNOTATION_TITLE_CHARS} "
            "characters)",
        )
    if not a.message or utf8_size(a.message) > MAX_OUTPUT_BYTES:
        raise unprocessable("Invalid request", "annotation message is empty or too long")


def _check_actions(actions: Sequence[Mapping[str, str]]) -> None:
    if len(actions) > MAX_ACTIONS:
        raise unprocessable("Invalid request", f"at most {MAX_ACTIONS} actions")
    for action in actions:
        for key, limit in (("label", 20), ("description", 40), ("identifier", 20)):
            value = action.get(key, "")
            if not value or len(value) > limit:
                raise unprocessable(
                    "Invalid request", f"action {key} must be 1-{limit} characters: {value!r}"
                )


def _check_body(body: str) -> None:
    if len(body) > MAX_BODY_CHARS:
        raise unprocessable(
            "Validation Failed", f"body is too long (maximum is {MAX_BODY_CHARS} characters)"
        )
