"""Prettier's JSON layout, computed from the source tokens so no value is ever rewritten.

Strings and numbers are copied verbatim. An object or array is written across lines when its source
has a line break between the opening bracket and its first member, or when a member inside it is
written across lines (prettier keeps the author's break for objects and propagates breaks outwards);
otherwise it stays on one line as ``{ "a": 1 }`` / ``[1, 2]``. Line-width decisions are left to the
author, so the layout prettier produces is always accepted. Keys keep their written order; one blank
line between members is kept; the file ends in exactly one newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"""(?P<ws>\s*)(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<punct>[{}\[\]:,])|(?P<atom>[^\s{}\[\]:,"]+))""",
                    re.DOTALL)


@dataclass
class _Node:
    raw: str = ""  # an atom or a string
    kind: str = "atom"  # atom, object, array
    members: list[tuple[str | None, _Node, bool]] = field(default_factory=list)  # key, value, blank line before
    expanded: bool = False


class FormatError(ValueError):
    """The text is not a single JSON value the formatter can lay out."""


def _tokens(text: str) -> list[tuple[str, int]]:
    """Each token with the number of line breaks in the whitespace before it."""
    out: list[tuple[str, int]] = []
    pos = 0
    while True:
        match = _TOKEN.match(text, pos)
        if match is None:
            break
        out.append((match.group(match.lastgroup or 0), match.group("ws").count("\n")))
        pos = match.end()
    if text[pos:].strip():
        raise FormatError(f"unexpected text at offset {pos}")
    return out


def _parse(tokens: list[tuple[str, int]]) -> _Node:
    pos = 0

    def value() -> _Node:
        nonlocal pos
        token, _ = tokens[pos]
        pos += 1
        if token not in "{[":
            return _Node(raw=token)
        closer = "}" if token == "{" else "]"
        node = _Node(kind="object" if token == "{" else "array")
        first = True
        while tokens[pos][0] != closer:
            breaks = tokens[pos][1]
            if first:
                node.expanded = breaks > 0
            key = None
            if node.kind == "object":
                key = tokens[pos][0]
                pos += 1
                if tokens[pos][0] != ":":
                    raise FormatError("expected ':'")
                pos += 1
            child = value()
            node.expanded = node.expanded or child.expanded
            node.members.append((key, child, breaks > 1 and not first))
            first = False
            if tokens[pos][0] == ",":
                pos += 1
        pos += 1
        return node

    try:
        root = value()
    except IndexError:
        raise FormatError("unexpected end of the document") from None
    if pos != len(tokens):
        raise FormatError("more than one JSON value")
    return root


def _print(node: _Node, level: int, indent: str) -> str:
    if node.kind == "atom":
        return node.raw
    opener, closer = ("{", "}") if node.kind == "object" else ("[", "]")
    if not node.members:
        return opener + closer
    items = [(f"{key}: " if key is not None else "") + _print(child, level + 1, indent)
             for key, child, _ in node.members]
    if not node.expanded:
        pad = " " if node.kind == "object" else ""
        return f"{opener}{pad}{', '.join(items)}{pad}{closer}"
    inner = indent * (level + 1)
    lines = [("\n" if blank else "") + inner + item for item, (_, _, blank) in zip(items, node.members, strict=True)]
    return opener + "\n" + ",\n".join(lines) + "\n" + indent * level + closer


def format_json(text: str, indent: int = 2) -> str:
    """``text`` (valid JSON) in prettier's layout with ``indent`` spaces."""
    return _print(_parse(_tokens(text)), 0, " " * indent) + "\n"
