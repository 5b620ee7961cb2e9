"""A pattern means the same on both schema engines: jsonschema-rs (the verdicts) and the pure-Python
validator's ``bounded_search`` (where jsonschema-rs cannot decide, and every explanation)."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.model.ecma_regex import python_pattern
from bot.model.schemas import bounded_search, rs_validator


def _rs(pattern: str) -> Any:
    return rs_validator({"type": "string", "pattern": pattern})


# every code point of the first planes' scripts and specials, and a stride through the rest
CODE_POINTS = [
    chr(c)
    for c in [*range(0x3100), *range(0xFE00, 0x10000), *range(0x10000, 0x110000, 97)]
    if not 0xD800 <= c < 0xE000
]
CLASSES = [
    "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "[\\d]", "[^\\d]", "[\\s]", "[^\\s]",
    "[\\S]", "[^\\S]", "[x\\D]", "[^x\\W]", "[\\W\\d]", "[^\\s\\S]", ".", "\\cJ", "[\\cI]",
]  # fmt: skip


@pytest.mark.parametrize("shorthand", CLASSES)
def test_each_class_holds_the_same_characters_on_both_engines(shorthand: str) -> None:
    """Measured on 77,000 code points: Python's own ``\\d`` alone takes 650 digits, ``\\w``
    134,000 characters, ``\\s`` misses U+FEFF; jsonschema-rs keeps to ECMA-262's sets."""
    pattern = f"^{shorthand}$"
    rs = _rs(pattern)
    differ = [c for c in CODE_POINTS if rs.is_valid(c) != bounded_search(pattern, c)]
    assert differ == []


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("^[a-z]+$", "a\n", False),  # ECMA's "$" is the end of input
        ("^[a-z]+$", "a", True),
        ("(?m)^a$", "a\nb", True),  # multi-line mode: "$" ends lines, on both
        ("a$|b", "a\n", False),
        ("[$]", "$", True),  # a "$" in a class is a dollar
        ("\\$", "$", True),
        ("^\\d+$", "12\u0663", False),
        ("^[\\w-]+$", "caf\u00e9", False),
        ("^[^\\W_]+$", "ab1", True),
        ("^\\cJ$", "\n", True),
        ("^[]a]$", "]", True),  # a "]" first in a class is a literal to both (ECMA: empty)
        ("^\\Z", "", None),  # not ECMA-262: jsonschema-rs refuses it
        # an escaped "(" or one in a class opens no flag group: "$" stays the end of input
        ("^a\\(?m$", "am\n", False),
        ("^[(?m]$", "m\n", False),
        ("\\\\(?m)a$", "\\a\nb", True),  # an escaped "\\", then a real flag group
        # a flag holds to the end of its group
        ("(?m:a)$", "a\n", False),
        ("((?m)a)$", "a\n", False),
        ("((?m)a)|^b", "x\nb", False),
        ("(?m)((?-m)a)$", "a\nb", True),
        ("(?m)(?-m:a$)", "a\nb", False),
        ("a$(?m)", "a\n", False),  # and from where it stands
        ("(?x)a # $ (\n$", "a", True),  # a comment of verbose mode: its "$" and "(" are text
        ("(?R)a$", "a\r\n", False),  # the regex crate's CRLF mode, Python's recursion
        ("(?mR)a$", "a\r\n", True),
        ("(?mR)^b", "a\r\nb", True),
        ("(?mR)a$", "a\r", True),
        ("(?R).", "\r", False),
        ("(?U)a+?$", "aa", True),  # swapped greediness: the same strings match
        ("\\x{41}$", "A", True),  # the regex crate's braced escapes
        ("[\\u{5d}a]$", "]", True),
        ("\\Q$\\E", "$", None),  # no quoting in ECMA-262 nor in jsonschema-rs
    ],
)
def test_a_pattern_decides_a_string_as_jsonschema_rs_does(
    pattern: str, subject: str, matches: bool | None
) -> None:
    try:
        rs: bool | None = _rs(pattern).is_valid(subject)
    except jsonschema_rs.ValidationError:
        rs = None
    assert rs == matches
    if matches is not None:
        assert bounded_search(pattern, subject) is matches


TOKENS = [
    "^", "$", ".", "a", "1", "_", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", "\\B",
    "[a\\d]", "[^\\s_]", "[\\W1]", "[^\\D]", "[$]", "\\$", "\\cJ", "(?i)", "(?m)", "|", "(a|\\s)",
    # what a scan of groups and escapes must tell apart
    "\\(", "\\)", "\\\\", "[(?m]", "(?m:a$)", "((?m)a$)", "(?-m)", "(?s)", "(?R)", "(?U)",
    "(?mR:^a$)", "(", ")", "(?:", "(?m:", "(?-m:", "[\\]$]", "\\x{61}", "m",
]  # fmt: skip
QUANTIFIERS = ["", "*", "+", "?", "{2}", "{1,2}"]
NOT_REPEATED = {"^", "$", "|", "(", "(?:", "(?m:", "(?-m:"} | {
    t for t in TOKENS if t.endswith(")")
} - {"\\)"}
SUBJECT_CHARS = list("aA1_ \n\r\u0663\u00e9\u00a0\ufeff\u212a()$m")


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(QUANTIFIERS)), max_size=6),
    st.lists(st.sampled_from(SUBJECT_CHARS), max_size=6).map("".join),
)
@example([("^", ""), ("\\w", "+"), ("$", "")], "a\n")
@example([("\\d", "")], "\u0663")
@example([("^", ""), ("[^\\D]", "*")], "a")  # a negated class rewritten, then repeated
@example([("^", ""), ("a", ""), ("\\(", "?"), ("m", ""), ("$", "")], "am\n")  # an escaped "("
@example([("(?m:a$)", ""), ("$", "")], "a\n")
def test_generated_patterns_decide_as_jsonschema_rs_does(
    tokens: list[tuple[str, str]], subject: str
) -> None:
    pattern = "".join(t + (q if t not in NOT_REPEATED else "") for t, q in tokens)
    try:
        rs = _rs(pattern)
    except jsonschema_rs.ValidationError:
        return  # not an ECMA-262 pattern jsonschema-rs takes: refused, decided by neither
    assert bounded_search(pattern, subject) == rs.is_valid(subject), python_pattern(pattern)


def test_the_rewrite_leaves_escapes_and_literals_as_written() -> None:
    assert python_pattern("^a\\.b\\\\$") == "(?:\\A)a\\.b\\\\(?:\\Z)"
    assert python_pattern("[\\]\\d-]") == "[\\]0-9-]"
    assert python_pattern("[^\\S]") == "(?:(?![^" + python_pattern("\\s")[1:-1] + "])[\\s\\S])"
