"""The one shared fake of ``GitHubAPI``: in memory, records every write, enforces GitHub's limits, can raise.

Use it through the ``fake_github`` fixture. ``fail(method, error, times)`` makes the next calls of a
method raise; ``writes`` lists every write in order; limits GitHub enforces (50 annotations per
request, 65,535-character texts, inline comments only on diff lines) raise ``GitHubError(422)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot.app import github_limits
from bot.app.github_api import (
    ChangedFile,
    CheckRunInfo,
    CheckRunOutput,
    CommentInfo,
    GitHubError,
    InlineComment,
    NotFound,
    PullRequest,
    ReviewCommentInfo,
    ReviewInfo,
)
from bot.changes import diff_lines

TEXT_LIMIT = github_limits.OUTPUT_CHARS
BOT = "registry-bot[bot]"


@dataclass
class FakeCheckRun:
    id: int
    head_sha: str
    name: str
    status: str
    conclusion: str | None = None
    output: CheckRunOutput | None = None
    annotations: list[Any] = field(default_factory=list)
    external_id: str = ""
    actions: list[Mapping[str, str]] = field(default_factory=list)


@dataclass
class FakePull:
    pr: PullRequest
    files: list[ChangedFile]
    truncated: bool = False
    reviews: list[ReviewInfo] = field(default_factory=list)
    comments: list[CommentInfo] = field(default_factory=list)
    review_comments: list[ReviewCommentInfo] = field(default_factory=list)


class FakeGitHub:
    """A ``GitHubAPI`` over dicts. ``trees[sha]`` maps path to content for each commit."""

    def __init__(self, login: str = BOT) -> None:
        self.login = login
        self.trees: dict[str, dict[str, bytes]] = {}
        self.pulls: dict[tuple[str, int], FakePull] = {}
        self.check_runs: dict[int, FakeCheckRun] = {}
        self.permissions: dict[str, str] = {}
        self.team_members: dict[str, set[str]] = {}  # "org/team" -> active members; other teams are hidden
        self.team_lookups: list[tuple[str, str]] = []  # (org/team, login) asked, in order
        self.writes: list[tuple[str, dict[str, Any]]] = []
        self.calls: list[str] = []
        self._failures: dict[str, list[Exception]] = {}
        self._ids = itertools.count(1000)

    # -- test set-up ------------------------------------------------------------------------------
    def add_pull(self, pr: PullRequest, base: Mapping[str, bytes], head: Mapping[str, bytes],
                 files: Sequence[ChangedFile], truncated: bool = False) -> None:
        self.trees[pr.base_sha] = dict(base)
        self.trees[pr.head_sha] = dict(head)
        self.pulls[(pr.repo, pr.number)] = FakePull(pr, list(files), truncated)

    def push(self, repo: str, number: int, head_sha: str, head: Mapping[str, bytes],
             files: Sequence[ChangedFile]) -> None:
        pull = self.pulls[(repo, number)]
        self.trees[head_sha] = dict(head)
        pull.pr = replace(pull.pr, head_sha=head_sha)
        pull.files = list(files)

    def approve(self, repo: str, number: int, user: str, state: str = "APPROVED") -> None:
        pull = self.pulls[(repo, number)]
        pull.reviews.append(ReviewInfo(next(self._ids), user, state, pull.pr.head_sha))

    def fail(self, method: str, error: Exception, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` raise ``error``."""
        self._failures.setdefault(method, []).extend([error] * times)

    def _call(self, method: str) -> None:
        self.calls.append(method)
        queue = self._failures.get(method)
        if queue:
            raise queue.pop(0)

    def _write(self, method: str, **data: Any) -> None:
        self._call(method)
        self.writes.append((method, data))

    def _pull(self, repo: str, number: int) -> FakePull:
        try:
            return self.pulls[(repo, number)]
        except KeyError:
            raise NotFound(f"no pull request {repo}#{number}", 404) from None

    # -- reading ----------------------------------------------------------------------------------
    def get_pull_request(self, repo: str, number: int) -> PullRequest:
        self._call("get_pull_request")
        return self._pull(repo, number).pr

    def list_pull_request_files(self, repo: str, number: int) -> tuple[list[ChangedFile], bool]:
        self._call("list_pull_request_files")
        pull = self._pull(repo, number)
        return list(pull.files), pull.truncated

    def list_open_pull_requests_for_sha(self, repo: str, head_sha: str) -> list[int]:
        self._call("list_open_pull_requests_for_sha")
        return [n for (r, n), p in self.pulls.items() if r == repo and p.pr.head_sha == head_sha]

    def read_tree(self, repo: str, ref: str, prefixes: Sequence[str]) -> Mapping[str, bytes]:
        self._call("read_tree")
        tree = self.trees.get(ref)
        if tree is None:
            raise NotFound(f"no commit {ref}", 404)
        wanted = [p.strip("/") for p in prefixes]
        return {path: data for path, data in tree.items()
                if any(path == w or path.startswith(w + "/") for w in wanted)}

    def read_file(self, repo: str, ref: str, path: str) -> bytes | None:
        self._call("read_file")
        return self.trees.get(ref, {}).get(path)

    def read_files(self, repo: str, ref: str, paths: Sequence[str]) -> dict[str, bytes]:
        self._call("read_files")
        tree = self.trees.get(ref, {})
        return {path: tree[path] for path in paths if path in tree}

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        self._call("list_reviews")
        return list(self._pull(repo, number).reviews)

    def list_issue_comments(self, repo: str, number: int) -> list[CommentInfo]:
        self._call("list_issue_comments")
        return list(self._pull(repo, number).comments)

    def list_review_comments(self, repo: str, number: int) -> list[ReviewCommentInfo]:
        self._call("list_review_comments")
        return list(self._pull(repo, number).review_comments)

    def get_permission(self, repo: str, login: str) -> str:
        self._call("get_permission")
        return self.permissions.get(login, "read")

    def get_team_membership(self, org: str, team_slug: str, login: str) -> str | None:
        self._call("get_team_membership")
        self.team_lookups.append((f"{org}/{team_slug}", login))
        members = self.team_members.get(f"{org}/{team_slug}")
        if members is None:
            raise NotFound(f"no team {org}/{team_slug} visible", 404)  # GitHub hides unknown teams the same way
        return "active" if login in members else None

    def bot_login(self) -> str:
        return self.login

    def rate_limit_remaining(self) -> int | None:
        return 4999

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunInfo]:
        self._call("list_check_runs")
        return [CheckRunInfo(r.id, r.head_sha, r.name, r.status, r.conclusion, r.external_id, len(r.annotations))
                for r in reversed(self.check_runs.values()) if r.head_sha == head_sha and (not name or r.name == name)]

    def check_states(self, repo: str, number: int, head_sha: str) -> None:
        """GraphQL is not modelled here: ``None``, the caller's fallback to ``list_check_runs``."""
        self._call("check_states")

    # -- writing ----------------------------------------------------------------------------------
    @staticmethod
    def _check_output(output: CheckRunOutput | None) -> None:
        if output is None:
            return
        if len(output.annotations) > 50:
            raise GitHubError("Validation Failed: at most 50 annotations per request", 422)
        for text in (output.title, output.summary, output.text):
            if len(text) > TEXT_LIMIT:
                raise GitHubError(f"Validation Failed: output is {len(text)} characters, over {TEXT_LIMIT}", 422)

    def create_check_run(self, repo: str, head_sha: str, name: str, status: str,
                         output: CheckRunOutput | None = None, external_id: str = "",
                         conclusion: str | None = None, actions: Sequence[Mapping[str, str]] = ()) -> int:
        self._check_output(output)
        self._write("create_check_run", repo=repo, head_sha=head_sha, name=name, status=status,
                    conclusion=conclusion, output=output)
        run = FakeCheckRun(next(self._ids), head_sha, name, status, conclusion, output,
                           list(output.annotations) if output else [], external_id, list(actions))
        self.check_runs[run.id] = run
        return run.id

    def update_check_run(self, repo: str, check_run_id: int, status: str | None = None,
                         conclusion: str | None = None, output: CheckRunOutput | None = None,
                         actions: Sequence[Mapping[str, str]] = ()) -> None:
        self._check_output(output)
        self._write("update_check_run", repo=repo, id=check_run_id, status=status, conclusion=conclusion,
                    output=output)
        run = self.check_runs[check_run_id]
        if conclusion is not None:
            run.status, run.conclusion = "completed", conclusion
        elif status is not None:
            run.status = status
        if output is not None:
            run.output = output
            run.annotations.extend(output.annotations)
        if actions:
            run.actions = list(actions)

    def create_review(self, repo: str, number: int, commit_sha: str, event: str, body: str,
                      comments: Sequence[InlineComment] = ()) -> int:
        pull = self._pull(repo, number)
        if len(body) > TEXT_LIMIT:
            raise GitHubError("Validation Failed: review body too long", 422)
        lines = {f.path: diff_lines(f.patch) for f in pull.files}
        for c in comments:
            if c.line not in lines.get(c.path, frozenset()):
                raise GitHubError(f"Unprocessable Entity: line {c.line} of {c.path} is not part of the diff", 422)
        self._write("create_review", repo=repo, number=number, commit_sha=commit_sha, event=event, body=body,
                    comments=list(comments))
        review_id = next(self._ids)
        state = {"REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "APPROVE": "APPROVED"}[event]
        pull.reviews.append(ReviewInfo(review_id, self.login, state, commit_sha, body))
        pull.review_comments += [ReviewCommentInfo(next(self._ids), self.login, c.path, c.line, c.body, commit_sha)
                                 for c in comments]
        return review_id

    def dismiss_review(self, repo: str, number: int, review_id: int, message: str) -> None:
        pull = self._pull(repo, number)
        for i, r in enumerate(pull.reviews):
            if r.id == review_id:
                if r.state not in ("CHANGES_REQUESTED", "APPROVED"):
                    raise GitHubError("Can not dismiss a commented pull request review", 422)
                self._write("dismiss_review", repo=repo, number=number, review_id=review_id, message=message)
                pull.reviews[i] = replace(r, state="DISMISSED")
                return
        raise NotFound(f"no review {review_id}", 404)

    def enable_auto_merge(self, repo: str, number: int, node_id: str, head_sha: str, merge_method: str) -> None:
        self._pull(repo, number)
        self._write("enable_auto_merge", repo=repo, number=number, node_id=node_id, head_sha=head_sha,
                    merge_method=merge_method)

    def merge_pull_request(self, repo: str, number: int, head_sha: str, merge_method: str) -> None:
        self._pull(repo, number)
        self._write("merge_pull_request", repo=repo, number=number, head_sha=head_sha, merge_method=merge_method)

    def create_issue_comment(self, repo: str, number: int, body: str) -> int:
        if len(body) > TEXT_LIMIT:
            raise GitHubError("Validation Failed: body too long", 422)
        self._write("create_issue_comment", repo=repo, number=number, body=body)
        comment = CommentInfo(next(self._ids), self.login, body)
        self._pull(repo, number).comments.append(comment)
        return comment.id

    def edit_issue_comment(self, repo: str, comment_id: int, body: str) -> None:
        if len(body) > TEXT_LIMIT:
            raise GitHubError("Validation Failed: body too long", 422)
        self._write("edit_issue_comment", repo=repo, id=comment_id, body=body)
        for pull in self.pulls.values():
            for i, c in enumerate(pull.comments):
                if c.id == comment_id:
                    pull.comments[i] = replace(c, body=body)
                    return
        raise NotFound(f"no comment {comment_id}", 404)

    # -- what tests look at -----------------------------------------------------------------------
    def methods_written(self) -> list[str]:
        return [m for m, _ in self.writes]

    def runs_for(self, head_sha: str) -> list[FakeCheckRun]:
        return [r for r in self.check_runs.values() if r.head_sha == head_sha]


# -- a fake check with a known outcome, for tests of the service itself ----------------------------
def missing_facet_check(review: Any) -> Any:
    """Error on each ``ol:<name>:<file>`` in a changed ``registry.json`` whose facet file is missing.

    Stands in for the real rule families in service tests, so that they assert exact lines whatever
    the real checks report. The worker runs it with ``--checks tests.fakes:FAKE_CHECKS``.
    """
    from bot.findings import Finding, Severity

    registry = review.config.paths.registry
    for change in review.changes.under(registry) if review.changes else ():
        if not change.path.endswith("/registry.json") or change.status.value == "deleted":
            continue
        text = (review.head.read(change.path) or b"").decode("utf-8", "replace")
        name = change.path[len(registry) + 1:-len("/registry.json")]
        for number, line in enumerate(text.splitlines(), start=1):
            for uri in (part for part in line.replace(",", " ").split('"') if part.startswith("ol:")):
                target = f"{registry}/{'/'.join(uri.split(':')[1:-1])}/facets/{uri.split(':')[-1]}"
                if review.head.size(target) is None:
                    yield Finding(rule="test/missing-facet", severity=Severity.ERROR, path=change.path, line=number,
                                  message=f"{uri} names {target}, which does not exist @someone <b>x</b>",
                                  entry=name.replace("/", ":"))


FAKE_CHECKS = (missing_facet_check,)


# -- a regression stage with a known outcome (the real one, bot.regression, runs Spark) ----------------
class FakeRegressionStage:
    """Stands in for ``bot.regression.review_stage``: a table section and a warning on line 1 of each changed
    ``registry.json``. Counts its instances, so a test sees that the worker builds it once."""

    instances = 0

    def __init__(self) -> None:
        type(self).instances += 1
        self.calls = 0

    def __call__(self, base: Any, head: Any, changes: Any, config: Any) -> Any:
        from bot.findings import Finding, Section, Severity

        self.calls += 1
        changed = sorted(c.path for c in changes.files if c.path.endswith("/registry.json"))
        findings = [Finding(rule="regression/undeclared-facet", severity=Severity.WARNING, path=path, line=1,
                            message=f"fake regression: a sample event uses a facet {path} does not declare")
                    for path in changed]
        table = "| sample events | base | head |\n| --- | --- | --- |\n| fake-stage | 3 valid | 2 valid |"
        return Section("Regression", table, data={"calls": self.calls}), findings


review_stage = FakeRegressionStage  # what the worker looks up with --regression-module tests.fakes
