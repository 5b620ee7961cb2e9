"""The verdict on one schema change in both directions, with its category and, at the data level, a
witness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.core.findings import Witness
from bot.model.evolution.classes import CATEGORIES, CLASSES, Bump
from bot.model.evolution.schema_diff import Change, required_bump
from bot.model.evolution.witness import Resolver, Search


@dataclass(frozen=True)
class Direction:
    """What one direction needs: its digit, the changes that set it, their category and a
    witness."""

    bump: Bump
    reasons: tuple[Change, ...]
    category: str | None
    witness: Witness | None = None
    # a witness was looked for (data category) and ``witness`` is what was found
    searched: bool = False
    backward: bool = True  # old accepts and new rejects the witness (forward: the reverse)

    def describe(self, most: int = 3) -> str:
        return "; ".join(f"{c.what} at {c.where or '/'}" for c in self.reasons[:most])

    def evidence(self) -> str:
        """What the finding may claim about an instance: never more than was shown."""
        if self.category == "data" and self.witness is not None:
            accepts, rejects = ("old", "new") if self.backward else ("new", "old")
            return (
                f" Witness: an instance the {accepts} version accepts and the {rejects} one "
                f"rejects (checked "
                "with jsonschema and jsonschema-rs)."
            )
        if self.category == "data" and self.searched:
            return " No instance showing it was found within the search budget."
        if self.category == "wire":
            return " It changes the keys and fields events carry, not which instances validate."
        if self.category == "codegen":
            return (
                " It changes what generated code and documentation hold, not which instances "
                "validate."
            )
        return ""


@dataclass(frozen=True)
class Evolution:
    changes: tuple[Change, ...]
    backward: Direction
    forward: Direction

    @property
    def codegen(self) -> tuple[Change, ...]:
        """Changes to names OpenLineage's Java and Python clients generate types from."""
        return tuple(c for c in self.changes if CLASSES[c.kind].codegen)


def direction(
    changes: list[Change], digit: Any, search: Search | None, backward: bool
) -> Direction:
    """The direction ``digit`` reads off ``changes``: its bump, reasons, category and (with
    ``search``) witness."""
    bump = max((digit(c) for c in changes), default=Bump.NONE)
    if bump is Bump.NONE:
        return Direction(bump, (), None, backward=backward)
    reasons = tuple(
        sorted(
            (c for c in changes if digit(c) == bump),
            key=lambda c: CLASSES[c.kind].category != "data",
        )
    )
    categories = {c.category for c in reasons}
    category = next(cat for cat in CATEGORIES if cat in categories)
    if category != "data" or search is None:
        return Direction(bump, reasons, category, backward=backward)
    for change in reasons:
        if change.category == "data":
            found = search.find(change, backward=backward)
            if found is not None:
                shown = (change, *(c for c in reasons if c is not change))
                return Direction(bump, shown, category, found, True, backward)
    return Direction(bump, reasons, category, None, True, backward)


def compare(
    old: Any,
    new: Any,
    resolve_old: Resolver,
    resolve_new: Resolver,
    open_add: Bump = Bump.ADDITION,
    labels: tuple[str, str] = ("base", "head"),
    witnesses: tuple[bool, bool] = (True, True),
) -> Evolution:
    """Both directions of the change from ``old`` to ``new``; a witness searched for each data-level
    verdict whose direction ``witnesses`` asks for (backward, forward): the search compiles both
    schemas."""
    _, changes = required_bump(old, new, resolve_old, resolve_new, open_add=open_add)
    verified = [c for c in changes if not c.unverified]
    search = (
        Search(old, new, resolve_old, resolve_new, *labels) if any(witnesses) and verified else None
    )
    return Evolution(
        tuple(changes),
        direction(verified, lambda c: c.bump, search if witnesses[0] else None, True),
        direction(verified, lambda c: c.forward, search if witnesses[1] else None, False),
    )
