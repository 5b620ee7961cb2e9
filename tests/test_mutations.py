"""Recall on the real history: each kind of defect, planted into real merged commits, blocks the
pull request with its own rule; the control making the same change correctly passes. The kinds are
in tests/mutations.py; benchmarks/mutations.py prints the recall per kind over more commits, and the
time of each review."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.findings import State, Verdict
from bot.review.history import commits
from tests.history import commit_of
from tests.mutations import KINDS, Edits, Kind, targets
from tests.planting import blocking_rules, plant, review_pr

# a sweep of the real history: not traced by coverage (tests/conftest.py)
pytestmark = pytest.mark.no_cover

# merged commits that pass on their own (November 2024, July 2025), with a published mirror
PULL_REQUESTS = ("#3240", "#3834")


@pytest.mark.parametrize("pr", PULL_REQUESTS)
def test_the_commits_planted_into_pass_on_their_own(history_clone: Path, pr: str) -> None:
    commit = commit_of(history_clone, pr)
    assert review_pr(history_clone, commit).verdict is Verdict.SUCCESS


@pytest.mark.parametrize("pr", PULL_REQUESTS)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_planted_defect_blocks_and_its_control_passes(
    history_clone: Path, kind: Kind, pr: str
) -> None:
    commit = commit_of(history_clone, pr)
    planted = kind.plant(history_clone, commit)
    assert planted is not None, f"{kind.name}: nothing to plant into {pr}"
    defect, control = planted
    assert caught(history_clone, commit, kind, defect), f"{kind.name} in {pr} was not caught"
    passed = review_pr(
        history_clone, plant(history_clone, commit, control, f"control of {kind.name} in {pr}")
    )
    assert blocking_rules(passed) == set(), f"the control of {kind.name} in {pr} was blocked"
    assert passed.verdict is Verdict.SUCCESS
    assert kind.rule not in {f.rule for f in passed.findings if f.state is State.NEW}


def caught(repo: Path, commit: str, kind: Kind, defect: Edits) -> bool:
    """The defect gets a new finding of the kind's rule: blocking it, or (a notice kind) passing
    with it."""
    report = review_pr(repo, plant(repo, commit, defect, kind.name))
    if kind.blocks:
        return kind.rule in blocking_rules(report) and report.verdict is Verdict.FAILURE
    return report.verdict is Verdict.SUCCESS and any(
        f.rule == kind.rule and f.state is State.NEW for f in report.findings
    )


@pytest.fixture(scope="module")
def ten_commits(history_clone: Path) -> list[str]:
    """The ten newest merged commits that pass on their own and have a core facet to plant into (the
    choice of benchmarks/mutations.py)."""
    chosen: list[str] = []
    for sha, _, parent in reversed(commits(history_clone)):
        if len(chosen) == 10:
            break
        if (
            parent is not None
            and targets(history_clone, sha)
            and review_pr(history_clone, sha).verdict is Verdict.SUCCESS
        ):
            chosen.append(sha)
    return chosen


@pytest.mark.parametrize("kind", [k for k in KINDS if k.issue == 32], ids=lambda k: k.name)
def test_each_kind_of_round_three_is_caught_on_ten_commits_with_clean_controls(
    history_clone: Path, ten_commits: list[str], kind: Kind
) -> None:
    missed, blocked = [], []
    for commit in ten_commits:
        planted = kind.plant(history_clone, commit)
        assert planted is not None, f"{kind.name}: nothing to plant into {commit[:7]}"
        defect, control = planted
        if not caught(history_clone, commit, kind, defect):
            missed.append(commit[:7])
        passed = review_pr(
            history_clone, plant(history_clone, commit, control, f"control of {kind.name}")
        )
        if passed.verdict is not Verdict.SUCCESS or any(
            f.rule == kind.rule and f.state is State.NEW for f in passed.findings
        ):
            blocked.append(commit[:7])
    assert len(ten_commits) == 10
    assert (missed, blocked) == ([], [])
