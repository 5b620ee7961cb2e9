"""Every review concludes: GitHub's hour-long rate limit, a check run that cannot be concluded, an
orphan run.

The worker and the real queue (SQLite) run in this process against LocalGitHub; time is simulated:
the queue, the worker and huey's schedule are read at a clock the test moves. The same faults
against the real processes: ``tests/test_e2e_faults.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.github.api import GitHubError, PullRequest, RateLimited
from bot.github.events import Job, decide
from bot.github.local import LocalGitHub
from bot.github.publish import CHECK_NAME, start_check
from bot.service import reconcile
from bot.service.queue import JobQueue, make_huey
from bot.service.worker import Worker
from tests.conftest import PAYLOADS
from tests.fakes import FAKE_CHECKS
from tests.gitrepo import Repo
from tests.test_pipeline import ENTRY, REPO, load

HOUR = 3600.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Factory:
    def __init__(self, gh: LocalGitHub) -> None:
        self.gh = gh

    def for_installation(self, installation_id: int) -> LocalGitHub:
        return self.gh


class Bot:
    """The queue and the worker over one SQLite file, on a simulated clock."""

    def __init__(self, tmp: Path, gh: LocalGitHub, clock: Clock, **worker: int) -> None:
        self.clock = clock
        self.queue = JobQueue(make_huey(str(tmp / "queue.sqlite3")), clock=clock)
        self.worker = Worker(
            Factory(gh),
            checks=FAKE_CHECKS,
            note_check_run=self.queue.note_check_run,
            clock=clock,
            done=self.queue.is_done,
            superseded=self.queue.superseded,
            forward=self.queue.accept,
            **worker,
        )
        self.queue.set_handler(self.worker.handle)

    def run_queued(self) -> int:
        """Run what huey would take off the queue now."""
        count = 0
        while (task := self.queue.huey.dequeue()) is not None:
            self.queue.huey.execute(task)
            count += 1
        return count

    def etas(self) -> list[float]:
        return [t.eta.replace(tzinfo=UTC).timestamp() for t in self.queue.huey.scheduled()]

    def advance(self, to: float) -> int:
        """Move the clock to ``to`` and run the scheduled tasks that are due (huey's scheduler)."""
        self.clock.now = to
        when = datetime.fromtimestamp(to, UTC).replace(tzinfo=None)  # huey's naive UTC
        due = self.queue.huey.read_schedule(when)
        for task in due:
            self.queue.huey.execute(task, when)
        return len(due)


@pytest.fixture
def pr_repo(tmp_path: Path, corpus: Path) -> Repo:
    from tests.test_pipeline import make_pr_repo

    return make_pr_repo(tmp_path, corpus)


@pytest.fixture
def loaded(pr_repo: Repo) -> tuple[LocalGitHub, PullRequest]:
    return load(pr_repo)


@pytest.fixture
def bot(tmp_path: Path, loaded: tuple[LocalGitHub, PullRequest]) -> Iterator[Bot]:
    import time

    made = Bot(tmp_path, loaded[0], Clock(float(int(time.time()))))
    yield made
    made.queue.close()


def job(pr: PullRequest, delivery: str = "d-1") -> Job:
    return Job(delivery, "pull_request", "opened", 1, REPO, pr.number, pr.head_sha)


def reconciling(pr: PullRequest) -> Job:
    """The job a reconciliation round enqueues for ``pr``'s head."""
    return Job(
        reconcile.delivery_of(REPO, pr.number, pr.head_sha),
        "pull_request",
        reconcile.ACTION,
        1,
        REPO,
        pr.number,
        pr.head_sha,
    )


def test_an_hour_long_rate_limit_reschedules_at_the_reset_then_concludes(
    bot: Bot, pr_repo: Repo, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: 403 with the reset an hour away, after the check run started: the run stayed
    "Reviewing" for ever and the job was marked done. Now: rescheduled at the reset (+1 s), then
    concluded."""
    gh, pr = loaded
    start = bot.clock.now
    limit = RateLimited("GET files: 403 API rate limit exceeded", 403, reset_at=start + HOUR + 1)
    gh.fail("list_pull_request_files", limit)  # after the check run was created
    gh.fail("update_check_run", limit)  # a primary limit refuses every write too
    assert bot.queue.accept(job(pr))

    assert bot.run_queued() == 1
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "in_progress" and not bot.queue.is_done("d-1")
    assert bot.etas() == [start + HOUR + 1]  # at the reset, not in a second nor given up
    bot.clock.now = start + 60
    assert bot.queue.recover(min_age=60) == 0  # the minute sweep leaves the scheduled job alone

    assert bot.advance(start + HOUR) == 0  # not before the reset
    assert bot.advance(start + HOUR + 1) == 1
    [run] = gh.runs_for(pr.head_sha)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert [(a["path"], a["start_line"]) for a in run.annotations] == [(ENTRY, 6)]
    assert bot.queue.is_done("d-1") and bot.etas() == []
    concluded = bot.clock.now - start
    # the time to conclude under an hour-long limit: the reset, plus one second
    assert concluded == HOUR + 1


def test_a_rate_limit_that_keeps_coming_back_concludes_could_not_finish(
    tmp_path: Path, pr_repo: Repo
) -> None:
    gh, pr = load(pr_repo)
    clock = Clock(1_900_000_000.0)
    bot = Bot(tmp_path, gh, clock, max_deferrals=2)
    for n in (1, 2, 3):
        gh.fail(
            "list_pull_request_files",
            RateLimited("rate limited", 403, reset_at=clock.now + n * HOUR),
        )
    bot.queue.accept(job(pr))
    bot.run_queued()
    [run] = gh.runs_for(pr.head_sha)  # this limit lets the bot write: it says why it waits
    assert run.status == "in_progress"
    assert run.title.startswith("Waiting for GitHub's rate limit (until ")
    assert bot.advance(clock.now + HOUR) == 1
    assert bot.advance(clock.now + HOUR) == 1  # the third limit: give up, and say so
    [run] = gh.runs_for(pr.head_sha)
    # never neutral: GitHub counts it as passing
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert run.title.startswith("Could not finish: GitHub's API rate limit")
    assert bot.queue.is_done("d-1") and bot.etas() == []
    bot.queue.close()


def test_a_review_whose_check_run_cannot_be_concluded_runs_again(
    bot: Bot, pr_repo: Repo, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """The review fails and so does the write that would conclude it: the job is not done, it runs
    again."""
    gh, pr = loaded
    gh.fail("read_tree", GitHubError("GET tree: 502 Bad Gateway", 502))
    gh.fail("update_check_run", GitHubError("PATCH check run: 502 Bad Gateway", 502))
    bot.queue.accept(job(pr))
    bot.run_queued()
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "in_progress" and not bot.queue.is_done("d-1")
    assert bot.etas() == [bot.clock.now + 60]
    assert bot.advance(bot.clock.now + 60) == 1
    [run] = gh.runs_for(pr.head_sha)
    assert (run.status, run.conclusion) == ("completed", "failure") and bot.queue.is_done("d-1")


def test_a_check_run_created_before_a_crash_is_adopted_not_duplicated(
    bot: Bot, pr_repo: Repo, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """kill -9 between creating the check run and journalling its id: only the intent (the head) is
    journalled. The recovered job finds the run by its external_id (the delivery) and concludes it;
    no second run."""
    gh, pr = loaded
    bot.queue.accept(job(pr))
    bot.queue.huey.dequeue()  # the consumer took it, then the process died mid-job
    bot.queue.note_check_run(job(pr), pr.head_sha, 0)  # the intent, journalled before the POST
    orphan = start_check(gh, pr, "d-1")  # GitHub created it; the id never reached the journal
    start_check(gh, pr, "another-delivery")  # someone else's run on the same head is left alone

    assert bot.queue.recover() == 1
    bot.run_queued()
    runs = {r.external_id: r for r in gh.runs_for(pr.head_sha)}
    assert set(runs) == {"d-1", "another-delivery"} and runs["d-1"].id == orphan
    assert (runs["d-1"].status, runs["d-1"].conclusion) == ("completed", "failure")
    assert runs["another-delivery"].status == "in_progress"
    # the two made above, none by the bot
    assert gh.methods_written().count("create_check_run") == 2


def test_a_resumed_job_concludes_its_own_run_by_id_beside_newer_runs_of_the_same_name(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """GitHub keeps every run of one name on a head (a re-run creates another): the job resumes the
    run it journalled, by its id, though newer runs of that name came after it; they are left as
    they are. (Verification: this held before; the runs GitHub counts are read by id too.)"""
    gh, pr = loaded
    bot.queue.accept(job(pr))
    bot.queue.huey.dequeue()  # the consumer took it, then the process died mid-job
    mine = start_check(gh, pr, "d-1")
    bot.queue.note_check_run(job(pr), pr.head_sha, mine)
    newer = [start_check(gh, pr, f"rerun-{i}") for i in range(2)]  # open, newer, same name

    assert bot.queue.recover() == 1
    bot.run_queued()
    runs = {r.id: r for r in gh.runs_for(pr.head_sha)}
    assert (runs[mine].status, runs[mine].conclusion) == ("completed", "failure")
    assert [runs[i].status for i in newer] == ["in_progress", "in_progress"]
    assert gh.methods_written().count("create_check_run") == 3  # the three above, none by the bot


def test_an_orphan_on_an_older_head_is_concluded_superseded(
    bot: Bot, pr_repo: Repo, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    gh, pr = loaded
    bot.queue.accept(job(pr))
    bot.queue.huey.dequeue()
    bot.queue.note_check_run(job(pr), pr.head_sha, 0)
    orphan = start_check(gh, pr, "d-1")
    newer = gh.push(pr_repo.commit("a push"))

    bot.queue.recover()
    bot.run_queued()
    old = next(r for r in gh.check_runs if r.id == orphan)
    assert (old.status, old.conclusion) == ("completed", "cancelled")  # never passing: not reviewed
    assert old.title == "Superseded by a newer push"
    [new] = gh.runs_for(newer)
    assert new.name == CHECK_NAME and new.status == "completed"


def deferred_with_an_open_run(bot: Bot, gh: LocalGitHub, pr: PullRequest) -> float:
    """Job d-1 opens its run on ``pr``'s head, then GitHub's rate limit defers it: returns when it
    runs again."""
    reset = bot.clock.now + HOUR
    gh.fail("list_pull_request_files", RateLimited("GET files: 403", 403, reset_at=reset))
    assert bot.queue.accept(job(pr)) and bot.run_queued() == 1
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "in_progress" and bot.etas() == [reset]
    return reset


def test_a_superseded_job_concludes_its_open_run_on_the_older_commit_cancelled(
    bot: Bot, pr_repo: Repo, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: a job deferred after it opened its run, superseded by a push whose job had not run
    yet, was dropped by the queue: its run on the older commit stayed in progress for ever. The
    worker concludes it cancelled (never passing) and reviews nothing: the newer job does."""
    gh, pr = loaded
    reset = deferred_with_an_open_run(bot, gh, pr)
    newer = gh.push(pr_repo.commit("a push"))
    assert bot.queue.accept(Job("d-2", "pull_request", "synchronize", 1, REPO, pr.number, newer))

    assert bot.advance(reset) == 1  # d-1, while d-2 waits in the queue
    [old] = gh.runs_for(pr.head_sha)
    assert (old.status, old.conclusion) == ("completed", "cancelled")
    assert old.title == "Superseded by a newer push"
    assert gh.runs_for(newer) == [] and bot.queue.is_done("d-1")
    assert bot.run_queued() == 1
    assert [(r.external_id, r.status) for r in gh.runs_for(newer)] == [("d-2", "completed")]


def test_a_superseded_job_whose_run_is_on_the_current_head_resumes_it_not_cancels_it(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """A newer delivery for the same head (an edit of the base) supersedes the deferred job; its
    run is on the head: resumed and concluded with the verdict, never cancelled (a cancelled
    required check fails the pull request)."""
    gh, pr = loaded
    reset = deferred_with_an_open_run(bot, gh, pr)
    assert bot.queue.accept(Job("d-2", "pull_request", "edited", 1, REPO, pr.number, pr.head_sha))

    assert bot.advance(reset) == 1
    [run] = gh.runs_for(pr.head_sha)
    assert (run.external_id, run.status, run.conclusion) == ("d-1", "completed", "failure")
    assert bot.queue.is_done("d-1")


def test_a_job_whose_pull_request_was_closed_meanwhile_concludes_its_open_run(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: a job deferred after it opened its run found the pull request closed when it ran
    again and returned, its run in progress for ever. It is concluded cancelled (not passing),
    nothing judged; reopening delivers a new review."""
    gh, pr = loaded
    reset = deferred_with_an_open_run(bot, gh, pr)
    gh.state_open = False  # closed while the job waited

    assert bot.advance(reset) == 1
    [run] = gh.runs_for(pr.head_sha)
    assert (run.status, run.conclusion, run.external_id) == ("completed", "cancelled", "d-1")
    assert run.title == "The pull request was closed"
    assert bot.queue.is_done("d-1") and not gh.reviews


def test_a_fork_s_check_suite_is_reviewed_under_its_pull_request_s_lease(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: GitHub names no pull request in a fork's check suite, so a re-run was keyed by its
    head (``repo@sha``) and ran beside that pull request's own jobs (``repo#N``), two reviews of one
    pull request at once. Once the pull request is known, the job is enqueued again under its key;
    the head-keyed job opens no run."""
    gh, pr = loaded
    rerun = Job("d-1", "check_suite", "rerequested", 1, REPO, 0, pr.head_sha, rerun=True)
    assert rerun.pr_key == f"{REPO}@{pr.head_sha}"
    assert bot.queue.accept(rerun)
    forwarded: list[Job] = []
    bot.worker.forward = lambda job: forwarded.append(job) or bot.queue.accept(job)

    assert bot.run_queued() == 2  # the head's job, then the pull request's
    [again] = forwarded
    assert (again.pr_key, again.delivery, again.rerun) == (
        f"{REPO}#{pr.number}",
        f"d-1.pr{pr.number}",
        True,
    )
    assert bot.queue.is_done("d-1") and bot.queue.is_done(again.delivery)
    [run] = gh.runs_for(pr.head_sha)
    assert (run.external_id, run.status) == (again.delivery, "completed")


def test_a_secondary_limit_mid_review_shows_the_run_queued_with_the_reason_then_concludes_once(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """A secondary limit (here on a read, after the run was created) that lets the bot update the
    run: the pull request shows the run ``queued`` again, saying why and until when, while the
    installation is paused; the job runs again at the pause's end and the same run concludes
    once."""
    gh, pr = loaded
    start = bot.clock.now
    gh.fail(
        "list_pull_request_files",
        RateLimited(
            "GET files: 403 You have exceeded a secondary rate limit",
            403,
            reset_at=start + 60,
            secondary=True,
        ),
    )
    assert bot.queue.accept(job(pr))
    assert bot.run_queued() == 1
    [run] = gh.runs_for(pr.head_sha)
    at = datetime.fromtimestamp(start + 60, UTC).strftime("%H:%M:%S UTC")
    assert (run.status, run.conclusion) == ("queued", None)
    assert run.title == f"Queued: GitHub's secondary rate limit pauses the bot until {at}"
    assert bot.etas() == [start + 60]
    assert bot.advance(start + 60) == 1
    [again] = gh.runs_for(pr.head_sha)
    assert again.id == run.id and (again.status, again.conclusion) == ("completed", "failure")
    assert len([r for r in again.requests if r["conclusion"] is not None]) == 1


def test_a_reconciled_head_concluded_meanwhile_by_a_delivery_is_not_reviewed_again(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding (compose, from a fresh clone): a worker's start-up round enqueued the pull request
    (no verdict yet); the delivery for it arrived a moment later and was reviewed first; the round's
    job then ran once the delivery's was finished and reviewed the same head again: two concluded
    runs. A reconciliation job now looks again: the head has a verdict, nothing more is written."""
    gh, pr = loaded
    assert gh.runs_for(pr.head_sha) == []  # what the round found: no run of the App on the head
    owed = reconciling(pr)
    assert bot.queue.accept(owed) and bot.queue.accept(job(pr, "d-delivery"))
    round_job, delivery = bot.queue.huey.dequeue(), bot.queue.huey.dequeue()
    assert round_job is not None and delivery is not None
    # the delivery's job concludes the head (and its latest: entry goes)
    bot.queue.huey.execute(delivery)
    assert bot.queue.is_done("d-delivery")
    bot.queue.huey.execute(round_job)  # then the round's job runs
    assert bot.queue.is_done(owed.delivery)
    runs = gh.runs_for(pr.head_sha)
    assert [(r.status, r.conclusion) for r in runs] == [("completed", "failure")], runs


def test_a_delivery_whose_head_the_reconciliation_concluded_meanwhile_is_not_reviewed_again(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """The other order: the round's job runs and concludes the head first, then the delivery it
    stood in for arrives (the web was restarting): one run. A later re-run request still gets its
    own run."""
    gh, pr = loaded
    owed = reconciling(pr)
    assert bot.queue.accept(owed) and bot.run_queued() == 1
    assert bot.queue.accept(job(pr, "d-late")) and bot.run_queued() == 1
    assert bot.queue.is_done("d-late")
    runs = gh.runs_for(pr.head_sha)
    assert [(r.status, r.conclusion, r.external_id) for r in runs] == [
        ("completed", "failure", owed.delivery)
    ]
    rerun = Job("d-rerun", "check_run", "rerequested", 1, REPO, pr.number, pr.head_sha, rerun=True)
    assert bot.queue.accept(rerun) and bot.run_queued() == 1
    assert len(gh.runs_for(pr.head_sha)) == 2


@pytest.mark.parametrize(
    ("event", "action", "runs"),
    [
        ("pull_request", "opened", 1),  # the delivery the round stood in for: a duplicate
        ("pull_request", "synchronize", 2),  # a push may bring the head back (below)
        ("pull_request_review", "submitted", 2),
        ("pull_request_review", "edited", 2),
        ("pull_request_review", "dismissed", 2),
        ("pull_request", "reopened", 2),
        ("pull_request", "ready_for_review", 2),
        ("pull_request", "edited", 2),  # the base changed
    ],
)
def test_only_the_opening_delivery_of_a_head_the_reconciliation_concluded_is_skipped(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest], event: str, action: str, runs: int
) -> None:
    """Any other delivery may report what happened after the round's review (an owner's approval
    withdrawn): it is reviewed again, with a run of its own."""
    gh, pr = loaded
    owed = reconciling(pr)
    assert bot.queue.accept(owed) and bot.run_queued() == 1
    late = Job("d-late", event, action, 1, REPO, pr.number, pr.head_sha)
    assert bot.queue.accept(late) and bot.run_queued() == 1
    assert bot.queue.is_done("d-late")
    external = [r.external_id for r in gh.runs_for(pr.head_sha)]
    assert external == [owed.delivery, "d-late"][:runs]


def test_a_force_push_back_to_a_head_the_reconciliation_reviewed_is_reviewed_again(
    bot: Bot, pr_repo: Repo, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: a round reviewed head A; a push to B was reviewed; the base moved; a force-push
    brought A back. Its ``synchronize`` was skipped as the delivery the round had stood in for, so
    A's only verdict was the round's, judged against the old base, while B's push had dismissed the
    App's approval. Now the push is reviewed: a run of its own on A, against the base of now."""
    from tests.gitrepo import git

    gh, pr = loaded
    head_a = pr.head_sha
    owed = reconciling(pr)
    assert bot.queue.accept(owed) and bot.run_queued() == 1
    head_b = pr_repo.commit("a push in between")
    assert bot.queue.accept(Job("d-b", "pull_request", "synchronize", 1, REPO, pr.number, head_b))
    assert bot.run_queued() == 1 and len(gh.runs_for(head_b)) == 1
    git(pr_repo.path, "checkout", "-q", "main")
    base_now = pr_repo.commit("the base moves on", branch="main")
    git(pr_repo.path, "checkout", "-q", "pr")
    git(pr_repo.path, "reset", "-q", "--hard", head_a)  # the force-push back
    back = Job("d-back", "pull_request", "synchronize", 1, REPO, pr.number, head_a)
    assert bot.queue.accept(back) and bot.run_queued() == 1
    runs = gh.runs_for(head_a)
    assert [(r.status, r.external_id) for r in runs] == [
        ("completed", owed.delivery),
        ("completed", "d-back"),
    ], runs
    assert gh.get_pull_request(REPO, pr.number).base_sha == base_now


def test_a_delivery_newer_than_the_rounds_job_supersedes_it_and_is_reviewed(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """The round's job dropped as superseded (marked done) never stops the delivery that superseded
    it."""
    gh, pr = loaded
    owed = reconciling(pr)
    assert bot.queue.accept(owed) and bot.queue.accept(job(pr, "d-newer"))
    assert bot.run_queued() == 2
    assert bot.queue.is_done(owed.delivery) and bot.queue.is_done("d-newer")
    runs = gh.runs_for(pr.head_sha)
    assert [(r.status, r.conclusion, r.external_id) for r in runs] == [
        ("completed", "failure", "d-newer")
    ]


class OneInstallation:
    """The App's reads for a reconciliation round: one installation, the stand-in's repository."""

    def __init__(self, gh: LocalGitHub) -> None:
        self.gh = gh
        gh.list_installation_repositories = lambda: [REPO]  # type: ignore[method-assign]

    def list_installations(self) -> list[int]:
        return [1]

    def for_installation(self, installation: int) -> LocalGitHub:
        return self.gh


def test_a_head_whose_newest_run_is_open_is_owed_a_review_despite_an_older_verdict(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: a reconciliation round skipped a head when any run on it was a verdict; GitHub
    shows the newest run of the name, so a newer run that a review event opened and its job never
    concluded (lost with Redis's data) stayed in progress for good."""
    gh, pr = loaded
    assert bot.queue.accept(job(pr, "d-0")) and bot.run_queued() == 1  # a verdict on the head
    gh.fail(
        "list_pull_request_files",
        RateLimited("GET files: 403", 403, reset_at=bot.clock.now + 3600),
    )
    review = Job("d-1", "pull_request_review", "submitted", 1, REPO, pr.number, pr.head_sha)
    assert bot.queue.accept(review) and bot.run_queued() == 1
    runs = gh.runs_for(pr.head_sha)
    assert [r.status for r in runs] == ["completed", "in_progress"]
    [owed] = reconcile.unreviewed(gh, 1, REPO)
    assert owed.check_run_id == runs[-1].id  # the open run is resumed, not a third one opened


def test_a_rerun_the_queue_gave_up_on_is_concluded_by_the_next_reconciliation_round(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: a re-run paused for a rate limit, then GitHub failing (502) past the job's retries:
    the queue gave the job up with its run in progress, and reconciliation, seeing the head's older
    verdict, never came back to it."""
    gh, pr = loaded
    assert bot.queue.accept(job(pr, "d-0")) and bot.run_queued() == 1
    reset = bot.clock.now + 3600
    gh.fail("list_pull_request_files", RateLimited("GET files: 403", 403, reset_at=reset))
    rerun = Job("d-1", "check_run", "rerequested", 1, REPO, pr.number, pr.head_sha, rerun=True)
    assert bot.queue.accept(rerun) and bot.run_queued() == 1  # opens run 2, deferred
    # GitHub fails the job's first read at the reset and at each of huey's three retries
    gh.fail("get_pull_request", GitHubError("GET pull: 502 Bad Gateway", 502), times=4)
    moment = reset
    for _ in range(7):  # the reset, then huey's retries
        bot.advance(moment)
        moment += 2
    assert bot.queue.is_done("d-1") and bot.queue.open_pull_requests() == set()  # given up
    assert gh.runs_for(pr.head_sha)[-1].status == "in_progress"
    reconcile.reconcile(OneInstallation(gh), bot.queue)
    bot.run_queued()
    runs = gh.runs_for(pr.head_sha)
    assert len(runs) == 2 and runs[-1].status == "completed", [
        (r.external_id, r.status, r.title) for r in runs
    ]


def test_without_reconciliation_a_job_given_up_concludes_its_run_could_not_finish(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: with reconciliation off (``BOT_RECONCILE_EVERY=0``) nothing came back to the run a
    given-up job left open: in progress for good. The worker then concludes it itself."""
    gh, pr = loaded
    bot.queue.set_handler(bot.worker.handle, bot.worker.give_up)  # as ``main`` wires it then
    reset = bot.clock.now + 3600
    gh.fail("list_pull_request_files", RateLimited("GET files: 403", 403, reset_at=reset))
    assert bot.queue.accept(job(pr, "d-1")) and bot.run_queued() == 1  # opens its run, deferred
    gh.fail("get_pull_request", GitHubError("GET pull: 502 Bad Gateway", 502), times=4)
    moment = reset
    for _ in range(7):  # the reset, then huey's retries
        bot.advance(moment)
        moment += 2
    assert bot.queue.is_done("d-1")
    [run] = gh.runs_for(pr.head_sha)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert run.title.startswith("Could not finish: the review failed at each of its retries")
    # a run concluded meanwhile (by a re-run of the same job) keeps its verdict
    gh.update_check_run(REPO, run.id, status="completed", conclusion="success")
    bot.worker.give_up(replace(job(pr), check_run_id=run.id, check_run_sha=pr.head_sha))
    assert [r.conclusion for r in gh.runs_for(pr.head_sha)] == ["success"]


def test_a_read_github_refuses_concludes_once_with_githubs_words_and_is_not_retried(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """GitHub's "no" to a read the review needs (403 "Resource not accessible by integration": a
    permission not granted) is no failure a retry fixes: the run concludes "could not finish" with
    GitHub's answer, once; not "internal error" and a new failed run at each of the queue's
    retries."""
    gh, pr = loaded
    refused = GitHubError("GET tree: 403 Resource not accessible by integration", 403)
    gh.fail("read_tree", refused, times=10)
    bot.queue.accept(job(pr))
    bot.run_queued()
    bot.advance(bot.clock.now + 120)
    bot.run_queued()

    [run] = gh.runs_for(pr.head_sha)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert run.title.startswith("Could not finish: GitHub refused") and "internal" not in run.title
    assert "Resource not accessible by integration" in run.summary
    assert bot.queue.is_done("d-1") and bot.etas() == []


def test_a_head_force_pushed_back_after_its_base_moved_is_reviewed_again_by_a_round(
    tmp_path: Path, corpus: Path
) -> None:
    """Finding: a force-push back to a head reviewed before, whose ``synchronize`` was lost, was not
    stood in for: the head's newest run was a verdict, so a round skipped it, though that verdict
    judged the head against an older base. Here the default branch gave the entry new owners
    meanwhile (the corpus's CODEOWNERS, one more line): against the pull request's base now the
    review fails (``owners/approval-required``), and the green verdict stayed. Now a verdict names
    the base it judged (a hidden first line of its summary) and a round reviews a head again whose
    verdict names another base than its pull request's; then that verdict stands."""
    from tests.gitrepo import git
    from tests.test_pipeline import TEAM

    repo = Repo.from_folder(corpus, tmp_path / "repo")
    facet = "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"
    text = (repo.path / facet).read_text(encoding="utf-8")
    first = repo.change({facet: text + "\n"}, "a change of gcp:dataproc")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=7, author="contributor")
    gh.set_team(TEAM, ["carol"])  # an owner by the base's CODEOWNERS
    gh.add_review("carol")
    bot = Bot(tmp_path, gh, Clock(float(int(time.time()))))
    bot.worker.checks = None  # the bot's checks: the owners' approval decides here
    try:
        assert bot.queue.accept(job(gh.get_pull_request(REPO, 7), "d-0")) and bot.run_queued() == 1
        assert [r.conclusion for r in gh.runs_for(first)] == ["success"]
        second = repo.change({facet: text + "\n\n"}, "another")  # a push, reviewed
        push = Job("d-1", "pull_request", "synchronize", 1, REPO, 7, second)
        assert bot.queue.accept(push) and bot.run_queued() == 1
        git(repo.path, "checkout", "-q", "main")  # a merge gives gcp entries new owners
        owners = (repo.path / "CODEOWNERS").read_text(encoding="utf-8")
        repo.write("CODEOWNERS", owners + "spec/registry/gcp @OpenLineage/gcp\n")
        git(repo.path, "add", "-A")
        git(repo.path, "commit", "-q", "-m", "gcp owners")
        gh.set_team("OpenLineage/gcp", [])
        gh.push(first)  # force-pushed back; its synchronize is lost
        assert reconcile.reconcile(OneInstallation(gh), bot.queue) == 1
        assert bot.run_queued() == 1
        runs = gh.runs_for(first)
        base = gh.get_pull_request(REPO, 7).base_sha
        assert [r.conclusion for r in runs] == ["success", "failure"]
        assert "owners/approval-required" in runs[-1].summary
        assert runs[-1].summary.startswith(f"<!-- registry-bot:base {base} -->\n")
        assert reconcile.reconcile(OneInstallation(gh), bot.queue) == 0  # it stands now
    finally:
        bot.queue.close()


def test_a_fork_s_rerun_finds_its_pull_request_among_the_open_ones(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: GitHub names no pull request in a fork's check suite ("When the check suite's
    head_branch is in a forked repository it will be null and the pull_requests array will be
    empty"), and ``GET commits/{sha}/pulls`` lists none for a fork's head commit either, as public
    clients report: the job ended "no-pull-request", so **Re-run** on a fork's pull request, the
    registry's usual contribution, did nothing. The open pull requests are now matched by their
    head."""
    gh, pr = loaded
    gh.fork = "contributor/OpenLineage"
    assert gh.list_open_pull_requests_for_sha(REPO, pr.head_sha) == []
    rerun = Job("d-1", "check_suite", "rerequested", 1, REPO, 0, pr.head_sha, rerun=True)
    assert bot.queue.accept(rerun)
    assert bot.run_queued() == 2  # the head's job, then the pull request's
    [run] = gh.runs_for(pr.head_sha)
    assert (run.external_id, run.status) == (f"d-1.pr{pr.number}", "completed")


def test_a_re_run_naming_another_repository_s_pull_request_is_resolved_by_its_head(
    bot: Bot, loaded: tuple[LocalGitHub, PullRequest]
) -> None:
    """Finding: a check suite's ``pull_requests`` may list pull requests of other repositories
    with the same head branch (public clients' reports: DefinitelyTyped's dt-mergebot), numbered in
    their own repository. The first one's number was taken for this repository's: the re-run
    reviewed another pull request of this repository, or none (404), never the one re-run. Only
    pull requests into this repository (``base.repo.id``) count; else the head finds it."""
    gh, pr = loaded
    payload = json.loads((PAYLOADS / "check_suite.rerequested.json").read_text())
    payload["installation"] = {"id": 1}
    payload["repository"]["full_name"] = REPO
    payload["check_suite"]["head_sha"] = pr.head_sha
    [item] = payload["check_suite"]["pull_requests"]
    item["number"] = pr.number + 1  # another repository's number
    item["base"]["repo"] = {"id": 1, "url": "https://api.github.com/repos/else/where", "name": "w"}
    rerun = decide("check_suite", "d-1", payload).job
    assert rerun is not None and rerun.number == 0
    assert bot.queue.accept(rerun)
    assert bot.run_queued() == 2  # the head's job, then the pull request's
    [run] = gh.runs_for(pr.head_sha)
    assert (run.external_id, run.status) == (f"d-1.pr{pr.number}", "completed")
    # a pull request into this repository is taken as GitHub names it
    item["base"]["repo"]["id"] = payload["repository"]["id"]
    own = decide("check_suite", "d-2", payload).job
    assert own is not None and own.number == pr.number + 1
