"""Failing GitHub and a failing disk, against the real processes: every review concludes, nothing
stays locked.

The stand-in, gunicorn and the worker run as processes (``tests/test_e2e.py``'s ``Service``). Each
test is one finding of the issue "Safe against hostile pull requests and failing infrastructure"
(item 6):

- a rate limit longer than a request may wait, after the check run started: rescheduled at the
  reset, concluded;
- kill -9 between creating the check run and journalling its id: the recovered job adopts the run;
- the disk fills in the middle of a review: the run concludes, the lock is released, the next review
  runs at once, ``/readyz`` says 503 while the queue refuses writes. The queue sits on a small tmpfs
  (needs root, as the CI container runs).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.service.queue import WAL_LIMIT
from tests.gitrepo import Repo, git
from tests.test_e2e import FAKE_WORKER, Service, http, wait_for
from tests.test_pipeline import ENTRY, broken_entry

pytestmark = pytest.mark.e2e
QUICK_SWEEP = ("--sweep-every", "1", "--sweep-age", "1")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    made = Repo.from_folder(corpus, tmp_path_factory.mktemp("faults") / "repo")
    made.change({ENTRY: broken_entry()}, "add a facet")
    return made.path


@contextlib.contextmanager
def running(
    tmp: Path, repo: Path, *worker_args: str, queue_file: Path | None = None
) -> Iterator[Service]:
    service = Service(tmp, (*FAKE_WORKER, *worker_args))
    if queue_file is not None:
        service.queue_file = queue_file
    try:
        service.start(repo)
        worker_ready(service)
        yield service
    finally:
        service.close()


def worker_ready(service: Service) -> None:
    """Wait until the worker's consumer runs (a fault with a deadline must not expire while it
    imports)."""
    log = service.tmp / "worker.log"
    wait_for(lambda: log.exists() and b"consumer started" in log.read_bytes(), 60, "the worker")


def runs_on(service: Service, head: str) -> list[dict[str, Any]]:
    return [r for r in service.state()["check_runs"] if r["head_sha"] == head]


def test_a_rate_limit_past_the_wait_budget_reschedules_at_the_reset_then_concludes(
    tmp_path: Path, repo: Path
) -> None:
    """Finding: a 403 rate limit whose reset is far away, after the check run started: the run
    stayed "Reviewing" for ever and the job was marked done. Here "far" is past the worker's wait
    budget (1 s, so the test does not wait an hour; ``tests/test_conclude.py`` runs the hour on a
    simulated clock)."""
    head = git(repo, "rev-parse", "pr")
    reset_in = 4.0
    with running(tmp_path, repo, "--github-max-wait", "1", *QUICK_SWEEP) as service:
        # Every installation request after the PR read and the check run creation: 403 until the
        # reset.
        service.faults(
            [
                {
                    "path": "/repos/*",
                    "status": 403,
                    "reset_in": reset_in,
                    "expires_in": reset_in,
                    "count": 100_000,
                    "skip": 2,
                    "message": "API rate limit exceeded for installation ID 1.",
                }
            ]
        )
        sent = time.monotonic()
        assert service.deliver("opened", head) == 202
        run = service.completed_run(head, timeout=40)
        took = time.monotonic() - sent
        assert run["conclusion"] == "failure" and [
            (a["path"], a["start_line"]) for a in run["annotations"]
        ] == [(ENTRY, 6)]
        [only] = runs_on(service, head)  # resumed, not a second run
        assert only["id"] == run["id"]
        hits = service.state()["fault_hits"]
        # concluding early was refused too: it had to wait
        assert any(h["method"] == "PATCH" for h in hits)
        assert reset_in - 1 <= took < reset_in + 15, took
        print(
            f"rate limit resetting {reset_in:g} s after the check run started: concluded after "
            f"{took:.1f} s"
        )


def test_kill_9_between_creating_the_check_run_and_journalling_it_leaves_no_orphan(
    tmp_path: Path, repo: Path
) -> None:
    """Finding: kill -9 after GitHub created the check run and before the worker journalled its id
    left an orphan in-progress run next to the new completed one. The stand-in holds the answer to
    the POST."""
    head = git(repo, "rev-parse", "pr")
    with running(tmp_path, repo) as service:
        service.faults([{"path": "/repos/*/check-runs", "method": "POST", "hold": 8, "count": 1}])
        assert service.deliver("opened", head) == 202
        [orphan] = wait_for(lambda: runs_on(service, head), 20, "the check run to exist on GitHub")
        service.kill("worker")  # it is still waiting for the POST's answer: it never learned the id
        service.start_worker()
        run = service.completed_run(head)
        assert run["id"] == orphan["id"] and run["conclusion"] == "failure"
        assert [r["status"] for r in runs_on(service, head)] == ["completed"]  # one run, concluded


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MB tmpfs for the queue file, so that the test can fill it."""
    if os.geteuid() != 0:
        pytest.fail(
            "this test mounts a small tmpfs for the queue and needs root (the CI container runs as "
            "root)"
        )
    path = tmp_path / "disk"
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(folder: Path) -> Path:
    """Write a file until the disk is full."""
    filler = folder / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    # the last partial block
    with contextlib.suppress(OSError), filler.open("ab", buffering=0) as out:
        while True:
            out.write(b"\0" * 512)
    return filler


def _truncate_wal(queue_file: Path) -> None:
    """Give the WAL's space back, so that the next write needs fresh blocks (as after a
    checkpoint)."""

    def done() -> bool:
        with contextlib.closing(sqlite3.connect(queue_file, timeout=5)) as db:
            busy, _, _ = db.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()
            return busy == 0

    wait_for(done, 10, "a WAL checkpoint")


def _journal(queue_file: Path) -> dict[str, bytes]:
    with contextlib.closing(
        sqlite3.connect(f"file:{queue_file}?mode=ro", uri=True, timeout=5)
    ) as db:
        return {key: bytes(value) for key, value in db.execute("select key, value from kv")}


def _marked_done(journal: dict[str, bytes]) -> bool:
    """The one job is done: its journal entry replaced by a done mark
    (``bot.service.done_marks``)."""
    return (
        not any(k.startswith("job:") for k in journal)
        and len([k for k in journal if k.startswith("done:")]) == 1
    )


def test_a_disk_that_fills_mid_review(tmp_path: Path, repo: Path, small_disk: Path) -> None:
    """Finding: disk full in the middle of a review: the per-PR lock was never released (its own
    live process never broke it before the 900 s TTL), and /readyz said 200 while the queue refused
    writes."""
    head = git(repo, "rev-parse", "pr")
    disk = small_disk
    queue_file = disk / "queue.sqlite3"
    with running(tmp_path, repo, *QUICK_SWEEP, queue_file=queue_file) as service:
        # hold the worker inside the review: one tree request waits 3 s for a rate limit reset
        service.faults([{"path": "/repos/*/git/trees/*", "status": 403, "reset_in": 3, "count": 1}])
        assert service.deliver("opened", head) == 202
        wait_for(
            lambda: any(r["status"] == "in_progress" for r in runs_on(service, head)),
            20,
            "the review",
        )
        _truncate_wal(queue_file)
        filler = _fill(disk)

        assert http("GET", f"{service.web}/readyz")[0] == 503  # the queue refuses writes: not ready
        assert service.deliver("synchronize", head) == 503  # and the web says so to GitHub
        run = service.completed_run(head)  # the review still concludes: GitHub's side works
        assert run["conclusion"] == "failure"
        assert all(r["status"] == "completed" for r in runs_on(service, head))
        service.summary_for(head)
        log = service.tmp / "worker.log"
        wait_for(
            lambda: b"disk is full" in log.read_bytes(), 10, "the worker's journal writes to fail"
        )

        filler.unlink()  # space comes back
        wait_for(lambda: http("GET", f"{service.web}/readyz")[0] == 200, 10, "/readyz to recover")
        journal = wait_for(
            lambda: (
                (j := _journal(queue_file)) and not any(k.startswith("lease:") for k in j) and j
            ),
            40,
            "the lease to be released",
        )
        assert _marked_done(journal)  # written late, not redone

        sent = time.monotonic()
        assert service.deliver("synchronize", head) == 202
        wait_for(
            lambda: len([r for r in runs_on(service, head) if r["status"] == "completed"]) == 2,
            20,
            "the next review of the same pull request",
        )
        assert time.monotonic() - sent < 20  # not after the 900 s lock TTL
        assert len(runs_on(service, head)) == 2
        wal = queue_file.with_name("queue.sqlite3-wal")
        assert not wal.exists() or wal.stat().st_size <= WAL_LIMIT
        print(json.dumps({"disk": "8m", "wal_bytes": wal.stat().st_size if wal.exists() else 0}))


def test_a_disk_full_before_the_check_run_creates_none_and_the_sweep_redoes_the_job(
    tmp_path: Path, repo: Path, small_disk: Path
) -> None:
    """Finding: an orphan in-progress check run when the disk fills. The intent is journalled before
    the run is created: when that write fails, nothing is created; once space is back the sweep
    redoes the job."""
    head = git(repo, "rev-parse", "pr")
    queue_file = small_disk / "queue.sqlite3"
    with running(tmp_path, repo, *QUICK_SWEEP, queue_file=queue_file) as service:
        # before the run
        service.faults([{"path": "/repos/*/pulls/7", "method": "GET", "hold": 3, "count": 1}])
        assert service.deliver("opened", head) == 202
        wait_for(lambda: service.state()["fault_hits"], 20, "the worker to read the pull request")
        _truncate_wal(queue_file)
        filler = _fill(small_disk)
        log = service.tmp / "worker.log"  # the held answer arrives; the intent cannot be journalled
        wait_for(
            lambda: b"disk is full" in log.read_bytes(), 20, "the worker's journal write to fail"
        )
        time.sleep(0.5)
        assert runs_on(service, head) == []  # no check run nobody would conclude
        filler.unlink()
        run = service.completed_run(head)
        assert run["conclusion"] == "failure" and len(runs_on(service, head)) == 1
        wait_for(lambda: _marked_done(_journal(queue_file)), 15, "the job to be marked done")
