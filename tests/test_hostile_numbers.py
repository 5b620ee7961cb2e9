"""Numbers JSON cannot hold or Python cannot read: a located "cannot be read" finding, never an
internal error, never a value read.

Python's ``json`` refuses an integer of more than 4,300 digits with a ValueError that is not a
JSONDecodeError: it escaped ``JsonDoc.parse`` and stopped the review (an internal error, no
location). It reads ``NaN`` and ``Infinity``, which are not JSON: a schema holding one was
checked, and published where JSON readers refuse it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bot.core.jsondoc import JsonDoc, JsonProblem, strict_loads
from tests import registry_cases as rc
from tests.test_hostile import strict, tree

LIMIT = sys.get_int_max_str_digits()
__all__ = ["tree"]  # the fixture


def test_the_first_long_integer_is_located_and_strings_of_digits_are_not_numbers() -> None:
    text = '{"a": [1,\n  "' + "9" * (LIMIT + 700) + '", -1' + "0" * LIMIT + "]}"
    with pytest.raises(JsonProblem) as raised:
        JsonDoc.parse(text)
    assert (raised.value.line, raised.value.column) == (2, LIMIT + 700 + 7)
    assert f"an integer of {LIMIT + 1:,} digits" in raised.value.message


def test_at_the_limit_and_in_floats_long_digits_are_read() -> None:
    value = JsonDoc.parse("[1" + "0" * (LIMIT - 1) + ", 1." + "5" * (LIMIT * 2) + "]").value
    assert value[0] == 10 ** (LIMIT - 1) and isinstance(value[1], float)


@pytest.mark.parametrize(
    ("where", "rule"), [(rc.EXAMPLE, "examples/unreadable"), (rc.FACET, "facets/unreadable")]
)
def test_a_long_integer_in_an_entry_file_is_a_located_finding(
    tree: Path, where: str, rule: str
) -> None:
    # a member added on the second line of the object: {"big": 100...0,
    assert unreadable_at(tree, where, '  "big": 1' + "0" * LIMIT + ",", rule) == (2, 10)


def unreadable_at(tree: Path, where: str, member: str, rule: str) -> tuple[int, int]:
    """Where the strict review's one ``rule`` finding stands once ``member`` is the second line of
    the file at ``where``; the review fails and no check stopped."""
    lines = (tree / where).read_text(encoding="utf-8").splitlines()
    lines.insert(1, member)
    (tree / where).write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = strict(tree)
    assert not [f for f in report.findings if f.rule.startswith("bot/")]
    (finding,) = [f for f in report.findings if f.rule == rule]
    assert report.verdict.value == "failure"
    return finding.line, finding.column


def test_a_long_integer_under_the_limit_is_validated(tree: Path) -> None:
    """A 4,000-digit integer is read, and checked against its schema like any number."""
    example = json.loads((tree / rc.EXAMPLE).read_text(encoding="utf-8"))
    example["acme_widget"]["widgetId"] = 10 ** (LIMIT - 1)
    (tree / rc.EXAMPLE).write_text(json.dumps(example, indent=2) + "\n", encoding="utf-8")
    report = strict(tree)
    assert not [f for f in report.findings if f.rule.startswith("bot/")]
    (invalid,) = [f for f in report.findings if f.path == rc.EXAMPLE and f.rule != "format/json"]
    assert invalid.rule == "examples/invalid" and "is not of type 'string'" in invalid.message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_where_they_stand(constant: str) -> None:
    """Python's ``json`` reads them; JSON has no such numbers and JavaScript's JSON.parse refuses
    them, so a schema holding one could not be read on its published URL."""
    text = '{"a": "NaN and Infinity in a string",\n "b": [1, ' + constant + "]}"
    with pytest.raises(JsonProblem) as raised:
        JsonDoc.parse(text)
    assert (raised.value.line, raised.value.column) == (2, 11)
    assert f"{constant} is not a JSON number" in raised.value.message
    with pytest.raises(JsonProblem):
        strict_loads(text)


@pytest.mark.parametrize(
    ("where", "rule"), [(rc.EXAMPLE, "examples/unreadable"), (rc.FACET, "facets/unreadable")]
)
def test_a_nan_in_an_entry_file_is_a_located_finding(tree: Path, where: str, rule: str) -> None:
    assert unreadable_at(tree, where, '  "maximum": NaN,', rule) == (2, 14)
