"""Schema lint: mistakes a valid facet schema can still hold, because JSON Schema silently accepts
them."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from bot.core.findings import Finding, Severity
from bot.core.jsondoc import escape_pointer_token
from bot.core.regex_size import PatternTooLarge, check_size
from bot.model.registry import FacetSchema
from bot.review.checks._common import at
from bot.review.input import ReviewInput

RULES = {
    "lint/required-undeclared": "Every name a schema object lists in `required` is one of the "
    "`properties` it declares. JSON Schema accepts any name there, so a misspelled or renamed "
    "field makes every event that follows the declared fields invalid (ExtractionErrorRunFacet "
    "1-0-0 required `totalElements` while declaring `totalTasks`). Objects with "
    "`patternProperties` are not checked.",
    "lint/unknown-keyword": "Every member of a schema object is a JSON Schema draft 2020-12 "
    "keyword (or the OpenAPI `example` annotation the spec uses, or an `x-` extension). Validators "
    "ignore unknown members, so a misspelled keyword constrains or documents nothing "
    "(`documentation` written for `description`).",
    "lint/unknown-format": "A `format` is one draft 2020-12 defines (`date-time`, `uri`, `uuid`, "
    "...); validators ignore any other value, so it checks nothing.",
    "lint/oversized-pattern": "A `pattern` or `patternProperties` key whose counted repetitions "
    "unroll past 100,000 units when compiled (nested counts multiply: `((((a{64}){64}){64}){64})` "
    "is 16.7 million, 2.5 GB of compiled program). The bot never compiles it, so it constrains "
    "nothing it can check.",
}

KEYWORDS = frozenset(
    {
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "$comment",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "definitions",
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
        "additionalItems",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
# OpenAPI's singular example, used throughout the OpenLineage spec
ANNOTATIONS = frozenset({"example"})
FORMATS = frozenset(
    {
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
)


def check(review: ReviewInput) -> Iterator[Finding]:
    for entry in review.reviewed_entries():
        for schema in entry.schemas:
            yield from lint(schema)


def lint(schema: FacetSchema) -> Iterator[Finding]:
    for rule, where, message, hint in problems(schema.value):
        yield at(
            rule,
            Severity.ERROR,
            schema.doc,
            where,
            message,
            hint=hint,
            entry=schema.entry.name,
            key=rule == "lint/unknown-keyword",
        )


def problems(schema: Any) -> Iterator[tuple[str, str, str, str]]:
    """(rule, JSON pointer, message, hint) for every lint problem of a schema document."""
    for pointer, node in schema_objects(schema):
        yield from _problems(node, pointer)


def schema_objects(root: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object of a document with its JSON pointer (values of ``enum``, ``default``...
    excluded)."""
    stack: list[tuple[str, Any]] = [("", root)]
    while stack:
        pointer, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield pointer, node
        for key in _SCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                stack.extend(
                    (f"{pointer}/{key}/{escape_pointer_token(name)}", sub)
                    for name, sub in node[key].items()
                )
        for key in _SCHEMA_LISTS:
            if isinstance(node.get(key), list):
                stack.extend((f"{pointer}/{key}/{i}", sub) for i, sub in enumerate(node[key]))
        for key in _SCHEMA_ONE:
            if isinstance(node.get(key), dict):
                stack.append((f"{pointer}/{key}", node[key]))


def _problems(node: dict[str, Any], pointer: str) -> Iterator[tuple[str, str, str, str]]:
    """(rule, pointer, message, hint) for one schema object."""
    properties, required = node.get("properties"), node.get("required")
    if (
        isinstance(properties, dict)
        and isinstance(required, list)
        and "patternProperties" not in node
    ):
        missing = [name for name in required if isinstance(name, str) and name not in properties]
        # one finding per list, at the list: its pointer does not move when names are reordered
        if missing:
            close = [
                m
                for name in missing
                for m in difflib.get_close_matches(name, list(properties), n=1)
            ]
            yield (
                "lint/required-undeclared",
                f"{pointer}/required",
                f"{', '.join(map(repr, missing))} {'is' if len(missing) == 1 else 'are'} required "
                f"but not declared in properties ({', '.join(sorted(properties))})",
                f"Did you mean {', '.join(map(repr, close))}?"
                if close
                else "Declare each in properties or drop it from required.",
            )
    for key in node:
        if key in KEYWORDS or key in ANNOTATIONS or key.startswith("x-"):
            continue
        close = difflib.get_close_matches(key, sorted(KEYWORDS), n=1, cutoff=0.8)
        if close:
            hint = f"Did you mean {close[0]!r}?"
        elif isinstance(node[key], str):
            hint = (
                "Text that documents the schema belongs in 'description' (or 'title', '$comment')."
            )
        else:
            hint = "Use a draft 2020-12 keyword, or prefix an extension with 'x-'."
        yield (
            "lint/unknown-keyword",
            f"{pointer}/{escape_pointer_token(key)}",
            f"{key!r} is not a JSON Schema keyword; validators and generated code ignore it",
            hint,
        )
    patterns = (
        [(f"{pointer}/pattern", node["pattern"])] if isinstance(node.get("pattern"), str) else []
    )
    if isinstance(node.get("patternProperties"), dict):
        patterns += [
            (f"{pointer}/patternProperties/{escape_pointer_token(key)}", key)
            for key in node["patternProperties"]
        ]
    for where, pattern in patterns:
        try:
            check_size(pattern)
        except PatternTooLarge as exc:
            yield (
                "lint/oversized-pattern",
                where,
                f"pattern {pattern[:80]!r}: {exc}",
                "Bound the repetition once (a{1,4096}) instead of nesting counted repetitions.",
            )
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt not in FORMATS:
        close = difflib.get_close_matches(fmt, sorted(FORMATS), n=1)
        yield (
            "lint/unknown-format",
            f"{pointer}/format",
            f"format {fmt!r} is not a draft 2020-12 format; validators ignore it",
            f"Did you mean {close[0]!r}?"
            if close
            else "Use a defined format "
            "(date-time, uri, uuid, ...), or describe the value in description.",
        )
