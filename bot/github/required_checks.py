"""Which checks on a pull request's head are required, read the way an App can: GraphQL
``isRequired``.

GitHub tells an App with ``checks:read`` whether a reported check run (``CheckRun``) or commit
status (``StatusContext``) is required for a pull request: ``isRequired(pullRequestNumber: N)`` on
the contexts of the head commit's ``statusCheckRollup``. A required check that has not reported yet
is not among those contexts; only the branch protection rule names it, and reading that rule needs
administration rights, which the App does not ask for. So the bot can say which required check is
red or still running, not which one has never started (docs/owners.md says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.core.quoting import code
from bot.github.api import CheckRunInfo

# one page of the rollup: a commit with more checks is not judged from it (the caller lists check
# runs instead)
MAX_CONTEXTS = 100
QUERY = (
    "query($owner: String!, $name: String!, $head: GitObjectID!, $number: Int!) { "
    "repository(owner: $owner, name: $name) { object(oid: $head) { ... on Commit { "
    f"statusCheckRollup {{ contexts(first: {MAX_CONTEXTS}) {{ totalCount nodes {{ __typename "
    "... on CheckRun { name status conclusion isRequired(pullRequestNumber: $number) } "
    "... on StatusContext { context state isRequired(pullRequestNumber: $number) } "
    "} } } } } } }"
)
PASSED = frozenset({"SUCCESS", "NEUTRAL", "SKIPPED"})
# a commit status still waiting (a check run: not COMPLETED)
PENDING = frozenset({"PENDING", "EXPECTED"})


@dataclass(frozen=True)
class CheckState:
    """One check on the head commit: its name, GitHub's word for where it is, whether it is
    required."""

    name: str
    state: str  # lower case: a check run's conclusion or status, a commit status's state
    required: bool
    outcome: str  # "passed", "pending" or "failing"


def state_of(node: Mapping[str, Any]) -> CheckState:
    """A ``statusCheckRollup`` context (``CheckRun`` or ``StatusContext``) as a ``CheckState``."""
    if node.get("__typename") == "StatusContext":
        name, state = node.get("context"), str(node.get("state") or "")
        outcome = "passed" if state in PASSED else "pending" if state in PENDING else "failing"
    else:
        name, conclusion, status = (
            node.get("name"),
            node.get("conclusion"),
            str(node.get("status") or ""),
        )
        state = str(conclusion or status)
        outcome = (
            "pending"
            if status != "COMPLETED" or not conclusion
            else "passed"
            if conclusion in PASSED
            else "failing"
        )
    if not isinstance(name, str) or not state:
        raise ValueError(f"not a check context: {node!r}")
    return CheckState(name, state.lower(), node.get("isRequired") is True, outcome)


def parse(data: Any) -> list[CheckState]:
    """The answer to ``QUERY``; ``ValueError`` for errors or an answer of another shape (the caller
    falls back)."""
    if not isinstance(data, Mapping) or data.get("errors"):
        raise ValueError(
            f"GraphQL errors: {data.get('errors') if isinstance(data, Mapping) else data!r}"
        )
    commit = ((data.get("data") or {}).get("repository") or {}).get("object")
    if not isinstance(commit, Mapping):
        raise ValueError("the head commit was not found")
    rollup = commit.get("statusCheckRollup")
    if rollup is None:
        return []  # nothing reported on this commit
    contexts = (rollup.get("contexts") or {}) if isinstance(rollup, Mapping) else {}
    nodes = contexts.get("nodes") if isinstance(contexts, Mapping) else None
    if not isinstance(nodes, list):
        raise ValueError(f"not a status check rollup: {rollup!r}")
    total = contexts.get("totalCount")
    if not isinstance(total, int) or total > len(nodes):
        # a required check past the page is unknown: never "none is red" from part of them
        raise ValueError(f"{total} checks on the commit, {len(nodes)} read")
    return [state_of(n) for n in nodes if isinstance(n, Mapping)]


def newest_by_name(runs: Iterable[CheckRunInfo]) -> dict[str, CheckRunInfo]:
    """The run of each name that counts on a commit: a re-run adds a run of the same name, and the
    newest (the greatest id: GitHub's ids grow) is the one GitHub shows and requires. By id, not by
    the order GitHub lists them in, which it does not document."""
    newest: dict[str, CheckRunInfo] = {}
    for run in runs:
        if run.name not in newest or run.id > newest[run.name].id:
            newest[run.name] = run
    return newest


def merge_lines(states: list[CheckState]) -> list[str]:
    """The Merge section's lines about checks: required ones failing, required ones pending, the
    others."""

    def listed(title: str, picked: list[CheckState]) -> list[str]:
        return (
            [
                "",
                title,
                "",
                *(f"- {code(s.name, table=False)}: {code(s.state, table=False)}" for s in picked),
            ]
            if picked
            else []
        )

    required = [s for s in states if s.required]
    out = [
        *listed(
            "Required checks failing (they block the merge):",
            [s for s in required if s.outcome == "failing"],
        ),
        *listed(
            "Required checks not finished yet:", [s for s in required if s.outcome == "pending"]
        ),
        *listed(
            "Checks that have not passed but are not required:",
            [s for s in states if not s.required and s.outcome != "passed"],
        ),
    ]
    if not any(s.outcome != "passed" for s in required):
        out += [
            "",
            "No required check that reported on this commit is red or pending; a required check "
            "that has not reported yet is not visible to the bot (it shows only in branch "
            "protection).",
        ]
    return out
