"""One time budget for the whole review and one for the job (issue 19, attack 3): past it, the
review stops running checks and concludes failure with what it found, the reason first; never a
pre-existing finding."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core import budget
from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.config import Config, ReviewPolicy
from bot.core.findings import Finding, Severity, State, Verdict
from bot.core.incomplete import INCOMPLETE
from bot.core.snapshot import MemorySnapshot
from bot.review.engine import review
from bot.review.input import ReviewInput
from bot.service.worker import Worker
from tests.test_pipeline import load, make_pr_repo
from tests.test_pipeline_regression import OneClient, job


def slow(review_input: ReviewInput) -> Iterator[Finding]:
    """A check that finds one problem, then spends 0.4 s (as slow matches would)."""
    yield Finding(
        rule="slow/found", severity=Severity.ERROR, path="a.json", message="found before the budget"
    )
    time.sleep(0.4)
    budget.check()


def never(review_input: ReviewInput) -> Iterator[Finding]:
    raise AssertionError("a check after the budget ran out was run")
    yield  # pragma: no cover


def test_a_nested_budget_keeps_the_sooner_end_and_names_itself() -> None:
    with budget.within(0.05, "job"), budget.within(60):
        time.sleep(0.06)
        with pytest.raises(budget.BudgetSpent, match=r"the job's time budget of 0\.05 s ran out"):
            budget.check()
    assert budget.left() is None and budget.spent() is None
    with budget.within(60), budget.within(0.05):
        assert 0 < (budget.left() or 0) <= 0.05 and budget.timeout(0.25) <= 0.05


def test_the_review_stops_at_its_budget_with_what_it_found() -> None:
    side = MemorySnapshot({"a.json": b"{}"})
    config = Config(review=ReviewPolicy(time_budget_seconds=0.2))
    changes = ChangeSet((FileChange("a.json", Status.MODIFIED),))
    started = time.monotonic()
    report = review(head=side, base=side, changes=changes, config=config, checks=[slow, never])
    assert time.monotonic() - started < 1.5  # both sides: the base side stops at once
    assert report.verdict is Verdict.FAILURE
    [stopped] = [f for f in report.findings if f.rule == INCOMPLETE]
    assert stopped.state is State.NEW  # the base side ran out too: still never "pre-existing"
    assert stopped.message == (
        "the review's time budget of 0.2 s ran out: checks not finished: "
        "test_budget (stopped), test_budget"
    )
    # what it found is shown; the base side never ran, so nothing is known to be pre-existing
    assert [f.state for f in report.findings if f.rule == "slow/found"] == [State.NEW]


def test_the_job_budget_concludes_the_check_run_failure_reason_first(
    tmp_path: Path, corpus: Path
) -> None:
    gh, pr = load(make_pr_repo(tmp_path, corpus))
    worker = Worker(OneClient(gh), checks=[slow, never], job_budget=0.2)  # type: ignore[arg-type]
    assert worker.handle(job("d-1")) == "failure"
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "completed" and run.conclusion == "failure"
    assert run.title.startswith(
        "OpenLineage registry ❌ could not finish: the job's time budget of 0.2 s ran out"
    )
