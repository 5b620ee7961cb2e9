"""Plain-text safety for everything quoted from a pull request: no character may act on a terminal
or a page.

A name, key, value or message from the reviewed repository can hold newlines (fake lines), terminal
escapes (``ESC [``), bidi controls (U+202E turns ``gpj.exe`` around), zero-width and other invisible
characters, or lone surrogates (non-UTF-8 file names) that would crash a write. ``visible`` turns
each of them into a visible escape (``\\n``, ``\\x1b``, ``\\u202e``); every other character is kept.
The Markdown escaping in ``bot.outputs.render.markdown`` starts from this text; the terminal,
annotations and SARIF use it as is. ``json_safe`` does the same for JSON output, losslessly
(``\\u202e`` is valid JSON).
"""

from __future__ import annotations

import re

import regex

# Control (Cc), format (Cf: bidi, zero-width, soft hyphen, tags), surrogates (Cs), line and
# paragraph separators (Zl, Zp), and the few characters of other categories that render as nothing:
# the combining grapheme joiner, the Hangul fillers and the invisible Khmer vowels.
_UNSAFE = regex.compile(
    r"[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0]"
)
# Raw tab, newline and carriage return in JSON text are indentation: json.dumps escapes them inside
# strings.
_UNSAFE_IN_JSON = regex.compile(r"(?![\t\n\r])" + _UNSAFE.pattern)
UNSAFE_IN_TEXT = _UNSAFE_IN_JSON  # what may not appear in text shown as is (a suggested change)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
ELLIPSIS = "…"
# Markdown puts one after "@" and "#" so that GitHub links nothing (bot.outputs.render.markdown)
ZWJ = "\u200d"


def _escape_char(match: regex.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    if point < 0x10000:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


# bidi embeddings and overrides (closed by PDF, U+202C) and isolates (closed by PDI, U+2069)
_EMBEDDINGS, _ISOLATES = "\u202a\u202b\u202d\u202e", "\u2066\u2067\u2068"
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def bidi_closed(text: str) -> str:
    """``text`` with every bidi embedding, override and isolate it opens closed at its end, so that
    it cannot turn around what a page shows after it (a name ending with U+202E reversed the names
    listed after it on the same line); every character of it is kept."""
    if text.isascii() or not _BIDI.search(text):  # the first: 10x faster, most texts
        return text
    opened: list[str] = []
    for char in _BIDI.findall(text):
        if char in _EMBEDDINGS or char in _ISOLATES:
            opened.append(char)
        elif char == "\u202c":  # PDF closes the last embedding, not past an isolate
            if opened and opened[-1] in _EMBEDDINGS:
                opened.pop()
        elif char == "\u2069" and any(c in _ISOLATES for c in opened):  # PDI: to its isolate
            while opened.pop() not in _ISOLATES:
                pass
    return text + "".join("\u2069" if c in _ISOLATES else "\u202c" for c in reversed(opened))


def visible(text: str) -> str:
    """``text`` on one line with every control, bidi, invisible and surrogate character escaped
    visibly."""
    return str(_UNSAFE.sub(_escape_char, text))


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters plus a note of its full length when it is
    longer."""
    if len(text) <= limit:
        return text
    return f"{text[: max(limit, 0)]}{ELLIPSIS} ({len(text):,} characters)"


def plain(text: str, limit: int | None = None) -> str:
    """Untrusted text for plain-text output (terminal, annotation): visible, then shortened."""
    text = visible(text)
    return text if limit is None else shorten(text, limit)


def markdown_line(line: str) -> str:
    """A line of the bot's own Markdown, for a terminal: its joiners after "@" and "#" dropped (no
    terminal links a mention), then ``visible``, so a Markdown a renderer forgot to escape is shown
    safely too."""
    return visible(line.replace("@" + ZWJ, "@").replace("#" + ZWJ, "#"))


def json_safe(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with unsafe characters as
    ``\\uXXXX``.

    Lossless: a JSON reader gets the very same strings back. Only characters inside strings can be
    unsafe (JSON's own syntax is ASCII), and ``json.dumps`` already escapes C0 controls.
    """
    return str(_UNSAFE_IN_JSON.sub(_json_escape, dumped))


def _json_escape(match: regex.Match[str]) -> str:
    point = ord(match.group())
    if point < 0x10000:
        return f"\\u{point:04x}"
    point -= 0x10000  # beyond the BMP: a UTF-16 surrogate pair, as JSON requires
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"
