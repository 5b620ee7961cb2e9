"""The registry dashboard: per entry, what its owners should fix and by when.

Built from a whole-tree review (``check --all``) and the same side's model: each entry's owners, its
open findings (true defects first, then the configured adoption gaps), its waivers and their expiry,
the future lints that will reach it, facet keys its sample events carry that no declared facet
defines, and (the App only) the pull requests waiting on its owners. Renderers:
``bot.outputs.render.dashboard``.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.core.config import Config
from bot.core.findings import Finding, Report
from bot.core.snapshot import Snapshot
from bot.core.waivers import Waiver
from bot.model.registry import Registry
from bot.model.sides import ownership, side_model
from bot.review.waiving import read_waivers, validity

UNREGISTERED_KEY_RULE = "samples/undeclared-facet"
REPOSITORY = "(repository)"


@dataclass(frozen=True)
class WaiverLine:
    waiver: Waiver
    status: str  # "active", "expired" or "refused"


@dataclass(frozen=True)
class EntryBoard:
    """One entry's part of the dashboard."""

    name: str
    owners: tuple[str, ...]
    owners_source: str
    defects: tuple[Finding, ...] = ()
    gaps: tuple[Finding, ...] = ()
    waived: tuple[Finding, ...] = ()
    waivers: tuple[WaiverLine, ...] = ()
    # rule, the day it turns an error, findings now
    future: tuple[tuple[str, datetime.date, int], ...] = ()
    unregistered_keys: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()  # pull requests waiting on this entry's owners ("#12")

    @property
    def open(self) -> int:
        return len(self.defects) + len(self.gaps)


@dataclass(frozen=True)
class Dashboard:
    entries: tuple[EntryBoard, ...]
    today: datetime.date
    future: tuple[tuple[str, datetime.date], ...] = ()
    totals: Mapping[str, int] = field(default_factory=dict)
    revision: str = ""  # the commit it describes, when known

    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for e in self.entries for f in (*e.defects, *e.gaps, *e.waived))


def _key_of(f: Finding) -> str:
    token = f.pointer.rsplit("/", 1)[-1]
    return token.replace("~1", "/").replace("~0", "~")


def build(
    report: Report,
    snapshot: Snapshot,
    config: Config,
    today: datetime.date,
    pending: Mapping[str, Sequence[str]] | None = None,
    revision: str = "",
) -> Dashboard:
    """The dashboard of ``report`` (a whole-tree review of ``snapshot`` under ``config``)."""
    model = side_model(snapshot, config)
    registry, side = model.registry, model.owners
    gaps = frozenset(config.verdict.adoption_gaps)
    due = dict(config.becomes_error)
    waivers, _ = read_waivers(snapshot, config)
    usable = set(validity(waivers, snapshot, config, today)[0])
    groups: dict[str, list[Finding]] = {}
    # errors first, then the report's order
    for f in sorted(report.findings, key=lambda f: f.severity.rank):
        groups.setdefault(f.entry or REPOSITORY, []).append(f)
    # pull requests are listed only under the entries of this commit (a name is no board of its own)
    waiting = {n: prs for n, prs in (pending or {}).items() if n in registry.entries}
    names = sorted(set(registry.entries) | set(groups), key=lambda n: (n == REPOSITORY, n))
    boards = []
    for name in names:
        found = groups.get(name, [])
        entry = registry.entries.get(name)
        owned = (
            ownership(side, entry, entry.registry_json)
            if entry is not None
            else ownership(side, None, config.source or ".github/registry-bot.yml")
        )
        mine = [w for w in waivers if (w.entry or _entry_name(registry, w.path)) == name]
        boards.append(
            EntryBoard(
                name=name,
                owners=owned.owners,
                owners_source=owned.source(),
                defects=tuple(f for f in found if f.waived is None and f.rule not in gaps),
                gaps=tuple(f for f in found if f.waived is None and f.rule in gaps),
                waived=tuple(f for f in found if f.waived is not None),
                waivers=tuple(WaiverLine(w, _status(w, usable, today)) for w in mine),
                future=tuple(
                    (rule, day, sum(f.rule == rule for f in found))
                    for rule, day in sorted(due.items())
                    if any(f.rule == rule for f in found)
                ),
                unregistered_keys=tuple(
                    sorted({_key_of(f) for f in found if f.rule == UNREGISTERED_KEY_RULE})
                ),
                pending=tuple(waiting.get(name, ())),
            )
        )
    totals = {
        "entries": len(boards),
        "findings": len(report.findings),
        "defects": sum(len(b.defects) for b in boards),
        "adoption_gaps": sum(len(b.gaps) for b in boards),
        "waived": sum(len(b.waived) for b in boards),
    }
    return Dashboard(tuple(boards), today, tuple(sorted(due.items())), totals, revision)


def for_tree(snapshot: Snapshot, config: Config | None, today: datetime.date) -> Dashboard:
    """The dashboard of a whole tree: its ``check --all`` review, by entry (``config`` None: the
    tree's own)."""
    from bot.review.compose import ReviewRequest, run_review

    request = ReviewRequest(head=snapshot, config=config, today=today).configured()
    return build(run_review(request), snapshot, request.settings, today)


def _entry_name(registry: Registry, path: str) -> str | None:
    entry = registry.entry_for(path)
    return None if entry is None else entry.name


def _status(w: Waiver, usable: set[Waiver], today: datetime.date) -> str:
    if w in usable:
        return "active"
    return "expired" if w.expires < today else "refused"
