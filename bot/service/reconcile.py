"""Reconcile with GitHub: GitHub, not the queue, says which pull requests still need a verdict.

More in docs/module-notes.md (bot/service/reconcile.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from bot.github.api import CheckRunInfo, GitHubError
from bot.github.events import Job
from bot.github.publish import CHECK_NAME
from bot.service import outage

log = logging.getLogger(__name__)
DEFAULT_EVERY = 300.0
ACTION = "reconcile"  # the action of the jobs a round enqueues (``Job.action``)


class InstallationReads(Protocol):
    def list_installation_repositories(self) -> list[str]: ...

    def list_open_pull_requests(self, repo: str) -> list[tuple[int, str, str]]: ...

    def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunInfo]: ...


class AppReads(Protocol):
    def list_installations(self) -> list[int]: ...

    def list_hook_deliveries(self, since: float, max_pages: int = 10) -> list[dict[str, Any]]: ...

    def redeliver(self, delivery_id: int) -> None: ...

    def for_installation(self, installation_id: int) -> Any: ...


class Journal(Protocol):
    def open_pull_requests(self) -> set[str]: ...

    def accept(self, job: Job) -> bool: ...


def delivery_of(repo: str, number: int, head_sha: str, base_sha: str = "") -> str:
    """The delivery id of the reconciliation job for one head against one base (also the
    ``external_id`` of the run it creates): a head owed a review again once its pull request's base
    moved is a new job, not a redelivery of the first one."""
    return f"reconcile:{repo}#{number}@{head_sha}" + (f"~{base_sha[:12]}" if base_sha else "")


def is_verdict(run: CheckRunInfo) -> bool:
    """Whether ``run`` concluded a review of its commit: a run concluded ``cancelled`` was
    superseded by a newer push before its review ended, and judged nothing (a commit that is the
    head again after a force-push still owes its review)."""
    return run.status == "completed" and run.conclusion != "cancelled"


def stands_for(run: CheckRunInfo | None, base_sha: str) -> bool:
    """Whether ``run`` (the newest of a head) is a verdict on the head against the pull request's
    base ``base_sha``. A verdict that names another base (``CheckRunInfo.base_sha``) judged the
    head before the base moved (a force-push back to a head reviewed before, whose delivery was
    lost): the owners, entries and rules of the base it judged are not the base's now. A verdict
    that names none (written before bases were recorded) is taken as it stands."""
    return (
        run is not None
        and is_verdict(run)
        and (not run.base_sha or not base_sha or run.base_sha == base_sha)
    )


def newest_run(runs: Iterable[CheckRunInfo]) -> CheckRunInfo | None:
    """The run GitHub shows for a commit among ``runs`` of one name: the newest (ids grow)."""
    return max(runs, key=lambda r: r.id, default=None)


def unreviewed(gh: InstallationReads, installation: int, repo: str) -> Iterator[Job]:
    """A job for each open pull request of ``repo`` whose head's newest run of the App is not a
    verdict against its base now (``stands_for``): none, one left open (resumed), one cancelled, or
    a verdict on another base. GitHub shows the newest run of a name, so an older verdict does not
    stand for a newer run that a re-run or a review event opened and its job never concluded (given
    up, or lost with Redis's data)."""
    for number, head_sha, base_sha in gh.list_open_pull_requests(repo):
        newest = newest_run(gh.list_check_runs(repo, head_sha, CHECK_NAME))
        if stands_for(newest, base_sha):
            continue
        left = newest.id if newest is not None and newest.status != "completed" else 0
        moved = newest is not None and is_verdict(newest)  # a verdict on another base
        yield Job(
            delivery_of(repo, number, head_sha, base_sha if moved else ""),
            "pull_request",
            ACTION,
            installation,
            repo,
            number,
            head_sha,
            check_run_id=left,
            check_run_sha=head_sha if left else "",
        )


def reconcile(app: AppReads, journal: Journal) -> int:
    """Enqueue the reviews GitHub still waits for; returns how many. An installation or a repository
    GitHub fails to list (suspended, uninstalled meanwhile, a 5xx) is skipped: the others are
    reconciled, and the next round tries it again."""
    busy = journal.open_pull_requests()
    count = 0
    for installation in app.list_installations():
        gh = app.for_installation(installation)
        try:
            repos = gh.list_installation_repositories()
        except GitHubError as exc:
            log.warning(
                "reconcile: could not list installation %d (%s); next round", installation, exc
            )
            continue
        for repo in repos:
            try:
                jobs = list(unreviewed(gh, installation, repo))
            except GitHubError as exc:
                log.warning("reconcile: could not list %s (%s); next round", repo, exc)
                continue
            for job in jobs:
                if job.pr_key in busy or not journal.accept(job):
                    continue
                count += 1
                log.warning(
                    "reconcile: %s has no verdict from the App on %s%s; review enqueued",
                    job.pr_key,
                    job.head_sha[:12],
                    f" (check run {job.check_run_id} left open)" if job.check_run_id else "",
                )
    return count


# seconds of deliveries a worker's first round looks at (GitHub keeps 3 days)
LOOKBACK = 24 * 3600.0
# seconds each later round looks back before the previous one (deliveries still in flight)
MARGIN = 120.0
# seconds before a delivery whose redelivery was not taken either is asked for again
ASK_AGAIN = 600.0


class Redeliveries:
    """Asks GitHub again for the deliveries the web did not take (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._since = clock() - LOOKBACK
        self._asked: dict[str, float] = {}  # guid -> when this process asked GitHub to redeliver it

    def round(self, app: AppReads) -> int:
        started = self._clock()
        attempts = app.list_hook_deliveries(self._since)
        taken = {a["guid"] for a in attempts if 200 <= int(a.get("status_code") or 0) < 300}
        latest: dict[str, dict[str, Any]] = {}
        # newest first: the first one seen of a delivery is its latest attempt
        for attempt in attempts:
            latest.setdefault(attempt["guid"], attempt)
        count = 0
        for guid, attempt in latest.items():
            if guid in taken or started - self._asked.get(guid, -ASK_AGAIN) < ASK_AGAIN:
                continue
            app.redeliver(int(attempt["id"]))
            self._asked[guid] = started
            count += 1
            log.warning(
                "reconcile: delivery %s (%s) was not taken (%s %s); GitHub asked to redeliver it",
                guid,
                attempt.get("event"),
                attempt.get("status_code"),
                attempt.get("status"),
            )
        self._since = min(started - MARGIN, min(self._asked.values(), default=started) - MARGIN)
        self._asked = {
            g: t for g, t in self._asked.items() if g not in taken and started - t < LOOKBACK
        }
        return count


def claim_round(redis: Any, name: str, every: float) -> bool:
    """Whether this worker does this round: on Redis one worker of the fleet per ``every``
    seconds."""
    if redis is None:
        return True
    return bool(
        redis.set(
            f"registry-bot:{name}:reconcile", "1", nx=True, px=int(max(every - 1.0, 1.0) * 1000)
        )
    )


def reconcile_forever(
    app: AppReads,
    journal: Journal,
    claim: Callable[[], bool],
    every: float,
    sleep: Callable[[float], None] = time.sleep,
    stop: threading.Event | None = None,
) -> None:
    """A round at once (start-up), then every ``every`` seconds; failures are logged and retried
    next round."""
    redeliveries = Redeliveries()
    while stop is None or not stop.is_set():
        try:
            if claim():
                redeliveries.round(app)
                reconcile(app, journal)
        except Exception as exc:
            if outage.is_infrastructure(exc):
                outage.REDIS.failed(exc)
            else:
                log.warning("reconcile round failed: %s; next in %.0f s", exc, every, exc_info=True)
        sleep(every)
