"""The review engine: one loop over one tuple of pure checks.

``review()`` is what the command line, the GitHub worker and the replay command all call.
A check is a function ``(ReviewInput) -> Iterable[Finding]``; it reads files only through the
snapshots and never touches the network.
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from bot.changes import ChangeSet, Status
from bot.config import Config, load_config
from bot.findings import Finding, Report, Severity
from bot.registry import Entry, Registry
from bot.schemas import SchemaStore
from bot.snapshot import Snapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReviewContext:
    """Who changes what: feeds the owner checks. ``strict`` makes untouched entries count fully."""

    author: str | None = None
    approvers: frozenset[str] = frozenset()
    strict: bool = False


@dataclass
class ReviewInput:
    """Everything a check may look at. ``changes`` is ``None`` for a whole-tree review (``--all``)."""

    head: Snapshot
    base: Snapshot | None
    changes: ChangeSet | None
    config: Config
    context: ReviewContext = field(default_factory=ReviewContext)

    @functools.cached_property
    def head_registry(self) -> Registry:
        return Registry(self.head, self.config)

    @functools.cached_property
    def base_registry(self) -> Registry | None:
        return None if self.base is None else Registry(self.base, self.config)

    @functools.cached_property
    def head_schemas(self) -> SchemaStore:
        return SchemaStore(self.head, self.config, self.head_registry.files)

    @functools.cached_property
    def base_schemas(self) -> SchemaStore | None:
        if self.base is None or self.base_registry is None:
            return None
        return SchemaStore(self.base, self.config, self.base_registry.files)

    @functools.cached_property
    def touched_entries(self) -> frozenset[str]:
        """Names of the entries (on either side) that the change adds, modifies or deletes files of."""
        if self.changes is None:
            return frozenset()
        names: set[str] = set()
        for path in self.changes.paths():
            for registry in (self.head_registry, self.base_registry):
                entry = registry.entry_for(path) if registry is not None else None
                if entry is not None:
                    names.add(entry.name)
        return frozenset(names)

    def is_new_entry(self, name: str) -> bool:
        return self.base_registry is not None and name not in self.base_registry.entries

    def is_touched(self, path: str) -> bool:
        """Whether the change adds or modifies this file (``--strict`` treats every file so)."""
        if self.context.strict:
            return True
        if self.changes is None:
            return False
        change = self.changes.get(path)
        return change is not None and change.status is not Status.DELETED

    def entry_severity(self, entry: Entry | str) -> Severity:
        """Error for entries the change touches (or with ``--strict``), warning for the others.

        Used by rules that today's real registry does not meet yet: they must hold for what a
        change adds or modifies, and are shown as warnings elsewhere.
        """
        name = entry if isinstance(entry, str) else entry.name
        if self.context.strict or name in self.touched_entries:
            return Severity.ERROR
        return Severity.WARNING

    def file_severity(self, path: str) -> Severity:
        """Error when the change adds or modifies this file (or ``--strict``), warning otherwise."""
        return Severity.ERROR if self.is_touched(path) else Severity.WARNING

    def reviewed_entries(self) -> list[Entry]:
        """Entries to review: all of them for ``--all``, else those the change touches (head side)."""
        entries = self.head_registry.entries
        if self.changes is None:
            return list(entries.values())
        return [e for name, e in entries.items() if name in self.touched_entries]


Check = Callable[[ReviewInput], Iterable[Finding]]


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
