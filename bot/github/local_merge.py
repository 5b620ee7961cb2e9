"""GitHub's merge rules for ``LocalGitHub``: branch protection's approval and check requirements,
auto-merge.

More in docs/module-notes.md (bot/github/local_merge.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

WRITERS = frozenset({"admin", "maintain", "write"})
PASSING = frozenset({"success", "neutral", "skipped"})
MERGE_METHODS = frozenset({"MERGE", "SQUASH", "REBASE"})
# GitHub's answer (REST merge: 405; GraphQL: the same message) to a merge method the repository's
# settings turn off ("Allow merge commits", "Allow squash merging", "Allow rebase merging")
METHOD_NOT_ALLOWED = {
    "MERGE": "Merge commits are not allowed on this repository.",
    "SQUASH": "Squash merges are not allowed on this repository.",
    "REBASE": "Rebase merges are not allowed on this repository.",
}


@dataclass(frozen=True)
class BranchProtection:
    """The base branch's protection rule (the parts that decide whether a pull request may
    merge)."""

    required_approvals: int = 1
    required_checks: tuple[str, ...] = ()
    dismiss_stale_reviews: bool = True
    # an App's (``login[bot]``) approval counts toward ``required_approvals``
    apps_count: bool = False
    # None: any writer may dismiss; else admins and these only
    dismissal_actors: tuple[str, ...] | None = None
    strict: bool = False  # "require branches to be up to date before merging"

    def may_dismiss(self, login: str, permission: str) -> bool:
        """Whether ``login`` may dismiss a review on the protected branch."""
        if self.dismissal_actors is None:
            return permission in WRITERS
        return permission == "admin" or login.casefold() in {
            a.casefold() for a in self.dismissal_actors
        }


def is_app(login: str) -> bool:
    return login.endswith("[bot]")


class _Review(Protocol):
    user: str
    state: str


class _Run(Protocol):
    @property
    def head_sha(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def conclusion(self) -> str | None: ...


def merge_blockers(
    protection: BranchProtection | None,
    reviews: Iterable[_Review],
    runs: Iterable[_Run],
    head_sha: str,
    permission: Callable[[str], str],
) -> list[str]:
    """Why the pull request cannot merge now (empty: it can). ``permission(login)`` gives a user's
    level."""
    if protection is None:
        return []
    latest: dict[str, str] = {}
    for r in reviews:
        if r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[r.user] = r.state
    writers = {user: state for user, state in latest.items() if permission(user) in WRITERS}
    out = [
        f"changes requested by {user}"
        for user, state in writers.items()
        if state == "CHANGES_REQUESTED"
    ]
    approvals = sum(
        state == "APPROVED" and (protection.apps_count or not is_app(user))
        for user, state in writers.items()
    )
    if approvals < protection.required_approvals:
        out.append(
            f"{protection.required_approvals} approving review(s) by reviewers with write access "
            f"required, {approvals} given"
        )
    newest = newest_runs(runs, head_sha)
    for name in protection.required_checks:
        found = newest.get(name)
        if found is None or found.status != "completed" or found.conclusion not in PASSING:
            state = "expected" if found is None else (found.conclusion or found.status)
            out.append(f"required check {name!r} is {state}")
    return out


def mergeable_state(
    protection: BranchProtection | None,
    blockers: list[str],
    runs: Iterable[_Run],
    head_sha: str,
    conflicts: bool,
    behind: bool,
) -> str:
    """GitHub's ``mergeable_state`` of the pull request: dirty, blocked, behind, unstable or
    clean."""
    if conflicts:
        return "dirty"
    if blockers:
        return "blocked"
    if protection is not None and protection.strict and behind:
        return "behind"
    required = set(protection.required_checks) if protection else set()
    others = [r for name, r in newest_runs(runs, head_sha).items() if name not in required]
    if any(r.status != "completed" or r.conclusion not in PASSING for r in others):
        return "unstable"
    return "clean"


MERGEABLE = frozenset({"clean", "unstable"})


def newest_runs(runs: Iterable[_Run], head_sha: str) -> dict[str, _Run]:
    """The latest check run of each name on ``head_sha`` (runs are kept oldest first: the last one
    wins)."""
    newest: dict[str, _Run] = {}
    for run in runs:
        if run.head_sha == head_sha:
            newest[run.name] = run
    return newest


@dataclass(frozen=True)
class StatusCheck:
    """A commit status (the Statuses API) as branch protection weighs it beside check runs: its
    context is a check's name ("Require status checks before merging" names either)."""

    head_sha: str
    name: str
    state: str  # error, failure, pending or success

    @property
    def status(self) -> str:
        return "in_progress" if self.state == "pending" else "completed"

    @property
    def conclusion(self) -> str | None:
        return (
            None
            if self.state == "pending"
            else "success"
            if self.state == "success"
            else ("failure")
        )


def rollup_contexts(
    protection: BranchProtection | None, runs: Iterable[_Run], head_sha: str
) -> list[dict[str, Any]]:
    """The head commit's ``statusCheckRollup`` contexts as GitHub's GraphQL gives them (``CheckRun``
    and, for a ``StatusCheck``, ``StatusContext`` nodes), ``isRequired`` for a pull request into the
    protected branch: its name is one of the required checks."""
    required = set(protection.required_checks) if protection else set()
    return [
        {
            "__typename": "StatusContext",
            "context": run.name,
            "state": run.state.upper(),
            "isRequired": run.name in required,
        }
        if isinstance(run, StatusCheck)
        else {
            "__typename": "CheckRun",
            "name": run.name,
            "status": run.status.upper(),
            "conclusion": run.conclusion.upper() if run.conclusion else None,
            "isRequired": run.name in required,
        }
        for run in newest_runs(runs, head_sha).values()
    ]
