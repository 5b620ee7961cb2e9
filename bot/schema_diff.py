"""Classify the change between two versions of a facet schema in SchemaVer terms.

``spec/Versioning.md``: MODEL-REVISION-ADDITION. MODEL for a change that prevents interaction with any
historical data (a removed or newly required field, a changed type), REVISION for one that may
prevent interaction with some (tighter constraints), ADDITION for one compatible with all (a new
optional field, documentation).

The comparison is of what the schemas accept, not of their text: a ``$ref`` is followed wherever the two
sides differ (an inline schema moved into ``$defs``, a base ``$ref`` moved to another published version
of ``OpenLineage.json``), so moving a definition is no change and a new version of a referenced schema
counts for what differs between the two referenced definitions.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin

from bot.jsondoc import resolve_pointer


class Bump(enum.IntEnum):
    NONE = 0
    ADDITION = 1
    REVISION = 2
    MODEL = 3


@dataclass(frozen=True)
class Change:
    """One difference. ``pointer`` is where it sits in the new file (the ``$ref`` it was reached through
    when it lies in another document); ``unverified`` marks a ``$ref`` whose target could not be read."""

    bump: Bump
    where: str
    what: str
    pointer: str = ""
    unverified: bool = False


Resolver = Callable[[str], Any]
"""Absolute schema URL (no fragment) -> the schema, or None when neither the repository nor its mirror has it."""


def _no_resolver(url: str) -> Any:
    return None


@dataclass(frozen=True)
class _Side:
    """The document a node belongs to: local ``$ref``s resolve in it, others through ``resolve``."""

    doc: Any
    url: str
    resolve: Resolver
    root: bool = True  # the facet file itself (its $defs are compared key by key)


@dataclass
class _Walk:
    old: _Side
    new: _Side
    anchor: str | None = None  # the pointer in the new file of the $ref that led out of it
    seen: set[tuple[str, str]] = field(default_factory=set)  # pairs of $ref targets already compared

    @property
    def covered(self) -> bool:
        """Whether identical local ``$ref``s on both sides need no following: both sides are the facet
        files (their ``$defs`` are compared key by key) or the same referenced document."""
        if self.old.root and self.new.root:
            return True
        return not self.old.root and not self.new.root and self.old.url == self.new.url


_DOC_KEYS = {"description", "title", "example", "examples", "$comment", "deprecated"}
_CHILD_MAPS = ("properties", "$defs", "patternProperties")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")


def _types(node: dict[str, Any]) -> set[str]:
    value = node.get("type")
    if isinstance(value, str):
        return {value}
    return set(value) if isinstance(value, list) else set()


def _has_local_ref(node: Any) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                return True
            stack.extend(v for k, v in current.items() if k not in ("enum", "const", "examples"))
        elif isinstance(current, list):
            stack.extend(current)
    return False


def _follow(side: _Side, node: dict[str, Any]) -> tuple[Any, _Side, str]:
    """The schema a ``$ref`` node stands for (its siblings kept), the side it lives on, and its absolute URL."""
    target_url = urljoin(side.url, node["$ref"]) if side.url else node["$ref"]
    doc_url, _, fragment = target_url.partition("#")
    same = doc_url == side.url
    target_side = side if same else _Side(side.resolve(doc_url), doc_url, side.resolve, root=False)
    target = resolve_pointer(target_side.doc, fragment) if target_side.doc is not None else None
    siblings = {k: v for k, v in node.items() if k != "$ref"}
    if isinstance(target, dict) and siblings:
        clash = any(k in target and target[k] != v and k not in _DOC_KEYS for k, v in siblings.items())
        target = {"allOf": [target, siblings]} if clash else {**target, **siblings}
    return target, target_side, target_url


def _refs(old: Any, new: Any, where: str, walk: _Walk) -> Iterator[Change] | None:
    """Changes behind differing ``$ref``s (None when neither node needs following)."""
    old_ref = old.get("$ref") if isinstance(old, dict) and isinstance(old.get("$ref"), str) else None
    new_ref = new.get("$ref") if isinstance(new, dict) and isinstance(new.get("$ref"), str) else None
    if old_ref is None and new_ref is None:
        return None
    old_abs = urljoin(walk.old.url, old_ref) if old_ref and walk.old.url else old_ref
    new_abs = urljoin(walk.new.url, new_ref) if new_ref and walk.new.url else new_ref
    if old_abs == new_abs and old_ref is not None and (not old_ref.startswith("#") or walk.covered):
        return None  # the same published target, or a local one compared key by key in $defs
    return _followed(old, new, where, walk, old_ref is not None, new_ref is not None)


def _followed(old: Any, new: Any, where: str, walk: _Walk, old_is_ref: bool, new_is_ref: bool) -> Iterator[Change]:
    old_node, old_side, old_url = _follow(walk.old, old) if old_is_ref else (old, walk.old, f"inline@{where}")
    new_node, new_side, new_url = _follow(walk.new, new) if new_is_ref else (new, walk.new, f"inline@{where}")
    key = (old_url, new_url)
    if key in walk.seen:
        return  # each pair of targets is compared once: ends cycles and bounds fan-out
    walk.seen.add(key)
    anchor = walk.anchor if walk.anchor is not None or new_side.root else where
    for label, node, side, url in (("base", old_node, old_side, old_url), ("head", new_node, new_side, new_url)):
        if node is None:
            why = ("is neither in the repository nor in its published mirror" if side.doc is None
                   else "points at nothing in that document")
            yield Change(Bump.ADDITION, f"{where}/$ref", f"the {label}'s $ref {url} {why}, so what changed "
                         "behind it was not compared", pointer=(anchor if anchor is not None else where) + "/$ref",
                         unverified=True)
            return
    inner = replace(walk, old=old_side, new=new_side, anchor=anchor)  # shares ``seen``
    yield from _diff(old_node, new_node, where, inner)


def diff(old: Any, new: Any, where: str = "", resolve_old: Resolver | None = None,
         resolve_new: Resolver | None = None) -> Iterator[Change]:
    """Every semantic difference between two schemas, each with the bump it needs.

    ``resolve_old`` and ``resolve_new`` find the documents a non-local ``$ref`` points at on each side.
    """
    walk = _Walk(_Side(old, _url(old), resolve_old or _no_resolver), _Side(new, _url(new), resolve_new or _no_resolver))
    yield from _diff(old, new, where, walk)


def _diff(old: Any, new: Any, where: str, walk: _Walk) -> Iterator[Change]:
    for change in _node(old, new, where, walk):
        if walk.anchor is not None and not change.unverified:
            change = replace(change, pointer=walk.anchor)
        elif not change.pointer:
            change = replace(change, pointer=change.where or "/")
        yield change


def _node(old: Any, new: Any, where: str, walk: _Walk) -> Iterator[Change]:
    if old == new and (walk.covered or not _has_local_ref(old)):
        return
    followed = _refs(old, new, where, walk)
    if followed is not None:
        yield from followed
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        if old != new:
            yield Change(Bump.REVISION, where or "/", "the schema changed shape")
        return
    yield from _fields(old, new, where)
    for key in _CHILD_MAPS:
        yield from _maps(key, old.get(key), new.get(key), where, walk)
    for key in _CHILD_LISTS:
        yield from _lists(key, old, new, where, walk)
    for key in _CHILD_ONE:
        if key == "additionalProperties" and not isinstance(new.get(key), dict):
            continue
        if key in old or key in new:
            yield from _diff(old.get(key, {}), new.get(key, {}), f"{where}/{key}", walk)
    handled = {"$ref", "type", "properties", "required", "enum", "additionalProperties", *_DOC_KEYS,
               *_CHILD_MAPS, *_CHILD_LISTS, *_CHILD_ONE}
    for key in sorted((set(old) | set(new)) - handled):
        if old.get(key) != new.get(key):
            yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")
    for key in sorted(_DOC_KEYS):
        if old.get(key) != new.get(key):
            yield Change(Bump.ADDITION, f"{where}/{key}", f"{key} changed (documentation)")


def _fields(old: dict[str, Any], new: dict[str, Any], where: str) -> Iterator[Change]:
    """Type, fields, required and enum of one object schema."""
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
    # Names the old list required without declaring them: no data written to the declared fields met it,
    # so replacing them with declared fields only affects data that carried the undeclared ones.
    phantom = sorted(n for n in old_req - new_req if isinstance(n, str) and n not in old_props)
    for name in sorted((new_req - old_req) & set(old_props)):
        if phantom:
            yield Change(Bump.REVISION, f"{where}/required", f"field {name!r} became required in place of "
                         f"{', '.join(map(repr, phantom))}, which the old schema required but never declared")
        else:
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


def _maps(key: str, old_map: Any, new_map: Any, where: str, walk: _Walk) -> Iterator[Change]:
    if not isinstance(old_map, dict) or not isinstance(new_map, dict):
        if old_map != new_map and key != "properties":
            yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")
        return
    for name in sorted(set(old_map) & set(new_map)):
        yield from _diff(old_map[name], new_map[name], f"{where}/{key}/{name}", walk)
    if key == "$defs":
        for name in sorted(set(old_map) - set(new_map)):
            yield Change(Bump.REVISION, f"{where}/$defs/{name}", f"definition {name!r} removed")
        for name in sorted(set(new_map) - set(old_map)):
            yield Change(Bump.ADDITION, f"{where}/$defs/{name}", f"definition {name!r} added")


def _lists(key: str, old: dict[str, Any], new: dict[str, Any], where: str, walk: _Walk) -> Iterator[Change]:
    """Subschema lists, item by item; an ``allOf`` member added or removed is diffed against no constraint
    (beyond the node's own ``type``), an ``anyOf``/``oneOf`` alternative added is an ADDITION."""
    old_list, new_list = old.get(key), new.get(key)
    if old_list is None and new_list is None:
        return
    if not isinstance(old_list, list) or not isinstance(new_list, list):
        if key == "allOf" and isinstance(old_list or [], list) and isinstance(new_list or [], list):
            old_list, new_list = old_list or [], new_list or []
        else:
            yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")
            return
    common = min(len(old_list), len(new_list))
    for i in range(common):
        yield from _diff(old_list[i], new_list[i], f"{where}/{key}/{i}", walk)
    extra_old, extra_new = old_list[common:], new_list[common:]
    if key == "allOf":
        stub = {"type": new["type"]} if "type" in new else {}
        for i, item in enumerate(extra_new, common):
            yield from _diff(stub, item, f"{where}/{key}/{i}", walk)
        for i, item in enumerate(extra_old, common):
            yield from _diff(item, stub, f"{where}/{key}/{i}", walk)
    elif key in ("anyOf", "oneOf") and not extra_old:
        for i in range(common, len(new_list)):
            yield Change(Bump.ADDITION, f"{where}/{key}/{i}", f"{key} alternative added")
    elif extra_old or extra_new:
        yield Change(Bump.REVISION, f"{where}/{key}", f"{key} changed")


def required_bump(old: Any, new: Any, resolve_old: Resolver | None = None,
                  resolve_new: Resolver | None = None) -> tuple[Bump, list[Change]]:
    """The smallest bump the change from ``old`` to ``new`` needs (``$id`` and ``$schema`` ignored).

    Unverified changes (a ``$ref`` target that could not be read) are listed but do not raise the bump.
    """
    strip = {"$id", "$schema"}
    a = {k: v for k, v in old.items() if k not in strip} if isinstance(old, dict) else old
    b = {k: v for k, v in new.items() if k not in strip} if isinstance(new, dict) else new
    if isinstance(old, dict) and isinstance(new, dict):
        walk = _Walk(_Side(a, _url(old), resolve_old or _no_resolver), _Side(b, _url(new), resolve_new or _no_resolver))
        changes = list(_diff(a, b, "", walk))
    else:
        changes = list(diff(a, b))
    return (max((c.bump for c in changes if not c.unverified), default=Bump.NONE), changes)


def _url(schema: Any) -> str:
    """The document URL a schema's ``$id`` names (no fragment), or "" without one."""
    value = schema.get("$id") if isinstance(schema, dict) else None
    return value.split("#")[0] if isinstance(value, str) else ""


def actual_bump(old: tuple[int, int, int], new: tuple[int, int, int]) -> Bump | None:
    """The part a version change bumps; None when the version did not increase."""
    if new[0] > old[0]:
        return Bump.MODEL
    if new[0] == old[0] and new[1] > old[1]:
        return Bump.REVISION
    if new[:2] == old[:2] and new[2] > old[2]:
        return Bump.ADDITION
    return None
