"""Recall on the real history: each kind of defect, planted into real merged commits, blocks the pull request
with its own rule; the control making the same change correctly passes. The kinds are in tests/mutations.py;
benchmarks/mutations.py prints the recall per kind over more commits, and the time of each review."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.findings import Verdict
from tests.history import commit_of
from tests.mutations import KINDS, Kind
from tests.planting import blocking_rules, plant, review_pr

# merged commits that pass on their own (November 2024, July 2025), with a published mirror
PULL_REQUESTS = ("#3240", "#3834")


@pytest.mark.parametrize("pr", PULL_REQUESTS)
def test_the_commits_planted_into_pass_on_their_own(history_clone: Path, pr: str) -> None:
    commit = commit_of(history_clone, pr)
    assert review_pr(history_clone, commit).verdict is Verdict.SUCCESS


@pytest.mark.parametrize("pr", PULL_REQUESTS)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_planted_defect_blocks_and_its_control_passes(history_clone: Path, kind: Kind, pr: str) -> None:
    commit = commit_of(history_clone, pr)
    planted = kind.plant(history_clone, commit)
    assert planted is not None, f"{kind.name}: nothing to plant into {pr}"
    defect, control = planted
    report = review_pr(history_clone, plant(history_clone, commit, defect, f"{kind.name} in {pr}"))
    assert kind.rule in blocking_rules(report), f"{kind.name} in {pr}: blocked by {blocking_rules(report)}"
    assert report.verdict is Verdict.FAILURE
    passed = review_pr(history_clone, plant(history_clone, commit, control, f"control of {kind.name} in {pr}"))
    assert blocking_rules(passed) == set(), f"the control of {kind.name} in {pr} was blocked"
    assert passed.verdict is Verdict.SUCCESS
