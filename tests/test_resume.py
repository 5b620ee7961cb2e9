"""A job that resumes a check run an interrupted attempt started (another worker died mid-review).

Findings (issue 21): a resumed run was set back to "in progress" even when the dead attempt had
already concluded it (the same run got two concluding updates), and a resumed multi-batch run
re-sent its annotations, which GitHub appends (duplicates). A worker whose lease was taken over
wrote on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.github.api import Annotation, CheckRunOutput
from bot.github.publish import CHECK_NAME
from bot.service.leases import Fence, LeaseLost
from bot.service.queue import JobQueue, make_huey
from bot.service.worker import FencedGitHub, review_pull_request
from tests.fakes import FAKE_CHECKS
from tests.gitrepo import Repo
from tests.test_pipeline import load, make_pr_repo


@pytest.fixture
def pr_repo(tmp_path: Path, corpus: Path) -> Repo:
    return make_pr_repo(tmp_path, corpus)


def annotations_of_a_full_review(tmp_path: Path, pr_repo: Repo) -> list[dict[str, object]]:
    fresh, pr = load(pr_repo)
    review_pull_request(fresh, pr, "d-0", checks=FAKE_CHECKS)
    [run] = fresh.check_runs
    return list(run.annotations)


def test_a_run_the_dead_attempt_concluded_is_not_reopened_nor_concluded_again(
    pr_repo: Repo,
) -> None:
    fresh, first = load(pr_repo)
    review_pull_request(fresh, first, "d-0", checks=FAKE_CHECKS)
    [concluded] = fresh.check_runs  # the verdict (conclusion and title) the dead attempt gave
    assert concluded.conclusion == "failure"
    gh, pr = load(pr_repo)
    run_id = gh.create_check_run(pr.repo, pr.head_sha, CHECK_NAME, "in_progress", external_id="d-1")
    gh.update_check_run(
        pr.repo,
        run_id,
        conclusion="failure",
        output=CheckRunOutput(concluded.title, "s"),
    )
    gh.writes.clear()

    assert (
        review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS, resume=(pr.head_sha, run_id))
        == "failure"
    )

    assert (
        "update_check_run" not in gh.methods_written()
        and "create_check_run" not in gh.methods_written()
    )
    # the rest is published
    assert {"create_review", "create_issue_comment"} <= set(gh.methods_written())


def test_a_resumed_run_gets_only_the_annotations_not_yet_sent(
    tmp_path: Path, pr_repo: Repo
) -> None:
    expected = annotations_of_a_full_review(tmp_path, pr_repo)
    assert expected  # the fake check finds the missing facet file
    gh, pr = load(pr_repo)
    run_id = gh.create_check_run(pr.repo, pr.head_sha, CHECK_NAME, "in_progress", external_id="d-1")
    gh.update_check_run(
        pr.repo, run_id, output=CheckRunOutput("t", "s", annotations=(Annotation(**expected[0]),))
    )  # type: ignore[arg-type]

    # adopted by external_id
    review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS, resume=(pr.head_sha, 0))

    [run] = gh.check_runs
    assert run.annotations == expected  # the first one once, then the rest
    concluding = [d for m, d in gh.writes if m == "update_check_run" and d.get("conclusion")]
    assert len(concluding) == 1


def test_a_worker_that_lost_its_lease_writes_nothing(tmp_path: Path, pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    queue = JobQueue(make_huey(str(tmp_path / "q.sqlite3")), lease_ttl=30)
    try:
        with queue.pr_lock(pr.repo + "#7") as fence:
            # an older holder
            stale = Fence(fence.store, fence.key, "another-host:dead", fence.token - 1, 30)
            with pytest.raises(LeaseLost):
                review_pull_request(FencedGitHub(gh, stale), pr, "d-1", checks=FAKE_CHECKS)
            assert gh.writes == []  # not even the check run
            review_pull_request(FencedGitHub(gh, fence), pr, "d-1", checks=FAKE_CHECKS)
            assert gh.methods_written()[0] == "create_check_run"
    finally:
        queue.close()


def test_a_run_concluded_with_another_verdict_is_left_and_a_new_run_carries_this_one(
    pr_repo: Repo,
) -> None:
    """An earlier attempt concluded a verdict this review does not reach (the configuration or a
    review changed since): that run is left as it is, a new run concludes this verdict, and the
    summary beside it says the same; was: the summary of this review beside the old verdict."""
    gh, pr = load(pr_repo)
    run_id = gh.create_check_run(pr.repo, pr.head_sha, CHECK_NAME, "in_progress", external_id="d-1")
    gh.update_check_run(pr.repo, run_id, conclusion="success", output=CheckRunOutput("t", "s"))

    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS, resume=(pr.head_sha, run_id))
    old, new = gh.check_runs
    assert (old.id, old.conclusion, old.title) == (run_id, "success", "t")
    assert new.conclusion == "failure" and new.external_id == "d-1"
    assert new.title.split(":")[0] in gh.issue_comments[-1].body
