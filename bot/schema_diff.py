"""Classify the change between two versions of a facet schema in SchemaVer terms.

``spec/Versioning.md``: MODEL-REVISION-ADDITION. MODEL for a change that prevents interaction with any
historical data (a removed or newly required field, a changed type), REVISION for one that may
prevent interaction with some (tighter constraints), ADDITION for one compatible with all (a new
optional field, documentation).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


class Bump(enum.IntEnum):
    NONE = 0
    ADDITION = 1
    REVISION = 2
    MODEL = 3


@dataclass(frozen=True)
class Change:
    bump: Bump
    where: str
    what: str


_DOC_KEYS = {"description", "title", "example", "examples", "$comment", "deprecated"}
_CHILD_MAPS = ("properties", "$defs", "patternProperties")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")


def _types(node: dict[str, Any]) -> set[str]:
    value = node.get("type")
    if isinstance(value, str):
        return {value}
    return set(value) if isinstance(value, list) else set()


def diff(old: Any, new: Any, where: str = "") -> Iterator[Change]:
    """Every semantic difference between two schema nodes, each with the bump it needs."""
    if old == new:
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        yield Change(Bump.REVISION, where or "/", "the schema changed shape")
        return
    old_types, new_types = _types(old), _types(new)
    if old_types != new_types:
        removed = old_types - new_types
        bump = Bump.MODEL if removed or not old_types else Bump.ADDITION
        yield Change(bump, where or "/", f"type {sorted(old_types)} -> {sorted(new_types)}")
    old_props: dict[str, Any] = old["properties"] if isinstance(old.get("properties"), dict) else {}
    new_props: dict[str, Any] = new["properties"] if isinstance(new.get("properties"), dict) else {}
    old_req = set(old.get("required") or []) if isinstance(old.get("required"), list) else set()
    new_req = set(new.get("required") or []) if isinstance(new.get("required"), list) else set()
    for name in sorted(set(old_props) - set(new_props)):
        yield Change(Bump.MODEL, f"{where}/properties/{name}", f"field {name!r} removed")
    for name in sorted(set(new_props) - set(old_props)):
        if name in new_req:
            yield Change(Bump.MODEL, f"{where}/properties/{name}", f"new required field {name!r}")
        else:
            yield Change(Bump.ADDITION, f"{where}/properties/{name}", f"new optional field {name!r}")
    for name in sorted((new_req - old_req) & set(old_props)):
        yield Change(Bump.MODEL, f"{where}/required", f"field {name!r} became required")
    for name in sorted(old_req - new_req):
        yield Change(Bump.ADDITION, f"{where}/required", f"field {name!r} is no longer required")
    if "enum" in old or "enum" in new:
        old_enum, new_enum = old.get("enum") or [], new.get("enum") or []
        if any(v not in new_enum for v in old_enum) or ("enum" in new and "enum" not in old):
            yield Change(Bump.MODEL, f"{where}/enum", "enum values removed or newly restricted")
        elif any(v not in old_enum for v in new_enum):
            yield Change(Bump.ADDITION, f"{where}/enum", "enum values added")
    if old.get("additionalProperties") is not False and new.get("additionalProperties") is False:
        yield Change(Bump.REVISION, where or "/", "additional properties are no longer allowed")
    handled = {"type", "properties", "required", "enum", "additionalProperties", *_DOC_KEYS,
               *_CHILD_MAPS, *_CHILD_LISTS, *_CHILD_ONE}
    for key in _CHILD_MAPS:
        old_map, new_map = old.get(key), new.get(key)
        if not isinstance(old_map, dict) or not isinstance(new_map, dict):
            if old_map != new_map and key != "properties":
                yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")
            continue
        for name in sorted(set(old_map) & set(new_map)):
            yield from diff(old_map[name], new_map[name], f"{where}/{key}/{name}")
        if key == "$defs":
            for name in sorted(set(old_map) - set(new_map)):
                yield Change(Bump.REVISION, f"{where}/$defs/{name}", f"definition {name!r} removed")
            for name in sorted(set(new_map) - set(old_map)):
                yield Change(Bump.ADDITION, f"{where}/$defs/{name}", f"definition {name!r} added")
    for key in _CHILD_LISTS:
        old_list, new_list = old.get(key), new.get(key)
        if isinstance(old_list, list) and isinstance(new_list, list) and len(old_list) == len(new_list):
            for i, (a, b) in enumerate(zip(old_list, new_list, strict=True)):
                yield from diff(a, b, f"{where}/{key}/{i}")
        elif old_list != new_list:
            yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")
    for key in _CHILD_ONE:
        if key == "additionalProperties" and not isinstance(new.get(key), dict):
            continue
        if old.get(key) != new.get(key):
            yield from diff(old.get(key, {}), new.get(key, {}), f"{where}/{key}")
    for key in sorted((set(old) | set(new)) - handled):
        if old.get(key) != new.get(key):
            yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")
    for key in sorted(_DOC_KEYS):
        if old.get(key) != new.get(key):
            yield Change(Bump.ADDITION, f"{where}/{key}", f"{key} changed (documentation)")


def required_bump(old: Any, new: Any) -> tuple[Bump, list[Change]]:
    """The smallest bump the change from ``old`` to ``new`` needs (``$id`` and ``$schema`` ignored)."""
    strip = {"$id", "$schema"}
    a = {k: v for k, v in old.items() if k not in strip} if isinstance(old, dict) else old
    b = {k: v for k, v in new.items() if k not in strip} if isinstance(new, dict) else new
    changes = list(diff(a, b))
    return (max((c.bump for c in changes), default=Bump.NONE), changes)


def actual_bump(old: tuple[int, int, int], new: tuple[int, int, int]) -> Bump | None:
    """The part a version change bumps; None when the version did not increase."""
    if new[0] > old[0]:
        return Bump.MODEL
    if new[0] == old[0] and new[1] > old[1]:
        return Bump.REVISION
    if new[:2] == old[:2] and new[2] > old[2]:
        return Bump.ADDITION
    return None
