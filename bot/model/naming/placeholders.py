"""Placeholders of expected-event test suites: values that stand for "anything matching", never real
values.

More in docs/module-notes.md (bot/model/naming/placeholders.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

JSON_UNIT = "${json-unit."
# one {{ ... }} expression, nothing around it
_TEMPLATE = re.compile(r"\{\{(?:(?!\}\}).)*\}\}", re.DOTALL)
_VARIABLE = re.compile(r"\{[A-Z][A-Z0-9_]*\}\S*")  # starts with {NAME}, no white space
SYNTAXES = ("${json-unit.*}", "{{ ... }}", "{NAME}")  # as shown in messages and docs


def is_placeholder(value: Any) -> bool:
    """Whether ``value`` is a test-suite placeholder rather than a value."""
    if not isinstance(value, str):
        return False
    if value.startswith(JSON_UNIT):
        return True
    if not value.startswith("{"):
        return False
    if value.startswith("{{"):
        return value.endswith("}}") and _TEMPLATE.fullmatch(value) is not None
    return _VARIABLE.fullmatch(value) is not None


def might_hold_placeholders(text: str) -> bool:
    """A fast test on an event's raw JSON text: only texts passing it can hold a placeholder."""
    return '"${json-unit.' in text or '"{' in text


def has_placeholders(value: Any) -> bool:
    """Whether any value in a parsed event is a placeholder (iterative: no recursion limit)."""
    return next(_placeholders(value), None) is not None


def count_placeholders(value: Any) -> int:
    """How many values of a parsed event are placeholders."""
    return sum(1 for _ in _placeholders(value))


def _placeholders(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif is_placeholder(node):
            yield node
