"""A witness for a data-level verdict: a small instance one version of a schema accepts and the
other rejects.

The instance has the shape of an example file (an object holding the facet keys of the schema that
accepts it) and is validated against each whole schema file, as examples are, by both validators the
bot has (pure-Python ``jsonschema`` with the pinned format checker, and ``jsonschema-rs`` with
formats asserted). It is only shown when both validators agree on both sides; otherwise the search
goes on, and within its small budget may find nothing, which the finding then says.

The search is directed, not random: for each change it builds, from the schema that should accept,
the smallest instance reaching the changed node (required fields filled, ``$ref``s and ``allOf``
followed), and puts at that node values drawn from both schemas there (enum and const values, bounds
and one past them, formats, every type, an extra field, the node left out).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from bot.core.findings import Witness
from bot.core.jsondoc import resolve_pointer
from bot.model.evolution.schema_diff import Change
from bot.model.schemas import deadline, rs_validator

Resolver = Callable[[str], Any]
BUDGET_SECONDS = 0.5  # CPU seconds of one witness search (all the changes of one comparison)
MAX_CANDIDATES = 60  # instances tried per change and direction
# The longest string, the most array items a candidate holds, and the largest candidate (as JSON):
# a length limit past 10,000 gets no value one past it (a schema's 400,000,000 built 818 MB), and
# the verdict, read off the schema diff, stays; the finding says no instance was found.
MAX_SIZE = 10_000
MAX_INSTANCE_CHARS = 100_000
_DEPTH = 12  # nesting the generator follows before giving up on a branch

_FORMAT_SAMPLES = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00Z",
    "uri": "https://example.com/x",
    "uri-reference": "x",
    "iri": "https://example.com/x",
    "email": "a@example.com",
    "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
    "duration": "P1D",
    "regex": "a",
}
_GENERIC: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2.5,
    "",
    "a",
    "not a date",
    "2024-01-01T00:00:00Z",
    "https://example.com/x",
    "2024-01-01",
    [],
    [1, 1],
    [None],
    {},
    {"extra_field": 1},
]
_DELETE = object()  # a candidate that leaves the node out


def _referenced(schema: Any, url: str, resolve: Resolver) -> list[tuple[str, Any]]:
    """Every document ``schema`` refers to, transitively, that ``resolve`` finds."""
    found: dict[str, Any] = {}
    pending = [(url, schema)]
    while pending:
        base, node = pending.pop()
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, dict):
                ref = current.get("$ref")
                if isinstance(ref, str) and not ref.startswith("#"):
                    target = urljoin(base, ref).partition("#")[0]
                    if target and target not in found and target != url:
                        doc = resolve(target)
                        if doc is not None:
                            found[target] = doc
                            pending.append((target, doc))
                stack.extend(
                    v
                    for k, v in current.items()
                    if k not in ("enum", "const", "examples", "default")
                )
            elif isinstance(current, list):
                stack.extend(current)
    return list(found.items())


class SideValidators:
    """Both validators of one whole schema file; ``accepts`` answers only when they agree."""

    def __init__(self, schema: Any, resolve: Resolver, label: str) -> None:
        from referencing import Registry  # the pure-Python stack: imported when a witness is built
        from referencing.exceptions import NoSuchResource
        from referencing.jsonschema import DRAFT202012

        from bot.model.schemas_python import FORMAT_CHECKER, HardenedValidator

        self.schema = schema
        self.label = label
        url = (
            str(schema.get("$id") or "urn:registry-bot:witness") if isinstance(schema, dict) else ""
        )
        resources = _referenced(schema, url, resolve)
        docs = dict(resources)

        def retrieve(uri: str) -> Any:
            doc = docs.get(uri.partition("#")[0])
            if doc is None:
                raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # never fetched
            return DRAFT202012.create_resource(doc)

        self.py = HardenedValidator(
            schema,
            registry=Registry(retrieve=retrieve),  # type: ignore[call-arg]
            format_checker=FORMAT_CHECKER,
        )
        try:
            self.rs: Any = rs_validator(schema, resources, validate_formats=True)
        except Exception:  # noqa: BLE001 - a schema jsonschema-rs cannot compile gets no witness
            self.rs = None

    def accepts(self, instance: Any) -> bool | None:
        """True or False when both validators say so, None when they disagree or cannot decide."""
        if self.rs is None:
            return None
        try:
            # The bounded pure-Python validator first: jsonschema-rs cannot be stopped, so it only
            # sees an instance the other has finished within its deadline (a schema whose refs fan
            # out exponentially stops here, never in Rust). This thread's CPU time: whether a
            # witness is found does not depend on the machine's load.
            with deadline(0.2, time.thread_time):
                slow = bool(self.py.is_valid(instance))
            fast = bool(self.rs.is_valid(instance))
        except Exception:  # noqa: BLE001 - a validator that stops decides nothing
            return None
        return fast if fast == slow else None


# -- generating instances --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    """A subschema and the document (URL) its local ``$ref``s resolve in."""

    schema: Any
    doc: Any
    url: str


@dataclass
class _Flat:
    """A subschema with its ``$ref``s and ``allOf`` members merged (first ``anyOf``/``oneOf`` branch
    too)."""

    keywords: dict[str, Any] = field(default_factory=dict)
    props: dict[str, list[_Node]] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    types: set[str] | None = None
    items: list[_Node] = field(default_factory=list)
    extra: list[_Node] = field(default_factory=list)


class _Generator:
    def __init__(self, resolve: Resolver) -> None:
        self.resolve = resolve

    def deref(self, node: _Node) -> _Node | None:
        ref = node.schema.get("$ref") if isinstance(node.schema, dict) else None
        if not isinstance(ref, str):
            return node
        target = urljoin(node.url, ref) if node.url else ref
        doc_url, _, fragment = target.partition("#")
        doc = node.doc if doc_url == node.url or not doc_url else self.resolve(doc_url)
        if doc is None:
            return None
        found = resolve_pointer(doc, fragment)
        return None if found is None else _Node(found, doc, doc_url or node.url)

    def flatten(self, nodes: list[_Node], depth: int = 0) -> _Flat:
        flat = _Flat()
        stack = list(nodes)
        seen = 0
        while stack and seen < 64:
            seen += 1
            raw = stack.pop(0)
            if isinstance(raw.schema, dict) and "$ref" in raw.schema:
                siblings = {k: v for k, v in raw.schema.items() if k != "$ref"}
                target = self.deref(raw)
                if target is not None:
                    stack.append(target)
                if siblings:
                    stack.append(_Node(siblings, raw.doc, raw.url))
                continue
            node = raw.schema
            if not isinstance(node, dict):
                continue
            types = node.get("type")
            if types is not None:
                here = (
                    {types}
                    if isinstance(types, str)
                    else set(types)
                    if isinstance(types, list)
                    else set()
                )
                if "number" in here:
                    here.add("integer")
                flat.types = here if flat.types is None else flat.types & here
            for name, sub in (
                (node.get("properties") or {}).items()
                if isinstance(node.get("properties"), dict)
                else ()
            ):
                flat.props.setdefault(name, []).append(_Node(sub, raw.doc, raw.url))
            if isinstance(node.get("required"), list):
                flat.required += [
                    n for n in node["required"] if isinstance(n, str) and n not in flat.required
                ]
            if "items" in node:
                flat.items.append(_Node(node["items"], raw.doc, raw.url))
            if isinstance(node.get("additionalProperties"), dict):
                flat.extra.append(_Node(node["additionalProperties"], raw.doc, raw.url))
            for key, value in node.items():
                if key not in (
                    "properties",
                    "required",
                    "items",
                    "allOf",
                    "anyOf",
                    "oneOf",
                    "type",
                    "$defs",
                ):
                    flat.keywords.setdefault(key, value)
            members: list[Any] = node["allOf"] if isinstance(node.get("allOf"), list) else []
            stack += [_Node(m, raw.doc, raw.url) for m in members]
            for key in ("anyOf", "oneOf"):
                branches = node.get(key)
                if isinstance(branches, list) and branches:
                    stack.append(_Node(branches[0], raw.doc, raw.url))
        return flat

    def sample(self, nodes: list[_Node], depth: int = 0, full: bool = False) -> Any:
        """A small value meant to satisfy every node (checked later, never trusted)."""
        flat = self.flatten(nodes)
        kw = flat.keywords
        if "const" in kw:
            return kw["const"]
        if isinstance(kw.get("enum"), list) and kw["enum"]:
            return kw["enum"][0]
        types = flat.types
        if (types is None and (flat.props or flat.required)) or (
            types is not None and "object" in types
        ):
            if depth > _DEPTH:
                return {}
            names = list(flat.props) if full else flat.required
            return {name: self.sample(flat.props.get(name, []), depth + 1) for name in names}
        order = ("string", "integer", "number", "boolean", "array", "object", "null")
        kind = next((t for t in order if types is None or t in types), None)
        if kind == "string":
            text = _FORMAT_SAMPLES.get(str(kw.get("format")), "a")
            return text + "a" * max(0, min(_int(kw.get("minLength"), 0), MAX_SIZE) - len(text))
        if kind in ("integer", "number"):
            value = _int(kw.get("minimum", kw.get("exclusiveMinimum")), -1) + 1
            high = _int(kw.get("maximum", kw.get("exclusiveMaximum")), value + 1)
            return min(value, high - 1)
        if kind == "boolean":
            return True
        if kind == "array":
            count = _int(kw.get("minItems"), 0)
            return [self.sample(flat.items, depth + 1) for _ in range(min(count, 3))]
        if kind == "object":
            return {}
        return None

    def at(
        self,
        nodes: list[_Node],
        path: list[str | int],
        leaf: Any,
        depth: int = 0,
        full: bool = False,
    ) -> Any:
        """A value for ``nodes`` holding ``leaf`` at ``path`` (``_DELETE``: nothing there)."""
        if not path:
            return leaf
        flat = self.flatten(nodes)
        key, rest = path[0], path[1:]
        if isinstance(key, int):
            items = [self.sample(flat.items, depth + 1) for _ in range(key + 1)]
            value = self.at(flat.items, rest, leaf, depth + 1, full)
            if value is _DELETE:
                return items[:key]
            items[key] = value
            return items
        obj = self.sample(nodes, depth, full)
        if not isinstance(obj, dict):
            obj = {}
        child = flat.props.get(key) or flat.extra
        value = self.at(child, rest, leaf, depth + 1, full)
        if value is _DELETE:
            obj.pop(key, None)
        else:
            obj[key] = value
        return obj

    def sub(self, nodes: list[_Node], path: list[str | int]) -> list[_Node]:
        """The subschemas applying at ``path``."""
        for key in path:
            flat = self.flatten(nodes)
            nodes = flat.items if isinstance(key, int) else (flat.props.get(key) or flat.extra)
        return nodes


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int(value: Any, default: int) -> int:
    return int(value) if _num(value) and abs(value) < 1e15 else default


def _finite(value: Any) -> bool:
    """A number arithmetic on floats takes (not infinite, NaN or an integer past float's range)."""
    return _num(value) and abs(value) < sys.float_info.max


def _sizes(limit: Any) -> tuple[int, ...]:
    """The lengths (or counts) just under and just past ``limit``: none unless it is a whole number
    of at most ``MAX_SIZE``."""
    if not (_num(limit) and 0 <= limit <= MAX_SIZE and limit == int(limit)):
        return ()
    return (max(0, int(limit) - 1), int(limit) + 1)


# -- from a change to the instance path of its node ------------------------------------------------

_IN_PLACE = {"allOf", "anyOf", "oneOf"}
_IN_PLACE_ONE = {"if", "then", "else", "not"}


def _tokens(pointer: str) -> list[str]:
    return (
        [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]] if pointer else []
    )


def _ref_sites(doc: Any, target: str) -> list[str]:
    """Pointers of the nodes of ``doc`` that ``$ref`` ``target`` (a local ``#/...`` ref)."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack and len(found) < 4:
        node, where = stack.pop()
        if isinstance(node, dict):
            if node.get("$ref") == target:
                found.append(where)
            for k, v in node.items():
                if k not in ("enum", "const", "examples", "default"):
                    stack.append((v, f"{where}/{k.replace('~', '~0').replace('/', '~1')}"))
        elif isinstance(node, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(node))
    return found


def instance_paths(doc: Any, pointer: str, depth: int = 0) -> list[list[str | int]]:
    """Where in an instance the schema node at ``pointer`` applies (``$defs`` entries at their
    uses)."""
    tokens = _tokens(pointer)
    if depth > 4:
        return []
    if len(tokens) >= 2 and tokens[0] == "$defs":
        out: list[list[str | int]] = []
        head = f"#/$defs/{tokens[1]}"
        rest = "/" + "/".join(tokens[2:]) if len(tokens) > 2 else ""
        for site in _ref_sites(doc, head):
            for prefix in instance_paths(doc, site, depth + 1):
                out += (
                    [prefix + p for p in instance_paths(doc, rest, depth + 1)] if rest else [prefix]
                )
        return out[:4]
    path: list[str | int] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("properties", "patternProperties") and i + 1 < len(tokens):
            path.append(tokens[i + 1])
            i += 2
        elif token in ("items", "contains"):
            path.append(0)
            i += 1
        elif token == "prefixItems" and i + 1 < len(tokens) and tokens[i + 1].isdigit():
            path.append(int(tokens[i + 1]))
            i += 2
        elif token in ("additionalProperties", "unevaluatedProperties"):
            path.append("extra_field")
            i += 1
        elif token in _IN_PLACE or token == "dependentSchemas":
            i += 2
        elif token in _IN_PLACE_ONE:
            i += 1
        else:
            break  # a keyword of the node itself (required, enum, format...): the node is reached
    return [path]


# -- the search ------------------------------------------------------------------------------------


def _leaves(gen: _Generator, accept: list[_Node], reject: list[_Node]) -> Iterator[Any]:
    """Values to put at the changed node, most telling first."""
    yield gen.sample(accept)
    yield gen.sample(accept, full=True)
    yield _DELETE
    for side in (accept, reject):
        flat = gen.flatten(side)
        kw = flat.keywords
        yield from kw["enum"] if isinstance(kw.get("enum"), list) else []
        if "const" in kw:
            yield kw["const"]
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            if _finite(kw.get(key)):
                yield from (kw[key] - 1, kw[key], kw[key] + 1, kw[key] + 0.5)
        for key in ("minLength", "maxLength"):
            yield from ("a" * length for length in _sizes(kw.get(key)))
        for key in ("minItems", "maxItems"):
            counts = _sizes(kw.get(key))
            yield from _repeated(gen.sample(flat.items), counts) if counts else ()
        if isinstance(kw.get("pattern"), str):
            yield from _pattern_samples(kw["pattern"])
        if isinstance(kw.get("not"), dict):
            yield gen.sample([_Node(kw["not"], side[0].doc, side[0].url)] if side else [])
        sample = gen.sample(side, full=True)
        if isinstance(sample, list) or flat.items:
            item = gen.sample(flat.items)
            yield from ([item, item], [item], [1], ["a", 1])
        if isinstance(sample, dict):
            yield {**sample, "extra_field": 1}
            yield from ({k: v} for k, v in sample.items())
            accepted = gen.sample(accept)  # a schema from a pull request may sample to anything
            for name in flat.props:
                yield {
                    **(accepted if isinstance(accepted, dict) else {}),
                    name: gen.sample(flat.props[name]),
                }
    yield from _GENERIC


def _repeated(item: Any, counts: tuple[int, ...]) -> Iterator[list[Any]]:
    """Arrays of ``item``, one per count, that stay within ``MAX_INSTANCE_CHARS`` as JSON."""
    chars = len(json.dumps(item)) + 1
    yield from ([item] * count for count in counts if count * chars <= MAX_INSTANCE_CHARS)


_CLASSES = {"d": "0", "w": "a", "s": " ", "D": "a", "W": "-", "S": "a"}


def _pattern_samples(pattern: str) -> Iterator[str]:
    """Strings a simple pattern matches, read off its literal characters (classes take their first
    member, quantifiers their least and one more); anything else is left to the validators to
    refuse."""
    out: list[str] = []
    i = 0
    while i < len(pattern) and len(out) < 40:
        ch = pattern[i]
        if ch in "^$()|":
            i += 1
            continue
        if ch == "\\" and i + 1 < len(pattern):
            out.append(_CLASSES.get(pattern[i + 1], pattern[i + 1]))
            i += 2
        elif ch == "[":
            end = pattern.find("]", i + 1)
            body = pattern[i + 1 : end] if end > i else "a"
            out.append(
                "a"
                if body.startswith("^")
                else (_CLASSES.get(body[1], "a") if body.startswith("\\") else body[:1] or "a")
            )
            i = end + 1 if end > i else len(pattern)
        elif ch == ".":
            out.append("a")
            i += 1
        elif ch in "*?":
            if out:
                out.pop()
            i += 1
        elif ch == "+":
            i += 1
        elif ch == "{":
            end = pattern.find("}", i)
            i = end + 1 if end > i else len(pattern)
        else:
            out.append(ch)
            i += 1
    text = "".join(out)
    yield text
    yield text + text


def _facet_keys(schema: Any) -> set[str] | None:
    """The top-level keys an example of this file may hold (None: any)."""
    if (
        isinstance(schema, dict)
        and "$defs" in schema
        and isinstance(schema.get("properties"), dict)
    ):
        return set(schema["properties"])
    return None


class Search:
    """Witnesses between two versions of a schema file, both validators compiled once."""

    def __init__(
        self,
        old: Any,
        new: Any,
        resolve_old: Resolver,
        resolve_new: Resolver,
        old_label: str = "base",
        new_label: str = "head",
    ) -> None:
        # compiled when a candidate is first tried: most comparisons try none (no data-level change
        # in the direction asked for), and building them imports the pure-Python stack
        self._made: dict[str, SideValidators] = {}
        self._making = {
            "old": (old, resolve_old, old_label),
            "new": (new, resolve_new, new_label),
        }
        self.gens = {"old": _Generator(resolve_old), "new": _Generator(resolve_new)}
        self.docs = {"old": old, "new": new}
        self.urls = {
            side: str(doc.get("$id") or "").partition("#")[0] if isinstance(doc, dict) else ""
            for side, doc in self.docs.items()
        }
        # this thread's CPU time: the search's work is bounded, and a loaded machine does not cut it
        # short
        self.deadline = time.thread_time() + BUDGET_SECONDS

    def side(self, name: str) -> SideValidators:
        """Both validators of the old or the new file, compiled once."""
        made = self._made.get(name)
        if made is None:
            started = time.thread_time()
            made = self._made[name] = SideValidators(*self._making[name])
            # compiling (and the first import of the pure-Python stack) is not the search's time
            self.deadline += time.thread_time() - started
        return made

    def root(self, side: str) -> list[_Node]:
        return [_Node(self.docs[side], self.docs[side], self.urls[side])]

    def find(self, change: Change, backward: bool = True) -> Witness | None:
        """An instance the accepting side (old for ``backward``) takes and the other refuses, or
        None."""
        accept, reject = ("old", "new") if backward else ("new", "old")
        where = change.where if change.where != "/" else ""
        paths = instance_paths(self.docs[accept], where) or instance_paths(self.docs[reject], where)
        paths = paths or instance_paths(self.docs["new"], change.pointer)
        keys = _facet_keys(self.docs[accept])
        gen = self.gens[accept]
        tried: set[str] = set()
        for path in paths[:3]:
            for prefix_len in range(len(path), -1, -1):  # the node itself, then its parents
                prefix = path[:prefix_len]
                accept_sub = gen.sub(self.root(accept), prefix)
                reject_sub = self.gens[reject].sub(self.root(reject), prefix)
                for leaf in _leaves(gen, accept_sub, reject_sub):
                    if time.thread_time() > self.deadline or len(tried) >= MAX_CANDIDATES * (
                        len(path) + 1
                    ):
                        return None
                    for full in (False, True):
                        instance = gen.at(self.root(accept), list(prefix), leaf, full=full)
                        if not isinstance(instance, dict) or (
                            keys is not None and not set(instance) <= keys
                        ):
                            continue
                        text = json.dumps(instance, sort_keys=True)
                        if text in tried or len(text) > MAX_INSTANCE_CHARS:
                            continue
                        tried.add(text)
                        if self.side(reject).accepts(instance) is False and self.side(
                            accept
                        ).accepts(instance):
                            return Witness(text, self.side(accept).label, self.side(reject).label)
                if prefix_len < len(path) - 1:
                    break  # the node and its parent object only
        return None
