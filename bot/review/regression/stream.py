"""A ``.json`` event file read incrementally: one event, a top-level array of events, or JSON lines.

More in docs/module-notes.md (bot/review/regression/stream.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

READ_BYTES = 1 << 20  # one process reads the file this much at a time
# One element (an event, one JSON line, a single document) is held whole while it is read: past this
# many characters it is the file's "too large" fault, and nothing after it is read.
MAX_ELEMENT_CHARS = 64 * 1024 * 1024
BOM = b"\xef\xbb\xbf"
_WS = re.compile(r"[ \t\n\r]*")
# inside a container: everything up to the next bracket that is not in a string (strings skipped
# whole)
_SKIP = re.compile(r'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*', re.DOTALL)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# a number, true, false, null (or garbage the parser reports)
_SCALAR = re.compile(r'[^ \t\n\r,\[\]{}"]+')
_LINE_END = re.compile(r"\r\n?|\n")
_CLOSERS = {"{": "}", "[": "]"}


class FileFault(ValueError):
    """A whole event file that cannot be read as events: one per-file finding, never one per
    line."""


class _Text:
    """Decoded text of a stream of byte pieces, strictly UTF-8 (a leading BOM dropped), with the
    file offset of ``buf[0]`` kept, so a bad byte is named with its offset in the file."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = iter(pieces)
        self._pending = b""  # an incomplete UTF-8 sequence at the end of the last piece
        self._read = 0  # bytes taken from the pieces
        self._first = True
        # the bad byte met, raised when the text before it is used up
        self._fault: FileFault | None = None
        self.buf = ""
        self.eof = False

    def more(self, at_least: int = 1) -> bool:
        """Append at least ``at_least`` more characters (fewer at the end); False once nothing is
        left.

        A byte that is not UTF-8 raises ``FileFault`` only when everything before it has been asked
        for and more is wanted, so where the pieces were cut never decides which events come before
        it."""
        added = 0
        while added < at_least and not self.eof and self._fault is None:
            piece = self._gather(at_least - added)
            if piece is None:
                self.eof = not self._pending
                if self._pending:
                    self._fault = self._undecodable(
                        self._pending, 0, self._read - len(self._pending)
                    )
                break
            data = self._pending + piece
            start = self._read - len(self._pending)
            self._read += len(piece)
            if self._first:
                if len(data) < len(BOM) and BOM.startswith(data):
                    self._pending = data
                    continue
                self._first = False
                if data.startswith(BOM):
                    data, start = data[len(BOM) :], start + len(BOM)
            text, self._pending = self._decode(data, start)
            self.buf += text
            added += len(text)
        if added == 0 and self._fault is not None:
            raise self._fault
        return added > 0

    def _gather(self, wanted: int) -> bytes | None:
        """The next pieces, joined, up to ``wanted`` bytes or a little more (Spark's records are
        tens of bytes: decoding and appending them one by one would cost more than reading them)."""
        parts: list[bytes] = []
        size = 0
        while size < wanted:
            piece = next(self._pieces, None)
            if piece is None:
                break
            parts.append(piece)
            size += len(piece)
        return b"".join(parts) if parts else None

    def _decode(self, data: bytes, start: int) -> tuple[str, bytes]:
        try:
            return data.decode("utf-8"), b""
        except UnicodeDecodeError as exc:
            if exc.reason != "unexpected end of data":
                self._fault = self._undecodable(data, exc.start, start)
                return data[: exc.start].decode("utf-8"), b""
            # the rest may complete with the next piece
            return data[: exc.start].decode("utf-8"), data[exc.start :]

    @staticmethod
    def _undecodable(data: bytes, at: int, start: int) -> FileFault:
        return FileFault(f"undecodable: not UTF-8 (byte 0x{data[at]:02x} at offset {start + at:,})")

    def drop(self, upto: int) -> None:
        """Forget ``buf[:upto]`` (what has been yielded): the buffer holds one element at a time."""
        self.buf = self.buf[upto:]


def stream_events(
    pieces: Iterable[bytes], limit: int = MAX_ELEMENT_CHARS
) -> Iterator[tuple[int, str]]:
    """(index, event text) of a ``.json`` file given as byte pieces; raises ``FileFault`` (after the
    events before the fault) when the file cannot be read as events."""
    text = _Text(pieces)
    pos = _skip_ws(text, 0)
    if pos is None:
        return  # an empty file holds no events
    if text.buf[pos] == "[":
        yield from _array(text, pos + 1, limit)
        return
    end = _element(text, pos, limit, "the document")
    value = text.buf[pos:end]
    text.drop(end)
    after, newline = _skip_ws_noting_lines(text)
    if after is None:
        yield 0, value
        return
    if "\n" in value or "\r" in value or not newline:
        raise FileFault(
            "not JSON (nor JSON lines): more than one JSON value, and the first one is not a line "
            "of its own"
        )
    yield 0, value
    yield from _lines(text, limit)


def _skip_ws_noting_lines(text: _Text) -> tuple[int | None, bool]:
    """Like ``_skip_ws`` from the start of the buffer, also telling whether the white space held a
    line end before the first line's end (JSON lines) or not."""
    newline = False
    while True:
        match = _WS.match(text.buf, 0)
        newline = newline or "\n" in match.group() or "\r" in match.group()  # type: ignore[union-attr]
        pos = match.end()  # type: ignore[union-attr]
        if pos < len(text.buf):
            return pos, newline
        text.drop(pos)
        if not text.more():
            return None, newline


def _array(text: _Text, pos: int, limit: int) -> Iterator[tuple[int, str]]:
    index = 0
    at = _skip_ws(text, pos)
    if at is not None and text.buf[at] == "]":
        _end_of_file(text, at + 1)
        return
    while True:
        if at is None:
            raise FileFault(f"not JSON: the array is not closed (after {index:,} events)")
        end = _element(text, at, limit, f"element {index:,} of the array")
        yield index, text.buf[at:end]
        index += 1
        text.drop(end)
        at = _skip_ws(text, 0)
        if at is None:
            raise FileFault(f"not JSON: the array is not closed (after {index:,} events)")
        if text.buf[at] == "]":
            _end_of_file(text, at + 1)
            return
        if text.buf[at] != ",":
            raise FileFault(
                f"not JSON: {text.buf[at]!r} after element {index - 1:,} of the array, where ',' "
                f"or "
                "']' belongs"
            )
        at = _skip_ws(text, at + 1)


def _end_of_file(text: _Text, pos: int) -> None:
    if _skip_ws(text, pos) is not None:
        raise FileFault("not JSON: more after the array's closing ']'")


def _skip_ws(text: _Text, pos: int) -> int | None:
    """The position of the next character that is not white space, reading on; None at the end."""
    while True:
        pos = _WS.match(text.buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
        if pos < len(text.buf):
            return pos
        text.drop(pos)
        pos = 0
        if not text.more():
            return None


def _element(text: _Text, start: int, limit: int, what: str) -> int:
    """The end of the JSON value starting at ``start`` (reading on as needed; the buffer may grow up
    to ``limit`` characters past ``start``)."""
    first = text.buf[start]
    if first in _CLOSERS:
        return _within(_container(text, start, limit, what), start, limit, what)
    if first in ",:]}":
        raise FileFault(f"not JSON: {what} starts with {first!r}")
    pattern = _STRING if first == '"' else _SCALAR
    while True:
        match = pattern.match(text.buf, start)
        if match is not None and (match.end() < len(text.buf) or text.eof):
            return _within(match.end(), start, limit, what)
        if text.eof:
            _within(len(text.buf), start, limit, what)
            raise FileFault(f"not JSON: {what} is a string that is not closed")
        _read_on(text, start, limit, what)


def _within(end: int, start: int, limit: int, what: str) -> int:
    if end - start > limit:
        raise _too_large(what, limit)
    return end


def _too_large(what: str, limit: int) -> FileFault:
    return FileFault(
        f"too large: {what} is over {limit:,} characters (one element is held whole while it is "
        "read)"
    )


def _container(text: _Text, start: int, limit: int, what: str) -> int:
    closers = [_CLOSERS[text.buf[start]]]
    pos = start + 1
    while True:
        # matches the empty string
        pos = _SKIP.match(text.buf, pos).end()  # type: ignore[union-attr]
        # the end of what was read, or a string cut there
        if pos == len(text.buf) or text.buf[pos] == '"':
            if text.eof:
                _within(len(text.buf), start, limit, what)
                raise FileFault(f"not JSON: {what} is not closed")
            _read_on(text, start, limit, what)
            continue
        bracket = text.buf[pos]
        pos += 1
        if bracket in _CLOSERS:
            closers.append(_CLOSERS[bracket])
            continue
        expected = closers.pop()
        if bracket != expected:
            # past the limit it is too large, however the bytes were cut
            _within(pos, start, limit, what)
            raise FileFault(f"not JSON: {what} has {bracket!r} where {expected!r} belongs")
        if not closers:
            return pos


def _read_on(text: _Text, start: int, limit: int, what: str) -> None:
    """Read more of an element that started at ``start``: at least as much as it holds so far, so an
    element is scanned a bounded number of times whatever the pieces' sizes."""
    held = len(text.buf) - start
    if held > limit:
        raise _too_large(what, limit)
    text.more(max(READ_BYTES, held))


def _lines(text: _Text, limit: int) -> Iterator[tuple[int, str]]:
    """JSON lines after the first one: every non-blank line, numbered among them."""
    index = 1
    pos = 0
    while True:
        match = _LINE_END.search(text.buf, pos)
        if match is None and not text.eof:
            pos = max(0, len(text.buf) - 1)
            _read_on(text, 0, limit, f"line {index + 1:,}")
            continue
        if (
            match is not None
            and match.group() == "\r"
            and match.end() == len(text.buf)
            and not text.eof
        ):
            pos = match.start()
            text.more()  # a "\r" at the end may be half of "\r\n"
            continue
        line, following = (
            (text.buf, len(text.buf)) if match is None else (text.buf[: match.start()], match.end())
        )
        if len(line) > limit:
            raise _too_large(f"line {index + 1:,}", limit)
        if line.strip():
            # without the white space around it (some may have been dropped already)
            yield index, line.strip()
            index += 1
        text.drop(following)
        pos = 0
        if match is None:
            return
