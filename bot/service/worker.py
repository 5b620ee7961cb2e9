"""The worker: takes jobs off the queue, reviews the pull request's current head, publishes.

``python -m bot.service.worker`` runs a huey consumer over the same queue as the web. Long-lived
resources (the Spark regression's warm SparkSession) are created lazily, once per process, through
``Resources`` and reused by every job.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from bot.core import budget
from bot.core.findings import Finding, Report, Section
from bot.core.incomplete import incomplete
from bot.github import dashboard_issue, metrics, waiver_proposal
from bot.github.api import (
    CheckRunInfo,
    CheckRunOutput,
    GitHubAPI,
    GitHubClientFactory,
    GitHubError,
    InstallationUnavailable,
    PullRequest,
    RateLimited,
    ReviewInfo,
)
from bot.github.delegation import OwnersStage, act_for_owners, retract
from bot.github.events import HEAD_ACTIONS, OWNERS_CHANGED, Job
from bot.github.listing import ListingMoved
from bot.github.pacing import Pacer, RedisPacer
from bot.github.pipeline import Regression, ReviewInputs, fetch, review_inputs
from bot.github.publish import (
    CHECK_NAME,
    REVIEWING,
    close_check,
    complete_check,
    concluded_as,
    could_not_finish,
    fail_check,
    note_on_check,
    pause_check,
    publish_review,
    publish_summary,
    start_check,
    supersede_check,
)
from bot.github.refusals import Refusals, is_refusal
from bot.review.engine import Check
from bot.service import health, leases, outage, reconcile
from bot.service import queue_schema as schema
from bot.service.leases import DEFAULT_TTL, Fence, LeaseLost
from bot.service.logs import log_context
from bot.service.queue import JobDeferred, JobQueue

log = logging.getLogger("bot.worker")
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
REGRESSION_MODULE = "bot.review.regression"
MAX_DEFERRALS = 3  # rate-limit resets to wait for before a review concludes "could not finish"
# seconds for a whole job (fetch, review, regression); under the queue's 900 s lock TTL
JOB_BUDGET = 840.0
# attempts that died with their process (OOM kill) before a review concludes "could not finish"
MAX_CRASHES = 2
OPEN_RETRY = 60.0  # seconds before a job whose check run could not be concluded runs again
# seconds before a job GitHub refused the App's credentials for (401 after a fresh token: a private
# key rotated, a wrong App id) runs again: it waits for the credentials to be fixed, until max_age
CREDENTIALS_RETRY = 600.0
# a dashboard job the queue gave up, or one that found the branch moving at every read, is redone
# once, this many seconds later (``redo_dashboard``)
DASHBOARD_REDO_AFTER = 600.0
DASHBOARD_REDO = ".redo"  # the redone job's delivery suffix


class Resources:
    """Process-wide resources built on first use and kept warm (one regression, one
    SparkSession)."""

    def __init__(self, regression_factory: Callable[[], Regression] | None = None) -> None:
        self._factory = regression_factory
        self._regression: Regression | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._factory is not None

    def regression(self) -> Regression | None:
        if self._factory is None:
            return None
        with self._lock:
            if self._regression is None:
                self._regression = self._factory()
            return self._regression


class CountingGitHub:
    """Wraps a ``GitHubAPI`` to count calls and record the rate limit for the metrics."""

    def __init__(self, inner: GitHubAPI) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or name == "rate_limit_remaining":
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            metrics.GITHUB_CALLS.labels(method=name).inc()
            try:
                return attr(*args, **kwargs)
            finally:
                remaining = self._inner.rate_limit_remaining()
                if remaining is not None:
                    metrics.RATE_LIMIT.set(remaining)

        return call


WRITES = (
    "create_",
    "update_",
    "dismiss_",
    "edit_",
    "delete_",
    "merge_",
    "enable_",
    "disable_",
    "approve",
)


class FencedGitHub:
    """Wraps a ``GitHubAPI`` so that every write first checks the job's lease (``Fence.check``): a
    worker that lost its pull request to another raises ``LeaseLost`` instead of writing."""

    def __init__(self, inner: GitHubAPI, fence: Fence) -> None:
        self._inner = inner
        self._fence = fence

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or not name.startswith(WRITES):
            return attr

        def write(*args: Any, **kwargs: Any) -> Any:
            self._fence.check()
            return attr(*args, **kwargs)

        return write


def is_transient(exc: BaseException) -> bool:
    """A GitHub failure worth retrying the whole job for (network, 5xx, rate limit). A 403 that is
    not a rate limit (the client raises those as ``RateLimited``) is GitHub's "no"
    (``is_refusal``): a retry changes nothing."""
    return isinstance(exc, GitHubError) and (
        exc.status == 0 or exc.status >= 500 or exc.status == 429 or isinstance(exc, RateLimited)
    )


class CheckRunOpen(Exception):
    """The review failed and its check run could not be concluded either: the job must run again."""


@dataclass(frozen=True)
class Opened:
    """The check run of an attempt: its id, whether an earlier attempt started it (``resumed``),
    concluded it already (``concluded``: it is never reopened nor concluded again) and how many
    annotations that attempt sent (GitHub appends annotations: a resumed run gets only the rest)."""

    id: int
    resumed: bool = False
    concluded: bool = False
    annotations: int = 0
    conclusion: str | None = None  # as GitHub lists a concluded run, with its title
    title: str = ""

    def stands_for(self, report: Report) -> bool:
        """Whether this concluded run's verdict is ``report``'s: its conclusion, and its title
        (the headline: verdict and counts) when GitHub lists one. Only then does a retried attempt
        publish ``report`` beside it and act on it."""
        conclusion, title = concluded_as(report)
        return self.conclusion == conclusion and self.title in ("", title)


def journalled_run(
    gh: GitHubAPI, pr: PullRequest, delivery: str, resume: tuple[str, int]
) -> tuple[str, int, CheckRunInfo | None]:
    """``(sha, id, as GitHub lists it)`` of the run an earlier attempt journalled (``resume``); an
    id of 0 is looked up by the run's ``external_id`` (the delivery) and stays 0 if none is."""
    sha, known = resume
    listed = gh.list_check_runs(pr.repo, sha, CHECK_NAME)
    mine = [r for r in listed if (r.id == known if known else r.external_id == delivery)]
    # a retry may have opened a second run for the delivery (``review_pull_request``): the open one
    found = next((r for r in mine if r.status != "completed"), mine[0] if mine else None)
    if not known and found is not None:
        known = found.id
        log.warning("adopting check run %s that an interrupted attempt created", known)
    return sha, known, found


def resumed_check(
    gh: GitHubAPI, pr: PullRequest, delivery: str, resume: tuple[str, int]
) -> Opened | None:
    """The check run an earlier attempt journalled (``resume``: its head sha and id; the id is 0
    when that attempt died between journalling its intent and learning the id, and the run is then
    found on GitHub by its ``external_id``, the delivery). One for the current head is resumed, in
    the state GitHub lists it in (status, annotations); one for an older head is concluded as
    superseded unless it is concluded already, and None is returned."""
    sha, known, found = journalled_run(gh, pr, delivery, resume)
    concluded = found is not None and found.status == "completed"
    if known and sha == pr.head_sha:
        if concluded:
            log.warning(
                "check run %s was concluded by an interrupted attempt; it is left as it is", known
            )
        if found is None:
            return Opened(known, True)
        return Opened(known, True, concluded, found.annotations, found.conclusion, found.title)
    if known and not concluded:
        supersede_check(gh, pr.repo, known, pr.head_sha)
    return None


def open_check(
    gh: GitHubAPI,
    pr: PullRequest,
    delivery: str,
    resume: tuple[str, int] | None = None,
    on_check_run: Callable[[str, int], None] | None = None,
) -> Opened:
    """The check run of this attempt: the one an earlier attempt journalled (``resume``, see
    ``resumed_check``) when it is on the current head, else a new one. A new run is journalled
    (``on_check_run(sha, 0)``) *before* it is created, so that no crash can leave one nobody knows
    about; if that write fails, nothing is created.
    """
    if resume:
        opened = resumed_check(gh, pr, delivery, resume)
        if opened is not None:
            return opened
    if on_check_run is not None:
        on_check_run(pr.head_sha, 0)
    check_id = start_check(gh, pr, delivery)
    if on_check_run is not None:
        try:
            on_check_run(pr.head_sha, check_id)
        # (logged below) the intent is journalled: a retry finds the run
        except Exception as exc:  # noqa: BLE001
            outage.log_failure(
                log,
                exc,
                "could not journal check run %s; a retry finds it by its external_id",
                check_id,
            )
    return Opened(check_id)


def review_pull_request(
    gh: GitHubAPI,
    pr: PullRequest,
    delivery: str,
    regression: Regression | None = None,
    checks: Iterable[Check] | None = None,
    resume: tuple[str, int] | None = None,
    on_check_run: Callable[[str, int], None] | None = None,
    give_up_on_rate_limit: bool = False,
) -> str:
    """Review ``pr`` at its head and publish; returns the outcome. The check run always ends
    terminal, and is concluded once: a run an interrupted attempt concluded is left alone (the
    review and the summary, which are idempotent, are still published).

    ``resume``/``on_check_run``: see ``open_check``. When GitHub rate-limits the review for longer
    than a request may wait, ``RateLimited`` is raised (the check run says until when, if GitHub
    lets the bot say it) and the job is rescheduled at the reset; with ``give_up_on_rate_limit`` the
    check run is concluded "Could not finish" instead. When the review fails and the check run
    cannot be concluded, ``CheckRunOpen`` is raised so that the job runs again; a transient failure
    concludes the run "internal error" and the retry starts a new one (the journal forgets the
    concluded run). ``LeaseLost`` (another worker took the pull request over) passes through
    untouched: nothing more is written.
    """
    started = time.perf_counter()
    opened = open_check(gh, pr, delivery, resume, on_check_run)
    check_id = opened.id
    # once True, nothing in this attempt touches the check run's verdict
    concluded = opened.concluded
    try:
        # back to "Reviewing" (it may say it waits for a rate limit)
        if opened.resumed and not opened.concluded:
            gh.update_check_run(pr.repo, check_id, status="in_progress", output=REVIEWING)
        try:
            inputs = fetch(gh, pr)
        except ListingMoved as exc:  # as a head that moved: the run judged nothing
            log.warning("%s; not publishing", exc)
            if not opened.concluded:
                supersede_check(gh, pr.repo, check_id, pr.head_sha, listed_other=str(exc))
            return "superseded"
        delegation = OwnersStage(gh, inputs)
        report = review_inputs(inputs, regression, checks, [delegation])
        current = moved_on(gh, pr, delegation, check_id, opened.concluded)
        if isinstance(current, str):
            return current
        refusals = Refusals()
        # before the verdict: the App's stale approvals, and its auto-merge unless it approves this
        # head (any verdict, nothing to review included)
        owners = delegation.withdraw(refusals, current)
        report = report.with_sections(findings=stuck_auto_merge(refusals))
        if opened.concluded and not opened.stands_for(report):
            # an earlier attempt concluded another verdict (the configuration or a review changed
            # since): nothing is published nor acted on beside it; a new run carries this one
            log.warning(
                "check run %s concluded %s (%s), this review %s: concluding a new run",
                check_id,
                opened.conclusion,
                opened.title,
                report.verdict.value,
            )
            opened = open_check(gh, pr, delivery, None, on_check_run)
            check_id, concluded = opened.id, False
        output = None
        if not opened.concluded:
            output = complete_check(
                gh,
                pr.repo,
                check_id,
                report.with_sections(*refusals.sections()),
                sent=opened.annotations,
                gone=inputs.changes.gone(),
                base_sha=pr.base_sha,
            )
            concluded = True
        if inputs.touches_watched() or inputs.changes.truncated:
            # ``current``: as read after the review (a draft, its auto-merge), at the same head
            reviews, merge = act_for_owners(gh, current, inputs, owners, refusals)
            publish_beside(gh, pr, inputs, report, reviews, merge, refusals, check_id, output)
    except (LeaseLost, InstallationUnavailable):
        raise
    except RateLimited as exc:
        reset = datetime.fromtimestamp(exc.reset_at, UTC).strftime("%H:%M:%S UTC")
        log.warning("GitHub rate-limits the review until %s: %s", reset, exc)
        if concluded:
            raise
        if give_up_on_rate_limit:
            could_not_finish(
                gh,
                pr.repo,
                check_id,
                delivery,
                f"GitHub's API rate limit (resets at {reset})",
                retract_quietly(gh, pr),
            )
            return "could-not-finish"
        # a primary limit refuses this write too; a secondary may not
        with contextlib.suppress(GitHubError):
            pause_check(gh, pr.repo, check_id, exc.reset_at, secondary=exc.secondary)
        raise
    except Exception as exc:
        if outage.is_infrastructure(exc):  # the queue's store (the pacer, the lease): waited out
            raise
        if isinstance(exc, GitHubError) and exc.status == 401:
            raise  # the App's credentials refused: nothing can be written either (``Worker``)
        log.exception("review failed")
        metrics.FAILURES.labels(stage="review").inc()
        if not concluded:
            try:
                if is_refusal(exc):  # GitHub's "no" to what it needs: said as GitHub said it
                    could_not_finish(
                        gh,
                        pr.repo,
                        check_id,
                        delivery,
                        f"GitHub refused a request the review needs ({exc})",
                        retract_quietly(gh, pr),
                    )
                else:
                    fail_check(gh, pr.repo, check_id, delivery, exc, retract_quietly(gh, pr))
            except (RateLimited, LeaseLost, InstallationUnavailable):
                raise
            except Exception as again:
                if isinstance(again, GitHubError) and again.status == 401:
                    raise
                log.exception("could not conclude check run %s", check_id)
                raise CheckRunOpen(f"check run {check_id} could not be concluded: {again}") from exc
        if is_transient(exc):
            if on_check_run is not None and not concluded:
                # the retry starts a new run; this one stays concluded
                with contextlib.suppress(Exception):
                    on_check_run("", 0)
            raise  # the queue retries the job
        return "could-not-finish" if is_refusal(exc) else "error"
    finally:
        metrics.JOB_SECONDS.observe(time.perf_counter() - started)
    log.info("published %s", report.verdict.value)
    return report.verdict.value


def moved_on(
    gh: GitHubAPI, pr: PullRequest, owners: OwnersStage, check_id: int, concluded: bool
) -> PullRequest | str:
    """The pull request read again after the review, or, when what the review judged moved on, the
    job's outcome (nothing is published nor acted on; the run is concluded ``cancelled`` unless
    ``concluded``): the pull request closed or merged meanwhile ("closed"; reopening it reviews it
    again), its base branch changed (the ``edited`` delivery reviews it against the new base), its
    head moved, or, when the App is about to approve, the reviews that decided it changed (read
    again, only then)."""
    current = gh.get_pull_request(pr.repo, pr.number)
    if current.state != "open" or current.merged:
        log.info("the pull request was closed during the review; not publishing")
        if not concluded:
            close_check(gh, pr.repo, check_id)
        return "closed"
    if current.base_ref != pr.base_ref:
        log.info("base changed to %s during the review; not publishing", current.base_ref)
        if not concluded:
            supersede_check(
                gh, pr.repo, check_id, pr.head_sha, base=(pr.base_ref, current.base_ref)
            )
        return "superseded"
    if current.head_sha != pr.head_sha:
        log.info("head moved to %s during the review; not publishing", current.head_sha)
        if not concluded:
            supersede_check(gh, pr.repo, check_id, current.head_sha)
        return "superseded"
    reviewers = owners.reviews_changed()
    if reviewers:
        log.info("%s changed their review during the review; not publishing", ", ".join(reviewers))
        if not concluded:
            supersede_check(gh, pr.repo, check_id, pr.head_sha, reviewers=reviewers)
        return "superseded"
    return current


def stuck_auto_merge(refusals: Refusals) -> list[Finding]:
    """An error when GitHub refused to turn off the auto-merge the App enabled for an earlier
    commit: this head's owners did not approve it through the App, and a passing check would let
    that auto-merge merge it. Never a passing verdict while it stays on."""
    if not refusals.refused("disable auto-merge"):
        return []
    return [
        incomplete(
            "GitHub refused to let the bot turn off the auto-merge it enabled for an earlier "
            "commit, so this check fails: a passing check would let that auto-merge merge this "
            "commit, which its owners did not approve through the bot",
            hint="Turn off auto-merge on the pull request (or give the App the permission GitHub "
            "names in the run's text), then use Re-run.",
        )
    ]


def retract_quietly(gh: GitHubAPI, pr: PullRequest) -> str:
    """``retract`` (the App's stale approvals, its auto-merge) before a review that failed or could
    not finish concludes its check run, never in the way of concluding it: what GitHub refused, as
    Markdown for the run's text ("" when nothing); any other failure is logged. A failing required
    check holds GitHub's auto-merge back too, until a re-run passes."""
    refusals = Refusals()
    try:
        retract(gh, pr, refusals)
    except LeaseLost:
        raise
    # (logged) concluding the check run comes first
    except Exception as exc:  # noqa: BLE001
        log.warning("could not withdraw the App's approval or auto-merge: %s", exc)
    return refusals.markdown() if refusals else ""


def publish_beside(
    gh: GitHubAPI,
    pr: PullRequest,
    inputs: ReviewInputs,
    report: Report,
    reviews: tuple[ReviewInfo, ...],
    merge: tuple[Section, ...],
    refusals: Refusals,
    check_id: int,
    concluded: CheckRunOutput | None,
) -> None:
    """The review and the summary comment, after the check run concluded. GitHub refusing any of it
    (or the approval, dismissals and merge before it) is said once, in the summary, or when the
    summary comment is refused, in the concluded check run's text (``concluded``: its title and
    summary); the verdict stays."""
    refusals.attempt(
        "review",
        lambda: publish_review(gh, pr, report, inputs.changes, inputs.config, reviews, refusals),
    )
    summary = report.with_sections(*merge, *refusals.sections())
    if not refusals.done("comment", lambda: publish_summary(gh, pr, summary)):
        if concluded is not None:
            note_on_check(gh, pr.repo, check_id, concluded, refusals.markdown())
        else:  # a resumed run concluded by an earlier attempt: its text is not known here
            log.warning("GitHub refused the summary comment: %s", refusals.found[-1].message)


class Worker:
    """Handles one job: find the pull request, check who asked, review its current head."""

    def __init__(
        self,
        factory: GitHubClientFactory,
        resources: Resources | None = None,
        checks: Iterable[Check] | None = None,
        note_check_run: Callable[[Job, str, int], None] | None = None,
        max_deferrals: int = MAX_DEFERRALS,
        clock: Callable[[], float] = time.time,
        crashes: Callable[[Job], int] | None = None,
        job_budget: float = JOB_BUDGET,
        done: Callable[[str], bool] | None = None,
        superseded: Callable[[Job], bool] | None = None,
        forward: Callable[[Job], bool] | None = None,
    ) -> None:
        """``crashes(job)``: how many attempts at the job died with their process
        (``JobQueue.crashes``); ``job_budget``: seconds for one job, after which its review
        concludes failure with what it found; ``done(delivery)``: whether the queue finished that
        delivery (``JobQueue.is_done``); ``superseded(job)``: whether a newer delivery of the pull
        request came (``JobQueue.superseded``): such a job reaches the worker only when it opened a
        check run, and one on an older commit is concluded cancelled, not reviewed again;
        ``forward(job)``: enqueue a job (``JobQueue.accept``), for a job that names a head only (a
        fork's check suite), once its pull request is known."""
        self.crashes = crashes
        self.superseded = superseded
        self.forward = forward
        self.done = done
        self.job_budget = job_budget
        self.factory = factory
        self.note_check_run = note_check_run
        self.resources = resources or Resources()
        self.checks = tuple(checks) if checks is not None else None
        self.max_deferrals = max_deferrals
        self.clock = clock

    def handle(self, job: Job) -> str:
        """Review the job's pull request; raises ``JobDeferred`` when it must run again later
        (GitHub's rate limit until its reset; a check run left open, in ``OPEN_RETRY`` seconds)."""
        with log_context(
            delivery=job.delivery,
            event=job.event,
            repo=job.repo,
            pr=job.number or None,
            head_sha=job.head_sha,
        ):
            try:
                if job.not_before > self.clock():  # a redone dashboard waits for its time
                    raise JobDeferred(job.not_before, "runs no sooner")
                with budget.within(self.job_budget, "job"):
                    outcome = self._handle(job)
            except RateLimited as exc:
                metrics.JOBS.labels(outcome="deferred").inc()
                raise JobDeferred(exc.reset_at, f"GitHub rate limit: {exc}") from exc
            except CheckRunOpen as exc:
                metrics.JOBS.labels(outcome="deferred").inc()
                raise JobDeferred(self.clock() + OPEN_RETRY, str(exc)) from exc
            except InstallationUnavailable as exc:
                # nothing of the installation can be read or written: dropped, not retried
                log.warning("installation %d has no token (%s); job dropped", job.installation, exc)
                metrics.JOBS.labels(outcome="installation-unavailable").inc()
                return "installation-unavailable"
            except GitHubError as exc:
                if exc.status != 401:
                    raise
                # the client already minted a fresh token once: the App's own credentials are
                # refused, which no retry of this job cures; it waits for them to be fixed
                log.error(
                    "GitHub refuses the App's credentials (%s): check its App id and private key; "
                    "the job waits %.0f s",
                    exc,
                    CREDENTIALS_RETRY,
                )
                metrics.JOBS.labels(outcome="deferred").inc()
                raise JobDeferred(
                    self.clock() + CREDENTIALS_RETRY, f"the App's credentials refused: {exc}"
                ) from exc
            metrics.JOBS.labels(outcome=outcome).inc()
            log.info("job done: %s", outcome)
            return outcome

    def give_up(self, job: Job) -> None:
        """Conclude the run a job the queue gave up on left open (GitHub failing at each of its
        retries), "could not finish", with Re-run: never left in progress. Only where nothing else
        comes back to it (``main``: with reconciliation off; a round resumes such a run and
        concludes it with a verdict). A dashboard job is redone (``redo_dashboard``)."""
        if job.event == "push":
            self.redo_dashboard(job)
            return
        if not job.check_run_id:
            return
        gh = self.factory.for_installation(job.installation)
        runs = gh.list_check_runs(job.repo, job.check_run_sha or job.head_sha, CHECK_NAME)
        if not any(r.id == job.check_run_id and r.status != "completed" for r in runs):
            return
        note = ""
        if job.number:
            with contextlib.suppress(GitHubError):
                note = retract_quietly(gh, gh.get_pull_request(job.repo, job.number))
        could_not_finish(
            gh,
            job.repo,
            job.check_run_id,
            job.delivery,
            "the review failed at each of its retries (GitHub or the bot failing)",
            note,
        )
        log.warning(
            "delivery %s given up: its check run %d concluded", job.delivery, job.check_run_id
        )

    def redo_dashboard(self, job: Job, why: str = "given up") -> None:
        """A dashboard job the queue gave up (GitHub failing at each of its retries), or one that
        found the default branch moved at every read (``dashboard-stale``): the issue would describe
        an older commit until the next merge if the newest push's job were lost. One more job for
        the branch is enqueued, to run ``DASHBOARD_REDO_AFTER`` seconds later (it describes the
        head, as any push job); a redone job that is given up or stale too is not redone again.
        Other jobs: nothing."""
        if job.event != "push" or self.forward is None:
            return
        if job.delivery.endswith(DASHBOARD_REDO):
            log.error("delivery %s: the dashboard was redone and %s again", job.delivery, why)
            return
        redo = replace(
            job,
            delivery=job.delivery + DASHBOARD_REDO,
            deferrals=0,
            not_before=self.clock() + DASHBOARD_REDO_AFTER,
        )
        if self.forward(redo):
            log.warning(
                "delivery %s %s: the dashboard is redone at %s",
                job.delivery,
                why,
                datetime.fromtimestamp(redo.not_before, UTC).strftime("%H:%M:%S UTC"),
            )

    def _handle(self, job: Job) -> str:
        gh: GitHubAPI = CountingGitHub(self.factory.for_installation(job.installation))
        fence = leases.current()
        if fence is not None:
            gh = FencedGitHub(gh, fence)
        if job.event == "push":  # the default branch moved: the dashboard issue, no review
            if job.action == OWNERS_CHANGED:
                self._review_open_pull_requests(gh, job)
            outcome = dashboard_issue.refresh(
                gh,
                job.repo,
                job.head_sha,
                datetime.fromtimestamp(self.clock(), UTC).date(),
                self.checks,
            )
            if outcome == "dashboard-stale":  # the newest push's job may be lost: not left to it
                self.redo_dashboard(job, "found the default branch moved at every read")
            return outcome
        number = job.number
        if not number:
            numbers = pull_requests_of(gh, job.repo, job.head_sha)
            if not numbers:
                return "no-pull-request"
            number = numbers[0]
            if self.forward is not None:
                # GitHub names no pull request in a fork's check suite: the job was keyed by its
                # head and would run beside that pull request's own jobs. It runs again keyed by the
                # pull request, under its lease, one at a time with them, as the newest request
                self.forward(replace(job, delivery=f"{job.delivery}.pr{number}", number=number))
                return "forwarded"
        if job.command:  # a proposal from anyone: one reply, no review, no state changed
            return self._propose(gh, job, number)
        if job.requester:
            permission = gh.get_permission(job.repo, job.requester)
            if permission not in WRITE_PERMISSIONS:
                log.info("recheck by %s refused: permission %s", job.requester, permission)
                return "refused"
        pr = gh.get_pull_request(job.repo, number)
        resume = (job.check_run_sha, job.check_run_id) if job.check_run_sha else None
        if pr.state != "open":
            if resume:  # an attempt opened its run: it does not stay in progress
                _, known, found = journalled_run(gh, pr, job.delivery, resume)
                if known and (found is None or found.status != "completed"):
                    close_check(gh, pr.repo, known)
            return "closed"
        if resume and resume[0] != pr.head_sha and self.superseded and self.superseded(job):
            # the newer delivery reviews the head: only this job's run is concluded
            resumed_check(gh, pr, job.delivery, resume)
            return "superseded"
        if self._reviewed_by_the_other_path(gh, job, pr):
            return "already-concluded"
        with log_context(pr=pr.number, head_sha=pr.head_sha):
            note = self.note_check_run
            on_check_run = (lambda sha, check_id: note(job, sha, check_id)) if note else None
            crashes = self.crashes(job) if self.crashes else 0
            if crashes >= MAX_CRASHES:  # a poison pill: never run it again, conclude it
                log.error(
                    "delivery %s killed its worker process %d times; concluded",
                    job.delivery,
                    crashes,
                )
                opened = open_check(gh, pr, job.delivery, resume, on_check_run)
                if opened.concluded:  # an earlier attempt concluded it before dying
                    return "could-not-finish"
                could_not_finish(
                    gh,
                    pr.repo,
                    opened.id,
                    job.delivery,
                    f"the review stopped the process running it {crashes} times (killed, for "
                    "example for running out of memory); it is not tried again",
                    retract_quietly(gh, pr),
                )
                return "could-not-finish"
            return review_pull_request(
                gh,
                pr,
                job.delivery,
                self._regression(),
                self.checks,
                resume,
                on_check_run,
                give_up_on_rate_limit=job.deferrals >= self.max_deferrals,
            )

    def _review_open_pull_requests(self, gh: GitHubAPI, job: Job) -> None:
        """A push changed a CODEOWNERS file or the bot's configuration: every open pull request is
        reviewed again (one job each), so that an approval the App gave on the owners or the
        configuration as they were is withdrawn when they no longer hold. Nothing else would come
        back to those pull requests: their base does not move. The jobs are named after the push's
        delivery (its redone job's too), so a retried job enqueues none twice."""
        if self.forward is None:
            return
        origin = job.delivery.removesuffix(DASHBOARD_REDO)
        for number, *_ in gh.list_open_pull_requests(job.repo):
            self.forward(
                Job(
                    f"{origin}.pr{number}",
                    "pull_request",
                    OWNERS_CHANGED,
                    job.installation,
                    job.repo,
                    number,
                )
            )

    def _propose(self, gh: GitHubAPI, job: Job, number: int) -> str:
        """Answer a waive command with one reply comment, marked with the delivery: a job run again
        after GitHub took the reply (its process died after the POST, the queue's Redis stalled)
        finds the App's comment with that marker and posts nothing."""
        marker = waiver_proposal.reply_marker(job.delivery)
        me = gh.bot_login()
        if any(c.user == me and marker in c.body for c in gh.list_issue_comments(job.repo, number)):
            log.info("the waive command was answered by an earlier attempt; not again")
            return "proposed"
        pr = gh.get_pull_request(job.repo, number)
        day = datetime.fromtimestamp(self.clock(), UTC).date()
        body = waiver_proposal.reply(gh, pr, job.command, job.requester, day)
        refusals = Refusals()
        if not refusals.done(
            "reply", lambda: gh.create_issue_comment(job.repo, number, f"{marker}\n{body}")
        ):  # GitHub's "no" (a locked conversation): a retry changes nothing; said in the log
            log.warning("the waive reply was refused: %s", refusals.found[0].line())
            return "proposal-refused"
        return "proposed"

    def _reviewed_by_the_other_path(self, gh: GitHubAPI, job: Job, pr: PullRequest) -> bool:
        """Whether a reconciliation and a delivery both owe this head a review and the other one
        concluded it.

        A reconciliation round enqueues a head with no verdict; the delivery it stands in for may
        still arrive (the web was restarting, GitHub was slow), before or after the round's job
        runs. The later of the two is not reviewed again: a round's job skips a head whose newest
        run is a verdict of the App against the base now (``reconcile.stands_for``); a delivery
        that opened the pull request (``reports_only_its_head``) skips a head whose run the round's
        job concluded (its ``external_id``), looked up on GitHub only when the queue has that job
        done. Any other delivery (a push, which may bring a head back; a review submitted, edited
        or dismissed, a base changed, a pull request reopened or ready for review; a re-run, a
        recheck) is reviewed again: what it reports may have happened after the round's review."""
        if job.check_run_id or job.rerun or job.requester:
            return False
        if job.action == reconcile.ACTION:
            newest = reconcile.newest_run(gh.list_check_runs(pr.repo, pr.head_sha, CHECK_NAME))
            done = (
                [newest] if newest is not None and reconcile.stands_for(newest, pr.base_sha) else []
            )
        else:
            owed = reconcile.delivery_of(pr.repo, pr.number, pr.head_sha)
            if not reports_only_its_head(job) or self.done is None or not self.done(owed):
                return False
            done = [
                r
                for r in gh.list_check_runs(pr.repo, pr.head_sha, CHECK_NAME)
                if r.status == "completed" and r.external_id == owed
            ]
        if done:
            log.info(
                "head %s has the App's verdict by now (check run %d); not reviewed again",
                pr.head_sha[:12],
                done[0].id,
            )
        return bool(done)

    def _regression(self) -> Regression | None:
        """The warm regression, built on first use inside the review (so a start-up failure is
        reported)."""
        if not self.resources.enabled:
            return None

        def run(*args: Any) -> Any:
            regression = self.resources.regression()
            return regression(*args) if regression is not None else (None, [])

        return run


def pull_requests_of(gh: GitHubAPI, repo: str, head_sha: str) -> list[int]:
    """The open pull requests whose head is ``head_sha``: GitHub's ``commits/{sha}/pulls``, else
    the open pull requests matched by their head. A fork's check suite names none, and the
    commit's list is empty for a fork's head (public clients' reports): without the second, a
    fork's **Re-run** did nothing."""
    numbers = gh.list_open_pull_requests_for_sha(repo, head_sha)
    if numbers:
        return numbers
    return [number for number, sha, _base in gh.list_open_pull_requests(repo) if sha == head_sha]


def give_up_hook(worker: Worker, reconciling: bool) -> Callable[[Job], None]:
    """What the queue calls for a job it gives up: a dashboard job is redone once, later; a
    review's open run is left to the next reconciliation round (which resumes it and gives a
    verdict), and without rounds the worker concludes it (``Worker.give_up``)."""
    return worker.redo_dashboard if reconciling else worker.give_up


def reports_only_its_head(job: Job) -> bool:
    """Whether ``job``'s delivery reports nothing but its head: a pull request opened
    (``HEAD_ACTIONS``). The head came with the pull request, before a round could list it, so the
    round's review of the head saw all the delivery says. A push (``synchronize``) is not: a
    force-push back to a head a round reviewed days ago brings it again, after a push in between
    dismissed the App's approval or with the base moved, and a late delivery of the push the round
    stood in for is not told apart from it; nor is a review event, new or the redelivery of one the
    round's review saw (a run does not record the approvals it judged). Both are reviewed again,
    at the cost of one more run at most."""
    return job.event == "pull_request" and job.action in HEAD_ACTIONS


def regression_stage(
    module: str = REGRESSION_MODULE, master: str | None = None
) -> Callable[[], Regression]:
    """A factory of the regression stage: ``importlib.import_module(module).review_stage()`` (given
    the Spark ``master`` when there is one), imported only when first called, so a missing module
    (or pyspark) fails that review's regression section, not start-up."""

    def build() -> Regression:
        import importlib

        factory = importlib.import_module(module).review_stage
        stage: Regression = factory(master=master) if master else factory()
        log.info("regression stage %s ready", module)
        return stage

    return build


def load_checks(spec: str) -> tuple[Check, ...]:
    """The tuple of checks named ``module:NAME`` (``NAME`` defaults to ``CHECKS``)."""
    import importlib

    module, _, name = spec.partition(":")
    return tuple(getattr(importlib.import_module(module), name or "CHECKS"))


def main(argv: list[str] | None = None) -> int:
    """Run the worker: recover interrupted jobs, then consume the queue until SIGINT/SIGTERM."""
    import argparse
    import sys

    from bot.github.client import AppClientFactory, RetryPolicy
    from bot.service.logs import setup_json_logging
    from bot.service.settings import Settings, SettingsError

    parser = argparse.ArgumentParser(prog="python -m bot.service.worker", description=main.__doc__)
    parser.add_argument("--threads", type=int, default=2, help="jobs run at once (default 2)")
    parser.add_argument(
        "--checks",
        metavar="MODULE:NAME",
        help="run this tuple of checks instead of bot.review.checks.CHECKS (organisation rules, "
        "tests)",
    )
    parser.add_argument(
        "--regression",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the PySpark regression (bot.review.regression, one warm SparkSession built on "
        "the first review); a failure to start it makes that review's regression section neutral",
    )
    parser.add_argument(
        "--spark-master",
        metavar="URL",
        help="the regression's Spark master (default local[*]); on a cluster the code is shipped "
        "to the executors and the configured event locations must be storage the cluster shares",
    )
    parser.add_argument(
        "--regression-module",
        default=REGRESSION_MODULE,
        metavar="MODULE",
        help="the module whose review_stage class is the regression (tests: tests.fakes)",
    )
    parser.add_argument(
        "--write-pause",
        type=float,
        default=1.0,
        help="seconds between GitHub writes (GitHub asks for 1 s; 0 against a stand-in)",
    )
    parser.add_argument(
        "--job-budget",
        type=float,
        default=JOB_BUDGET,
        metavar="SECONDS",
        help=f"seconds for one job (default {JOB_BUDGET:g}); past them its review stops and "
        f"concludes "
        "failure with what it found (each review also has review.time_budget_seconds)",
    )
    parser.add_argument(
        "--poll", type=float, default=0.1, help="longest wait between queue polls, seconds"
    )
    parser.add_argument(
        "--sweep-every",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how often interrupted jobs are looked for and re-enqueued (default 10: with the "
        "lease's 30 s, a dead worker's job runs again within 40 s)",
    )
    parser.add_argument(
        "--sweep-age",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a job no worker started is re-enqueued by the sweep only this long after it was "
        "accepted (default 60)",
    )
    parser.add_argument(
        "--github-max-wait",
        type=float,
        default=RetryPolicy.max_wait,
        metavar="SECONDS",
        help="longest a request waits out GitHub's rate limit or errors (default 180); a longer "
        "rate limit reschedules the job at its reset",
    )
    parser.add_argument(
        "--lease-ttl",
        type=float,
        default=DEFAULT_TTL,
        metavar="SECONDS",
        help="a pull request's lease, renewed every third of it while its job runs: a dead "
        "worker's pull request is taken over this long after it stopped (default 30)",
    )
    parser.add_argument(
        "--reconcile-every",
        type=float,
        metavar="SECONDS",
        default=float(os.environ.get("BOT_RECONCILE_EVERY") or reconcile.DEFAULT_EVERY),
        help="how often GitHub's open pull requests are compared with the queue and the reviews "
        "the App owes enqueued, at start-up too (default $BOT_RECONCILE_EVERY or 300; 0: never)",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("WORKER_METRICS_PORT", "0") or 0),
        metavar="PORT",
        help="serve the worker's Prometheus metrics on this port (default "
        "$WORKER_METRICS_PORT; 0: none)",
    )
    args = parser.parse_args(argv)
    setup_json_logging()
    for handler in logging.getLogger().handlers:  # huey's consumer threads log Redis tracebacks
        handler.addFilter(outage.QuietTracebacks())
    try:
        settings = Settings.from_env(need_webhook=False)
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2

    queue = JobQueue.from_url(
        settings.queue_url, lease_ttl=args.lease_ttl, max_hold=2 * args.job_budget
    )
    factory = AppClientFactory(
        settings.app_id,
        settings.private_key,
        settings.api_url,
        policy=RetryPolicy(max_wait=args.github_max_wait),
        seconds_between_writes=args.write_pause,
        pacers=shared_pacers(queue, args.write_pause, args.github_max_wait),
    )
    if args.metrics_port:
        metrics.serve_worker(args.metrics_port)
    checks = load_checks(args.checks) if args.checks else None
    resources = Resources(
        regression_stage(args.regression_module, args.spark_master) if args.regression else None
    )
    worker = Worker(
        factory,
        resources,
        checks=checks,
        note_check_run=queue.note_check_run,
        crashes=queue.crashes,
        job_budget=args.job_budget,
        done=queue.is_done,
        superseded=queue.superseded,
        forward=queue.accept,
    )
    queue.set_handler(worker.handle, give_up_hook(worker, reconciling=args.reconcile_every > 0))
    registry = (
        schema.Registry(queue.redis(), queue.huey.storage.name, queue.owner)
        if queue.redis()
        else None
    )
    try:
        if registry is not None:
            # refuses to run beside workers of another schema version
            outage.REDIS.wait_for(registry.join)
    except schema.Incompatible as exc:
        log.error("this worker (schema version %d) does not start: %s", schema.SCHEMA_VERSION, exc)
        return 3
    outage.REDIS.wait_for(queue.recover)  # a worker started while its Redis is down waits for it
    # the old layout is migrated: from now on, one is written only by an older worker
    queue.legacy_done = 0
    health.beat()
    threading.Thread(
        target=sweep_forever,
        args=(queue, args.sweep_every, args.sweep_age, registry.beat if registry else None),
        name="sweep",
        daemon=True,
    ).start()
    if args.reconcile_every > 0:
        claim = lambda: reconcile.claim_round(queue.redis(), queue.huey.name, args.reconcile_every)  # noqa: E731
        threading.Thread(
            target=reconcile.reconcile_forever,
            args=(factory, queue, claim, args.reconcile_every),
            name="reconcile",
            daemon=True,
        ).start()
    consumer = queue.huey.create_consumer(
        workers=args.threads,
        worker_type="thread",
        periodic=False,
        initial_delay=0.02,
        backoff=1.5,
        max_delay=args.poll,
        scheduler_interval=1,
    )
    consumer.run()
    if registry is not None:
        with contextlib.suppress(Exception):
            registry.leave()
    return 0


def shared_pacers(queue: JobQueue, pause: float, max_wait: float) -> Callable[[int], Pacer] | None:
    """On Redis, every worker paces an installation's requests together (``RedisPacer``); on SQLite
    (one host, one worker process) the client's own per-process pacer is enough."""
    redis = queue.redis()
    if redis is None:
        return None
    return lambda installation: RedisPacer(redis, installation, pause, max_wait=max_wait)


def sweep_forever(
    queue: JobQueue, every: float, min_age: float, beat: Callable[[], None] | None = None
) -> None:
    """Every ``every`` seconds: write what the queue failed to write, re-enqueue jobs a dead process
    lost, renew this worker's registration (``beat``)."""
    while True:
        time.sleep(every)
        try:
            if beat is not None:
                beat()
            queue.recover(min_age=min_age)
        except Exception as exc:
            if outage.is_infrastructure(exc):
                outage.REDIS.failed(exc)
            else:
                log.exception("the sweep failed; trying again in %.0f s", every)
        else:
            outage.REDIS.succeeded()
            if queue.legacy_done:
                log.error(
                    "a worker of an older release writes to this queue (%d finished job(s) in the "
                    "old layout): stop it (docs/app.md, Upgrades)",
                    queue.legacy_done,
                )
                health.problem("a worker of an older release writes to this queue")
                queue.legacy_done = 0
            health.beat()


if __name__ == "__main__":
    raise SystemExit(main())
