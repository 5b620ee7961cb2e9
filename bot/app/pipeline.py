"""Fetch what a review needs through ``GitHubAPI``, run the engine, and (optionally) the regression.

Only the paths the checks read are fetched: the configured folders plus the CODEOWNERS files and
the bot's config. The config comes from the default branch, never from the pull request's head.
The approvers are the logins whose latest review approves, plus the ``org/team`` owners of the
change that the author or an approver is an active member of (``bot.app.teams``).
"""

from __future__ import annotations

import concurrent.futures
import logging
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bot import budget
from bot.app.github_api import ChangedFile, GitHubAPI, PullRequest, ReviewInfo
from bot.app.lazy_snapshot import TreeSnapshot, raise_read_failure
from bot.app.teams import TeamMembership, owning_teams, resolve
from bot.app.tree_diff import tree_changes
from bot.changes import ChangeSet, FileChange, Status, diff_lines
from bot.config import CONFIG_PATHS, Config, load_config
from bot.engine import Check, ReviewContext, review
from bot.findings import Finding, Report, Section, Verdict
from bot.incomplete import REGRESSION_UNFINISHED, incomplete
from bot.render.markdown import escape
from bot.snapshot import MemorySnapshot, Snapshot

log = logging.getLogger(__name__)

EXTRA_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", *CONFIG_PATHS)
Regression = Callable[[Snapshot, Snapshot, ChangeSet, Config], tuple[Section | None, list[Finding]]]
_STATUS = {"added": Status.ADDED, "removed": Status.DELETED, "renamed": Status.RENAMED, "copied": Status.ADDED}


def to_changeset(files: Iterable[ChangedFile], truncated: bool = False) -> ChangeSet:
    """GitHub's pull request files as a ``ChangeSet`` (diff lines from each ``patch``)."""
    return ChangeSet(files=tuple(
        FileChange(f.path, _STATUS.get(f.status, Status.MODIFIED), old_path=f.previous_path,
                   lines=diff_lines(f.patch), patch_missing=f.patch is None and f.status != "removed",
                   patch=f.patch)
        for f in files), truncated=truncated)


def approvers(reviews: Iterable[ReviewInfo]) -> frozenset[str]:
    """Users whose latest deciding review is an approval (a later plain comment does not revoke it)."""
    latest: dict[str, str] = {}
    for r in reviews:
        if r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[r.user] = r.state
    return frozenset(user for user, state in latest.items() if state == "APPROVED")


@dataclass(frozen=True)
class ReviewInputs:
    pr: PullRequest
    base: Snapshot
    head: Snapshot
    changes: ChangeSet
    config: Config
    config_findings: tuple[Finding, ...]
    approvers: frozenset[str]  # logins and the org/team slugs they (or the author) stand for
    teams: TeamMembership = field(default_factory=TeamMembership)
    reviews: tuple[ReviewInfo, ...] = ()  # the pull request's reviews when fetched (the publisher reuses them)
    from_trees: bool = False  # more files than GitHub lists: the change is the diff of the two trees

    def touches_watched(self) -> bool:
        """Whether the change touches what the bot reviews: the configured folders, the CODEOWNERS files
        and the bot's configuration (ownership and steering files are reviewed files too)."""
        return any(self.changes.touches(folder) or self.changes.get(folder) is not None
                   for folder in (*self.config.watched(), *EXTRA_PATHS))


def load_default_config(gh: GitHubAPI, pr: PullRequest) -> tuple[Config, list[Finding]]:
    files = gh.read_files(pr.repo, pr.default_branch, CONFIG_PATHS)
    return load_config(MemorySnapshot(files, label=pr.default_branch))


def read_snapshots(gh: GitHubAPI, pr: PullRequest, wanted: tuple[str, ...]) -> tuple[TreeSnapshot, TreeSnapshot]:
    """Base and head under ``wanted``: one tree listing each, files downloaded when a check reads them."""
    return (TreeSnapshot(gh.read_tree(pr.repo, pr.base_sha, wanted), label=f"base {pr.base_sha[:12]}"),
            TreeSnapshot(gh.read_tree(pr.repo, pr.head_sha, wanted), label=f"head {pr.head_sha[:12]}"))


def fetch(gh: GitHubAPI, pr: PullRequest) -> ReviewInputs:
    """Everything one review reads, fetched through ``gh``."""
    config, config_findings = load_default_config(gh, pr)
    files, truncated = gh.list_pull_request_files(pr.repo, pr.number)
    base, head = read_snapshots(gh, pr, (*config.watched(), *EXTRA_PATHS))
    if truncated:  # past GitHub's listing limit the listing is not the change: the two whole trees are
        changes = tree_changes(*read_snapshots(gh, pr, ("",)))
    else:  # every listed path the review cannot read as a file is marked (``ChangeSet.complete``)
        changes = to_changeset(files).with_unread(base.skipped, head.skipped)
    reviews = tuple(gh.list_reviews(pr.repo, pr.number))
    me = gh.bot_login()
    logins = approvers(r for r in reviews if r.user != me)  # the App's own approval stands for no one
    teams = resolve(gh, owning_teams(base, head, changes, config), (pr.author, *sorted(logins)))
    return ReviewInputs(pr, base, head, changes, config, tuple(config_findings), logins | teams.approving, teams,
                        reviews, from_trees=truncated)


def run_regression(regression: Regression, inputs: ReviewInputs) -> tuple[Section, list[Finding]]:
    """Run the regression within its time budget (and what is left of the review's); one that does not
    finish, fails or cannot start is a blocking finding on the files it was validating (``unfinished``)."""
    seconds = inputs.config.regression.time_budget_seconds
    left = budget.left()
    if left is not None and left < seconds:
        seconds = max(left, 0.0)
    if seconds <= 0:
        return _unfinished(inputs, "the review's time budget was spent before the regression could start")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="regression")
    future = pool.submit(regression, inputs.base, inputs.head, inputs.changes, inputs.config)
    try:
        section, findings = future.result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        log.warning("regression exceeded its %ss budget", seconds)
        return _unfinished(inputs, f"the regression did not finish within its {seconds:g} s budget")
    except Exception as exc:
        log.exception("regression failed")
        return _unfinished(inputs, f"the regression could not run: {traceback.format_exception_only(exc)[-1].strip()}")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if section is None:
        return Section("Regression", "", verdict=None), list(findings)
    if section.verdict is Verdict.NEUTRAL:  # the stage's own "did not run" (Spark down, its budget, a bad input)
        reason = str(section.data.get("skipped") or "the regression did not run")
        return _unfinished(inputs, f"the regression did not finish: {reason}", section)
    return section, list(findings)


MAX_UNFINISHED = 20  # files named one finding each; the rest in one finding on the repository


def _unfinished(inputs: ReviewInputs, reason: str, section: Section | None = None) -> tuple[Section, list[Finding]]:
    """The regression's "did not finish": an error on each changed facet schema and sample event it was
    validating (what can have caused it), or on the repository when the change holds none."""
    suspects = [f.path for f in inputs.changes.files if f.status is not Status.DELETED
                and f.path.endswith((".json", ".jsonl", ".ndjson"))
                and any(f.path.startswith(folder.strip("/") + "/") for folder in inputs.config.watched())
                and f.path.rsplit("/", 1)[-1] not in ("registry.json",)]
    findings = [incomplete(f"{reason}; this file changed and the regression could not show it breaks nothing",
                           path, rule=REGRESSION_UNFINISHED) for path in suspects[:MAX_UNFINISHED]]
    if not findings or len(suspects) > MAX_UNFINISHED:
        findings.append(incomplete(reason, rule=REGRESSION_UNFINISHED))
    shown = section or Section("Regression", "")
    text = f"The regression did not finish: {escape(reason)}. The review fails until it does.\n"
    return Section(shown.title, text + ("\n" + shown.markdown if shown.markdown else ""), shown.data), findings


def with_site_preview(report: Report, inputs: ReviewInputs) -> Report:
    """The report plus what the change does to the published site (``bot.site.preview``), as its last
    section; a failure only leaves the section out."""
    from bot.site.preview import preview

    try:
        section = preview(inputs.base, inputs.head, inputs.config, inputs.changes)
    except Exception:
        log.exception("site preview failed")
        return report
    return report.with_sections(section) if section else report


def review_inputs(inputs: ReviewInputs, regression: Regression | None = None,
                  checks: Iterable[Check] | None = None) -> Report:
    """The report for fetched inputs (a neutral one when nothing the bot reviews changed), within the
    review's time budget: all checks, the regression and the site preview."""
    with budget.within(inputs.config.review.time_budget_seconds):
        return _review_inputs(inputs, regression, checks)


def _review_inputs(inputs: ReviewInputs, regression: Regression | None, checks: Iterable[Check] | None) -> Report:
    if not inputs.touches_watched() and not inputs.changes.truncated:
        return Report.build((), neutral_reason="This pull request changes none of the registry's files: "
                            "nothing to review.")
    report = review(head=inputs.head, base=inputs.base, changes=inputs.changes,
                    context=ReviewContext(author=inputs.pr.author, approvers=inputs.approvers),
                    config=inputs.config, checks=checks)
    raise_read_failure(inputs.base, inputs.head)  # a file GitHub failed to send: no verdict without it
    notes = [note for note in (inputs.teams.section(), _trees_note(inputs)) if note is not None]
    report = report.with_sections(*notes, findings=inputs.config_findings)
    if regression is None or not inputs.config.regression.enabled:
        return with_site_preview(report, inputs)
    section, findings = run_regression(regression, inputs)
    sections = (section,) if section.markdown else ()
    return with_site_preview(Report.build((*report.findings, *findings), report.entries,
                                          (*report.sections, *sections), report.neutral_reason), inputs)


def _trees_note(inputs: ReviewInputs) -> Section | None:
    if not inputs.from_trees:
        return None
    return Section("Files", f"GitHub lists at most 3,000 files of a pull request and this one has more: the bot "
                   f"reviewed the change from the base and head trees ({len(inputs.changes.files):,} changed paths, "
                   f"{sum(1 for _ in _watched(inputs))} of them under the folders it reviews). No line of the diff is "
                   "known, so findings are not commented inline.")


def _watched(inputs: ReviewInputs) -> Iterable[FileChange]:
    """The changed paths under the folders (or at the files) the bot reviews."""
    watched = tuple(w.strip("/") for w in inputs.config.watched())
    return (f for f in inputs.changes.files if any(f.path == w or f.path.startswith(w + "/") for w in watched))
