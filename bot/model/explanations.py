"""Why an instance fails its schema, worded as python-jsonschema words it, from either engine.

jsonschema-rs decides pass or fail. A failure is explained error by error: the message, where in the
instance, where in the schema, the keyword. ``from_rs`` takes these from jsonschema-rs's own errors
for the keywords registries use (``type``, ``required``, ``format``, ``enum``, ``pattern``,
``additionalProperties``, the bounds, ``anyOf``, ...), in python-jsonschema's wording, so a finding
reads the same whichever engine explained it (tests/test_explanations.py compares the two on
generated schemas and on the real history). It answers None for anything it cannot word exactly
(``unevaluatedProperties``, ``contains``, a ``false`` subschema, ``oneOf`` with several matches,
an embedded ``$id``, a property named ``$ref``, a pattern the pure-Python validator cannot run, more
errors than asked for): that validator explains those, at the cost of importing its stack (about
110 ms of CPU).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bot.model.schemas import bounded_runs

Token = str | int
# the keywords whose value maps names to subschemas: a "$ref" right after one is a name, not a ref
_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


@dataclass(frozen=True)
class Explanation:
    """One validation error: python-jsonschema's ``message``, ``absolute_path``,
    ``absolute_schema_path`` and ``validator`` (None for a ``false`` subschema), and the errors
    of each ``anyOf``/``oneOf`` branch (``context``)."""

    message: str
    path: tuple[Token, ...]
    schema_path: tuple[Token, ...]
    keyword: str | None
    context: tuple[Explanation, ...] = ()


def from_python(error: Any) -> Explanation:
    """A python-jsonschema ``ValidationError`` (and its context) as an ``Explanation``."""
    keyword = error.validator if isinstance(error.validator, str) else None
    return Explanation(
        error.message,
        tuple(error.absolute_path),
        tuple(error.absolute_schema_path),
        keyword,
        tuple(from_python(e) for e in error.context or ()),
    )


def from_rs(
    errors: Iterable[Any],
    instance: Any,
    root: Mapping[str, Any],
    lookup: Callable[[str], Any],
    limit: int,
) -> list[Explanation] | None:
    """jsonschema-rs's ``errors`` for ``instance`` against ``root`` in python-jsonschema's words,
    or None when one of them cannot be worded exactly or there are over ``limit`` (python-jsonschema
    would pick which to keep). ``lookup(uri)`` is the schema document stored at ``uri``, or None."""
    out: list[Explanation] = []
    for error in errors:
        explained = _explain(error, instance, root, lookup)
        if explained is None or len(out) == limit:
            return None
        out.append(explained)
    return out


def _explain(
    error: Any, instance: Any, root: Mapping[str, Any], lookup: Callable[[str], Any]
) -> Explanation | None:
    kind = error.kind
    name = kind.name
    word = _WORDING.get(name)
    schema_path = _python_schema_path(error.evaluation_path)
    if word is None or schema_path is None or type(kind).__name__ == "OneOfMultipleValid":
        return None
    node = _node(error, root, lookup)
    value = _at(instance, error.instance_path)
    if not isinstance(node, dict) or name not in node or value is _MISSING:
        return None
    if not all(map(bounded_runs, _patterns(name, node, schema_path))):
        return None  # the pure-Python validator names the pattern it cannot run
    message = word(node, node[name], value, kind)
    if message is None:
        return None
    context: tuple[Explanation, ...] = ()
    if name in ("anyOf", "oneOf"):
        subs = [_explain(e, instance, root, lookup) for branch in kind.context for e in branch]
        if any(s is None for s in subs):
            return None
        context = tuple(s for s in subs if s is not None)
    return Explanation(message, tuple(error.instance_path), schema_path, name, context)


def _python_schema_path(evaluation: list[Token]) -> tuple[Token, ...] | None:
    """The schema path python-jsonschema reports: jsonschema-rs's evaluation path without the
    ``$ref`` keywords it followed; None where the two could differ (``$dynamicRef``, a property
    named ``$ref``)."""
    out: list[Token] = []
    previous: Token | None = None
    for token in evaluation:
        if token == "$dynamicRef" or (token == "$ref" and previous in _MAPS):
            return None
        if token != "$ref":
            out.append(token)
        previous = token
    return tuple(out)


def _patterns(name: str, node: dict[str, Any], schema_path: tuple[Token, ...]) -> Iterator[Any]:
    """The patterns the pure-Python validator ran to reach this error: the failing ``pattern``,
    those of ``patternProperties`` beside a failing ``additionalProperties``, and those of each
    ``patternProperties`` it descended through."""
    if name == "pattern":
        yield node["pattern"]
    elif name == "additionalProperties":
        yield from node.get("patternProperties") or ()
    for before, token in itertools.pairwise(schema_path):
        if before == "patternProperties":
            yield token


_MISSING: Any = object()


def _at(document: Any, pointer: Iterable[Token]) -> Any:
    """The value at ``pointer`` in ``document``, or ``_MISSING``."""
    node = document
    for token in pointer:
        found = (isinstance(node, dict) and isinstance(token, str) and token in node) or (
            isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node)
        )
        if not found:
            return _MISSING
        node = node[token]
    return node


def _node(error: Any, root: Mapping[str, Any], lookup: Callable[[str], Any]) -> Any:
    """The schema object holding the failing keyword: its resource is the one
    ``absolute_keyword_location`` names (the root when it names none), ``schema_path`` its place
    there."""
    location = error.absolute_keyword_location
    resource: Any = root
    if location is not None:
        uri = location.split("#", 1)[0]
        if uri != root.get("$id"):
            resource = lookup(uri)
            if resource is None:
                return _MISSING
    return _at(resource, list(error.schema_path)[:-1])


def _below(short: str) -> Callable[..., str]:
    """python-jsonschema's wording of a lower length bound ("should be non-empty" for 1)."""
    return lambda node, bound, value, kind: (
        f"{value!r} {'should be non-empty' if bound == 1 else short}"
    )


def _above(long: str) -> Callable[..., str]:
    """python-jsonschema's wording of an upper length bound ("is expected to be empty" for 0)."""
    return lambda node, bound, value, kind: (
        f"{value!r} {'is expected to be empty' if bound == 0 else long}"
    )


def _type(node: Any, types: Any, value: Any, kind: Any) -> str:
    listed = types if isinstance(types, list) else [types]
    return f"{value!r} is not of type {', '.join(repr(t) for t in listed)}"


def _required(node: Any, required: Any, value: Any, kind: Any) -> str | None:
    name = kind.property
    if not isinstance(name, str) or name not in required:
        return None
    return f"{name!r} is a required property"


def _additional(node: Any, additional: Any, value: Any, kind: Any) -> str | None:
    extras = list(kind.unexpected)
    if additional is not False or not all(isinstance(e, str) for e in extras):
        return None
    if node.get("patternProperties"):
        verb = "does" if len(extras) == 1 else "do"
        joined = ", ".join(repr(e) for e in sorted(extras))
        listed = ", ".join(repr(p) for p in sorted(node["patternProperties"]))
        return f"{joined} {verb} not match any of the regexes: {listed}"
    verb = "was" if len(extras) == 1 else "were"
    joined = ", ".join(repr(e) for e in sorted(extras, key=str))
    return f"Additional properties are not allowed ({joined} {verb} unexpected)"


def _phrase(text: str) -> Callable[..., str]:
    """A message "<value> <text>", where ``{0}`` in ``text`` is the keyword's value."""
    return lambda node, keyword_value, value, kind: f"{value!r} " + text.format(keyword_value)


_WORDING: dict[str, Callable[..., str | None]] = {
    "type": _type,
    "required": _required,
    "additionalProperties": _additional,
    "format": _phrase("is not a {0!r}"),
    "enum": _phrase("is not one of {0!r}"),
    "const": lambda node, const, value, kind: f"{const!r} was expected",
    "pattern": _phrase("does not match {0!r}"),
    "minimum": _phrase("is less than the minimum of {0!r}"),
    "maximum": _phrase("is greater than the maximum of {0!r}"),
    "exclusiveMinimum": _phrase("is less than or equal to the minimum of {0!r}"),
    "exclusiveMaximum": _phrase("is greater than or equal to the maximum of {0!r}"),
    "multipleOf": _phrase("is not a multiple of {0}"),
    "minLength": _below("is too short"),
    "maxLength": _above("is too long"),
    "minItems": _below("is too short"),
    "maxItems": _above("is too long"),
    "minProperties": _below("does not have enough properties"),
    "maxProperties": _above("has too many properties"),
    "uniqueItems": _phrase("has non-unique elements"),
    "anyOf": _phrase("is not valid under any of the given schemas"),
    "oneOf": _phrase("is not valid under any of the given schemas"),
    "not": _phrase("should not be valid under {0!r}"),
}
