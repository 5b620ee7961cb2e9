"""The review engine: one loop over one tuple of pure checks.

``review()`` is what the command line, the GitHub worker and the replay command all call.
A check is a function ``(ReviewInput) -> Iterable[Finding]``; it reads files only through the
snapshots and never touches the network.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable, Iterator

from bot.changes import ChangeSet
from bot.config import Config, load_config
from bot.findings import Finding, Report, Severity
from bot.review_input import Check, ReviewContext, ReviewInput
from bot.snapshot import Snapshot

log = logging.getLogger(__name__)


def default_checks() -> tuple[Check, ...]:
    from bot.checks import CHECKS

    return CHECKS


def _run_check(check: Check, review: ReviewInput) -> Iterator[Finding]:
    """Run one check; a bug in a check becomes an error finding instead of losing the review."""
    name = getattr(check, "__module__", repr(check)).rsplit(".", 1)[-1]
    try:
        yield from check(review)
    except Exception as exc:
        log.exception("check %s crashed", name)
        yield Finding(
            rule="bot/internal-error", severity=Severity.ERROR, path="",
            message=f"the {name} check hit an internal error: {type(exc).__name__}: {exc}",
            hint="This is a bug in the bot; the other checks still ran. "
                 + traceback.format_exception_only(exc)[-1].strip(),
        )


def review(
    head: Snapshot,
    base: Snapshot | None = None,
    changes: ChangeSet | None = None,
    context: ReviewContext | None = None,
    config: Config | None = None,
    checks: Iterable[Check] | None = None,
) -> Report:
    """Review ``changes`` from ``base`` to ``head`` (or the whole of ``head`` when ``changes`` is None).

    The configuration is read from the base side when not given, so a pull request cannot
    change the rules it is judged by.
    """
    config_findings: list[Finding] = []
    if config is None:
        config, config_findings = load_config(base if base is not None else head)
    data = ReviewInput(head=head, base=base, changes=changes, config=config,
                       context=context or ReviewContext())
    findings: list[Finding] = list(config_findings)
    for check in checks if checks is not None else default_checks():
        findings.extend(_run_check(check, data))
    entries = [e.name for e in data.reviewed_entries()]
    return Report.build(findings, entries=entries)
