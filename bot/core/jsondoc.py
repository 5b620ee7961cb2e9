"""JSON documents that remember where each value stands, loaded defensively.

Parsing uses the C ``json`` module; positions are computed lazily, on the first request for a
location, by one iterative scan of the text (no recursion, so deep nesting cannot crash it).
Hostile input (invalid UTF-8, huge files, deep nesting, malformed JSON) raises ``JsonProblem``
with a precise location instead of crashing. Parsing is strict: an object naming one key twice is
rejected (parsers disagree on which value wins, so the file means different things to different
readers), with the line of the second occurrence and of the first.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 128

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<punct>[{}\[\]:,])
      | (?P<atom>-?\d[\w.+-]*|true|false|null)
    )""",
    re.VERBOSE | re.DOTALL,
)


class JsonProblem(Exception):
    """A file that is not usable JSON; carries the 1-based line and column of the problem."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def escape_pointer_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_from(parts: tuple[str | int, ...] | list[str | int]) -> str:
    return "".join("/" + escape_pointer_token(p) for p in parts)


_ABSENT = object()


def resolve_pointer(document: Any, pointer: str, default: Any = None) -> Any:
    """The node at RFC 6901 ``pointer`` ("" is the document), or ``default`` when it names
    nothing."""
    if not pointer:
        return document
    if not pointer.startswith("/"):
        return default
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return default
    return node


def pointer_exists(document: Any, pointer: str) -> bool:
    return resolve_pointer(document, pointer, _ABSENT) is not _ABSENT


def decode_text(data: bytes) -> str:
    """Decode UTF-8 (a BOM is tolerated), raising ``JsonProblem`` at the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise JsonProblem(
            f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x})", line, column
        ) from None


def nesting_depth(value: Any) -> int:
    """Depth of nested containers, computed without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in node)
    return deepest


@dataclass
class JsonDoc:
    """A parsed JSON document with lazily computed source positions."""

    path: str
    text: str
    value: Any
    _positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)
    _line_starts: list[int] | None = field(default=None, repr=False)

    @classmethod
    def parse(
        cls, data: bytes | str, path: str = "<memory>", max_bytes: int = MAX_BYTES
    ) -> JsonDoc:
        size = len(data)
        if size > max_bytes:
            raise JsonProblem(
                f"file is {size:,} bytes, over the {max_bytes:,}-byte limit for JSON files", 1, 1
            )
        text = decode_text(data) if isinstance(data, bytes) else data
        duplicated: list[str] = []
        try:
            value = json.loads(text, object_pairs_hook=functools.partial(_object, duplicated))
        except json.JSONDecodeError as exc:
            raise JsonProblem(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        except RecursionError:
            raise JsonProblem(
                f"JSON is nested too deeply (limit {MAX_DEPTH} levels)", 1, 1
            ) from None
        except ValueError:  # an integer of more digits than Python converts (4,300 by default)
            raise _long_integer(text) from None
        # Depth cannot exceed the number of brackets: most files need no walk at all.
        if text.count("{") + text.count("[") > MAX_DEPTH and nesting_depth(value) > MAX_DEPTH:
            raise JsonProblem(f"JSON is nested too deeply (limit {MAX_DEPTH} levels)", 1, 1)
        doc = cls(path=path, text=text, value=value)
        if duplicated:
            raise doc._duplicate_problem(duplicated[0])
        return doc

    def _duplicate_problem(self, key: str) -> JsonProblem:
        """The problem of the first object that names a key twice, at the second occurrence."""
        found = _first_duplicate(self.text)
        if found is None:  # the scanner and the parser disagree: still refuse, located at the top
            return JsonProblem(
                f"duplicate key {key!r}: JSON parsers disagree on which value wins", 1, 1
            )
        name, first, second = found
        line, column = self.line_col(second)
        return JsonProblem(
            f"duplicate key {name!r} at line {line} (first at line {self.line_col(first)[0]}): "
            "JSON parsers disagree on which value wins; keep one",
            line,
            column,
        )

    def line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def locate(self, pointer: str) -> tuple[int, int]:
        """Line and column of the value at ``pointer``; the nearest existing ancestor otherwise."""
        if self._positions is None:
            self._positions = self._scan()
        probe = pointer
        while True:
            if probe in self._positions:
                return self._positions[probe]
            if not probe:
                return 1, 1
            probe = probe[: probe.rfind("/")]

    def locate_key(self, pointer: str) -> tuple[int, int]:
        """Line and column of the member name for an object member (the value's position
        otherwise)."""
        if self._positions is None:
            self._positions = self._scan()
        return self._positions.get(pointer + "#key") or self.locate(pointer)

    def _scan(self) -> dict[str, tuple[int, int]]:
        positions: dict[str, tuple[int, int]] = {}
        # Each frame: [pointer, is_object, next_index, pending_key]
        stack: list[list[Any]] = []
        expecting_key = False
        pos = 0
        text = self.text
        while True:
            match = _TOKEN.match(text, pos)
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
                positions[stack[-1][0] + "/" + escape_pointer_token(key) + "#key"] = self.line_col(
                    start
                )
                expecting_key = False
                continue
            # A value starts here.
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


_NUMBER_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


def _long_integer(text: str) -> JsonProblem:
    """The problem of the first integer (outside strings) with more digits than Python reads."""
    limit = sys.get_int_max_str_digits()
    for match in _NUMBER_OR_STRING.finditer(text):
        token = match.group()
        digits = len(token.lstrip("-"))
        if token[0] != '"' and digits > limit and token.lstrip("-").isdigit():
            doc = JsonDoc(path="", text=text, value=None)
            return JsonProblem(
                f"an integer of {digits:,} digits, over the {limit:,} digits a number may have",
                *doc.line_col(match.start()),
            )
    return JsonProblem("invalid JSON: a value that cannot be read", 1, 1)


def _object(duplicated: list[str], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s object hook: a dict, noting the first key an object names twice."""
    value = dict(pairs)
    if len(value) != len(pairs) and not duplicated:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                duplicated.append(key)
                break
            seen.add(key)
    return value


def _first_duplicate(text: str) -> tuple[str, int, int] | None:
    """``(key, offset of its first occurrence, offset of the second)`` in the first object, in text
    order, that names a key twice (the text is valid JSON)."""
    stack: list[dict[str, int] | None] = []  # the keys of each open object (None for an array)
    expecting_key = False
    pos = 0
    while (match := _TOKEN.match(text, pos)) is not None:
        pos = match.end()
        kind, token = match.lastgroup, match.group(match.lastgroup or 0)
        if kind == "punct":
            if token in "}]":
                stack.pop()
            elif token in "{[":
                stack.append({} if token == "{" else None)
            expecting_key = token in "{," and bool(stack) and stack[-1] is not None
            continue
        keys = stack[-1] if stack else None
        if kind == "string" and expecting_key and keys is not None:
            key, start = json.loads(token), match.start(kind)
            if key in keys:
                return key, keys[key], start
            keys[key] = start
        expecting_key = False
    return None


def strict_loads(text: str) -> Any:
    """``json.loads`` refusing an object that names a key twice (``JsonProblem``, located); a syntax
    error is still ``json.JSONDecodeError``, for callers that try another reading (JSON lines)
    next."""
    duplicated: list[str] = []
    value = json.loads(text, object_pairs_hook=functools.partial(_object, duplicated))
    if duplicated:
        raise JsonDoc(path="<memory>", text=text, value=value)._duplicate_problem(duplicated[0])
    return value
