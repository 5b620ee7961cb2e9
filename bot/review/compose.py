"""One review, composed in one place: a ``ReviewRequest`` goes through the checks, then the stages a
door chose.

Every door (the App, ``check``, ``action``, ``demo``, ``fix``, the history replay) builds a request
and calls ``run_review``; it chooses only its stages and its renderer, so two doors give the same
verdict on the same change by construction. A stage is ``(request, report) -> report``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import logging
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from bot.core import budget
from bot.core.changes import ChangeSet, Status
from bot.core.config import Config, load_config
from bot.core.findings import Finding, Report, Section, Severity, Verdict
from bot.core.incomplete import REGRESSION_UNFINISHED, incomplete
from bot.core.quoting import code, escape
from bot.core.snapshot import Snapshot
from bot.model.codeowners import owner_key
from bot.review.engine import review
from bot.review.input import Check, ReviewContext

log = logging.getLogger(__name__)

Regression = Callable[[Snapshot, Snapshot, ChangeSet, Config], tuple[Section | None, list[Finding]]]


@dataclass(frozen=True)
class ReviewRequest:
    """What one review judges: the two sides (no base and no change set: the whole head tree), who
    changes it and who approved, and the options. ``config`` None: read once from the base side
    (else the head)."""

    head: Snapshot
    base: Snapshot | None = None
    changes: ChangeSet | None = None
    author: str | None = None
    approvers: frozenset[str] = frozenset()
    strict: bool = False
    config: Config | None = None
    config_findings: tuple[Finding, ...] = ()
    checks: tuple[Check, ...] | None = None
    # the review's clock (future lints, waiver expiry); None: today, UTC
    today: datetime.date | None = None

    @property
    def context(self) -> ReviewContext:
        return ReviewContext(
            author=self.author, approvers=self.approvers, strict=self.strict, today=self.today
        )

    @property
    def settings(self) -> Config:
        """The configuration (``configured()`` reads it when the request does not carry one)."""
        return self.configured().config or Config()

    def configured(self) -> ReviewRequest:
        """This request with its configuration read, once, from the base side (the head for a whole
        tree)."""
        if self.config is not None:
            return self
        config, findings = load_config(self.base if self.base is not None else self.head)
        return dataclasses.replace(
            self, config=config, config_findings=(*self.config_findings, *findings)
        )


Stage = Callable[[ReviewRequest, Report], Report]


def run_review(request: ReviewRequest, stages: Sequence[Stage] = ()) -> Report:
    """The checks on both sides, judged, then each stage in order, within the review's time
    budget."""
    request = request.configured()
    config = request.settings
    with budget.within(config.review.time_budget_seconds):
        report = review(
            head=request.head,
            base=request.base,
            changes=request.changes,
            context=request.context,
            config=config,
            checks=request.checks,
            config_findings=request.config_findings,
        )
        for stage in stages:
            report = stage(request, report)
    return report


# -- stages ----------------------------------------------------------------------------------------


def sections(*notes: Section, findings: Iterable[Finding] = ()) -> Stage:
    """A stage adding fixed sections (notes a door knows about its inputs) and findings (what the
    door could not do: a read that failed)."""
    found = tuple(findings)

    def add(request: ReviewRequest, report: Report) -> Report:
        return report.with_sections(*notes, findings=found) if notes or found else report

    return add


def regression(stage: Regression) -> Stage:
    """The regression over sample events as a stage, within its time budget and what is left of the
    review's; one that does not finish, fails or cannot start is a blocking finding
    (``unfinished``)."""

    def run(request: ReviewRequest, report: Report) -> Report:
        if (
            request.base is None
            or request.changes is None
            or not request.settings.regression.enabled
        ):
            return report
        section, findings = run_regression(stage, request)
        shown = (section,) if section.markdown else ()
        return Report.build(
            (*report.findings, *findings),
            report.entries,
            (*report.sections, *shown),
            report.neutral_reason,
            report.fixed,
            report.strict,
        )

    return run


def run_regression(stage: Regression, request: ReviewRequest) -> tuple[Section, list[Finding]]:
    assert request.base is not None and request.changes is not None
    config = request.settings
    seconds = config.regression.time_budget_seconds
    left = budget.left()
    if left is not None and left < seconds:
        seconds = max(left, 0.0)
    if seconds <= 0:
        return unfinished(
            request, "the review's time budget was spent before the regression could start"
        )
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="regression")
    future = pool.submit(stage, request.base, request.head, request.changes, config)
    try:
        section, findings = future.result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        log.warning("regression exceeded its %ss budget", seconds)
        return unfinished(request, f"the regression did not finish within its {seconds:g} s budget")
    except Exception as exc:
        log.exception("regression failed")
        why = traceback.format_exception_only(exc)[-1].strip()
        return unfinished(request, f"the regression could not run: {why}")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if section is None:
        return Section("Regression", "", verdict=None), list(findings)
    # the stage's own "did not run" (Spark down, a bad input)
    if section.verdict is Verdict.NEUTRAL:
        reason = str(section.data.get("skipped") or "the regression did not run")
        return unfinished(request, f"the regression did not finish: {reason}", section)
    return section, list(findings)


MAX_UNFINISHED = 20  # files named one finding each; the rest in one finding on the repository


def unfinished(
    request: ReviewRequest, reason: str, section: Section | None = None
) -> tuple[Section, list[Finding]]:
    """The regression's "did not finish": an error on each changed facet schema and sample event it
    was validating (what can have caused it), or on the repository when the change holds none."""
    config = request.settings
    changed = request.changes.files if request.changes is not None else ()
    suspects = [
        f.path
        for f in changed
        if f.status is not Status.DELETED
        and f.path.endswith((".json", ".jsonl", ".ndjson"))
        and any(f.path.startswith(folder.strip("/") + "/") for folder in config.watched())
        and f.path.rsplit("/", 1)[-1] not in ("registry.json",)
    ]
    what = "this file changed and the regression could not show it breaks nothing"
    findings = [
        incomplete(f"{reason}; {what}", path, rule=REGRESSION_UNFINISHED)
        for path in suspects[:MAX_UNFINISHED]
    ]
    if not findings or len(suspects) > MAX_UNFINISHED:
        findings.append(incomplete(reason, rule=REGRESSION_UNFINISHED))
    shown = section or Section("Regression", "")
    text = f"The regression did not finish: {escape(reason)}. The review fails until it does.\n"
    return Section(
        shown.title, text + ("\n" + shown.markdown if shown.markdown else ""), shown.data
    ), findings


APPROVAL_RULE = "owners/approval-required"


def approval_not_checked(reasons: Iterable[str], teams: Iterable[str] = ()) -> Stage:
    """The owners' approvals as notices (GitHub's CODEOWNERS review still applies) and a section
    saying why, when they could not be read: all of them for ``reasons`` (the Action without a pull
    request, reviews it cannot read); for ``teams`` (``org/team`` owners whose members could not be
    read), only those of entries whose missing owners are all such teams: one that names any other
    owner (a login, a team that was read) still fails without an owner's approval. Nothing to say,
    no change."""
    why = tuple(reasons)
    hidden = {owner_key(t) for t in teams}

    def excused(finding: Finding) -> bool:
        if finding.rule != APPROVAL_RULE:
            return False
        return bool(why) or (
            bool(finding.owners) and all(owner_key(o) in hidden for o in finding.owners)
        )

    def downgrade(request: ReviewRequest, report: Report) -> Report:
        notices = [f for f in report.findings if excused(f)]
        if not notices and not why:
            return report
        findings = [
            dataclasses.replace(f, severity=Severity.NOTICE) if excused(f) else f
            for f in report.findings
        ]
        if why:
            text = "\n".join(
                [
                    "Approval was not checked: the owners' approval of each entry is not part of "
                    "this verdict (GitHub's own CODEOWNERS review still applies).",
                    "",
                    *[f"- {escape(r)}" for r in why],
                ]
            )
        else:
            text = "\n".join(
                [
                    "Approval was not checked for these entries: each is owned only by teams whose "
                    "members could not be read (see Team membership), so their owners' approval is "
                    "not part of this verdict (GitHub's own CODEOWNERS review still applies). An "
                    "entry that also names another owner still needs an owner's approval.",
                    "",
                    *[
                        f"- {code(f.entry or f.path, table=False)}: "
                        + ", ".join(code(o, table=False) for o in f.owners)
                        for f in notices
                    ],
                ]
            )
        built = Report.build(
            findings,
            report.entries,
            report.sections,
            report.neutral_reason,
            report.fixed,
            report.strict,
        )
        return built.with_sections(
            Section(
                "Approval not checked",
                text,
                data={"unchecked": list(why), "entries": [f.entry for f in notices]},
            )
        )

    return downgrade
