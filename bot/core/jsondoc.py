"""JSON documents that remember where each value stands, loaded defensively.

Parsing uses the C ``json`` module; a position is found on request by walking the text along the
asked pointer only: siblings on the way are skipped by regular expressions (in C), so locating a
few values in a 10 MB file costs a few skips, not a table of every value (no recursion, so deep
nesting cannot crash it).
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

# What locating skips in one regular expression call: a string, a scalar, or a container nesting
# at most _LEVELS levels. Outside strings, "N" and "I" (NaN, Infinity) stop a skip as they stop
# _TOKEN, so a value after them is found by neither (the scan that preceded this one stopped there).
_LEVELS = 12
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_CONTAINER = ""
for _ in range(_LEVELS):  # a container of blanks, scalars, strings and shallower containers
    _CONTAINER = rf'[\[{{](?:[^"\[\]{{}}NI]++|{_STRING}{_CONTAINER and "|" + _CONTAINER})*+[\]}}]'
_VALUE = rf"(?>{_STRING}|-?\d[\w.+-]*+|true|false|null|{_CONTAINER})"
_SKIP_VALUE = re.compile(rf"\s*{_VALUE}", re.DOTALL)
_SKIP_CONTAINER = re.compile(_CONTAINER, re.DOTALL)
_STRIDE = 1024  # array elements skipped per call; a walked array remembers every such element
_SKIP_ELEMENTS = re.compile(rf"(?:\s*{_VALUE}\s*,){{{_STRIDE}}}", re.DOTALL)
_SKIP_ELEMENT = re.compile(rf"\s*{_VALUE}\s*,", re.DOTALL)
_KEY = re.compile(rf"\s*({_STRING})\s*:", re.DOTALL)
_SEPARATOR = re.compile(r"\s*([,}\]])")
_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")


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
    """Depth of nested containers, computed level by level (no recursion, no frame per value)."""
    depth, level = 0, [value]
    while level := [node for node in level if isinstance(node, (dict, list))]:
        depth += 1
        level = [v for node in level for v in (node.values() if isinstance(node, dict) else node)]
    return depth


@dataclass
class JsonDoc:
    """A parsed JSON document that finds the source position of a value on request."""

    path: str
    text: str
    value: Any
    # pointer -> offset of its value (None: no such value), for the asked pointers and ancestors
    _offsets: dict[str, int | None] = field(default_factory=dict, repr=False)
    _key_offsets: dict[str, int] = field(default_factory=dict, repr=False)
    # offset of a walked object -> offset of the key found last in it
    _cursors: dict[int, int] = field(default_factory=dict, repr=False)
    # offset of a walked array -> offsets of its elements 0, _STRIDE, 2 * _STRIDE, ... reached
    _marks: dict[int, list[int]] = field(default_factory=dict, repr=False)
    # known (offset, line) pairs, sorted: lines are counted from the nearest one before
    _line_marks: list[tuple[int, int]] = field(default_factory=lambda: [(0, 1)], repr=False)

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
            value = _loads(text, duplicated)
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
        """1-based line and column (in characters) of ``offset`` in the text."""
        at = bisect.bisect_right(self._line_marks, (offset, sys.maxsize)) - 1
        start, line = self._line_marks[at]
        if start != offset:
            line += self.text.count("\n", start, offset)
            self._line_marks.insert(at + 1, (offset, line))
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def locate(self, pointer: str) -> tuple[int, int]:
        """Line and column of the value at ``pointer``; the nearest existing ancestor otherwise."""
        probe = pointer
        while True:
            offset = self._offset(probe)
            if offset is not None:
                return self.line_col(offset)
            if not probe:
                return 1, 1
            probe = probe[: probe.rfind("/")]

    def locate_key(self, pointer: str) -> tuple[int, int]:
        """Line and column of the member name for an object member (the value's position
        otherwise)."""
        self._offset(pointer)
        key = self._key_offsets.get(pointer)
        return self.line_col(key) if key is not None else self.locate(pointer)

    def _offset(self, pointer: str) -> int | None:
        """Offset of the value at ``pointer`` (None when it names none), walking the text down
        from the nearest walked ancestor."""
        if pointer and not pointer.startswith("/"):
            return None
        if "" not in self._offsets:
            root = _TOKEN.match(self.text)
            self._offsets[""] = _value_start(root) if root else None
        known = pointer
        while known not in self._offsets:
            known = known[: known.rfind("/")]
        at = self._offsets[known]
        while known != pointer:
            end = pointer.find("/", len(known) + 1)
            child = pointer if end < 0 else pointer[:end]
            if at is not None:
                at = self._child(at, child[len(known) + 1 :], child)
            self._offsets[child] = at
            known = child
        return at

    def _child(self, at: int, token: str, pointer: str) -> int | None:
        """Offset of the member or element ``token`` (a pointer token) of the container at
        ``at``, noting a member's key offset under ``pointer``."""
        text = self.text
        if text[at] == "[":
            index = _INDEX.fullmatch(token)
            return None if index is None else self._element(at, int(token))
        if text[at] != "{":
            return None
        name = token.replace("~1", "/").replace("~0", "~")
        if escape_pointer_token(name) != token:  # "~" not followed by 0 or 1 names no key
            return None
        # from the member found last in this object, then from its start up to that member: asked
        # in the order of the text, members are passed once (so with a key named twice, which
        # parse refuses, either occurrence may be found)
        cursor = self._cursors.get(at, at + 1)
        found = _member(text, cursor, name) or _member(text, at + 1, name, cursor)
        if found is None:
            return None
        self._cursors[at] = self._key_offsets[pointer] = found[0]
        return found[1]

    def _element(self, at: int, index: int) -> int | None:
        """Offset of element ``index`` of the array at ``at``: from the nearest remembered
        element, ``_STRIDE`` elements a call, then one at a time."""
        text = self.text
        marks = self._marks.setdefault(at, [at + 1])
        reached = min(index // _STRIDE, len(marks) - 1)
        pos = marks[reached]
        while reached < index // _STRIDE and (skipped := _SKIP_ELEMENTS.match(text, pos)):
            pos = skipped.end()
            reached += 1
            marks.append(pos)
        for _ in range(index - reached * _STRIDE):
            one = _SKIP_ELEMENT.match(text, pos)
            if one is not None:
                pos = one.end()
                continue
            end = _skip(text, pos)  # too deep for one call, unreadable, or the last element
            after = None if end is None else _SEPARATOR.match(text, end)
            if after is None or after.group(1) != ",":
                return None
            pos = after.end()
        start = _TOKEN.match(text, pos)
        return _value_start(start) if start else None


def _value_start(token: re.Match[str]) -> int | None:
    """Where the value read as ``token`` starts (None when ``token`` ends a container)."""
    kind = token.lastgroup or ""
    if kind == "punct" and token.group(kind) not in "{[":
        return None
    return token.start(kind)


_SHORT_ESCAPES = dict(zip('"\\/\b\f\n\r\t', '"\\/bfnrt', strict=True))


def _spelled(name: str) -> str:
    """A pattern for every JSON string literal of ``name``: each character as itself, as its short
    escape or as ``\\u`` escapes (hex digits in either case)."""
    parts = []
    for char in name:
        units = char.encode("utf-16-be", "surrogatepass")
        spellings = ["".join(rf"\\u(?i:{units[i : i + 2].hex()})" for i in range(0, len(units), 2))]
        if char in _SHORT_ESCAPES:
            spellings.append(re.escape("\\" + _SHORT_ESCAPES[char]))
        if char not in '"\\' and char >= " ":
            spellings.append(re.escape(char))
        parts.append(f"(?:{'|'.join(spellings)})")
    return f'"{"".join(parts)}"'


@functools.lru_cache(maxsize=256)
def _other_members(name: str) -> re.Pattern[str]:
    """Skips the members not named ``name``, however their keys are spelled."""
    return re.compile(rf"(?:\s*(?!{_spelled(name)}\s*:){_STRING}\s*:\s*{_VALUE}\s*,)*+", re.DOTALL)


def _member(
    text: str, pos: int, name: str, end: int = sys.maxsize
) -> tuple[int, int | None] | None:
    """``(key offset, value offset)`` of the first member ``name`` from ``pos`` (where a member
    starts) of an object, and before ``end`` (the value's None when it cannot be read); None when
    there is no such member. Past 64 members, the others are skipped in one call (a pattern
    compiled for ``name``: a few milliseconds)."""
    passed = 0
    while True:
        if passed >= 64:
            pos = _other_members(name).match(text, pos, end).end()  # type: ignore[union-attr]
        key = _KEY.match(text, pos, end)
        if key is None:
            return None
        if json.loads(key.group(1)) == name:
            start = _TOKEN.match(text, key.end())
            return key.start(1), _value_start(start) if start else None
        after = _skip(text, key.end())
        separator = None if after is None else _SEPARATOR.match(text, after)
        if separator is None or separator.group(1) != ",":
            return None
        pos = separator.end()
        passed += 1


def _skip(text: str, pos: int) -> int | None:
    """The end of the value starting at ``pos`` (after blanks); None when it cannot be read.
    Containers nesting deeper than one call skips are walked bracket by bracket."""
    skipped = _SKIP_VALUE.match(text, pos)
    if skipped is not None:
        return skipped.end()
    depth = 0
    while (token := _TOKEN.match(text, pos)) is not None:
        pos = token.end()
        punct = token.group("punct")
        if punct in ("{", "[") and (inner := _SKIP_CONTAINER.match(text, token.start("punct"))):
            pos = inner.end()
        elif punct in ("{", "["):
            depth += 1
        elif punct in ("}", "]"):
            depth -= 1
        if depth == 0:
            return pos
    return None


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


class _NotANumber(Exception):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's ``json`` reads them, JSON has none."""


def _refuse_constant(name: str) -> Any:
    raise _NotANumber(name)


def _loads(text: str, duplicated: list[str]) -> Any:
    """``json.loads`` noting in ``duplicated`` the first key an object names twice; ``NaN`` and
    ``Infinity`` are a located ``JsonProblem``."""
    try:
        return json.loads(
            text,
            object_pairs_hook=functools.partial(_object, duplicated),
            parse_constant=_refuse_constant,
        )
    except _NotANumber:
        raise _not_a_number(text) from None


_CONSTANT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"|-?Infinity|NaN')


def _not_a_number(text: str) -> JsonProblem:
    """The problem of the first ``NaN`` or ``Infinity`` outside strings."""
    for match in _CONSTANT_OR_STRING.finditer(text):
        token = match.group()
        if token[0] != '"':
            return JsonProblem(
                f"invalid JSON: {token} is not a JSON number (JSON has no NaN or infinity; "
                "readers such as JavaScript's JSON.parse refuse the file)",
                *JsonDoc(path="", text=text, value=None).line_col(match.start()),
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
    value = _loads(text, duplicated)
    if duplicated:
        raise JsonDoc(path="<memory>", text=text, value=value)._duplicate_problem(duplicated[0])
    return value
