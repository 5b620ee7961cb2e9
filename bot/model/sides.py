"""One model per review side: its snapshot, registry, schema store and ownership, each built once.

Every part of a review (the checks of both sides, the regression, the site preview, teams and
delegation) asks ``side_model(snapshot, config)`` and gets the same model, so each side is parsed
once per review.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.config import Config
from bot.core.snapshot import Snapshot
from bot.model.codeowners import ROOT_LOCATIONS, CodeOwners, RootOwners, load
from bot.model.registry import Entry, Registry
from bot.model.schemas import SchemaStore


class SideModel:
    """What one side of a review is made of, built lazily and once."""

    def __init__(self, snapshot: Snapshot, config: Config) -> None:
        self.snapshot = snapshot
        self.config = config

    @functools.cached_property
    def registry(self) -> Registry:
        return Registry(self.snapshot, self.config)

    @functools.cached_property
    def schemas(self) -> SchemaStore:
        return SchemaStore(self.snapshot, self.config, self.registry.files)

    @functools.cached_property
    def owners(self) -> Side:
        return Side(self.registry)


_models: dict[int, dict[Config, SideModel]] = {}
_lock = threading.Lock()


def side_model(snapshot: Snapshot, config: Config) -> SideModel:
    """The model of ``snapshot`` under ``config``: one per snapshot object and configuration,
    dropped with the snapshot."""
    key = id(snapshot)
    with _lock:
        models = _models.get(key)
        if models is None:
            models = _models[key] = {}
            weakref.finalize(snapshot, _models.pop, key, None)
        model = models.get(config)
        if model is None:
            model = models[config] = SideModel(snapshot, config)
        return model


class Side:
    """The CODEOWNERS files of one snapshot, each read and parsed once per review."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._own: dict[str, CodeOwners | None] = {}

    @functools.cached_property
    def root(self) -> RootOwners:
        return RootOwners.of(self.registry.snapshot)

    def own(self, entry: Entry) -> CodeOwners | None:
        """The entry's own CODEOWNERS, or ``None`` when it has none."""
        if entry.codeowners not in self._own:
            self._own[entry.codeowners] = load(self.registry.snapshot, entry.codeowners)
        return self._own[entry.codeowners]

    def read_paths(self) -> tuple[str, ...]:
        """Every CODEOWNERS location this side's owners were judged by: the root ones (the first
        present decides) and each entry's own consulted so far, present or not."""
        return (*ROOT_LOCATIONS, *self._own)

    def parsed(self) -> Iterator[CodeOwners]:
        yield from (f for f in self._own.values() if f is not None)
        if self.root.file is not None:
            yield self.root.file


def entry_relative(entry: Entry, path: str) -> str:
    """``path`` as the entry's CODEOWNERS sees it: relative to the entry folder, with the core
    entry's facets (``spec/facets``) and examples (``spec/tests``) seen as ``facets/`` and
    ``facets/examples/``."""
    for folder, shown in (
        (entry.folder, ""),
        (entry.examples_dir, "facets/examples/"),
        (entry.facets_dir, "facets/"),
    ):
        if path.startswith(folder + "/"):
            return shown + path[len(folder) + 1 :]
    return path


@dataclass(frozen=True)
class Ownership:
    """Who owns one path of an entry, and which CODEOWNERS line says so."""

    owners: tuple[str, ...]
    file: str | None
    line: int | None
    # set when no line gives the path an owner and the root CODEOWNERS's own owners approve it
    unowned: str | None = None

    def source(self) -> str:
        where = f"{self.file} line {self.line}" if self.file else "no CODEOWNERS line"
        if self.unowned is None:
            return where
        return (
            f"{where}, the owners of {self.file}: no line gives {self.unowned} an owner, so those "
            "who decide who owns what approve it"
        )


def ownership(side: Side, entry: Entry | None, path: str) -> Ownership:
    """The entry's own CODEOWNERS decides; without one (or when no line matches), the root one
    does. The entry's CODEOWNERS itself is never left without owner by its own lines: whoever
    could then edit it would own the entry, so a line un-owning it falls back to the root too.
    A path the root CODEOWNERS gives no owner either is approved by the root CODEOWNERS's own
    owners (``unowned_fallback``); an entry's own line with no owner is the entry's choice."""
    own = side.own(entry) if entry is not None else None
    if entry is not None and own is not None:
        rule = own.rule_for(entry_relative(entry, path))
        if rule is not None and (rule.owners or path != entry.codeowners):
            return Ownership(rule.owners, own.path, rule.line)
    return unowned_fallback(side.root, path)


def unowned_fallback(root: RootOwners, path: str) -> Ownership:
    """Who approves ``path`` as the root CODEOWNERS says; when no line gives it an owner (none
    matches, or the last one names no one), the owners of the root CODEOWNERS file itself, who
    decide who owns what. No owner only when the repository names none for either (then, as on
    GitHub, no one is asked)."""
    rule = root.rule_for(path)
    if (rule is None or not rule.owners) and root.path is not None and path != root.path:
        keeper = root.rule_for(root.path)
        if keeper is not None and keeper.owners:
            return Ownership(keeper.owners, root.path, keeper.line, unowned=path)
    return Ownership(rule.owners if rule else (), root.path, rule.line if rule else None)


def claimants(base: Registry, head: Registry, path: str) -> list[tuple[str, Entry | None]]:
    """The entries whose owners approve a change to ``path``, each with the entry whose owners
    judge it: the entry holding it on the base side, and the one holding it on the head side (where
    it exists there) when that is another. ``None`` stands for the root owners, who approve a
    name's claim and its removal: a new name (also a new entry made inside an existing entry's
    folder) and a name the change removes (its base entry is gone from the head side, which frees
    the name for anyone) are claimed by them too; tell them apart with ``name in base.entries``."""
    found: list[tuple[str, Entry | None]] = []
    before = base.entry_for(path)
    # a path the change deletes is held by no entry on the head side
    after = head.entry_for(path) if head.snapshot.size(path) is not None else None
    if before is not None:
        found.append((before.name, before))
        if before.name not in head.entries:
            found.append((before.name, None))
    if after is not None and (before is None or after.name != before.name):
        found.append((after.name, base.entries.get(after.name)))
    return found


def root_ownership(side: Side, path: str) -> Ownership:
    rule = side.root.rule_for(path)
    return Ownership(rule.owners if rule else (), side.root.path, rule.line if rule else None)
