"""Sample events: where they come from, how a file splits into events, and placeholders.

An event file holds one JSON event, a JSON array of events, or JSON lines (one event per line), as
producers emit them. Test suites keep *partial* expected events whose values are placeholders
(``${json-unit.any-string}``, ``{{ any(result) }}``; see ``bot.model.naming.placeholders``): a
placeholder is never taken for a real value.
"""

from __future__ import annotations

import functools
import glob
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from bot.core.config import Config
from bot.core.jsondoc import JsonProblem, strict_loads
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.naming.placeholders import has_placeholders, is_placeholder, might_hold_placeholders
from bot.model.registry import Registry
from bot.review.regression.stream import READ_BYTES, FileFault, stream_events

EVENT_SUFFIXES = (".json", ".jsonl", ".ndjson")
# one event, an array or JSON lines per file, read element by element (``stream``)
WHOLE_SUFFIX = ".json"
# A file of the repository (a sample, a discovered event file) is read from git whole: past this
# size it is one per-file finding. Event locations have no such limit: every file there is streamed.
MAX_WHOLE_FILE_BYTES = 64 * 1024 * 1024
SAMPLES_FOLDER = "samples"
# The fields OpenLineage.json's BaseEvent requires of every event: a file whose events miss them is
# an event template (a test suite's expected event), not an event a producer emitted.
EVENT_FIELDS = ("eventTime", "producer", "schemaURL")
# re-exported for the regression
__all__ = ["FileFault", "has_placeholders", "is_placeholder", "might_hold_placeholders"]


@dataclass(frozen=True, slots=True)
class EventRecord:
    """The text of one event, where it came from, and the entry whose samples hold it (if any)."""

    file: str
    index: int
    text: str
    entry: str | None = None
    error: str | None = None  # why the file could not be read (then ``text`` is empty)
    # a test suite's expected event: a subset of what is emitted (missing keys are no error)
    expected: bool = False


class EventError(ValueError):
    """One event (or a whole file) that cannot be read as JSON."""


def missing_event_fields(event: dict[str, Any]) -> tuple[str, ...]:
    """The required event fields ``event`` lacks (``()`` for a complete event)."""
    return tuple(name for name in EVENT_FIELDS if name not in event)


def parse_event(text: str | bytes) -> Any:
    """Parse one event; raises ``EventError`` with a one-line reason.

    orjson refuses nesting deeper than 1,024 levels, which bounds every later walk of the event.
    A key an object names twice keeps its last value (``refusing_duplicates`` refuses it where the
    repository's own events are read).
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise EventError(f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise EventError(f"an event must be a JSON object, not {type(value).__name__}")
    return value


def duplicate_key(text: str | bytes, value: Any) -> str | None:
    """Why ``text`` (which orjson read as ``value``) is refused for a key an object names twice,
    else None.

    Cheap for the events that have none: every ``:`` of the text is a key's or inside a string, so
    the text holds as many as orjson writes ``value`` with, unless a key was dropped (or a colon is
    escaped, ``\\u003a``: then, as when the counts differ, the exact scan decides).
    """
    # a backslash is rare in events (memchr): only then is an escaped colon looked for
    if isinstance(text, bytes):
        colons, escaped = text.count(b":"), b"\\" in text and b"\\u003" in text
    else:
        colons, escaped = text.count(":"), "\\" in text and "\\u003" in text
    try:
        if not escaped and orjson.dumps(value).count(b":") == colons:
            return None
    except (orjson.JSONEncodeError, TypeError):
        pass  # the exact scan decides
    try:
        strict_loads(text.decode() if isinstance(text, bytes) else text)
    except JsonProblem as exc:
        return exc.message
    except (ValueError, RecursionError):
        return None  # orjson read it: only a duplicate is refused here
    return None


def refusing_duplicates(records: Iterable[EventRecord]) -> list[EventRecord]:
    """``records`` with each event that names a key twice made unreadable (``event-readable``, as
    ``naming check`` refuses it). For the repository's own events (samples, discovered files: few,
    read by the driver); the bulk ``--events`` files keep orjson's reading (the last value), which
    the scan would slow by about 14% per event."""
    out = []
    for record in records:
        if record.error is None and record.text:
            try:
                value = orjson.loads(record.text)
            except orjson.JSONDecodeError:
                value = None  # an unreadable event: the engines say why
            duplicate = duplicate_key(record.text, value) if isinstance(value, dict) else None
            if duplicate is not None:
                record = replace(record, text="", error=f"invalid JSON: {duplicate}")
        out.append(record)
    return out


def split_events(text: str) -> Iterator[tuple[int, str]]:
    """(index, event text) of a ``.json`` file's text (``bot.review.regression.stream`` says how it
    is read)."""
    return stream_events([text.encode()])


def decode(data: bytes) -> str:
    """Event bytes as text: UTF-8 (a BOM dropped), or ``FileFault`` naming the first bad byte."""
    # the C UTF-8 decoder; "utf-8-sig" is a Python-level codec
    if not data.startswith(b"\xef\xbb\xbf"):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass  # the message below
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileFault(
            f"undecodable: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start:,})"
        ) from None


def too_large(size: int) -> str:
    return (
        f"too large: a repository file of {size:,} bytes (over {MAX_WHOLE_FILE_BYTES:,}) is not "
        f"read from "
        "git; keep large event files in an event location (--events), which is streamed"
    )


def whole_records(
    file: str, data: bytes | Iterable[bytes], entry: str | None = None
) -> Iterator[EventRecord]:
    """The events of a ``.json`` file (its bytes, or its bytes in pieces, in order), then the record
    of the file's fault if it has one (the events before the fault are still checked:
    ``bot.review.regression.stream``)."""
    events = 0
    try:
        for index, event_text in stream_events([data] if isinstance(data, bytes) else data):
            yield EventRecord(file, index, event_text, entry)
            events = index + 1
    except FileFault as exc:
        yield EventRecord(file, events, "", entry, str(exc))  # numbered after the events before it


def line_record(file: str, index: int, data: bytes, entry: str | None = None) -> EventRecord:
    """One line of a JSON-lines file (undecodable bytes are that line's fault)."""
    try:
        return EventRecord(file, index, decode(data), entry)
    except FileFault as exc:
        return EventRecord(file, index, "", entry, str(exc))


def sample_records(snapshot: Snapshot, registry: Registry) -> Iterator[EventRecord]:
    """The events in each entry's ``samples/`` folder."""
    for name, entry in sorted(registry.entries.items()):
        for path in snapshot.files(f"{entry.folder}/{SAMPLES_FOLDER}"):
            if not path.endswith(EVENT_SUFFIXES):
                continue
            yield from snapshot_records(snapshot, path, name)


def dropped_sample_records(
    base: Snapshot, base_registry: Registry, head: Snapshot, head_registry: Registry
) -> Iterator[EventRecord]:
    """The base side's sample events that the head drops (in a file it deletes, or removed or
    edited in a file it changes), of the entries the head keeps: the change is judged on them too,
    or deleting or editing the sample it breaks would hide the break."""
    for name, entry in sorted(base_registry.entries.items()):
        kept_entry = head_registry.entries.get(name)
        if kept_entry is None:
            continue
        kept = set(head.files(f"{kept_entry.folder}/{SAMPLES_FOLDER}"))
        for path in base.files(f"{entry.folder}/{SAMPLES_FOLDER}"):
            if not path.endswith(EVENT_SUFFIXES):
                continue
            if path not in kept:
                yield from snapshot_records(base, path, name)
                continue
            try:
                if base.read(path) == head.read(path):
                    continue
            except SnapshotError:
                pass  # each side's records say what they can
            still = {r.text for r in snapshot_records(head, path, name) if r.error is None}
            for record in snapshot_records(base, path, name):
                if record.error is None and record.text not in still:
                    yield record


def snapshot_records(
    snapshot: Snapshot, path: str, entry: str | None = None
) -> Iterator[EventRecord]:
    """The events of one file of a snapshot (JSON lines are read whole too: a repository's files are
    small)."""
    try:
        size = snapshot.size(path) or 0
        data = snapshot.read(path) if size <= MAX_WHOLE_FILE_BYTES else None
    except SnapshotError as exc:
        yield EventRecord(path, 0, "", entry, f"unreadable: {exc}")
        return
    if data is None:
        yield EventRecord(path, 0, "", entry, too_large(size))
    elif path.endswith(WHOLE_SUFFIX):
        yield from whole_records(path, data, entry)
    else:
        yield from _lines(path, data.splitlines(), entry)


def _lines(file: str, chunks: Iterable[bytes], entry: str | None = None) -> Iterator[EventRecord]:
    """Numbered non-blank lines, split at ``\\n``, ``\\r\\n`` or ``\\r`` as Hadoop's line reader
    does."""
    index = 0
    for chunk in chunks:
        if b"\r" in chunk:
            lines: Iterable[bytes] = chunk.splitlines()
        else:
            # without "\r", splitting at "\n" is the same; a file's lines end at their only one
            # (found by memchr: bytes.split scans byte by byte, 4% of a regression's instructions)
            end = chunk.find(b"\n")
            if end == -1:
                lines = (chunk,)
            elif end == len(chunk) - 1:
                lines = (chunk[:end],)
            else:
                lines = chunk.split(b"\n")
        for line in lines:
            if line.strip():
                yield line_record(file, index, line, entry)
                index += 1


def expand_local(patterns: Iterable[str]) -> list[str]:
    """Event files named by local paths: a file, a folder (searched recursively) or a glob."""
    found: list[str] = []
    for pattern in patterns:
        path = Path(pattern)
        if path.is_dir():
            found.extend(
                str(p)
                for p in sorted(path.rglob("*"))
                if p.is_file() and p.name.endswith(EVENT_SUFFIXES)
            )
        elif path.is_file():
            found.append(str(path))
        else:
            # absolute globs
            found.extend(
                p
                for p in sorted(glob.glob(pattern, recursive=True))  # noqa: PTH207
                if Path(p).is_file() and p.endswith(EVENT_SUFFIXES)
            )
    return list(dict.fromkeys(found))


def is_remote(path: str) -> bool:
    """A location only Spark can read (HDFS, S3, ...)."""
    return "://" in path and not path.startswith("file://")


def file_records(paths: Iterable[str]) -> Iterator[EventRecord]:
    """Events of local files, read by this process one piece at a time: JSON lines line by line, a
    ``.json`` file (one event, an array, JSON lines) element by element; the faults are the ones
    Spark reports."""
    for path in paths:
        try:
            # JSON lines: one read per MiB, not per line
            with Path(path).open("rb", buffering=READ_BYTES) as stream:
                if path.endswith(WHOLE_SUFFIX):
                    yield from whole_records(
                        path, iter(functools.partial(stream.read, READ_BYTES), b"")
                    )
                else:
                    yield from _lines(path, stream)
        except OSError as exc:
            yield EventRecord(path, 0, "", None, unreadable(exc))


def unreadable(exc: OSError) -> str:
    return f"unreadable: {exc.strerror or exc}"


def event_locations(config: Config, extra: Iterable[str] = ()) -> list[str]:
    """Event locations from the configuration plus the command line."""
    return [*config.regression.events, *extra]
