"""The subject of an example's validation error: robust to edits that leave the error as it was,
never the same for a different error (``bot.model.error_subject``)."""

from __future__ import annotations

from typing import Any

import jsonschema

from bot.model.error_subject import about
from bot.model.explanations import from_python

SCHEMA = {
    "properties": {
        "a": {
            "anyOf": [
                {"type": "string"},
                {"type": "object", "properties": {"k": {"type": "integer"}}},
            ]
        },
        "b": {"type": "string", "enum": ["x"]},
        "c": {
            "properties": {"own": {}},
            "patternProperties": {"^x_": {}},
            "additionalProperties": False,
        },
    }
}


def subjects(document: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return sorted(about(from_python(e), document) for e in validator.iter_errors(document))


def test_an_edit_inside_an_offending_object_leaves_its_subject() -> None:
    before = subjects({"a": {"k": "1", "n": 1}, "b": {"v": 1}, "c": {"Extra": 1}})
    after = subjects({"a": {"k": "1", "n": 2}, "b": {"v": 2, "w": 3}, "c": {"Extra": 2, "own": 1}})
    assert len(before) == 4 and before == after


def test_another_error_has_another_subject() -> None:
    base = subjects({"a": {"k": "1"}, "b": {}, "c": {"Extra": 1}})
    assert subjects({"a": {"k": "2"}, "b": {}, "c": {"Extra": 1}}) != base  # the branch's value
    assert (
        subjects({"a": {"k": "1"}, "b": [], "c": {"Extra": 1}}) != base
    )  # an array, not an object
    assert subjects({"a": {"k": "1"}, "b": {}, "c": {"Other": 1}}) != base  # another field
