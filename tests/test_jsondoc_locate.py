"""``JsonDoc.locate`` walks the text along the asked pointer only: the same positions as the scan
that built a table of every value (kept here as the reference), in bounded memory."""

from __future__ import annotations

import bisect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.core.jsondoc import JsonDoc, JsonProblem, escape_pointer_token, strict_loads
from tests.conftest import CORPUS

_TOKEN_REFERENCE = r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<punct>[{}\[\]:,])
      | (?P<atom>-?\d[\w.+-]*|true|false|null)
    )"""


class Reference:
    """The scan ``JsonDoc`` used before: one pass over the whole text recording the position of
    every value (and every member name, as ``pointer#key``)."""

    def __init__(self, text: str) -> None:
        self.token = re.compile(_TOKEN_REFERENCE, re.VERBOSE | re.DOTALL)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.positions = self.scan(text)

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def locate(self, pointer: str) -> tuple[int, int]:
        probe = pointer
        while True:
            if probe in self.positions:
                return self.positions[probe]
            if not probe:
                return 1, 1
            probe = probe[: probe.rfind("/")]

    def locate_key(self, pointer: str) -> tuple[int, int]:
        return self.positions.get(pointer + "#key") or self.locate(pointer)

    def scan(self, text: str) -> dict[str, tuple[int, int]]:
        positions: dict[str, tuple[int, int]] = {}
        stack: list[list[Any]] = []  # [pointer, is_object, next_index, pending_key]
        expecting_key = False
        pos = 0
        while True:
            match = self.token.match(text, pos)
            if match is None:
                break
            pos = match.end()
            start = match.start(match.lastgroup or 0)
            kind = match.lastgroup
            token = match.group(kind or 0)
            if kind == "punct" and token in "}]":
                stack.pop()
                expecting_key = False
                continue
            if kind == "punct" and token == ",":
                expecting_key = bool(stack) and stack[-1][1]
                continue
            if kind == "punct" and token == ":":
                continue
            if kind == "string" and expecting_key and stack:
                key = json.loads(token)
                stack[-1][3] = key
                here = stack[-1][0] + "/" + escape_pointer_token(key)
                positions[here + "#key"] = self.line_col(start)
                expecting_key = False
                continue
            if stack:
                frame = stack[-1]
                if frame[1]:
                    here = frame[0] + "/" + escape_pointer_token(frame[3])
                else:
                    here = frame[0] + "/" + str(frame[2])
                    frame[2] += 1
            else:
                here = ""
            positions[here] = self.line_col(start)
            if token == "{":
                stack.append([here, True, 0, None])
                expecting_key = True
            elif token == "[":
                stack.append([here, False, 0, None])
        return positions


def pointers(value: Any) -> list[str]:
    """Every pointer of ``value``, in document order, without recursion."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, node = stack.pop()
        found.append(pointer)
        if isinstance(node, dict):
            children = [(f"{pointer}/{escape_pointer_token(k)}", v) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(f"{pointer}/{i}", v) for i, v in enumerate(node)]
        else:
            children = []
        stack.extend(reversed(children))
    return found


def asked(value: Any) -> list[str]:
    """Every pointer of ``value`` and a few that name nothing under existing ones."""
    every = pointers(value)
    missing = ["/nothing", "/0/nothing", "/-1", "/01", "x", "/~2", "/a~"]
    for pointer in every[:: max(1, len(every) // 40)]:
        missing += [f"{pointer}/nothing", f"{pointer}/99999", f"{pointer}/0/deeper", f"{pointer}/"]
    return every + missing


def assert_same(text: str, value: Any) -> int:
    """Every asked pointer located, as a value and as a key, where the reference puts it."""
    reference = Reference(text)
    doc = JsonDoc(path="<test>", text=text, value=value)
    checked = 0
    for pointer in asked(value):
        assert doc.locate(pointer) == reference.locate(pointer), pointer
        assert doc.locate_key(pointer) == reference.locate_key(pointer), pointer
        checked += 1
    fresh = JsonDoc(path="<test>", text=text, value=value)  # keys asked first, on a fresh cache
    for pointer in reversed(asked(value)):
        assert fresh.locate_key(pointer) == reference.locate_key(pointer), pointer
    return checked


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*.json") if p.is_file())


def test_the_corpus_has_hundreds_of_json_files() -> None:
    assert len(corpus_files()) >= 300


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_pointer_of_a_corpus_file_is_where_the_scan_put_it(path: Path) -> None:
    try:
        doc = JsonDoc.parse(path.read_bytes(), str(path))
    except JsonProblem:
        pytest.skip("not JSON the bot reads (located by the parser instead)")
    assert assert_same(doc.text, doc.value) > 0


EDGES = {
    "escapes": '{"a\\"b": {"c\\\\d": ["\\"]", "\\u005d"]}, "e\\/f": 1, "\\u0067": [2]}',
    "spelled keys": '{"\\u00E9": 1, "\\ud83d\\uDE00": {"\\/": 2}, "\\"\\t": 3, "a\\u0062": 4}',
    "brackets in strings": '{"x": "[{", "y": ["}]", {"z": "\\"}"}], "w": {"[": {"{": 3}}}',
    "pointer escapes": '{"a/b": {"m~n": 1, "~": [2], "/": {"~1": 3}}, "~0": 4}',
    "empty key": '{"": {"": [0, {"": ""}]}, "k": {"": 1}}',
    "arrays of arrays": "[[[], [[1, [2, [3]]]], []], [[[[[]]]]], [{}, [{}]]]",
    "unicode": '{"é": "\U0001f600\U0001f600", "\U0001f600": ["日本", {"ключ": "\U00010348"}]}',
    "crlf": '{\r\n  "a": [\r\n    1,\r\n    {"b": "c"}\r\n  ],\r\n  "d": null\r\n}\r\n',
    "scalars": '{"n": -1.5e+3, "t": true, "f": false, "z": null, "i": 0, "s": "",\n"big": 12}',
    "blanks": ' \n\t{ "a" :\n\n [ 1 ,\t2 ] ,"b"\n:\n{ } }\n',
    "scalar document": '\n  "just a string"\n',
    "deep": "[" * 40 + '{"k": ' + "[" * 40 + "7" + "]" * 40 + "}" + "]" * 40,
    "wide and deep": json.dumps({"a": [{"b": [14 * [1]]}] * 30, "c": "[" * 20}),
    "deeper than a skip": json.dumps([[{"k": [[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]}], 2]),
}


@pytest.mark.parametrize("text", EDGES.values(), ids=EDGES.keys())
def test_edge_cases_are_located_as_the_scan_located_them(text: str) -> None:
    assert_same(text, json.loads(text))


def test_a_bom_is_dropped_and_columns_count_characters() -> None:
    doc = JsonDoc.parse('\ufeff{"\U0001f600": ["é", "x"],\n "b": 1}'.encode())
    assert doc.locate("/\U0001f600/1") == (1, 13)  # one column per character, astral too
    assert doc.locate_key("/b") == (2, 2)
    assert_same(doc.text, doc.value)


def test_values_after_nan_are_not_located_as_the_scan_did_not() -> None:
    text = '{"a": [1, NaN, {"b": 2}], "c": {"d": Infinity}, "e": 3}'
    assert_same(text, json.loads(text))
    doc = JsonDoc(path="", text=text, value=json.loads(text))
    assert (doc.locate("/a/0"), doc.locate("/e")) == ((1, 8), (1, 1))


def test_deep_nesting_is_walked_without_recursion() -> None:
    depth = 5000  # past the recursion limit: parse refuses it, locate still answers
    text = "[" * depth + "]" * depth
    doc = JsonDoc(path="", text=text, value=None)
    assert doc.locate("/0" * (depth - 1)) == (1, depth)
    assert doc.locate("/0" * depth) == (1, depth)


def test_an_object_naming_a_key_twice_is_refused_at_the_second() -> None:
    with pytest.raises(JsonProblem) as raised:
        strict_loads('{"a": {"x": 1},\n "b": [{"k": 1, "k": 2}]}')
    assert (raised.value.line, raised.value.column) == (2, 17)
    assert "duplicate key 'k'" in raised.value.message


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bot.core.jsondoc import JsonDoc
items = [{"k": i, "s": "x"} for i in range(int(sys.argv[2]))]
text = json.dumps({"a": {"b": items, "c": [1]}})
del items
doc = JsonDoc.parse(text)
parsed = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
located = [doc.locate(p) for p in ("/a/b/300000/s", "/a/b/1/k", "/a/c/0", "/a/b/299999")]
assert located[1:3] == [(1, text.index('"k": 1,') + 6), (1, len(text) - 3)], located
peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
print(len(text), int(parsed[0].split()[1]) // 1024, int(peak[0].split()[1]) // 1024)
"""


def test_locating_in_an_8_mb_file_adds_little_memory() -> None:
    """Measured (peak MB after parsing -> after locating four pointers, 8.1 MB of text): the
    scan 117 -> 419, the walk 117 -> 117."""
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, root, "330000"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"},
    )
    size, parsed, peak = map(int, done.stdout.split())
    assert size > 8_000_000
    assert peak - parsed < 60, (parsed, peak)


def per_value_depth(value: Any, container: int) -> int:
    """The walks the level-by-level ones replaced: a stack entry per value; a container counts
    ``container`` levels and a scalar 1 - ``container`` (``nesting_depth``: 1, examples: 0)."""
    deepest, stack = 0, [(value, container)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((v, depth + 1) for v in children)
        elif not container:
            deepest = max(deepest, depth)
    return deepest


DEPTHS = [5, {}, [], {"a": 1}, {"a": {}}, [[[]]], [1, [2, [3]]], {"a": [{"b": {}}], "c": [1]}]


def test_depth_walks_agree_with_the_walks_per_value() -> None:
    from bot.core.jsondoc import nesting_depth
    from bot.review.checks.examples import _depth

    deep: list[Any] = []
    for _ in range(3000):  # past the recursion limit
        deep = [deep, 1]
    for value in [*DEPTHS, deep, [deep]]:
        assert nesting_depth(value) == per_value_depth(value, 1)
        assert _depth(value) == per_value_depth(value, 0)
    assert (nesting_depth(deep), _depth(deep)) == (3001, 3000)
