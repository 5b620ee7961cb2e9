"""Reconciling with GitHub (issue 31, item 4): reviews the queue lost are found on GitHub and
concluded once.

A real worker and web over the stand-in GitHub. The queue loses what it had (its file is deleted, as
a Redis restarted without persistence loses its data): a delivery that never reached the journal,
and a review that was in progress when its worker was killed. The worker's reconciliation round (at
start-up, then every ``--reconcile-every`` seconds) lists the App's installations, repositories and
open pull requests and enqueues the heads with no concluded run of the App; a run left in progress
is resumed, never duplicated.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.conftest import PAYLOADS
from tests.gitrepo import git
from tests.test_e2e import (
    FAKE_WORKER,
    INSTALLATION,
    NUMBER,
    REPO,
    SECRET,
    free_port,
    http,
    wait_for,
)

# (repo: the fixture)
from tests.test_e2e_faults import repo, running, runs_on, worker_ready  # noqa: F401

RECONCILE = ("--reconcile-every", "2")


def _lose_the_queue(queue_file: Path) -> None:
    for path in queue_file.parent.glob(queue_file.name + "*"):
        path.unlink()


def test_a_pull_request_the_queue_never_heard_of_is_reviewed(
    tmp_path: Path,
    repo: Path,  # noqa: F811
) -> None:
    head = git(repo, "rev-parse", "pr")
    # no delivery: the web was down when GitHub sent it
    with running(tmp_path, repo, *RECONCILE) as service:
        run = service.completed_run(head, timeout=60)
        service.summary_for(head)
        # two more rounds: the concluded run is GitHub's answer, nothing more is enqueued
        time.sleep(5)
        assert [r["status"] for r in runs_on(service, head)] == ["completed"] and run[
            "conclusion"
        ] == "failure"
        assert (service.tmp / "worker.log").read_text().count("review enqueued") == 1


def test_a_review_in_progress_that_the_queue_lost_is_resumed_and_concluded_once(
    tmp_path: Path,
    repo: Path,  # noqa: F811
) -> None:
    head = git(repo, "rev-parse", "pr")
    with running(tmp_path, repo) as service:
        service.faults([{"path": "/repos/*/git/trees/*", "method": "GET", "hold": 30, "count": 1}])
        assert service.deliver("opened", head) == 202
        [left] = wait_for(
            lambda: [r for r in runs_on(service, head) if r["status"] == "in_progress"],
            30,
            "a review in progress",
        )
        service.kill("worker")
        _lose_the_queue(service.queue_file)
        service.worker_args = (*FAKE_WORKER, *RECONCILE)
        service.start_worker()
        worker_ready(service)
        run = service.completed_run(head, timeout=60)
        service.summary_for(head)
        assert run["id"] == left["id"] and run["conclusion"] == "failure"
        assert [r["status"] for r in runs_on(service, head)] == ["completed"]  # resumed: one run


def test_a_head_whose_only_run_was_superseded_is_reviewed_again(
    tmp_path: Path,
    repo: Path,  # noqa: F811
) -> None:
    """Issue 28, item 3, when GitHub's delivery of the force-push is lost: a second commit is pushed
    while the first is reviewed (its run concludes ``cancelled``, superseded, which judged
    nothing), then the branch is forced back to the first commit and no delivery arrives. The round
    reviews the first commit again; a ``cancelled`` run is no verdict."""
    first = git(repo, "rev-parse", "pr")
    with running(tmp_path, repo) as service:
        service.faults([{"path": "/repos/*/git/trees/*", "method": "GET", "hold": 10, "count": 1}])
        assert service.deliver("opened", first) == 202
        wait_for(
            lambda: [r for r in runs_on(service, first) if r["status"] == "in_progress"],
            30,
            "the first commit's review under way",
        )
        git(repo, "checkout", "-q", "pr")
        git(repo, "commit", "-q", "--allow-empty", "-m", "a second push")
        try:
            second = git(repo, "rev-parse", "pr")
            assert service.deliver("synchronize", second) == 202
            [superseded] = wait_for(
                lambda: [r for r in runs_on(service, first) if r["status"] == "completed"],
                60,
                "the first review's end",
            )
            assert superseded["conclusion"] == "cancelled"
            service.completed_run(second, timeout=60)
        finally:
            git(repo, "checkout", "-q", "-B", "pr", first)  # forced back; the delivery is lost
        service.kill("worker")
        service.worker_args = (*FAKE_WORKER, *RECONCILE)
        service.start_worker()
        [again] = wait_for(
            lambda: [
                r
                for r in runs_on(service, first)
                if r["status"] == "completed" and r["id"] != superseded["id"]
            ],
            60,
            "the first commit reviewed again",
        )
        assert again["conclusion"] == "failure"
        time.sleep(5)  # more rounds: the verdict is GitHub's answer, nothing more is enqueued
        assert len(runs_on(service, first)) == 2


def _rerun_request(head: str) -> dict[str, object]:
    payload = json.loads((PAYLOADS / "check_run.rerequested.json").read_bytes())
    payload["repository"]["full_name"] = REPO
    payload["installation"] = INSTALLATION
    payload["check_run"]["head_sha"] = head
    ref = {"id": 1, "url": f"https://api.github.com/repos/{REPO}", "name": REPO.split("/")[1]}
    # as GitHub lists a pull request of the same repository
    payload["check_run"]["pull_requests"] = [
        {
            "url": f"https://api.github.com/repos/{REPO}/pulls/{NUMBER}",
            "id": 1,
            "number": NUMBER,
            "head": {"ref": "pr", "sha": head, "repo": ref},
            "base": {"ref": "main", "sha": "0" * 40, "repo": ref},
        }
    ]
    return payload


def test_a_delivery_the_web_missed_while_restarting_is_redelivered_and_taken_once(
    tmp_path: Path,
    repo: Path,  # noqa: F811
) -> None:
    head = git(repo, "rev-parse", "pr")
    with running(tmp_path, repo) as service:

        def hook(url: str) -> None:
            http(
                "POST",
                f"{service.github}/_standin/hook",
                json.dumps({"url": url, "secret": SECRET}).encode(),
                {"Content-Type": "application/json"},
            )

        hook(f"{service.web}/webhook")
        assert service.deliver("opened", head) == 202
        service.completed_run(head)
        hook(f"http://127.0.0.1:{free_port()}/webhook")  # the web is restarting: nobody listens
        sent = http(
            "POST",
            f"{service.github}/_standin/deliveries",
            json.dumps({"event": "check_run", "payload": _rerun_request(head)}).encode(),
            {"Content-Type": "application/json"},
        )[1]
        assert sent["status_code"] == 0
        hook(f"{service.web}/webhook")  # it is back
        service.kill("worker")
        service.worker_args = (*FAKE_WORKER, *RECONCILE)
        service.start_worker()
        wait_for(
            lambda: len([r for r in runs_on(service, head) if r["status"] == "completed"]) == 2,
            60,
            "the re-run the redelivery asked for",
        )
        time.sleep(5)  # more rounds: the redelivery was taken, nothing is asked or run again
        attempts = [d for d in service.state()["deliveries"] if d["guid"] == sent["guid"]]
        assert [(d["redelivery"], d["status_code"]) for d in attempts] == [(False, 0), (True, 202)]
        assert len(runs_on(service, head)) == 2
