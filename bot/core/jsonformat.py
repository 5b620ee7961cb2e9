"""Prettier's JSON layout (prettier 3, parser ``json``), computed from the source tokens.

More in docs/module-notes.md (bot/core/jsonformat.py).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

_TOKEN = re.compile(
    r"""(?P<ws>\s*)(?:(?P<string>"[^"\\]*(?:\\.[^"\\]*)*")|(?P<punct>[{}\[\]:,])"""
    r"""|(?P<atom>[^\s{}\[\]:,"]+))""",
    re.DOTALL,
)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
PRINT_WIDTH = 120  # OpenLineage's prettier setting (--print-width=120)


class FormatError(ValueError):
    """The text is not a single JSON value the formatter can lay out."""


# -- the document: prettier's doc builders, only those JSON needs ----------------------------------
@dataclass(eq=False)
class _Group:
    contents: object
    breaks: bool = False
    width: int = -1  # printed flat (known once asked for: ``_flat_width``)
    flat: str | None = None  # its text printed flat (``_flat_text``)


@dataclass(frozen=True)
class _Indent:
    contents: object


@dataclass(frozen=True)
class _Line:
    soft: bool = False  # softline: nothing when flat (a line: one space)
    hard: bool = False  # always a new line (and its groups break)


@dataclass(frozen=True)
class _Fill:
    parts: list[object] = field(default_factory=list)  # content, separator, content, ...


LINE, SOFTLINE, HARDLINE = _Line(), _Line(soft=True), _Line(hard=True)
BREAK, FLAT = True, False


def print_number(raw: str) -> str:
    """prettier's ``printNumber``."""
    text = raw.lower()
    text = re.sub(r"^([+-]?[\d.]+e)(?:\+|(-))?0*(\d)", r"\1\2\3", text)
    text = re.sub(r"^([+-]?[\d.]+)e[+-]?0+$", r"\1", text)
    text = re.sub(r"^([+-])?\.", r"\g<1>0.", text)
    text = re.sub(r"(\.\d+?)0+(?=e|$)", r"\1", text)
    return re.sub(r"\.(?=e|$)", "", text)


def string_width(text: str) -> int:
    """prettier's ``getStringWidth``: East Asian wide and full-width characters count two, combining
    marks and control characters nothing."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        code = ord(char)
        if code <= 0x1F or 0x7F <= code <= 0x9F or 0x300 <= code <= 0x36F:
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


# -- source to document ----------------------------------------------------------------------------
def _tokens(text: str) -> list[tuple[str, str, int]]:
    """Each token with its kind and the number of line breaks in the whitespace before it."""
    found = _TOKEN.findall(text)
    if sum(len(ws) + len(s) + len(p) + len(a) for ws, s, p, a in found) == len(text.rstrip()):
        # every character is in a token or the whitespace before one (no gap ``findall`` skipped)
        return [
            (s, "string", ws.count("\n"))
            if s
            else (p, "punct", ws.count("\n"))
            if p
            else (a, "atom", ws.count("\n"))
            for ws, s, p, a in found
        ]
    return _tokens_stepwise(text)


def _tokens_stepwise(text: str) -> list[tuple[str, str, int]]:
    """``_tokens`` one match at a time: where it stops is the error's offset."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while True:
        match = _TOKEN.match(text, pos)
        if match is None:
            break
        kind = match.lastgroup or ""
        out.append((match.group(kind), kind, match.group("ws").count("\n")))
        pos = match.end()
    if text[pos:].strip():
        raise FormatError(f"unexpected text at offset {pos}")
    return out


def _document(tokens: list[tuple[str, str, int]]) -> object:
    pos = 0

    def blank_after() -> bool:
        """A blank line after the member that just ended (before or after its comma): prettier's
        ``isNextLineEmpty``."""
        token, _, breaks = tokens[pos]
        if token == ",":
            return tokens[pos + 1][2] > 1 if pos + 1 < len(tokens) else False
        return breaks > 1

    def value() -> tuple[object, tuple[str, bool] | None]:
        """The value's document, and for prettier's array rule its kind (object or array) and
        whether it has more than one member (None for a string, number or literal)."""
        nonlocal pos
        token, kind, _ = tokens[pos]
        pos += 1
        if token == "{":
            return members("}")
        if token == "[":
            return members("]")
        if kind == "atom" and _NUMBER.fullmatch(token):
            return print_number(token), None
        if kind in ("string", "atom"):
            return token, None
        raise FormatError(f"unexpected {token!r}")

    def members(closer: str) -> tuple[object, tuple[str, bool] | None]:
        """An object's or array's group; its members are (printed member, its shape, a blank line
        after it)."""
        nonlocal pos
        is_object = closer == "}"
        found: list[tuple[object, tuple[str, bool] | None, bool]] = []
        numbers = True
        first_break = tokens[pos][2] > 0 if pos < len(tokens) else False
        while tokens[pos][0] != closer:
            key = ""
            if is_object:
                key, kind, _ = tokens[pos]
                if kind not in ("string", "atom") or tokens[pos + 1][0] != ":":
                    raise FormatError(f"expected a key and ':' at {key!r}")
                pos += 2
            token, kind, _ = tokens[pos]
            numbers = numbers and kind == "atom" and bool(_NUMBER.fullmatch(token))
            printed, shape = value()
            blank = blank_after()
            if tokens[pos][0] == ",":
                pos += 1
            elif tokens[pos][0] != closer:
                raise FormatError("expected ',' or a closing bracket")
            found.append(([key, ": ", printed] if is_object else printed, shape, blank))
        pos += 1
        own = ("object" if is_object else "array", len(found) > 1)
        if not found:
            return ("{}" if is_object else "[]"), own
        # prettier's concisely printed array: a fill
        if not is_object and numbers and len(found) > 1:
            fill: list[object] = []
            for i, (printed, _, blank) in enumerate(found):
                last = i == len(found) - 1
                fill.append([printed, "" if last else ","])
                if not last:
                    fill.append([HARDLINE, HARDLINE] if blank else LINE)
            return _Group(["[", _Indent([SOFTLINE, _Fill(fill)]), SOFTLINE, "]"]), own
        body: list[object] = []
        for i, (printed, _, blank) in enumerate(found):
            body.append(_Group(printed))
            if i < len(found) - 1:
                body.append(
                    [",", LINE, (HARDLINE if is_object else SOFTLINE)] if blank else [",", LINE]
                )
        if is_object:
            return _Group(["{", _Indent([LINE, body]), LINE, "}"], breaks=first_break), own
        first = found[0][1]
        same = (
            len(found) > 1
            and first is not None
            and all(shape == (first[0], True) for _, shape, _ in found)
        )
        return _Group(["[", _Indent([SOFTLINE, body]), SOFTLINE, "]"], breaks=same), own

    try:
        root, _ = value()
    except IndexError:
        raise FormatError("unexpected end of the document") from None
    if pos != len(tokens):
        raise FormatError("more than one JSON value")
    return [root, HARDLINE]


# -- document to text: prettier's printDocToString -------------------------------------------------
def _propagate_breaks(doc: object) -> bool:
    """Mark every group holding a hard line, or a group that must break, as breaking; True if
    ``doc`` holds one."""
    kind = type(doc)
    if kind is str:
        return False
    if kind is list:
        found = False
        for part in doc:  # type: ignore[attr-defined]
            if type(part) is not str and _propagate_breaks(part):
                found = True
        return found
    if kind is _Group:
        inner = _propagate_breaks(doc.contents)  # type: ignore[attr-defined]
        doc.breaks = doc.breaks or inner  # type: ignore[attr-defined]
        return doc.breaks  # type: ignore[attr-defined,no-any-return]
    if isinstance(doc, _Indent):
        return _propagate_breaks(doc.contents)
    if isinstance(doc, _Fill):
        return _propagate_breaks(doc.parts)
    return isinstance(doc, _Line) and doc.hard


def _flat_text(doc: object) -> str:
    """``doc`` printed flat: every line a space (a soft line nothing); only for a document without a
    hard line or a group that must break (each group's text is kept). A fill inside it is flat too:
    its contents fit, since the whole fits."""
    kind = type(doc)
    if kind is str:
        return doc  # type: ignore[return-value]
    if kind is list:
        return "".join([_flat_text(part) for part in doc])  # type: ignore[attr-defined]
    if kind is _Group:
        if doc.flat is None:  # type: ignore[attr-defined]
            doc.flat = _flat_text(doc.contents)  # type: ignore[attr-defined]
        return doc.flat  # type: ignore[attr-defined,no-any-return]
    if kind is _Indent:
        return _flat_text(doc.contents)  # type: ignore[attr-defined]
    if kind is _Fill:
        return _flat_text(doc.parts)  # type: ignore[attr-defined]
    return "" if doc.soft else " "  # type: ignore[attr-defined]


def _flat_width(doc: object) -> int:
    """The width of ``doc`` printed flat; only for a document without a hard line or a group that
    must break (each group's width is kept)."""
    kind = type(doc)
    if kind is str:
        return len(doc) if doc.isascii() else string_width(doc)  # type: ignore[attr-defined,arg-type]
    if kind is list:
        total = 0
        for part in doc:  # type: ignore[attr-defined]
            total += _flat_width(part)
        return total
    if kind is _Group:
        if doc.width < 0:  # type: ignore[attr-defined]
            doc.width = _flat_width(doc.contents)  # type: ignore[attr-defined]
        return doc.width  # type: ignore[attr-defined,no-any-return]
    if kind is _Indent:
        return _flat_width(doc.contents)  # type: ignore[attr-defined]
    if kind is _Fill:
        return _flat_width(doc.parts)  # type: ignore[attr-defined]
    return 0 if doc.soft else 1  # type: ignore[attr-defined]


def _fits(
    next_cmd: tuple[int, bool, object] | None,
    rest: list[tuple[int, bool, object]],
    width: int,
    must_be_flat: bool,
) -> bool:
    """Whether ``next_cmd`` and then the commands of ``rest`` up to the next line break fit in
    ``width`` (prettier's ``fits``); a group that need not break, met flat, counts its flat width at
    once."""
    rest_index = len(rest)
    cmds = [] if next_cmd is None else [next_cmd]
    pop, push = cmds.pop, cmds.append
    while width >= 0:
        if not cmds:
            if rest_index == 0:
                return True
            rest_index -= 1
            push(rest[rest_index])
            continue
        indent, mode, doc = pop()
        kind = type(doc)
        if kind is str:
            width -= len(doc) if doc.isascii() else string_width(doc)  # type: ignore[attr-defined,arg-type]
        elif kind is list:
            cmds.extend([(indent, mode, part) for part in reversed(doc)])  # type: ignore[call-overload]
        elif kind is _Group:
            if doc.breaks:  # type: ignore[attr-defined]
                if must_be_flat:
                    return False
                push((indent, BREAK, doc.contents))  # type: ignore[attr-defined]
            elif mode is FLAT:
                width -= doc.width if doc.width >= 0 else _flat_width(doc)  # type: ignore[attr-defined]
            else:
                push((indent, mode, doc.contents))  # type: ignore[attr-defined]
        elif kind is _Line:
            if mode is BREAK or doc.hard:  # type: ignore[attr-defined]
                return True
            if not doc.soft:  # type: ignore[attr-defined]
                width -= 1
        elif kind is _Indent:
            push((indent, mode, doc.contents))  # type: ignore[attr-defined]
        elif kind is _Fill:
            cmds.extend([(indent, mode, part) for part in reversed(doc.parts)])  # type: ignore[attr-defined]
    return False


def _print(doc: object, width: int, indent_unit: str) -> str:
    _propagate_breaks(doc)
    out: list[str] = []
    pos = 0
    cmds: list[tuple[int, bool, object]] = [(0, BREAK, doc)]
    pop, push = cmds.pop, cmds.append
    while cmds:
        indent, mode, item = pop()
        kind = type(item)
        if kind is str:
            out.append(item)  # type: ignore[arg-type]
            pos += len(item) if item.isascii() else string_width(item)  # type: ignore[attr-defined,arg-type]
        elif kind is list:
            cmds.extend([(indent, mode, part) for part in reversed(item)])  # type: ignore[call-overload]
        elif kind is _Group:
            if item.breaks:  # type: ignore[attr-defined]
                push((indent, BREAK, item.contents))  # type: ignore[attr-defined]
                continue
            # flat when it fits (its flat width, then what follows it up to the next line break)
            flat_width = item.width if item.width >= 0 else _flat_width(item)  # type: ignore[attr-defined]
            if mode is FLAT or (
                flat_width <= width - pos and _fits(None, cmds, width - pos - flat_width, False)
            ):
                out.append(item.flat if item.flat is not None else _flat_text(item))  # type: ignore[attr-defined]
                pos += flat_width
            else:
                push((indent, BREAK, item.contents))  # type: ignore[attr-defined]
        elif kind is _Indent:
            push((indent + 1, mode, item.contents))  # type: ignore[attr-defined]
        elif kind is _Fill:
            _fill(item.parts, indent, mode, cmds, width - pos)  # type: ignore[attr-defined]
        elif isinstance(item, _Line):
            if mode is FLAT and not item.hard:
                if not item.soft:
                    out.append(" ")
                    pos += 1
                continue
            while out and out[-1].strip(" \t") == "":
                out.pop()  # prettier trims the trailing whitespace of a line
            if out:
                out[-1] = out[-1].rstrip(" \t")
            out.append("\n" + indent_unit * indent)
            pos = len(indent_unit) * indent
    return "".join(out)


def _fill(
    parts: list[object], indent: int, mode: bool, cmds: list[tuple[int, bool, object]], rem: int
) -> None:
    """prettier's ``fill``: each content flat when it fits, each separator a line break only when
    the content after it does not fit on the line."""
    if not parts:
        return
    content = parts[0]
    content_fits = _fits((indent, FLAT, content), [], rem, True)
    if len(parts) == 1:
        cmds.append((indent, FLAT if content_fits else BREAK, content))
        return
    whitespace = parts[1]
    if len(parts) == 2:
        cmds.append((indent, FLAT if content_fits else BREAK, whitespace))
        cmds.append((indent, FLAT if content_fits else BREAK, content))
        return
    remaining = (indent, mode, _Fill(parts[2:]))
    both_fit = _fits((indent, FLAT, [content, whitespace, parts[2]]), [], rem, True)
    cmds.append(remaining)
    cmds.append((indent, FLAT if both_fit else BREAK, whitespace))
    cmds.append((indent, FLAT if content_fits else BREAK, content))


def format_json(text: str, indent: int = 2, width: int = PRINT_WIDTH) -> str:
    """``text`` (valid JSON) in prettier's layout with ``indent`` spaces and ``width`` columns."""
    return _print(_document(_tokens(text)), width, " " * indent)
