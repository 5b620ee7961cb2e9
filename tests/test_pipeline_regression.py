"""The worker's regression hook: the stage is imported and built lazily, once; its section and
findings are published; a stage that cannot be imported leaves the review complete and failing
(never neutral), saying why.

The stage here is ``tests.fakes:review_stage`` (no pyspark): the real one is
``bot.review.regression``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.github.events import Job
from bot.github.local import LocalGitHub
from bot.service.worker import Resources, Worker, regression_stage
from tests.fakes import FAKE_CHECKS, FakeRegressionStage
from tests.gitrepo import Repo
from tests.test_pipeline import ENTRY, REPO, broken_entry, load, make_pr_repo


class OneClient:
    def __init__(self, gh: LocalGitHub) -> None:
        self.gh = gh

    def for_installation(self, installation_id: int) -> LocalGitHub:
        return self.gh


def job(delivery: str) -> Job:
    return Job(delivery, "pull_request", "synchronize", 1, REPO, 7)


@pytest.fixture
def pr_repo(tmp_path: Path, corpus: Path) -> Repo:
    return make_pr_repo(tmp_path, corpus)


@pytest.fixture
def fixed_repo(pr_repo: Repo) -> Repo:
    pr_repo.change({ENTRY: broken_entry("GcpDataprocRunFacet.json")}, "fix")
    return pr_repo


def test_the_stage_is_built_once_and_its_section_and_findings_are_published(
    fixed_repo: Repo,
) -> None:
    gh, pr = load(fixed_repo)
    built = FakeRegressionStage.instances
    worker = Worker(OneClient(gh), Resources(regression_stage("tests.fakes")), checks=FAKE_CHECKS)
    # nothing imported or built before the first review
    assert FakeRegressionStage.instances == built

    assert worker.handle(job("d-1")) == "success"
    assert worker.handle(job("d-2")) == "success"
    assert FakeRegressionStage.instances == built + 1  # one warm stage for every review
    _, second = gh.runs_for(pr.head_sha)
    assert "### Regression" in second.summary
    assert "| fake-stage | 3 valid | 2 valid |" in second.summary
    assert [(a["path"], a["start_line"], a["level"], a["title"]) for a in second.annotations] == [
        (ENTRY, 1, "warning", "regression/undeclared-facet")
    ]
    summary = gh.issue_comments[0].body
    assert "### Regression" in summary and "fake regression" in summary


def test_a_stage_that_cannot_be_imported_fails_the_review_saying_why(fixed_repo: Repo) -> None:
    gh, pr = load(fixed_repo)
    worker = Worker(
        OneClient(gh), Resources(regression_stage("bot.no_such_regression")), checks=FAKE_CHECKS
    )
    assert worker.handle(job("d-1")) == "failure"  # an unfinished regression never passes
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "completed" and run.conclusion == "failure"
    assert run.title.startswith(
        "OpenLineage registry ❌ could not finish: the regression could not run"
    )
    assert "### Regression" in run.summary
    assert "No module named 'bot.no_such_regression'" in run.summary


def test_errors_still_fail_when_the_regression_cannot_run(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    worker = Worker(
        OneClient(gh), Resources(regression_stage("bot.no_such_regression")), checks=FAKE_CHECKS
    )
    assert worker.handle(job("d-1")) == "failure"
    [run] = gh.runs_for(pr.head_sha)
    assert [a["start_line"] for a in run.annotations] == [6]
    assert "No module named" in run.summary


def test_no_regression_runs_no_stage(fixed_repo: Repo) -> None:
    gh, pr = load(fixed_repo)
    built = FakeRegressionStage.instances
    assert (
        Worker(OneClient(gh), Resources(None), checks=FAKE_CHECKS).handle(job("d-1")) == "success"
    )
    [run] = gh.runs_for(pr.head_sha)
    assert "Regression" not in run.summary
    assert FakeRegressionStage.instances == built


def test_the_worker_gives_the_regression_stage_its_spark_master() -> None:
    from bot.review.regression import RegressionStage

    on_cluster, local = (
        regression_stage("bot.review.regression", "spark://127.0.0.1:7077")(),
        regression_stage()(),
    )
    assert isinstance(on_cluster, RegressionStage) and isinstance(local, RegressionStage)
    # no session started yet
    assert (on_cluster.master, local.master) == ("spark://127.0.0.1:7077", "local[*]")
