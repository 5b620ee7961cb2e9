"""A facet schema as a table of fields: ``$ref``s followed over the offline store, every construct
shown.

``allOf`` parts are merged into one object. Each branch of ``oneOf``/``anyOf`` and the
``then``/``else`` of an ``if`` is a row of its own, ``{Name}`` in the path
(``entries[].{LineageDatasetEntry}.namespace``), with its fields below it. Map values are ``<key>``
(``additionalProperties``) or ``<key ~ pattern>`` (``patternProperties``). A ``$ref`` met again
inside itself is one row saying so, never expanded twice. Enums, ``const``, formats, defaults,
``deprecated``, patterns and bounds are on the rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib import parse

from bot.core.inert import shorten
from bot.core.small_cache import small_cache
from bot.model.registry import BASE_REF

Lookup = Callable[[str], Any]  # absolute URL without fragment -> schema document or None
MAX_DEPTH = 12
MAX_ROWS = 400  # per definition: a hostile schema cannot make a page without end
# schema objects walked per definition: ``allOf`` parts that share what they reference are walked
# each time they are met (rows already shown are dropped, so MAX_ROWS alone does not bound it): six
# levels of 16 such parts were 16 s in a 3.2 KB schema
MAX_VISITS = 20_000
_BOUNDS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
)


@dataclass(frozen=True)
class Field:
    """One row of a facet page: ``path`` is dotted (``fields[].name``), ``inherited`` names the base
    facet."""

    path: str
    type: str
    required: bool
    description: str = ""
    format: str = ""
    enum: tuple[str, ...] = ()
    inherited: str = ""
    default: str = ""  # the JSON of the default, when there is one
    deprecated: bool = False
    notes: tuple[str, ...] = ()  # bounds, pattern, which variant, recursion

    @property
    def depth(self) -> int:
        return self.path.count(".")

    @property
    def parent(self) -> str:
        """The path up to the field's own name (``fields.<key>.``), shown muted."""
        return self.path[: len(self.path) - len(self.leaf)]

    @property
    def leaf(self) -> str:
        return self.path.rsplit(".", 1)[-1]


# every facet page joins the same few $refs (the base facets') again
@small_cache(maxsize=4096)
def urljoin(base: str, ref: str) -> str:
    return parse.urljoin(base, ref)


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


# what one row shows of a text: a schema's $ref repeats one definition on many rows, so its 100 KB
# description made a page of 20 MB from a schema of 107 KB. Past TABLE_TEXT characters in one table,
# each row shows only the short form.
MAX_DESCRIPTION, MAX_ENUM, MAX_ENUM_VALUE = 2000, 100, 200
TABLE_TEXT, SHORT_DESCRIPTION, SHORT_ENUM = 200_000, 100, 5


def _enum(values: list[Any], count: int, length: int) -> tuple[str, ...]:
    shown = tuple(
        shorten(v, length) if isinstance(v, str) else _json(v, 60) for v in values[:count]
    )
    return shown + ((f"… ({len(values):,} values)",) if len(values) > count else ())


def _json(value: Any, limit: int = 80) -> str:
    try:
        out = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        out = str(value)
    return out if len(out) <= limit else out[: limit - 1] + "…"


class FieldWalker:
    """Walks one schema document; ``lookup`` serves the other documents a ``$ref`` reaches."""

    def __init__(self, doc: Any, url: str, lookup: Lookup) -> None:
        self.doc, self.url, self.lookup = doc, url, lookup
        self._out: list[Field] = []
        self._first: dict[str, str] = {}  # $ref target -> the path where it was expanded first
        self._visits = 0  # schema objects walked (``MAX_VISITS``)
        self._text = 0  # characters of descriptions and enums shown (``TABLE_TEXT``)

    def resolve(self, node: dict[str, Any], doc: Any, url: str) -> tuple[Any, Any, str]:
        ref = node["$ref"]
        target = urljoin(url, ref) if url else ref
        base, _, fragment = target.partition("#")
        if ref.startswith("#") or base == url:
            return _pointer(doc, fragment), doc, url
        other = self.lookup(base)
        return (_pointer(other, fragment) if other is not None else None), other, base

    def fields(self, definition: Any) -> list[Field]:
        self._out, self._first, self._visits, self._text = [], {}, 0, 0
        self._object(definition, "", self.doc, self.url, 0, "", frozenset())
        if self._visits > MAX_VISITS:
            self._out.append(
                Field("…", "", False, notes=(f"cut: the schema expands past {MAX_VISITS:,} parts",))
            )
        return self._out

    def _add(self, row: Field) -> bool:
        if len(self._out) >= MAX_ROWS or any(f.path == row.path for f in self._out[-50:]):
            return False
        self._out.append(row)
        return True

    def _object(
        self,
        node: Any,
        prefix: str,
        doc: Any,
        url: str,
        depth: int,
        inherited: str,
        seen: frozenset[str],
    ) -> None:
        """Rows for what an object schema holds: properties, map values and variants."""
        self._visits += 1
        if (
            depth > MAX_DEPTH
            or not isinstance(node, dict)
            or len(self._out) >= MAX_ROWS
            or self._visits > MAX_VISITS
        ):
            return
        if isinstance(node.get("$ref"), str):
            key = urljoin(url, node["$ref"])
            if key in seen:
                return
            match = BASE_REF.match(node["$ref"])
            target, tdoc, turl = self.resolve(node, doc, url)
            self._first.setdefault(key, prefix.rstrip("."))
            self._object(
                target,
                prefix,
                tdoc,
                turl,
                depth + 1,
                inherited or (match[1] if match else ""),
                seen | {key},
            )
        for part in node.get("allOf") or []:
            self._object(part, prefix, doc, url, depth + 1, inherited, seen)
        props = node.get("properties")
        required: list[Any] = node["required"] if isinstance(node.get("required"), list) else []
        known = {f.path for f in self._out}
        for name, prop in props.items() if isinstance(props, dict) else ():
            path = f"{prefix}{name}"
            if path not in known:
                self._field(path, prop, doc, url, depth, name in required, inherited, seen)
        patterns = node.get("patternProperties")
        for pattern, prop in patterns.items() if isinstance(patterns, dict) else ():
            self._field(f"{prefix}<key ~ {pattern}>", prop, doc, url, depth, False, inherited, seen)
        extra = node.get("additionalProperties")
        # a pure map is the type of its field: map of ...
        if isinstance(extra, dict) and (props or patterns):
            self._field(f"{prefix}<other key>", extra, doc, url, depth, False, inherited, seen)
        for keyword, word in (("oneOf", "one of"), ("anyOf", "any of")):
            variants = node.get(keyword)
            if isinstance(variants, list):
                for i, variant in enumerate(variants):
                    label = _label(variant, i)
                    self._variant(
                        f"{prefix}{{{label}}}",
                        variant,
                        doc,
                        url,
                        depth,
                        inherited,
                        seen,
                        f"variant {i + 1} of {len(variants)} ({word})",
                    )
        if isinstance(node.get("if"), dict):
            condition = "when " + _json(node["if"], 120)
            for keyword in ("then", "else"):
                if isinstance(node.get(keyword), dict):
                    self._variant(
                        f"{prefix}{{{keyword}}}",
                        node[keyword],
                        doc,
                        url,
                        depth,
                        inherited,
                        seen,
                        condition if keyword == "then" else "otherwise (" + condition + ")",
                    )

    def _variant(
        self,
        path: str,
        node: Any,
        doc: Any,
        url: str,
        depth: int,
        inherited: str,
        seen: frozenset[str],
        note: str,
    ) -> None:
        target, vdoc, vurl, vseen, again = self._deref(node, doc, url, seen, path)
        if again is not None:
            self._add(Field(path, "recursive", False, notes=(note, _same(again))))
            return
        body = target if isinstance(target, dict) else {}
        description = body["description"] if isinstance(body.get("description"), str) else ""
        if self._add(
            Field(path, _type(body), False, description=description, notes=(note, *_notes(body)))
        ):
            self._object(body, f"{path}.", vdoc, vurl, depth + 1, inherited, vseen)

    def _field(
        self,
        path: str,
        prop: Any,
        doc: Any,
        url: str,
        depth: int,
        required: bool,
        inherited: str,
        seen: frozenset[str],
    ) -> None:
        """The row of one property, then the rows of what it holds."""
        target, tdoc, turl, tseen, again = self._deref(prop, doc, url, seen, path)
        if again is not None:
            self._add(
                Field(path, "recursive", required, notes=(_same(again),), inherited=inherited)
            )
            return
        if not self._add(self._row(path, prop, target, required, inherited)) or not isinstance(
            target, dict
        ):
            return
        self._nested(target, path, tdoc, turl, depth, inherited, tseen)

    def _nested(
        self,
        prop: dict[str, Any],
        path: str,
        doc: Any,
        url: str,
        depth: int,
        inherited: str,
        seen: frozenset[str],
    ) -> None:
        if _has_fields(prop):
            self._object(prop, f"{path}.", doc, url, depth + 1, inherited, seen)
        items = prop.get("items")
        if isinstance(items, dict):
            items, idoc, iurl, iseen, again = self._deref(items, doc, url, seen, f"{path}[]")
            if again is not None:
                self._add(Field(f"{path}[]", "recursive", False, notes=(_same(again),)))
            elif isinstance(items, dict) and _has_fields(items):
                self._object(items, f"{path}[].", idoc, iurl, depth + 1, inherited, iseen)
        extra = prop.get("additionalProperties")
        if (
            isinstance(extra, dict)
            and not isinstance(prop.get("properties"), dict)
            and not isinstance(prop.get("patternProperties"), dict)
        ):
            extra, edoc, eurl, eseen, again = self._deref(extra, doc, url, seen, f"{path}.<key>")
            if again is not None:
                self._add(Field(f"{path}.<key>", "recursive", False, notes=(_same(again),)))
            elif isinstance(extra, dict) and _has_fields(extra):
                self._object(extra, f"{path}.<key>.", edoc, eurl, depth + 1, inherited, eseen)

    def _deref(
        self, node: Any, doc: Any, url: str, seen: frozenset[str], path: str = ""
    ) -> tuple[Any, Any, str, frozenset[str], str | None]:
        """The node a ``$ref`` chain ends at; the last item is the path it was first shown at when
        the chain comes back to a ``$ref`` being expanded (recursion), else None."""
        for _ in range(MAX_DEPTH):
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                break
            key = urljoin(url, node["$ref"])
            if key in seen:
                return None, doc, url, seen, self._first.get(key, "")
            seen = seen | {key}
            self._first.setdefault(key, path)
            node, doc, url = self.resolve(node, doc, url)
        return node, doc, url, seen, None

    def _row(self, path: str, prop: Any, target: Any, required: bool, inherited: str) -> Field:
        node = target if isinstance(target, dict) else {}
        description = prop.get("description") if isinstance(prop, dict) else None
        description = description if isinstance(description, str) else node.get("description", "")
        enum = node.get("enum")
        if (
            enum is None
            and isinstance(node.get("items"), dict)
            and isinstance(node["items"].get("enum"), list)
        ):
            enum = node["items"]["enum"]
        unresolved = isinstance(prop, dict) and isinstance(prop.get("$ref"), str) and target is None
        own = prop if isinstance(prop, dict) else {}
        default = (
            own.get("default", node.get("default"))
            if ("default" in own or "default" in node)
            else None
        )
        full = self._text < TABLE_TEXT
        shown = shorten(
            description if isinstance(description, str) else "",
            MAX_DESCRIPTION if full else SHORT_DESCRIPTION,
        )
        values = (
            _enum(enum, *((MAX_ENUM, MAX_ENUM_VALUE) if full else (SHORT_ENUM, SHORT_DESCRIPTION)))
            if isinstance(enum, list)
            else ()
        )
        self._text += len(shown) + sum(map(len, values))
        return Field(
            path=path,
            type="unresolved $ref" if unresolved else _type(node),
            required=required,
            description=shown,
            format=shorten(node["format"], 60) if isinstance(node.get("format"), str) else "",
            enum=values,
            inherited=inherited,
            default=""
            if default is None and not ("default" in own or "default" in node)
            else _json(default),
            deprecated=own.get("deprecated") is True or node.get("deprecated") is True,
            notes=_notes(node),
        )


def _same(first: str) -> str:
    return f"the same as {first or 'the facet'}"


def _label(variant: Any, index: int) -> str:
    """A variant's name: the ``$defs`` name its ``$ref`` points at, its title, else its number."""
    if isinstance(variant, dict):
        if isinstance(variant.get("$ref"), str):
            return variant["$ref"].rsplit("/", 1)[-1][:60] or f"variant {index + 1}"
        if isinstance(variant.get("title"), str) and variant["title"].strip():
            return str(variant["title"]).strip()[:60]
        if "const" in variant:
            return _json(variant["const"], 40)
    return f"variant {index + 1}"


def _notes(node: dict[str, Any]) -> tuple[str, ...]:
    out = [f"{key} {_json(node[key], 60)}" for key in _BOUNDS if key in node]
    if "const" in node:
        out.append(f"always {_json(node['const'], 60)}")
    return tuple(out)


def _has_fields(node: dict[str, Any]) -> bool:
    keys = ("properties", "allOf", "oneOf", "anyOf", "patternProperties")
    return any(isinstance(node.get(k), (dict, list)) for k in keys) or isinstance(
        node.get("if"), dict
    )


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
    elif (
        isinstance(node.get("oneOf"), list)
        or isinstance(node.get("anyOf"), list)
        or _has_fields(node)
    ):
        text = "object"
    else:
        text = "any"
    for keyword, word in (("oneOf", "one of"), ("anyOf", "any of")):
        variants = node.get(keyword)
        if isinstance(variants, list) and variants:
            text = f"{word}: " + " | ".join(_label(v, i) for i, v in enumerate(variants[:8]))
    if text == "array" and isinstance(node.get("items"), dict):
        inner = node["items"]
        text = (
            f"array of "
            f"{_type(inner) if not isinstance(inner.get('$ref'), str) else _label(inner, 0)}"
        )
    extra = node.get("additionalProperties")
    if (
        text == "object"
        and isinstance(extra, dict)
        and not isinstance(node.get("properties"), dict)
    ):
        text = (
            f"map of {_type(extra) if not isinstance(extra.get('$ref'), str) else _label(extra, 0)}"
        )
    return text
