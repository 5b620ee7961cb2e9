"""A facet schema as a table of fields: ``$ref``s followed over the offline store, ``allOf`` merged."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from bot.registry import BASE_REF

Lookup = Callable[[str], Any]  # absolute URL without fragment -> schema document or None
MAX_DEPTH = 8


@dataclass(frozen=True)
class Field:
    """One row of a facet page: ``path`` is dotted (``fields[].name``), ``inherited`` names the base facet."""

    path: str
    type: str
    required: bool
    description: str = ""
    format: str = ""
    enum: tuple[str, ...] = ()
    inherited: str = ""

    @property
    def depth(self) -> int:
        return self.path.count(".")

    @property
    def parent(self) -> str:
        """The path up to the field's own name (``fields.<key>.``), shown muted."""
        return self.path[:len(self.path) - len(self.leaf)]

    @property
    def leaf(self) -> str:
        return self.path.rsplit(".", 1)[-1]


def _pointer(doc: Any, fragment: str) -> Any:
    node = doc
    for token in (t for t in fragment.lstrip("/").split("/") if t):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


class FieldWalker:
    """Walks one schema document; ``lookup`` serves the other documents a ``$ref`` reaches."""

    def __init__(self, doc: Any, url: str, lookup: Lookup) -> None:
        self.doc, self.url, self.lookup = doc, url, lookup

    def resolve(self, node: dict[str, Any], doc: Any, url: str) -> tuple[Any, Any, str]:
        ref = node["$ref"]
        target = urljoin(url, ref) if url else ref
        base, _, fragment = target.partition("#")
        if ref.startswith("#") or base == url:
            return _pointer(doc, fragment), doc, url
        other = self.lookup(base)
        return (_pointer(other, fragment) if other is not None else None), other, base

    def fields(self, definition: Any) -> list[Field]:
        out: list[Field] = []
        self._object(definition, "", self.doc, self.url, out, 0, "", frozenset())
        return out

    def _object(self, node: Any, prefix: str, doc: Any, url: str, out: list[Field], depth: int,
                inherited: str, seen: frozenset[str]) -> None:
        """Rows for the properties of an object schema (following ``$ref`` and ``allOf``)."""
        if depth > MAX_DEPTH or not isinstance(node, dict):
            return
        if isinstance(node.get("$ref"), str):
            key = urljoin(url, node["$ref"])
            if key in seen:
                return
            match = BASE_REF.match(node["$ref"])
            target, tdoc, turl = self.resolve(node, doc, url)
            self._object(target, prefix, tdoc, turl, out, depth + 1, inherited or (match[1] if match else ""),
                         seen | {key})
        for part in node.get("allOf") or []:
            self._object(part, prefix, doc, url, out, depth + 1, inherited, seen)
        props = node.get("properties")
        if not isinstance(props, dict):
            return
        required: list[Any] = node["required"] if isinstance(node.get("required"), list) else []
        known = {f.path for f in out}
        for name, prop in props.items():
            path = f"{prefix}{name}"
            if path in known:
                continue
            out.append(self._row(path, prop, doc, url, name in required, inherited, seen))
            self._nested(prop, path, doc, url, out, depth, inherited, seen)

    def _nested(self, prop: Any, path: str, doc: Any, url: str, out: list[Field], depth: int,
                inherited: str, seen: frozenset[str]) -> None:
        prop, doc, url, seen = self._deref(prop, doc, url, seen)
        if not isinstance(prop, dict):
            return
        if _has_props(prop):
            self._object(prop, f"{path}.", doc, url, out, depth + 1, inherited, seen)
        items = prop.get("items")
        if isinstance(items, dict):
            items, idoc, iurl, iseen = self._deref(items, doc, url, seen)
            if isinstance(items, dict) and _has_props(items):
                self._object(items, f"{path}[].", idoc, iurl, out, depth + 1, inherited, iseen)
        extra = prop.get("additionalProperties")
        if isinstance(extra, dict):
            extra, edoc, eurl, eseen = self._deref(extra, doc, url, seen)
            if isinstance(extra, dict) and _has_props(extra):
                self._object(extra, f"{path}.<key>.", edoc, eurl, out, depth + 1, inherited, eseen)

    def _deref(self, node: Any, doc: Any, url: str, seen: frozenset[str]) -> tuple[Any, Any, str, frozenset[str]]:
        for _ in range(MAX_DEPTH):
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                break
            key = urljoin(url, node["$ref"])
            if key in seen:
                return None, doc, url, seen
            seen = seen | {key}
            node, doc, url = self.resolve(node, doc, url)
        return node, doc, url, seen

    def _row(self, path: str, prop: Any, doc: Any, url: str, required: bool, inherited: str,
             seen: frozenset[str]) -> Field:
        target, _, _, _ = self._deref(prop, doc, url, seen)
        node = target if isinstance(target, dict) else {}
        description = prop.get("description") if isinstance(prop, dict) else None
        description = description if isinstance(description, str) else node.get("description", "")
        enum = node.get("enum")
        if enum is None and isinstance(node.get("items"), dict) and isinstance(node["items"].get("enum"), list):
            enum = node["items"]["enum"]
        unresolved = isinstance(prop, dict) and isinstance(prop.get("$ref"), str) and target is None
        return Field(
            path=path, type="unresolved $ref" if unresolved else _type(node), required=required,
            description=description if isinstance(description, str) else "",
            format=str(node.get("format", "")) if isinstance(node.get("format", ""), str) else "",
            enum=tuple(str(v) for v in enum) if isinstance(enum, list) else (),
            inherited=inherited)


def _has_props(node: dict[str, Any]) -> bool:
    return isinstance(node.get("properties"), dict) or isinstance(node.get("allOf"), list)


def _type(node: dict[str, Any]) -> str:
    value = node.get("type")
    if isinstance(value, list):
        text = " | ".join(str(v) for v in value)
    elif isinstance(value, str):
        text = value
    elif "enum" in node:
        text = "enum"
    elif "const" in node:
        text = "const"
    elif any(k in node for k in ("oneOf", "anyOf")):
        text = "one of"
    elif _has_props(node):
        text = "object"
    else:
        text = "any"
    if text == "array" and isinstance(node.get("items"), dict):
        inner = node["items"]
        text = f"array of {_type(inner) if not isinstance(inner.get('$ref'), str) else 'object'}"
    return text
