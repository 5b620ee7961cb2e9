"""Schema evolution, class by class (docs/versions.md): a table of hand-written base/head pairs,
each with the class it shows, the digit it needs in each direction and its category. Every
data-level verdict's witness is validated again here, with both validators built independently of
the bot's wrappers; a direction the table calls compatible must find no witness at all, so the
search never claims more than it can show.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from bot.model.evolution import witness
from bot.model.evolution.classes import CLASSES, Bump, table
from bot.model.evolution.schema_diff import required_bump
from bot.model.evolution.verdict import compare
from tests.conftest import ROOT

A, R, M, N = Bump.ADDITION, Bump.REVISION, Bump.MODEL, Bump.NONE
BASE = "https://example.com/spec/1-0-0/Base.json"
BASE_DOC = {
    "$id": BASE,
    "$defs": {
        "RunFacet": {
            "type": "object",
            "additionalProperties": True,
            "required": ["_producer", "_schemaURL"],
            "properties": {
                "_producer": {"type": "string", "format": "uri"},
                "_schemaURL": {"type": "string", "format": "uri"},
            },
        }
    },
}


def facet(
    body: dict[str, Any],
    key: str = "x",
    version: str = "1-0-0",
    defs: dict[str, Any] | None = None,
    extra_keys: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A facet file in OpenLineage's shape: a key, a definition extending the base facet, ``body``
    its own part."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://openlineage.io/spec/facets/{version}/XRunFacet.json",
        "$defs": {
            "XRunFacet": {"allOf": [{"$ref": f"{BASE}#/$defs/RunFacet"}, body], "type": "object"},
            **(defs or {}),
        },
        "type": "object",
        "properties": {key: {"$ref": "#/$defs/XRunFacet"}, **(extra_keys or {})},
    }


def field(v: Any, **more: Any) -> dict[str, Any]:
    """A facet body whose field ``v`` has schema ``v``."""
    return {"type": "object", "properties": {"v": v, **more}}


def obj(props: dict[str, Any], required: list[str] | None = None, **kw: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        **({"required": required} if required else {}),
        **kw,
    }


S, INT, NUM = {"type": "string"}, {"type": "integer"}, {"type": "number"}
ARR = {"type": "array", "items": S}

# (class, base, head, backward, forward, category); base and head are facet bodies unless already
# whole files
CASES: list[tuple[str, Any, Any, Bump, Bump, str]] = [
    ("type-narrowed", field({"type": ["string", "integer"]}), field(S), M, A, "data"),
    ("type-narrowed", field(NUM), field(INT), M, A, "data"),
    ("type-narrowed", field({}), field(S), M, A, "data"),
    ("type-extended", field(S), field({"type": ["string", "null"]}), A, M, "data"),
    ("type-extended", field(INT), field(NUM), A, M, "data"),
    ("type-changed", field(S), field(INT), M, M, "data"),
    ("type-changed", field({"type": "boolean"}), field(ARR), M, M, "data"),
    (
        "enum-narrowed",
        field({"type": "string", "enum": ["a", "b"]}),
        field({"type": "string", "enum": ["a"]}),
        M,
        A,
        "data",
    ),
    (
        "enum-narrowed",
        field(S),
        field({"type": "string", "enum": ["BATCH", "STREAMING"]}),
        M,
        A,
        "data",
    ),
    (
        "enum-extended",
        field({"type": "string", "enum": ["a"]}),
        field({"type": "string", "enum": ["a", "b"]}),
        A,
        M,
        "data",
    ),
    ("enum-extended", field({"enum": [1, 2]}), field({"enum": [1, 2, 3]}), A, M, "data"),
    ("enum-removed", field({"type": "string", "enum": ["a"]}), field(S), A, M, "data"),
    ("enum-removed", field({"type": "integer", "enum": [1, 2]}), field(INT), A, M, "data"),
    ("const-changed", field({"const": "a"}), field({"const": "b"}), M, M, "data"),
    (
        "const-changed",
        field({"type": "integer", "const": 1}),
        field({"type": "integer", "const": 2}),
        M,
        M,
        "data",
    ),
    ("const-added", field(S), field({"type": "string", "const": "a"}), M, A, "data"),
    ("const-added", field(INT), field({"type": "integer", "const": 0}), M, A, "data"),
    ("const-removed", field({"type": "string", "const": "a"}), field(S), A, M, "data"),
    (
        "const-removed",
        field({"type": "boolean", "const": True}),
        field({"type": "boolean"}),
        A,
        M,
        "data",
    ),
    ("string-tightened", field(S), field({"type": "string", "minLength": 3}), R, A, "data"),
    (
        "string-tightened",
        field({"type": "string", "maxLength": 10}),
        field({"type": "string", "maxLength": 2}),
        R,
        A,
        "data",
    ),
    ("string-tightened", field(S), field({"type": "string", "pattern": "^[0-9]+$"}), R, A, "data"),
    (
        "string-loosened",
        field({"type": "string", "maxLength": 2}),
        field({"type": "string", "maxLength": 10}),
        A,
        R,
        "data",
    ),
    ("string-loosened", field({"type": "string", "minLength": 3}), field(S), A, R, "data"),
    ("number-tightened", field(INT), field({"type": "integer", "minimum": 5}), R, A, "data"),
    (
        "number-tightened",
        field({"type": "number", "maximum": 10}),
        field({"type": "number", "exclusiveMaximum": 1, "maximum": 10}),
        R,
        A,
        "data",
    ),
    (
        "number-tightened",
        field({"type": "integer", "multipleOf": 2}),
        field({"type": "integer", "multipleOf": 4}),
        R,
        A,
        "data",
    ),
    (
        "number-loosened",
        field({"type": "integer", "minimum": 5}),
        field({"type": "integer", "minimum": 0}),
        A,
        R,
        "data",
    ),
    ("number-loosened", field({"type": "number", "maximum": 1}), field(NUM), A, R, "data"),
    ("array-tightened", field(ARR), field({**ARR, "minItems": 2}), R, A, "data"),
    ("array-tightened", field(ARR), field({**ARR, "uniqueItems": True}), R, A, "data"),
    ("array-loosened", field({**ARR, "maxItems": 1}), field(ARR), A, R, "data"),
    ("array-loosened", field({**ARR, "uniqueItems": True}), field(ARR), A, R, "data"),
    ("object-tightened", field(obj({"a": S})), field(obj({"a": S}, maxProperties=0)), R, A, "data"),
    (
        "object-tightened",
        field(obj({"a": S, "b": S})),
        field(obj({"a": S, "b": S}, minProperties=2)),
        R,
        A,
        "data",
    ),
    ("object-loosened", field(obj({"a": S}, maxProperties=0)), field(obj({"a": S})), A, R, "data"),
    (
        "object-loosened",
        field(obj({"a": S}, minProperties=1)),
        field(obj({"a": S}, minProperties=0)),
        A,
        R,
        "data",
    ),
    (
        "constraint-changed",
        field({"type": "string", "pattern": "^a"}),
        field({"type": "string", "pattern": "^b"}),
        R,
        R,
        "data",
    ),
    (
        "constraint-changed",
        field({"type": "integer", "multipleOf": 2}),
        field({"type": "integer", "multipleOf": 3}),
        R,
        R,
        "data",
    ),
    ("format-added", field(S), field({"type": "string", "format": "date-time"}), R, A, "data"),
    ("format-added", field(S), field({"type": "string", "format": "uuid"}), R, A, "data"),
    ("format-removed", field({"type": "string", "format": "uri"}), field(S), A, R, "data"),
    ("format-removed", field({"type": "string", "format": "date"}), field(S), A, R, "data"),
    (
        "format-changed",
        field({"type": "string", "format": "date"}),
        field({"type": "string", "format": "date-time"}),
        R,
        R,
        "data",
    ),
    (
        "format-changed",
        field({"type": "string", "format": "uuid"}),
        field({"type": "string", "format": "uri"}),
        R,
        R,
        "data",
    ),
    (
        "required-added",
        field(obj({"a": S, "b": S})),
        field(obj({"a": S, "b": S}, ["a"])),
        M,
        A,
        "data",
    ),
    ("required-added", obj({"name": S}), obj({"name": S}, ["name"]), M, A, "data"),
    # the undeclared name no longer required: readers of the old version reject data without it
    # (MODEL forward)
    ("required-corrected", obj({"a": S}, ["b"]), obj({"a": S}, ["a"]), R, M, "data"),
    (
        "required-corrected",
        obj({"n": INT, "m": INT}, ["total"]),
        obj({"n": INT, "m": INT}, ["n"]),
        R,
        M,
        "data",
    ),
    ("required-removed", field(obj({"a": S}, ["a"])), field(obj({"a": S})), A, M, "data"),
    ("required-removed", obj({"name": S}, ["name"]), obj({"name": S}), A, M, "data"),
    ("property-added-open", obj({"a": S}), obj({"a": S, "b": INT}), A, A, "data"),
    (
        "property-added-open",
        field(obj({"a": S})),
        field(obj({"a": S, "c": {"type": "boolean"}})),
        A,
        A,
        "data",
    ),
    (
        "property-added-closed",
        field(obj({"a": S}, additionalProperties=False)),
        field(obj({"a": S, "b": S}, additionalProperties=False)),
        A,
        M,
        "data",
    ),
    (
        "property-added-closed",
        field(obj({}, additionalProperties=False)),
        field(obj({"n": INT}, additionalProperties=False)),
        A,
        M,
        "data",
    ),
    ("property-added-required", obj({"a": S}), obj({"a": S, "b": S}, ["b"]), M, A, "data"),
    (
        "property-added-required",
        field(obj({"a": S})),
        field(obj({"a": S, "id": INT}, ["id"])),
        M,
        A,
        "data",
    ),
    ("property-removed-open", obj({"a": S, "b": INT}), obj({"a": S}), M, M, "wire"),
    (
        "property-removed-open",
        field(obj({"a": S, "b": {"type": "boolean"}, "c": INT})),
        field(obj({"a": S, "b": {"type": "boolean"}})),
        M,
        M,
        "wire",
    ),
    (
        "property-removed-closed",
        field(obj({"a": S, "b": INT}, additionalProperties=False)),
        field(obj({"a": S}, additionalProperties=False)),
        M,
        A,
        "data",
    ),
    (
        "property-removed-closed",
        field(obj({"a": S, "b": S}, unevaluatedProperties=False)),
        field(obj({"b": S}, unevaluatedProperties=False)),
        M,
        A,
        "data",
    ),
    ("property-renamed", obj({"filter": S}), obj({"filterDescription": S}), M, M, "wire"),
    (
        "property-renamed",
        field(obj({"a": INT, "old": S})),
        field(obj({"a": INT, "new": S})),
        M,
        M,
        "wire",
    ),
    (
        "facet-key-renamed",
        facet(field(S), key="iceberg_scan_report"),
        facet(field(S), key="icebergScanReport"),
        M,
        M,
        "wire",
    ),
    (
        "facet-key-renamed",
        facet(field(INT), key="gcp_spark"),
        facet(field(INT), key="gcp_dataproc"),
        M,
        M,
        "wire",
    ),
    (
        "facet-key-removed",
        facet(field(S), extra_keys={"y": {"$ref": "#/$defs/XRunFacet"}}),
        facet(field(S)),
        M,
        M,
        "wire",
    ),
    (
        "facet-key-removed",
        facet(field(INT), extra_keys={"z": {"$ref": "#/$defs/XRunFacet"}}),
        facet(field(INT)),
        M,
        M,
        "wire",
    ),
    (
        "facet-key-added",
        facet(field(S)),
        facet(field(S), extra_keys={"y": {"$ref": "#/$defs/XRunFacet"}}),
        A,
        A,
        "codegen",
    ),
    (
        "facet-key-added",
        facet(field(INT)),
        facet(field(INT), extra_keys={"w": {"$ref": "#/$defs/XRunFacet"}}),
        A,
        A,
        "codegen",
    ),
    (
        "object-closed",
        field(obj({"a": S})),
        field(obj({"a": S}, additionalProperties=False)),
        R,
        A,
        "data",
    ),
    (
        "object-closed",
        field(obj({"a": S})),
        field(obj({"a": S}, unevaluatedProperties=False)),
        R,
        A,
        "data",
    ),
    (
        "object-opened",
        field(obj({"a": S}, additionalProperties=False)),
        field(obj({"a": S})),
        A,
        R,
        "data",
    ),
    (
        "object-opened",
        field(obj({"a": INT}, unevaluatedProperties=False)),
        field(obj({"a": INT})),
        A,
        R,
        "data",
    ),
    (
        "dependency-added",
        field(obj({"a": S, "b": S})),
        field(obj({"a": S, "b": S}, dependentRequired={"a": ["b"]})),
        R,
        A,
        "data",
    ),
    (
        "dependency-added",
        field(obj({"a": S, "b": INT})),
        field(obj({"a": S, "b": INT}, dependentSchemas={"a": {"required": ["b"]}})),
        R,
        A,
        "data",
    ),
    (
        "dependency-removed",
        field(obj({"a": S, "b": S}, dependentRequired={"a": ["b"]})),
        field(obj({"a": S, "b": S})),
        A,
        R,
        "data",
    ),
    (
        "dependency-removed",
        field(obj({"a": S, "b": INT}, dependentSchemas={"a": {"required": ["b"]}})),
        field(obj({"a": S, "b": INT})),
        A,
        R,
        "data",
    ),
    (
        "conditional-added",
        field(obj({"k": S, "w": INT})),
        field(obj({"k": S, "w": INT}, **{"if": {"required": ["k"]}, "then": {"required": ["w"]}})),
        R,
        A,
        "data",
    ),
    (
        "conditional-added",
        field(obj({"k": S, "w": INT})),
        field(
            obj(
                {"k": S, "w": INT},
                **{"if": {"required": ["w"]}, "then": {"properties": {"w": {"minimum": 1}}}},
            )
        ),
        R,
        A,
        "data",
    ),
    (
        "conditional-removed",
        field(obj({"k": S, "w": INT}, **{"if": {"required": ["k"]}, "then": {"required": ["w"]}})),
        field(obj({"k": S, "w": INT})),
        A,
        R,
        "data",
    ),
    (
        "conditional-removed",
        field(obj({"k": S}, **{"if": {"required": ["k"]}, "then": {"maxProperties": 1}})),
        field(obj({"k": S})),
        A,
        R,
        "data",
    ),
    ("not-added", field(S), field({"type": "string", "not": {"const": "x"}}), R, A, "data"),
    ("not-added", field(INT), field({"type": "integer", "not": {"enum": [3, 4]}}), R, A, "data"),
    ("not-removed", field({"type": "string", "not": {"const": "x"}}), field(S), A, R, "data"),
    ("not-removed", field({"type": "integer", "not": {"enum": [7]}}), field(INT), A, R, "data"),
    (
        "not-changed",
        field({"type": "integer", "not": {"const": 1}}),
        field({"type": "integer", "not": {"const": 2}}),
        R,
        R,
        "data",
    ),
    (
        "not-changed",
        field(obj({"k": S, "w": INT}, **{"if": {"required": ["k"]}, "then": {"required": ["w"]}})),
        field(obj({"k": S, "w": INT}, **{"if": {"required": ["w"]}, "then": {"required": ["k"]}})),
        R,
        R,
        "data",
    ),
    ("branch-added", field({"anyOf": [S]}), field({"anyOf": [S, INT]}), A, M, "data"),
    (
        "branch-added",
        field({"anyOf": [obj({"a": S}, ["a"])]}),
        field({"anyOf": [obj({"a": S}, ["a"]), ARR]}),
        A,
        M,
        "data",
    ),
    (
        "oneof-branch-added",
        field({"oneOf": [S]}),
        field({"oneOf": [S, {"type": ["string", "null"]}]}),
        R,
        M,
        "data",
    ),
    ("oneof-branch-added", field({"oneOf": [INT]}), field({"oneOf": [INT, NUM]}), R, M, "data"),
    ("branch-removed", field({"anyOf": [S, INT]}), field({"anyOf": [S]}), R, A, "data"),
    (
        "branch-removed",
        field({"oneOf": [S, {"type": "boolean"}]}),
        field({"oneOf": [S]}),
        R,
        A,
        "data",
    ),
    (
        "composition-changed",
        field({"type": "array", "prefixItems": [S]}),
        # ["a", "b"] fails the head; no forward witness
        field({"type": "array", "prefixItems": [S, INT]}),
        R,
        R,
        "data",
    ),
    ("composition-changed", field(True), field(False), R, R, "data"),
    (
        "keyword-changed",
        field({"type": "array"}),
        field({"type": "array", "unevaluatedItems": False}),
        R,
        R,
        "data",
    ),
    # an annotation: nothing to show
    (
        "keyword-changed",
        field({"type": "string", "contentEncoding": "base64"}),
        field({"type": "string", "contentEncoding": "base32"}),
        R,
        R,
        "data",
    ),
    ("definition-removed", facet(field(S), defs={"Other": S}), facet(field(S)), R, N, "codegen"),
    (
        "definition-removed",
        facet(field(INT), defs={"Unused": obj({"a": S})}),
        facet(field(INT)),
        R,
        N,
        "codegen",
    ),
    (
        "definition-renamed",
        facet(field(S), defs={"OldName": obj({"a": S})}),
        facet(field(S), defs={"NewName": obj({"a": S})}),
        R,
        N,
        "codegen",
    ),
    (
        "definition-renamed",
        facet(field(INT), defs={"Part": S}),
        facet(field(INT), defs={"Piece": S}),
        R,
        N,
        "codegen",
    ),
    ("definition-added", facet(field(S)), facet(field(S), defs={"Extra": S}), A, N, "codegen"),
    (
        "definition-added",
        facet(field(INT)),
        facet(field(INT), defs={"More": obj({"a": INT})}),
        A,
        N,
        "codegen",
    ),
    (
        "default-changed",
        field({"type": "string", "default": "a"}),
        field({"type": "string", "default": "b"}),
        A,
        N,
        "codegen",
    ),
    ("default-changed", field(INT), field({"type": "integer", "default": 0}), A, N, "codegen"),
    (
        "documentation",
        field({"type": "string", "description": "old"}),
        field({"type": "string", "description": "new"}),
        A,
        N,
        "codegen",
    ),
    (
        "documentation",
        field({"type": "string", "example": "a"}),
        field({"type": "string", "example": "b", "title": "V"}),
        A,
        N,
        "codegen",
    ),
    # $refs followed: a field moved behind a local ref is judged by what the definition accepts
    (
        "type-changed",
        facet(field(S)),
        facet(field({"$ref": "#/$defs/V"}), defs={"V": INT}),
        M,
        M,
        "data",
    ),
    (
        "enum-extended",
        facet(field({"$ref": "#/$defs/V"}), defs={"V": {"enum": ["a"]}}),
        facet(field({"$ref": "#/$defs/V"}), defs={"V": {"enum": ["a", "b"]}}),
        A,
        M,
        "data",
    ),
    # allOf members added or removed are compared with no constraint
    (
        "property-added-required",
        {"type": "object", "allOf": [obj({"a": S})]},
        {"type": "object", "allOf": [obj({"a": S}), obj({"b": INT}, ["b"])]},
        M,
        A,
        "data",
    ),
    (
        "required-removed",
        {"type": "object", "allOf": [obj({"a": S}), {"required": ["a"]}]},
        {"type": "object", "allOf": [obj({"a": S})]},
        A,
        M,
        "data",
    ),
    (
        "ref-unverified",
        field({"$ref": "https://nowhere.example/1-0-0/A.json"}),
        field({"$ref": "https://nowhere.example/1-0-1/A.json"}),
        N,
        N,
        "data",
    ),
    (
        "ref-unverified",
        field(S),
        field({"$ref": "https://nowhere.example/2-0-0/B.json#/$defs/X"}),
        N,
        N,
        "data",
    ),
]


def _file(schema: Any, version: str) -> Any:
    whole = (
        schema
        if "$defs" in schema and "properties" in schema and "$id" in schema
        else facet(schema)
    )
    whole = copy.deepcopy(whole)
    whole["$id"] = whole["$id"].replace("/1-0-0/", f"/{version}/")
    return whole


def resolve(url: str) -> Any:
    return BASE_DOC if url == BASE else None


def _validators(schema: Any) -> tuple[Any, Any]:
    """jsonschema (draft 2020-12, formats asserted) and jsonschema-rs (formats asserted), built
    here."""
    registry: Registry[Any] = Registry().with_resource(BASE, DRAFT202012.create_resource(BASE_DOC))
    py = jsonschema.Draft202012Validator(
        schema, registry=registry, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    rs = jsonschema_rs.validator_for(
        schema, registry=jsonschema_rs.Registry([(BASE, BASE_DOC)]), validate_formats=True
    )
    return py, rs


def _valid(validators: tuple[Any, Any], instance: Any) -> bool:
    py, rs = validators
    answer = py.is_valid(instance)
    assert rs.is_valid(instance) == answer, f"the two validators disagree on {instance}"
    return bool(answer)


# digits that may overstate: a witness only when one exists
CONSERVATIVE = {"keyword-changed", "composition-changed"}
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def test_the_table_covers_every_class_twice_and_sixty_pairs() -> None:
    per_class = {name: sum(1 for c in CASES if c[0] == name) for name in CLASSES}
    assert {name: n for name, n in per_class.items() if n < 2} == {}
    assert len(CASES) >= 60


@pytest.mark.no_cover
def test_a_comparison_builds_validators_only_to_try_a_witness(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search compiles both files' validators (the pure-Python ones too) when it first tries a
    candidate: a comparison without a data-level verdict builds none."""
    built: list[str] = []

    class Counted(witness.SideValidators):
        def __init__(self, schema: Any, resolve: Any, label: str) -> None:
            built.append(label)
            super().__init__(schema, resolve, label)

    monkeypatch.setattr(witness, "SideValidators", Counted)
    quiet = searched = 0
    for _, base, head, *_ in CASES:
        before = len(built)
        evolution = compare(_file(base, "1-0-0"), _file(head, "1-0-1"), resolve, resolve)
        directions = (evolution.backward, evolution.forward)
        if all(d.category != "data" or d.bump is Bump.NONE for d in directions):
            assert len(built) == before, [c.kind for c in evolution.changes]
            quiet += 1
        elif any(d.witness is not None for d in directions):
            assert len(built) - before == 2  # both files, once each
            searched += 1
    assert quiet >= 10 and searched >= 10


def test_compiling_the_validators_is_not_the_search_s_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search's CPU budget counts the search: validators compiled on its first candidate (the
    first import of the pure-Python stack, slow under coverage or load) do not use it up."""

    class Slow(witness.SideValidators):
        def __init__(self, schema: Any, resolve: Any, label: str) -> None:
            until = time.thread_time() + witness.BUDGET_SECONDS
            while time.thread_time() < until:
                pass
            super().__init__(schema, resolve, label)

    monkeypatch.setattr(witness, "SideValidators", Slow)
    kind, base, head, *_ = next(c for c in CASES if c[0] == "not-added")
    evolution = compare(_file(base, "1-0-0"), _file(head, "1-0-1"), resolve, resolve)
    assert any(d.witness is not None for d in (evolution.backward, evolution.forward)), kind


@pytest.mark.parametrize(
    ("kind", "base", "head", "backward", "forward", "category"), CASES, ids=IDS
)
def test_each_change_class(
    kind: str, base: Any, head: Any, backward: Bump, forward: Bump, category: str
) -> None:
    old, new = _file(base, "1-0-0"), _file(head, "1-0-1")
    evolution = compare(old, new, resolve, resolve)
    kinds = {c.kind for c in evolution.changes}
    assert kind in kinds, (kind, [(c.kind, c.what) for c in evolution.changes])
    assert (evolution.backward.bump, evolution.forward.bump) == (backward, forward), [
        (c.kind, c.bump.name, c.forward.name, c.what) for c in evolution.changes
    ]
    if kind == "ref-unverified":
        assert all(c.unverified for c in evolution.changes if c.kind == kind)
        return
    shown = evolution.backward if evolution.backward.bump > Bump.NONE else evolution.forward
    assert shown.category == category
    # Each direction's digit from the classes themselves, before the policy lowers
    # property-added-open.
    strict_backward = max(CLASSES[c.kind].backward for c in evolution.changes)
    strict_forward = max(CLASSES[c.kind].forward for c in evolution.changes)
    for direction, digit, valid_doc, invalid_doc in (
        (evolution.backward, strict_backward, old, new),
        (evolution.forward, strict_forward, new, old),
    ):
        if direction.category != "data" or direction.bump is Bump.NONE:
            assert direction.witness is None  # wire and codegen verdicts show no instance
            continue
        if digit >= Bump.REVISION:
            witness = direction.witness
            if witness is None and kind in CONSERVATIVE:
                assert (
                    direction.searched
                    and "No instance showing it was found" in direction.evidence()
                )
                continue
            assert witness is not None, f"no witness for {kind} ({direction.describe()})"
            instance = json.loads(witness.instance)
            assert _valid(_validators(valid_doc), instance) and not _valid(
                _validators(invalid_doc), instance
            )
            assert witness.valid.startswith("base" if valid_doc is old else "head")
            # example-shaped
            assert isinstance(instance, dict) and set(instance) <= set(valid_doc["properties"])
        else:
            # compatible: nothing to show, none shown
            assert direction.witness is None and direction.searched


def test_the_policy_sets_the_digit_of_an_optional_field_added_to_an_open_object() -> None:
    old, new = _file(obj({"a": S}), "1-0-0"), _file(obj({"a": S, "b": INT}), "1-0-1")
    assert required_bump(old, new)[0] is Bump.ADDITION
    assert required_bump(old, new, open_add=Bump.REVISION)[0] is Bump.REVISION
    # A closed object cannot have carried the field: ADDITION whatever the policy.
    closed_old = _file(field(obj({"a": S}, additionalProperties=False)), "1-0-0")
    closed_new = _file(field(obj({"a": S, "b": INT}, additionalProperties=False)), "1-0-1")
    assert required_bump(closed_old, closed_new, open_add=Bump.REVISION)[0] is Bump.ADDITION


def test_docs_table_is_generated_from_the_classes() -> None:
    assert table() in (ROOT / "docs/versions.md").read_text(encoding="utf-8")


def test_a_witness_from_a_hostile_schema_is_shown_inert() -> None:
    """Witness values come from the pull request's schema (enum values, consts): in Markdown they
    sit in a code block they cannot close, ASCII only, so no mention, HTML or bidi character
    survives."""
    from bot.core.findings import Finding, Report, Severity, Witness
    from bot.outputs.render.markdown import render_markdown
    from bot.outputs.render.text import render_text

    value = {"x": {"v": "```\n</details>@org/team \u202egnp.exe"}}
    witness = Witness(json.dumps(value, sort_keys=True), "base <b>", "head")
    finding = Finding(
        rule="versions/not-bumped",
        severity=Severity.ERROR,
        path="f.json",
        message="m",
        category="data",
        witness=witness,
    )
    markdown = render_markdown(Report.build([finding]))
    block = markdown.split("### Witnesses", 1)[1]
    fence = block.split("json\n", 1)[0].rsplit("\n", 1)[-1]
    assert len(fence) > 3 and fence.strip("`") == ""
    assert "\u202e" not in markdown and "\\u202e" in block and "<b>" not in markdown
    assert json.loads(block.split(fence + "json\n", 1)[1].split("\n" + fence, 1)[0]) == value
    text = render_text(Report.build([finding]))
    assert (
        "\u202e" not in text and "witness (valid against base <b>, invalid against head):" in text
    )


# -- limits too large to build a value past (issue: 818 MB for maxLength 400,000,000) -------------
TAGS = {"type": "array", "items": S}
HUGE = {
    "maxLength 400,000,000": (S, {**S, "maxLength": 400_000_000}),
    "maxLength 1,200,000,000": (S, {**S, "maxLength": 1_200_000_000}),
    "maxItems 30,000,000": (TAGS, {**TAGS, "maxItems": 30_000_000}),
    "maxLength 1e400": (S, {**S, "maxLength": json.loads("1e400")}),
    "maximum 10**400": (NUM, {**NUM, "maximum": 10**400}),
}
AT_THE_BOUND = {
    "maxLength": (S, {**S, "maxLength": witness.MAX_SIZE}),
    "maxItems": (TAGS, {**TAGS, "maxItems": witness.MAX_SIZE}),
}


# no_cover: tracing triples the CPU time of validating 10,001 values in pure Python (0.06 s to
# 0.2 s, the candidate's bound), and the search's budget is CPU time
@pytest.mark.no_cover
@pytest.mark.parametrize("name", sorted(AT_THE_BOUND))
def test_a_limit_at_the_bound_has_its_witness_one_past_it(name: str) -> None:
    base, head = AT_THE_BOUND[name]
    old, new = _file(field(base), "1-0-0"), _file(field(head), "1-0-1")
    found = compare(old, new, resolve, resolve).backward.witness
    assert found is not None
    value = json.loads(found.instance)["x"]["v"]
    assert len(value) == witness.MAX_SIZE + 1
    assert _valid(_validators(old), json.loads(found.instance))
    assert not _valid(_validators(new), json.loads(found.instance))


@pytest.mark.parametrize("name", sorted(HUGE))
def test_a_limit_past_the_bound_keeps_its_verdict_without_a_witness(name: str) -> None:
    """No value is built past ``MAX_SIZE`` (nor from an infinite or unrepresentable limit): the
    digit is the schema diff's, and the finding says no instance was found."""
    base, head = HUGE[name]
    evolution = compare(_file(field(base), "1-0-0"), _file(field(head), "1-0-1"), resolve, resolve)
    assert evolution.backward.bump is Bump.REVISION and evolution.backward.category == "data"
    assert evolution.backward.witness is None and evolution.backward.searched
    assert "No instance showing it was found" in evolution.backward.evidence()


# every HUGE comparison in one child process with 1 GB of address space; its peak resident size
HUGE_IN_A_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from tests.test_evolution import HUGE, _file, compare, field, resolve
for base, head in HUGE.values():
    compare(_file(field(base), "1-0-0"), _file(field(head), "1-0-1"), resolve, resolve)
# VmHWM, this program's own peak (ru_maxrss starts at the parent's, which survives exec: 498 MB in CI)
print(int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:"))) // 1024)
"""  # noqa: E501


def test_limits_past_the_bound_take_bounded_memory() -> None:
    """Before: 818 MB for 400,000,000, a MemoryError for 1,200,000,000, 946 MB and 9 s for
    maxItems 30,000,000, an OverflowError for 1e400."""
    out = subprocess.run(
        [sys.executable, "-c", HUGE_IN_A_CHILD],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout) < 200, f"peak resident size {out.stdout.strip()} MB"
