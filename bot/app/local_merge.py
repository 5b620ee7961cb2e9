"""GitHub's merge rules for ``LocalGitHub``: branch protection's approval and check requirements, auto-merge.

As GitHub does it (docs: "About protected branches", "Automatically merging a pull request"):

- an approval counts only from someone with write access (the App, installed with write, counts; an
  entry's owner without write access does not); a user's latest deciding review is the one that counts,
  and a change request by a writer blocks;
- every required check must have concluded ``success``, ``neutral`` or ``skipped`` on the head commit;
- with "dismiss stale approvals", a push dismisses every approval; a push by someone without write
  access disables auto-merge;
- enabling auto-merge on a pull request that can merge at once is refused ("clean status"); once
  enabled, the pull request merges as soon as nothing blocks it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

WRITERS = frozenset({"admin", "maintain", "write"})
PASSING = frozenset({"success", "neutral", "skipped"})
MERGE_METHODS = frozenset({"MERGE", "SQUASH", "REBASE"})


@dataclass(frozen=True)
class BranchProtection:
    """The base branch's protection rule (the parts that decide whether a pull request may merge)."""

    required_approvals: int = 1
    required_checks: tuple[str, ...] = ()
    dismiss_stale_reviews: bool = True


class _Review(Protocol):
    user: str
    state: str


class _Run(Protocol):
    head_sha: str
    name: str
    status: str
    conclusion: str | None


def merge_blockers(protection: BranchProtection | None, reviews: Iterable[_Review], runs: Iterable[_Run],
                   head_sha: str, permission: Callable[[str], str]) -> list[str]:
    """Why the pull request cannot merge now (empty: it can). ``permission(login)`` gives a user's level."""
    if protection is None:
        return []
    latest: dict[str, str] = {}
    for r in reviews:
        if r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[r.user] = r.state
    writers = {user: state for user, state in latest.items() if permission(user) in WRITERS}
    out = [f"changes requested by {user}" for user, state in writers.items() if state == "CHANGES_REQUESTED"]
    approvals = sum(state == "APPROVED" for state in writers.values())
    if approvals < protection.required_approvals:
        out.append(f"{protection.required_approvals} approving review(s) by reviewers with write access required, "
                   f"{approvals} given")
    newest = newest_runs(runs, head_sha)
    for name in protection.required_checks:
        found = newest.get(name)
        if found is None or found.status != "completed" or found.conclusion not in PASSING:
            state = "expected" if found is None else (found.conclusion or found.status)
            out.append(f"required check {name!r} is {state}")
    return out


def newest_runs(runs: Iterable[_Run], head_sha: str) -> dict[str, _Run]:
    """The latest check run of each name on ``head_sha`` (runs are kept oldest first: the last one wins)."""
    newest: dict[str, _Run] = {}
    for run in runs:
        if run.head_sha == head_sha:
            newest[run.name] = run
    return newest


def rollup_contexts(protection: BranchProtection | None, runs: Iterable[_Run], head_sha: str) -> list[dict[str, Any]]:
    """The head commit's ``statusCheckRollup`` contexts as GitHub's GraphQL gives them (``CheckRun`` nodes),
    ``isRequired`` for a pull request into the protected branch: its name is one of the required checks."""
    required = set(protection.required_checks) if protection else set()
    return [{"__typename": "CheckRun", "name": run.name, "status": run.status.upper(),
             "conclusion": run.conclusion.upper() if run.conclusion else None, "isRequired": run.name in required}
            for run in newest_runs(runs, head_sha).values()]
