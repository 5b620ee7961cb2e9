"""Markdown text that quotes strangers safely: escaped prose, code spans, lines fitted to a limit.

Everything quoted from the reviewed repository is inert (docs/output-safety.md): prose goes through
``escape`` (backslash escapes for every character that can start Markdown, HTML, an entity or an
autolink, a zero-width joiner after ``@`` and ``#``), names through ``code`` (a code span with a
fence longer than any backtick run inside, ``|`` escaped for table cells), both first through
``bot.core.inert.visible``. Every part of the bot that writes Markdown uses these.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from urllib.parse import quote

from bot.core.inert import ZWJ, plain, visible

GITHUB_TEXT_LIMIT = 65_535  # bytes of UTF-8: GitHub counts a check run's summary and text in bytes
MESSAGE_LIMIT = 1_000  # characters of a message or hint in a list, at most
MIN_MESSAGE = 80  # messages are shortened down to this before findings are left out of a list
NAME_LIMIT = 200  # characters of a quoted name (file, entry, rule, owner) before it is shortened
# Escaped everywhere: what opens or closes inline Markdown, HTML, entities, tables and GitHub's
# math.
_INLINE = {ord(c): "\\" + c for c in "\\`*[]<>&|~$"} | {
    ord("@"): "\\@" + ZWJ,
    ord("#"): "\\#" + ZWJ,
}
# The "." of www. and the ":" of scheme:// start autolinks; "_" emphasises except between letters or
# digits.
_AUTOLINK = re.compile(r"(?i)(?<=www)\.|:(?=//)|(?<![^\W_])_|_(?![^\W_])")
# a list item, thematic break or setext underline
_LINE_START = re.compile(r"^( *)(?:([-+=])|(\d+)([.)]))")
_BACKTICKS = re.compile("`+")
# what ends a Markdown link destination written ``(...)`` or escapes in it: white space, a control
# character, a parenthesis, an angle bracket, a backslash (and brackets and backticks, to be sure)
_NOT_IN_LINK = re.compile(r"[\s\x00-\x1f\x7f()<>\[\]\\`]")
URL_LIMIT = 2048  # characters of a URL the bot links to, at most


def escape(text: str, limit: int | None = None) -> str:
    """Untrusted text as inert Markdown prose, also inside a table cell; shortened past ``limit``.

    Backslash escapes stop emphasis, links, images, HTML, entities, math, autolinks and a list or
    heading when the text starts a line (``\\&#64;`` stays literal, where ``&#64;`` would be decoded
    to ``@`` and ping); ``\\|`` is the table cell escape GFM defines. The zero-width joiner after
    ``@`` and ``#`` stops what GitHub links after parsing: mentions, team mentions, emails, issue
    references.
    """
    text = plain(text, limit).lstrip(" \t")  # four leading spaces would make an indented code block
    text = _AUTOLINK.sub(r"\\\g<0>", text.translate(_INLINE))
    return _LINE_START.sub(_escape_line_start, text) if text[:1] in " -+=0123456789" else text


def _escape_line_start(match: re.Match[str]) -> str:
    spaces, mark, digits, close = match.groups()
    return spaces + ("\\" + mark if mark else f"{digits}\\{close}")


def code(text: str, *, table: bool = True, limit: int | None = NAME_LIMIT) -> str:
    """Untrusted text as an inline code span: GitHub links nothing inside one and decodes no entity.

    ``table`` escapes ``|`` as GFM requires inside a table cell (the default, as a forgotten flag
    must not break a table); outside a table the escape would show, so prose passes ``table=False``.
    """
    text = plain(text, limit)
    if not text:
        return "``"
    if table:
        text = text.replace("|", "\\|")
    fence = backtick_fence(text)
    if text.strip(" ") and (text[0] in "` " or text[-1] in "` "):
        # a parser strips one space each side, so an edge backtick or space survives
        text = f" {text} "
    return f"{fence}{text}{fence}"


def backtick_fence(text: str, shortest: int = 1) -> str:
    """A run of backticks longer than any inside ``text`` (and at least ``shortest``): a code span's
    or code block's fence that ``text`` cannot close."""
    return "`" * max(shortest, 1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))


class Row:
    """A list line whose quoted texts can be shortened: ``render(cap)`` builds it with each cut at
    ``cap``."""

    __slots__ = ("_full", "_need", "_render")

    def __init__(self, render: Callable[[int], str], *texts: str) -> None:
        self._render = render
        self._need = max((len(visible(t)) for t in texts), default=0)
        self._full = render(MESSAGE_LIMIT)

    def at(self, cap: int) -> str:
        return self._full if self._need <= cap else self._render(cap)


def utf8_size(text: str) -> int:
    """``text``'s size in UTF-8 bytes, the unit of every limit here: GitHub refuses a check run's
    summary or text over 65,535 bytes ("exceeds a maximum bytesize", where its documentation says
    characters), and a body within that many bytes is within that many characters too."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def fit(lines: Sequence[str | Row], budget: int) -> tuple[list[str], int]:
    """The lines within ``budget`` bytes (``utf8_size``, newlines counted) and how many rows were
    left out.

    Every row is kept with its texts cut at the largest cap from ``MESSAGE_LIMIT`` down to
    ``MIN_MESSAGE`` that fits; when even that does not, rows are kept in order while they fit, and
    the lines that only led to rows left out (headings, table headers) are dropped.
    """

    def size(cap: int) -> int:
        return sum(utf8_size(x if isinstance(x, str) else x.at(cap)) + 1 for x in lines)

    low, high = MIN_MESSAGE, MESSAGE_LIMIT
    if size(high) <= budget:
        cap = high
    elif size(low) > budget:
        cap = low
    else:  # size(low) fits, size(high) does not
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if size(middle) <= budget else (low, middle)
        cap = low
    kept: list[str] = []
    used = 0
    for i, x in enumerate(lines):
        line = x if isinstance(x, str) else x.at(cap)
        if used + utf8_size(line) + 1 > budget:
            left_out = sum(1 for y in lines[i:] if isinstance(y, Row))
            if left_out:
                while kept and isinstance(lines[len(kept) - 1], str):
                    kept.pop()  # a heading or table header of rows left out
                return kept, left_out
            break
        kept.append(line)
        used += utf8_size(line) + 1
    return kept, 0


def cut_lines(text: str, limit: int, note: str) -> str:
    """``text`` cut at a line end so that it and ``note`` fit ``limit`` bytes (``utf8_size``): never
    inside a code span or escape."""
    if utf8_size(text) <= limit:
        return text
    data = text.encode("utf-8", "surrogatepass")
    room = max(limit - utf8_size(note) - 1, 0)
    while 0 < room < len(data) and data[room] & 0xC0 == 0x80:
        room -= 1  # not inside a character: the prefix ends where one starts
    end = data[:room].decode("utf-8", "surrogatepass").rfind("\n")
    return text[: max(end, 0)] + "\n" + note


def safe_url(url: object) -> str | None:
    """Only web links become links (never ``javascript:`` or ``data:``), under ``URL_LIMIT``."""
    return (
        url
        if isinstance(url, str) and url.startswith(("https://", "http://")) and len(url) < URL_LIMIT
        else None
    )


def url_path(path: str) -> str:
    """A repository path as the path of a URL: every character but ``/`` and the unreserved ones
    percent-encoded (a space, ``)``, ``<``, ``@``, ``#``, ``?``, ``%``...); a name that is not UTF-8
    keeps its original bytes."""
    try:
        return quote(path, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        return quote(path, safe="/", errors="surrogatepass")


def file_url(base: str, path: str, line: int | None = None) -> str | None:
    """``path`` (and ``line``) under ``base``, where the files are browsed (a GitHub
    ``https://github.com/OWNER/REPO/blob/REV``), or None without a base or a path. The one place a
    link is built from a file name: the name ``url_path``-encoded, the URL ``safe_url``-checked."""
    if not base or not path:
        return None
    return safe_url(f"{base.rstrip('/')}/{url_path(path)}" + (f"#L{line}" if line else ""))


def link_target(url: str | None) -> str | None:
    """``url`` as the destination of a Markdown link ``[label](url)``: a ``safe_url`` with nothing
    that could end the destination or escape in it; None when it is not one."""
    target = safe_url(url)
    return None if target is None or _NOT_IN_LINK.search(target) else target
