"""Classify the change between two versions of a facet schema in SchemaVer terms.

``spec/Versioning.md``: MODEL-REVISION-ADDITION. MODEL for a change that prevents interaction with
any historical data (a removed or newly required field, a changed type), REVISION for one that may
prevent interaction with some (tighter constraints), ADDITION for one compatible with all (a new
optional field, documentation).

The comparison is of what the schemas accept, not of their text: a ``$ref`` is followed wherever the
two sides differ (an inline schema moved into ``$defs``, a base ``$ref`` moved to another published
version of ``OpenLineage.json``), so moving a definition is no change and a new version of a
referenced schema counts for what differs between the two referenced definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin

from bot.core.jsondoc import resolve_pointer
from bot.model.evolution.classes import CLASSES, Bump, backward

__all__ = ["Bump", "Change", "actual_bump", "diff", "required_bump"]


@dataclass(frozen=True)
class Change:
    """One difference, of one class (``bot.model.evolution.classes``). ``bump`` is its backward
    digit (the version bump it needs), ``forward`` what it means for readers of the old version.
    ``pointer`` is where it sits in the new file (the ``$ref`` it was reached through when it lies
    in another document); ``unverified`` marks a ``$ref`` whose target could not be read."""

    bump: Bump
    where: str
    what: str
    pointer: str = ""
    unverified: bool = False
    kind: str = "keyword-changed"
    forward: Bump = Bump.NONE

    @property
    def category(self) -> str:
        return CLASSES[self.kind].category


Resolver = Callable[[str], Any]
"""Absolute schema URL (no fragment) -> the schema, or None when neither the repository nor its
mirror has it."""


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
    # pairs of $ref targets already compared
    seen: set[tuple[str, str]] = field(default_factory=set)
    # the digit of an optional field added to an open object (the policy)
    open_add: Bump = Bump.ADDITION

    def change(self, kind: str, where: str, what: str, **extra: Any) -> Change:
        return Change(
            backward(kind, self.open_add),
            where,
            what,
            kind=kind,
            forward=CLASSES[kind].forward,
            **extra,
        )

    @property
    def covered(self) -> bool:
        """Whether identical local ``$ref``s on both sides need no following: both sides are the
        facet files (their ``$defs`` are compared key by key) or the same referenced document."""
        if self.old.root and self.new.root:
            return True
        return not self.old.root and not self.new.root and self.old.url == self.new.url


_DOC_KEYS = {"description", "title", "example", "examples", "$comment", "deprecated"}
_CHILD_MAPS = ("properties", "$defs", "patternProperties")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "additionalProperties", "unevaluatedProperties", "contains", "propertyNames")
_HANDLED = {
    "$ref",
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "default",
    "format",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "additionalProperties",
    "unevaluatedProperties",
    "uniqueItems",
    "pattern",
    "multipleOf",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "$id",
    "$schema",
    "$anchor",
    *_DOC_KEYS,
    *_CHILD_MAPS,
    *_CHILD_LISTS,
    *_CHILD_ONE,
}


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
    """The schema a ``$ref`` node stands for (its siblings kept), the side it lives on, and its
    absolute URL."""
    target_url = urljoin(side.url, node["$ref"]) if side.url else node["$ref"]
    doc_url, _, fragment = target_url.partition("#")
    same = doc_url == side.url
    target_side = side if same else _Side(side.resolve(doc_url), doc_url, side.resolve, root=False)
    target = resolve_pointer(target_side.doc, fragment) if target_side.doc is not None else None
    siblings = {k: v for k, v in node.items() if k != "$ref"}
    if isinstance(target, dict) and siblings:
        clash = any(
            k in target and target[k] != v and k not in _DOC_KEYS for k, v in siblings.items()
        )
        target = {"allOf": [target, siblings]} if clash else {**target, **siblings}
    return target, target_side, target_url


def _refs(old: Any, new: Any, where: str, walk: _Walk) -> Iterator[Change] | None:
    """Changes behind differing ``$ref``s (None when neither node needs following)."""
    old_ref = (
        old.get("$ref") if isinstance(old, dict) and isinstance(old.get("$ref"), str) else None
    )
    new_ref = (
        new.get("$ref") if isinstance(new, dict) and isinstance(new.get("$ref"), str) else None
    )
    if old_ref is None and new_ref is None:
        return None
    old_abs = urljoin(walk.old.url, old_ref) if old_ref and walk.old.url else old_ref
    new_abs = urljoin(walk.new.url, new_ref) if new_ref and walk.new.url else new_ref
    if old_abs == new_abs and old_ref is not None and (not old_ref.startswith("#") or walk.covered):
        return None  # the same published target, or a local one compared key by key in $defs
    return _followed(old, new, where, walk, old_ref is not None, new_ref is not None)


def _followed(
    old: Any, new: Any, where: str, walk: _Walk, old_is_ref: bool, new_is_ref: bool
) -> Iterator[Change]:
    old_node, old_side, old_url = (
        _follow(walk.old, old) if old_is_ref else (old, walk.old, f"inline@{where}")
    )
    new_node, new_side, new_url = (
        _follow(walk.new, new) if new_is_ref else (new, walk.new, f"inline@{where}")
    )
    key = (old_url, new_url)
    if key in walk.seen:
        return  # each pair of targets is compared once: ends cycles and bounds fan-out
    walk.seen.add(key)
    anchor = walk.anchor if walk.anchor is not None or new_side.root else where
    for label, node, side, url in (
        ("base", old_node, old_side, old_url),
        ("head", new_node, new_side, new_url),
    ):
        if node is None:
            why = (
                "is neither in the repository nor in its published mirror"
                if side.doc is None
                else "points at nothing in that document"
            )
            yield walk.change(
                "ref-unverified",
                f"{where}/$ref",
                f"the {label}'s $ref {url} {why}, so what changed behind it was not compared",
                pointer=(anchor if anchor is not None else where) + "/$ref",
                unverified=True,
            )
            return
    inner = replace(walk, old=old_side, new=new_side, anchor=anchor)  # shares ``seen``
    yield from _diff(old_node, new_node, where, inner)


def diff(
    old: Any,
    new: Any,
    where: str = "",
    resolve_old: Resolver | None = None,
    resolve_new: Resolver | None = None,
) -> Iterator[Change]:
    """Every semantic difference between two schemas, each with the bump it needs.

    ``resolve_old`` and ``resolve_new`` find the documents a non-local ``$ref`` points at on each
    side.
    """
    walk = _Walk(
        _Side(old, _url(old), resolve_old or _no_resolver),
        _Side(new, _url(new), resolve_new or _no_resolver),
    )
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
            yield walk.change("composition-changed", where or "/", "the schema changed shape")
        return
    yield from _fields(old, new, where, walk)
    yield from _constraints(old, new, where, walk)
    for key in _CHILD_MAPS:
        yield from _maps(key, old.get(key), new.get(key), where, walk)
    for key in _CHILD_LISTS:
        yield from _lists(key, old, new, where, walk)
    for key in _CHILD_ONE:
        if key in ("additionalProperties", "unevaluatedProperties") and not isinstance(
            new.get(key), dict
        ):
            continue
        if key in old or key in new:
            yield from _diff(old.get(key, {}), new.get(key, {}), f"{where}/{key}", walk)
    yield from _conditionals(old, new, where, walk)
    for key in sorted((set(old) | set(new)) - _HANDLED):
        if old.get(key) != new.get(key):
            yield walk.change("keyword-changed", f"{where}/{key}", f"{key} changed")
    if old.get("default") != new.get("default"):
        yield walk.change("default-changed", f"{where}/default", "default changed")
    for key in sorted(_DOC_KEYS):
        if old.get(key) != new.get(key):
            yield walk.change("documentation", f"{where}/{key}", f"{key} changed (documentation)")


def _accepts(types: set[str], t: str) -> bool:
    return t in types or (t == "integer" and "number" in types)


def _type_change(old_types: set[str], new_types: set[str]) -> str | None:
    """The class of a change of ``type`` (no ``type`` accepts every type)."""
    if old_types == new_types:
        return None
    if not new_types:
        return "type-extended"
    if not old_types:
        return "type-narrowed"
    removed = any(not _accepts(new_types, t) for t in old_types)
    added = any(not _accepts(old_types, t) for t in new_types)
    if removed and added:
        return "type-changed"
    return "type-narrowed" if removed else "type-extended" if added else None


def _is_closed(node: dict[str, Any]) -> bool:
    return node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False


def _fields(old: dict[str, Any], new: dict[str, Any], where: str, walk: _Walk) -> Iterator[Change]:
    """Type, fields, required, enum, const and the content model of one object schema."""
    old_types, new_types = _types(old), _types(new)
    kind = _type_change(old_types, new_types)
    if kind is not None:
        yield walk.change(kind, where or "/", f"type {sorted(old_types)} -> {sorted(new_types)}")
    old_props: dict[str, Any] = old["properties"] if isinstance(old.get("properties"), dict) else {}
    new_props: dict[str, Any] = new["properties"] if isinstance(new.get("properties"), dict) else {}
    old_req = set(old.get("required") or []) if isinstance(old.get("required"), list) else set()
    new_req = set(new.get("required") or []) if isinstance(new.get("required"), list) else set()
    removed = sorted(set(old_props) - set(new_props))
    added = sorted(set(new_props) - set(old_props))
    facet_file = where == "" and walk.old.root and walk.new.root and "$defs" in new
    renamed = _renames(removed, added, old_props, new_props)
    for old_name, new_name in renamed:
        kind = "facet-key-renamed" if facet_file else "property-renamed"
        yield walk.change(
            kind,
            f"{where}/properties/{new_name}",
            f"{'facet key' if facet_file else 'field'} {old_name!r} renamed to {new_name!r}",
        )
    gone = {o for o, _ in renamed}
    came = {n for _, n in renamed}
    closed_old, closed_new = _is_closed(old), _is_closed(new)
    for name in removed:
        if name not in gone:
            kind = (
                "facet-key-removed"
                if facet_file
                else "property-removed-closed"
                if closed_new
                else "property-removed-open"
            )
            yield walk.change(kind, f"{where}/properties/{name}", f"field {name!r} removed")
    for name in added:
        if name in came:
            continue
        if name in new_req:
            yield walk.change(
                "property-added-required",
                f"{where}/properties/{name}",
                f"new required field {name!r}",
            )
        elif facet_file:
            yield walk.change(
                "facet-key-added", f"{where}/properties/{name}", f"new facet key {name!r}"
            )
        else:
            kind = "property-added-closed" if closed_old else "property-added-open"
            yield walk.change(kind, f"{where}/properties/{name}", f"new optional field {name!r}")
    # Names the old list required without declaring them: no data written to the declared fields met
    # it, so replacing them with declared fields only affects data that carried the undeclared ones.
    phantom = sorted(n for n in old_req - new_req if isinstance(n, str) and n not in old_props)
    for name in sorted(
        n
        for n in new_req - old_req
        if isinstance(n, str) and (n in old_props or n not in new_props)
    ):
        if phantom and name in old_props:
            yield walk.change(
                "required-corrected",
                f"{where}/required",
                f"field {name!r} became required in place "
                f"of {', '.join(map(repr, phantom))}, which the old schema required but never "
                f"declared",
            )
        else:
            yield walk.change(
                "required-added", f"{where}/required", f"field {name!r} became required"
            )
    for name in sorted(n for n in old_req - new_req if isinstance(n, str)):
        yield walk.change(
            "required-removed", f"{where}/required", f"field {name!r} is no longer required"
        )
    yield from _values(old, new, where, walk)
    if not closed_old and closed_new:
        yield walk.change(
            "object-closed", where or "/", "additional properties are no longer allowed"
        )
    elif closed_old and not closed_new:
        yield walk.change("object-opened", where or "/", "additional properties are allowed again")


def _renames(
    removed: list[str], added: list[str], old_props: dict[str, Any], new_props: dict[str, Any]
) -> list[tuple[str, str]]:
    """Removed and added names of one map that are the same field renamed: equal schemas, or the one
    removed and the one added name of the map (documentation aside)."""

    def bare(node: Any) -> Any:
        return (
            {k: v for k, v in node.items() if k not in _DOC_KEYS}
            if isinstance(node, dict)
            else node
        )

    pairs: list[tuple[str, str]] = []
    left = list(added)
    for name in removed:
        match = next((n for n in left if bare(new_props[n]) == bare(old_props[name])), None)
        if match is not None:
            pairs.append((name, match))
            left.remove(match)
    rest_old = [n for n in removed if n not in {o for o, _ in pairs}]
    if len(rest_old) == 1 and len(left) == 1:
        pairs.append((rest_old[0], left[0]))
    return pairs


def _values(old: dict[str, Any], new: dict[str, Any], where: str, walk: _Walk) -> Iterator[Change]:
    """``enum`` and ``const``."""
    if "enum" in old or "enum" in new:
        old_enum, new_enum = old.get("enum") or [], new.get("enum") or []
        if "enum" not in new:
            yield walk.change("enum-removed", f"{where}/enum", "enum no longer restricts the value")
        elif any(v not in new_enum for v in old_enum) or "enum" not in old:
            yield walk.change(
                "enum-narrowed", f"{where}/enum", "enum values removed or newly restricted"
            )
        elif any(v not in old_enum for v in new_enum):
            yield walk.change("enum-extended", f"{where}/enum", "enum values added")
    if old.get("const", _ABSENT) != new.get("const", _ABSENT):
        kind = (
            "const-added"
            if "const" not in old
            else "const-removed"
            if "const" not in new
            else "const-changed"
        )
        yield walk.change(
            kind, f"{where}/const", kind.replace("-", " ").replace("const", "const value", 1)
        )


_ABSENT = object()
_LOWER = {
    "minLength": "string",
    "minimum": "number",
    "exclusiveMinimum": "number",
    "minItems": "array",
    "minContains": "array",
    "minProperties": "object",
}
_UPPER = {
    "maxLength": "string",
    "maximum": "number",
    "exclusiveMaximum": "number",
    "maxItems": "array",
    "maxContains": "array",
    "maxProperties": "object",
}
_SWITCHES = {"uniqueItems": "array"}  # true is the tighter
# added: tighter; removed: looser; changed: neither
_REPLACED = {"pattern": "string", "multipleOf": "number"}
_FORMATS = ("format",)


def _constraints(
    old: dict[str, Any], new: dict[str, Any], where: str, walk: _Walk
) -> Iterator[Change]:
    """Bounds, patterns and formats: tighter is a REVISION, looser an ADDITION."""

    def number(value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    for key, family in (*_LOWER.items(), *_UPPER.items()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if b is None or not number(b):
            tighter = False
        elif a is None or not number(a):
            tighter = True
        else:
            tighter = b > a if key in _LOWER else b < a
        kind = f"{family}-{'tightened' if tighter else 'loosened'}"
        yield walk.change(
            kind,
            f"{where}/{key}",
            f"{key} {a if a is not None else '(none)'} -> {b if b is not None else '(none)'}",
        )
    for key, family in _SWITCHES.items():
        a, b = old.get(key) is True, new.get(key) is True
        if a != b:
            yield walk.change(
                f"{family}-{'tightened' if b else 'loosened'}",
                f"{where}/{key}",
                f"{key} {a} -> {b}",
            )
    for key, family in _REPLACED.items():
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if a is None:
            kind = f"{family}-tightened"
        elif b is None:
            kind = f"{family}-loosened"
        elif (
            key == "multipleOf"
            and number(a)
            and number(b)
            and b != 0
            and a != 0
            and (b / a).is_integer()
        ):
            kind = f"{family}-tightened"
        elif (
            key == "multipleOf"
            and number(a)
            and number(b)
            and b != 0
            and a != 0
            and (a / b).is_integer()
        ):
            kind = f"{family}-loosened"
        else:
            kind = "constraint-changed"
        yield walk.change(kind, f"{where}/{key}", f"{key} {a!r} -> {b!r}")
    a, b = old.get("format"), new.get("format")
    if a != b:
        kind = "format-added" if a is None else "format-removed" if b is None else "format-changed"
        yield walk.change(kind, f"{where}/format", f"format {a!r} -> {b!r}")


def _conditionals(
    old: dict[str, Any], new: dict[str, Any], where: str, walk: _Walk
) -> Iterator[Change]:
    """``if``/``then``/``else``, ``not``, ``dependentRequired`` and ``dependentSchemas``."""
    cond_old = {k: old[k] for k in ("if", "then", "else") if k in old}
    cond_new = {k: new[k] for k in ("if", "then", "else") if k in new}
    if cond_old != cond_new:
        if not cond_old:
            yield walk.change("conditional-added", f"{where}/if", "if/then/else added")
        elif not cond_new:
            yield walk.change("conditional-removed", f"{where}/if", "if/then/else removed")
        elif cond_old.get("if") != cond_new.get("if"):
            yield walk.change("not-changed", f"{where}/if", "the condition of if/then/else changed")
        else:
            for key in ("then", "else"):
                if key in cond_old or key in cond_new:
                    yield from _diff(
                        cond_old.get(key, {}), cond_new.get(key, {}), f"{where}/{key}", walk
                    )
    if old.get("not", _ABSENT) != new.get("not", _ABSENT):
        kind = (
            "not-added"
            if "not" not in old
            else "not-removed"
            if "not" not in new
            else "not-changed"
        )
        yield walk.change(kind, f"{where}/not", kind.replace("-", " ", 1))
    for key in ("dependentRequired", "dependentSchemas"):
        a: dict[str, Any] = old[key] if isinstance(old.get(key), dict) else {}
        b: dict[str, Any] = new[key] if isinstance(new.get(key), dict) else {}
        for name in sorted(set(a) | set(b)):
            if name not in a:
                yield walk.change(
                    "dependency-added", f"{where}/{key}/{name}", f"{key} of {name!r} added"
                )
            elif name not in b:
                yield walk.change(
                    "dependency-removed", f"{where}/{key}/{name}", f"{key} of {name!r} removed"
                )
            elif key == "dependentSchemas":
                yield from _diff(a[name], b[name], f"{where}/{key}/{name}", walk)
            elif a[name] != b[name]:
                more = (
                    set(b[name]) - set(a[name])
                    if isinstance(a[name], list) and isinstance(b[name], list)
                    else {1}
                )
                kind = "dependency-added" if more else "dependency-removed"
                yield walk.change(
                    kind, f"{where}/{key}/{name}", f"{key} of {name!r} {a[name]} -> {b[name]}"
                )


def _maps(key: str, old_map: Any, new_map: Any, where: str, walk: _Walk) -> Iterator[Change]:
    if not isinstance(old_map, dict) or not isinstance(new_map, dict):
        if old_map != new_map and key != "properties":
            yield walk.change("composition-changed", f"{where}/{key}", f"{key} changed")
        return
    for name in sorted(set(old_map) & set(new_map)):
        yield from _diff(old_map[name], new_map[name], f"{where}/{key}/{name}", walk)
    if key == "$defs":
        removed = sorted(set(old_map) - set(new_map))
        added = sorted(set(new_map) - set(old_map))
        renamed = _renames(removed, added, old_map, new_map)
        for old_name, new_name in renamed:
            yield walk.change(
                "definition-renamed",
                f"{where}/$defs/{new_name}",
                f"definition {old_name!r} renamed to {new_name!r}",
            )
        for name in removed:
            if name not in {o for o, _ in renamed}:
                yield walk.change(
                    "definition-removed", f"{where}/$defs/{name}", f"definition {name!r} removed"
                )
        for name in added:
            if name not in {n for _, n in renamed}:
                yield walk.change(
                    "definition-added", f"{where}/$defs/{name}", f"definition {name!r} added"
                )
    elif key == "patternProperties":
        for name in sorted(set(old_map) ^ set(new_map)):
            kind = "constraint-changed"
            yield walk.change(
                kind,
                f"{where}/{key}/{name}",
                f"pattern property {name!r} {'added' if name in new_map else 'removed'}",
            )


def _lists(
    key: str, old: dict[str, Any], new: dict[str, Any], where: str, walk: _Walk
) -> Iterator[Change]:
    """Subschema lists, item by item; an ``allOf`` member added or removed is diffed against no
    constraint (the node's own ``type`` where the member repeats it), an ``anyOf`` alternative added
    is an ADDITION, a ``oneOf`` one a REVISION (data matching two alternatives fails), one removed a
    REVISION."""
    old_list, new_list = old.get(key), new.get(key)
    if old_list is None and new_list is None:
        return
    if not isinstance(old_list, list) or not isinstance(new_list, list):
        if (
            isinstance(old_list or [], list)
            and isinstance(new_list or [], list)
            and key != "prefixItems"
        ):
            old_list, new_list = old_list or [], new_list or []
        else:
            yield walk.change("composition-changed", f"{where}/{key}", f"{key} changed")
            return
    common = min(len(old_list), len(new_list))
    for i in range(common):
        yield from _diff(old_list[i], new_list[i], f"{where}/{key}/{i}", walk)
    extra_old, extra_new = old_list[common:], new_list[common:]
    if key == "allOf":

        def stub(item: Any) -> dict[str, Any]:  # the node's own type, where the member repeats it
            return (
                {"type": new["type"]}
                if "type" in new and isinstance(item, dict) and "type" in item
                else {}
            )

        for i, item in enumerate(extra_new, common):
            yield from _diff(stub(item), item, f"{where}/{key}/{i}", walk)
        for i, item in enumerate(extra_old, common):
            yield from _diff(item, stub(item), f"{where}/{key}/{i}", walk)
    elif key in ("anyOf", "oneOf"):
        if extra_new and not old_list:
            yield walk.change(
                "branch-removed",
                f"{where}/{key}",
                f"{key} added: values must match one of its alternatives",
            )
        for i in range(common, len(new_list)):
            if old_list:
                kind = "branch-added" if key == "anyOf" else "oneof-branch-added"
                yield walk.change(kind, f"{where}/{key}/{i}", f"{key} alternative added")
        for i in range(common, len(old_list)):
            yield walk.change("branch-removed", f"{where}/{key}/{i}", f"{key} alternative removed")
    elif extra_old or extra_new:
        yield walk.change("composition-changed", f"{where}/{key}", f"{key} changed")


def required_bump(
    old: Any,
    new: Any,
    resolve_old: Resolver | None = None,
    resolve_new: Resolver | None = None,
    open_add: Bump = Bump.ADDITION,
) -> tuple[Bump, list[Change]]:
    """The smallest bump the change from ``old`` to ``new`` needs (``$id`` and ``$schema`` ignored).

    Unverified changes (a ``$ref`` target that could not be read) are listed but do not raise the
    bump. ``open_add`` is the digit of an optional field added to an open object
    (versions.open_model_optional_add).
    """
    strip = {"$id", "$schema"}
    a = {k: v for k, v in old.items() if k not in strip} if isinstance(old, dict) else old
    b = {k: v for k, v in new.items() if k not in strip} if isinstance(new, dict) else new
    if isinstance(old, dict) and isinstance(new, dict):
        walk = _Walk(
            _Side(a, _url(old), resolve_old or _no_resolver),
            _Side(b, _url(new), resolve_new or _no_resolver),
            open_add=open_add,
        )
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
