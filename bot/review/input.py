"""What a check looks at: the two sides of a change, the change set, the configuration and who is
involved.

Checks import this module and nothing of the engine; the engine builds one ``ReviewInput`` per side.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Finding
from bot.core.snapshot import Snapshot
from bot.model.registry import Entry, Registry
from bot.model.schemas import SchemaStore
from bot.model.sides import SideModel, side_model


@dataclass(frozen=True)
class ReviewContext:
    """Who changes what: feeds the owner checks. ``strict`` makes untouched entries count fully.
    ``today``: the review's clock (future lints, waiver expiry); None is the current UTC date."""

    author: str | None = None
    approvers: frozenset[str] = frozenset()
    strict: bool = False
    today: datetime.date | None = None

    def day(self) -> datetime.date:
        return self.today or datetime.datetime.now(datetime.UTC).date()


@dataclass
class ReviewInput:
    """Everything a check may look at. ``changes`` is ``None`` for a whole-tree review
    (``--all``)."""

    head: Snapshot
    base: Snapshot | None
    changes: ChangeSet | None
    config: Config
    context: ReviewContext = field(default_factory=ReviewContext)
    # results keyed by what they are computed from (a file's text, not its side), shared by both
    # sides of one review: a file the change leaves alone is judged once
    memo: dict[tuple[object, ...], object] = field(default_factory=dict)

    @property
    def head_model(self) -> SideModel:
        return side_model(self.head, self.config)

    @property
    def base_model(self) -> SideModel | None:
        return None if self.base is None else side_model(self.base, self.config)

    @property
    def head_registry(self) -> Registry:
        return self.head_model.registry

    @property
    def base_registry(self) -> Registry | None:
        return None if self.base_model is None else self.base_model.registry

    @property
    def head_schemas(self) -> SchemaStore:
        return self.head_model.schemas

    @property
    def base_schemas(self) -> SchemaStore | None:
        return None if self.base_model is None else self.base_model.schemas

    @functools.cached_property
    def touched_entries(self) -> frozenset[str]:
        """Names of the entries (on either side) that the change adds, modifies or deletes files
        of."""
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

    def reviewed_entries(self) -> list[Entry]:
        """Entries to review: all of them for ``--all``, else those the change touches (head
        side)."""
        entries = self.head_registry.entries
        if self.changes is None:
            return list(entries.values())
        return [e for name, e in entries.items() if name in self.touched_entries]


Check = Callable[[ReviewInput], Iterable[Finding]]
