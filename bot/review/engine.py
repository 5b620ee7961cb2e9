"""The review engine: one loop over one tuple of pure checks.

``review()`` runs the checks on both sides and judges the change; ``bot.review.compose.run_review``
calls it. A check is a function ``(ReviewInput) -> Iterable[Finding]``; it reads files only through
the snapshots and never touches the network.
"""

from __future__ import annotations

import logging
import re
import sys
import traceback
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import replace

from bot.core import budget
from bot.core.budget import BudgetSpent
from bot.core.changes import ChangeSet
from bot.core.config import Config, known_rules_only, load_config
from bot.core.findings import Finding, Report, Severity, State
from bot.core.incomplete import RULES as INCOMPLETE_RULES
from bot.core.incomplete import UNJUDGED_RULES, incomplete
from bot.core.jsondoc import escape_pointer_token
from bot.core.severity import future_rules, overridden
from bot.core.severity import section as severity_section
from bot.core.snapshot import Snapshot, SnapshotError
from bot.review.input import Check as Check  # re-exported: the worker and the pipeline name it
from bot.review.input import ReviewContext, ReviewInput
from bot.review.renames import moved_onto, paired_renames
from bot.review.waiving import RULES as WAIVER_RULES
from bot.review.waiving import waive

log = logging.getLogger(__name__)

RULES: dict[str, str] = {  # the engine's own rules (the checks' are in their modules)
    "config/invalid": "The bot's configuration file (`.github/registry-bot.yml`, base side) cannot "
    "be used, or names a rule id no running check reports; what cannot be used is ignored, the "
    "rest applies, and the problem is an error so it gets fixed. A pull request writing a "
    "configuration that cannot be used gets the same error on its file, approved or not.",
    "bot/unreadable-file": "A file a check needed cannot be read safely (a symlink leaving the "
    "repository, an unreadable file): an error naming it, and the checks that needed it stop "
    "there.",
    "bot/internal-error": "A check crashed on this input. The other checks still ran; the crash is "
    "reported as an error so that a bug in the bot can never pass a change silently: the same "
    "crash on the base side is no pre-existing problem (the check judged nothing of the change), "
    "no waiver applies to it and no configuration changes its severity.",
    **WAIVER_RULES,
}


def default_checks() -> tuple[Check, ...]:
    from bot.review.checks import CHECKS

    return CHECKS


def change_rules() -> frozenset[str]:
    from bot.review.checks import CHANGE_RULES

    return CHANGE_RULES


def rule_ids(checks: Iterable[Check]) -> frozenset[str] | None:
    """Every rule id the engine and ``checks`` can report (each check's module declares ``RULES``),
    or None when a check declares none (its rules cannot be known, so no rule id can be refused)."""
    known = set(RULES) | set(INCOMPLETE_RULES)
    for check in checks:
        declared = getattr(sys.modules.get(getattr(check, "__module__", "") or ""), "RULES", None)
        if not isinstance(declared, Mapping | list | tuple | frozenset | set):
            return None
        known.update(str(rule) for rule in declared)
    return frozenset(known)


def _run_check(check: Check, review: ReviewInput) -> Iterator[Finding]:
    """Run one check; a bug in a check becomes an error finding instead of losing the review."""
    name = _name(check)
    try:
        yield from check(review)
    except BudgetSpent:
        raise
    # a file that cannot be read safely (a symlink leaving the tree): no traceback
    except SnapshotError as exc:
        log.info("check %s stopped: %s", name, exc)
        yield Finding(
            rule="bot/unreadable-file",
            severity=Severity.ERROR,
            path="",
            message=str(exc),
            hint="The bot reads no file through a symlink leaving the repository, nor an "
            "unreadable one; the checks that needed it stopped there. Replace it with a regular "
            "file.",
        )
    except Exception as exc:
        log.exception("check %s crashed", name)
        yield Finding(
            rule="bot/internal-error",
            severity=Severity.ERROR,
            path="",
            message=f"the {name} check hit an internal error: {type(exc).__name__}: {exc}",
            hint="This is a bug in the bot; the other checks still ran. "
            + traceback.format_exception_only(exc)[-1].strip(),
        )


def run_checks(data: ReviewInput, checks: Iterable[Check]) -> list[Finding]:
    """Every finding of every check on one side; once the review's time budget (``bot.core.budget``)
    is spent, the checks left are not run and one blocking ``bot/incomplete-review`` finding says
    which."""
    findings: list[Finding] = []
    stopped: BudgetSpent | None = None
    not_run: list[str] = []
    for check in checks:
        stopped = stopped or budget.spent()
        if stopped is not None:
            not_run.append(_name(check))
            continue
        try:
            findings.extend(_run_check(check, data))
        except BudgetSpent as exc:
            stopped = exc
            not_run.append(_name(check) + " (stopped)")
    if stopped is not None:
        findings.append(incomplete(f"{stopped}: checks not finished: {', '.join(not_run)}"))
    return findings


def _name(check: Check) -> str:
    return getattr(check, "__module__", repr(check)).rsplit(".", 1)[-1]


def judge(
    head: Iterable[Finding],
    base: Iterable[Finding],
    renamed: Mapping[str, str] | None = None,
    change_rules: Collection[str] = (),
    unjudged: Collection[str] = (),
    touched: Collection[str] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """Give each head finding its state against the base findings; return them and the fixed ones.

    Findings match by fingerprint (rule, path, JSON pointer, subject), base findings followed across
    ``renamed`` (old path -> new path): first as they read with only their paths followed, then with
    the renamed file's name followed too (``_followed``); then a list item named by its content at
    its index (``bot.core.anchors.at_place``: its content changed). Matching counts: two identical
    problems at head against one at base is one pre-existing and one new. A head finding matched to
    a less severe base finding (a warning at base, an error at head) is new: the change made it
    worse; the most severe are matched first on both sides, so an error at base is matched to an
    error at head before a warning is. Findings of ``change_rules`` (rules about the change itself:
    a published copy edited, a version not bumped, a name claimed, ownership changed) are never
    matched: the base side, reviewed with the same change set, may compute them too, but a change
    cannot have been made before it was made. Findings of ``unjudged`` rules (what a check could
    not check) are matched only where they stand (``standing``): on files the change (``touched``:
    its paths, None when not known whole) leaves alone, as every file they read; otherwise what
    could not be checked may be what the change did. Neither side's are ever listed as fixed.
    """
    renamed = renamed or {}
    change_rules = frozenset(change_rules)
    unjudged = frozenset(unjudged)

    def matchable(f: Finding) -> bool:
        return f.rule not in change_rules and (f.rule not in unjudged or standing(f, touched))

    head = list(head)
    base = [f for f in base if matchable(f)]
    partner: list[int | None] = [None] * len(head)
    taken = [False] * len(base)
    most_severe_first = sorted(range(len(head)), key=lambda j: head[j].severity.rank)
    for place, names in ((False, False), (False, True), (True, False), (True, True)):
        candidates: dict[tuple[str, str, str, str], list[int]] = {}
        for i in sorted(range(len(base)), key=lambda i: base[i].severity.rank):
            if not taken[i]:
                candidates.setdefault(_followed(base[i], renamed, names, place), []).append(i)
        for j in most_severe_first:
            if partner[j] is not None or not matchable(head[j]):
                continue
            free = candidates.get(head[j].fingerprint(place=place))
            if free:
                partner[j] = i = free.pop(0)
                taken[i] = True
    judged = [
        replace(f, state=State.UNCHANGED if _kept(f, base, i) else State.NEW)
        for f, i in zip(head, partner, strict=True)
    ]
    fixed = [
        replace(f, state=State.ABSENT)
        for f, was in zip(base, taken, strict=True)
        if not was and f.rule not in unjudged
    ]
    return judged, fixed


def standing(f: Finding, touched: Collection[str] | None) -> bool:
    """Whether what ``f`` could not check is its file's standing problem: it names every file its
    checking read (``Finding.grounds``) and the change, known whole (``touched`` not None), touches
    none of them. A change cannot alter what was not decided there; the base's finding on them is
    the same one."""
    return touched is not None and bool(f.grounds) and not any(p in touched for p in f.grounds)


def _kept(f: Finding, base: list[Finding], matched: int | None) -> bool:
    """Whether head finding ``f`` was at base as it is: matched, and no more severe than the base
    finding it matched (a warning the change made an error is the change's)."""
    return matched is not None and f.severity.rank >= base[matched].severity.rank


def _followed(
    f: Finding, renamed: Mapping[str, str], names: bool = False, place: bool = False
) -> tuple[str, str, str, str]:
    """A base finding's fingerprint as it reads after the renames: its path, the renamed file's
    folder in its subject and, with ``names``, its stem (a facet's name: ``git mv A.json B.json``
    names the facet ``B`` too) where it is a whole name: a segment of the pointer, a name in the
    subject not run together with letters, digits, ``_`` or ``-``. ``judge`` tries the reading
    without names first, so a rename that changes no name (``1.json`` -> ``5.json``) leaves
    ``allOf/1`` and "the minimum of 1" of its findings as they were."""
    new_path = renamed.get(f.path)
    if new_path is None:
        return f.fingerprint(place=place)
    rule, path, pointer, what = f.fingerprint(new_path, place)
    what = what.replace(f.path, new_path)
    old_dir, new_dir = f.path.rpartition("/")[0], new_path.rpartition("/")[0]
    if old_dir and old_dir != new_dir:  # a file moved with its entry: examples folders move too
        what = what.replace(old_dir + "/", new_dir + "/")
    old_stem, new_stem = _stem(f.path), _stem(new_path)
    if names and old_stem and new_stem and old_stem != new_stem:
        old_token, new_token = escape_pointer_token(old_stem), escape_pointer_token(new_stem)
        pointer = "/".join(new_token if t == old_token else t for t in pointer.split("/"))
        what = re.sub(rf"(?<![\w-]){re.escape(old_stem)}(?![\w-])", lambda _: new_stem, what)
    return rule, path, pointer, what


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]


def adoption_gaps_as_warnings(
    findings: Iterable[Finding], config: Config, strict: bool
) -> list[Finding]:
    """The configured adoption gaps as warnings (never with ``strict``)."""
    gaps = frozenset(() if strict else config.verdict.adoption_gaps) - future_rules(config)
    return [
        replace(f, severity=Severity.WARNING)
        if f.severity is Severity.ERROR and f.rule in gaps
        else f
        for f in findings
    ]


def review(
    head: Snapshot,
    base: Snapshot | None = None,
    changes: ChangeSet | None = None,
    context: ReviewContext | None = None,
    config: Config | None = None,
    checks: Iterable[Check] | None = None,
    config_findings: Iterable[Finding] = (),
) -> Report:
    """Review ``changes`` from ``base`` to ``head`` (or the whole of ``head`` when ``changes`` is
    None).

    A change is judged: the same checks run on the base side too, and only findings the change
    introduces fail it. The configuration is read from the base side when not given, so a pull
    request cannot change the rules it is judged by. Doors call ``bot.review.compose.run_review``,
    which adds the stages (regression, site preview, approvals, delegation) a door chooses.
    """
    found = list(config_findings)
    if config is None:
        config, loaded = load_config(base if base is not None else head)
        found += loaded
    with budget.within(config.review.time_budget_seconds):
        return _review(head, base, changes, context or ReviewContext(), config, found, checks)


def _review(
    head: Snapshot,
    base: Snapshot | None,
    changes: ChangeSet | None,
    context: ReviewContext,
    config: Config,
    config_findings: list[Finding],
    checks: Iterable[Check] | None,
) -> Report:
    checks = tuple(checks if checks is not None else default_checks())
    known = rule_ids(checks)
    if known is not None:
        config, refused = known_rules_only(config, known, fixed=UNJUDGED_RULES)
        config_findings = [*config_findings, *refused]
    if changes is not None and base is not None:  # a move git or GitHub did not pair is a move
        changes = paired_renames(changes, base, head, config)
    data = ReviewInput(head=head, base=base, changes=changes, config=config, context=context)
    findings = overridden(run_checks(data, checks), config, context.day())
    entries = [e.name for e in data.reviewed_entries()]
    audit = [s for s in (severity_section(config, findings),) if s is not None]
    if changes is None or base is None:
        shown = waive(
            adoption_gaps_as_warnings(findings, config, context.strict),
            (),
            entries,
            head,
            None,
            None,
            config,
            context.day(),
        )
        return Report.build(
            [*config_findings, *shown], entries=entries, strict=context.strict, sections=audit
        )
    # The base side as if it were the head: same change set (so the same entries), no base of its
    # own and nobody to approve, so rules about the change itself (versions, approvals) stay new.
    before = overridden(
        run_checks(
            ReviewInput(
                head=base,
                base=None,
                changes=changes,
                config=config,
                context=ReviewContext(strict=context.strict, today=context.today),
                memo=data.memo,
            ),
            checks,
        ),
        config,
        context.day(),
    )
    # A review that could not finish on the base side could not finish: never a pre-existing
    # problem.
    if not any(f.rule in INCOMPLETE_RULES for f in findings):
        findings += [f for f in before if f.rule in INCOMPLETE_RULES]
    before = [f for f in before if f.rule not in INCOMPLETE_RULES]
    renamed = {f.old_path: f.path for f in changes.files if f.old_path}
    renamed |= moved_onto(changes, base, head, config)
    if config.verdict.adoption_gaps_in_changes == "warning":
        findings = adoption_gaps_as_warnings(findings, config, context.strict)
        before = adoption_gaps_as_warnings(before, config, context.strict)
    touched = changes.paths() if changes.complete else None
    judged, fixed = judge(findings, before, renamed, change_rules(), UNJUDGED_RULES, touched)
    judged = waive(judged, fixed, entries, head, base, changes, config, context.day(), before)
    # The configuration comes from the base: its problems are never the change's.
    judged += [replace(f, state=State.UNCHANGED) for f in config_findings]
    return Report.build(judged, entries=entries, fixed=fixed, strict=context.strict, sections=audit)
