"""Sample events: where they come from, how a file splits into events, and placeholders.

An event file holds one JSON event, a JSON array of events, or JSON lines (one event per line), as
producers emit them. Test suites keep *partial* expected events whose values are placeholders
(``${json-unit.any-string}``, ``{{ any(result) }}``; see ``bot.naming.placeholders``): a placeholder is
never taken for a real value.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bot.config import Config
from bot.naming.placeholders import has_placeholders, is_placeholder, might_hold_placeholders
from bot.registry import Registry
from bot.snapshot import Snapshot, SnapshotError

EVENT_SUFFIXES = (".json", ".jsonl", ".ndjson")
WHOLE_SUFFIX = ".json"  # one event or an array per file, read whole; every other event file is JSON lines
# A whole ``.json`` file is held in memory at once (several copies on a Spark executor): past this size it
# is one per-file finding on every engine, never loaded. JSON lines have no limit: they are streamed/split.
MAX_WHOLE_FILE_BYTES = 64 * 1024 * 1024
SAMPLES_FOLDER = "samples"
__all__ = ["has_placeholders", "is_placeholder", "might_hold_placeholders"]  # re-exported for the regression


@dataclass(frozen=True, slots=True)
class EventRecord:
    """The text of one event, where it came from, and the entry whose samples hold it (if any)."""

    file: str
    index: int
    text: str
    entry: str | None = None
    error: str | None = None  # why the file could not be read (then ``text`` is empty)
    expected: bool = False  # a test suite's expected event: a subset of what is emitted (missing keys are no error)


class EventError(ValueError):
    """One event (or a whole file) that cannot be read as JSON."""


def parse_event(text: str | bytes) -> Any:
    """Parse one event; raises ``EventError`` with a one-line reason.

    orjson refuses nesting deeper than 1,024 levels, which bounds every later walk of the event.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise EventError(f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise EventError(f"an event must be a JSON object, not {type(value).__name__}")
    return value


class FileFault(ValueError):
    """A whole event file that cannot be read as events: one per-file finding, never one per line."""


def split_events(text: str) -> Iterator[tuple[int, str]]:
    """(index, event text) for a file holding one event, an array of events, or JSON lines.

    A file that is not valid JSON as a whole is read as JSON lines when its first line is JSON (a bad
    later line is still yielded, so it is reported with its index instead of silently lost); otherwise
    (a schema with a ``//`` comment, a YAML file) it raises ``FileFault`` once for the whole file.
    """
    stripped = text.strip()
    if not stripped:
        return
    try:
        whole = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        lines = [line for line in stripped.splitlines() if line.strip()]
        if len(lines) < 2 or not _json(lines[0]):
            raise FileFault(f"not JSON (nor JSON lines): {exc}") from None
        yield from enumerate(lines)
        return
    if isinstance(whole, list):
        for index, item in enumerate(whole):
            yield index, orjson.dumps(item).decode()
        return
    yield 0, stripped


def _json(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def decode(data: bytes) -> str:
    """Event bytes as text: UTF-8 (a BOM dropped), or ``FileFault`` naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileFault(f"undecodable: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start:,})") from None


def too_large(size: int) -> str:
    return (f"too large: a whole .json file of {size:,} bytes (over {MAX_WHOLE_FILE_BYTES:,}) is not loaded; "
            "write it as JSON lines (.jsonl), which is streamed")


def whole_records(file: str, data: bytes, entry: str | None = None) -> Iterator[EventRecord]:
    """The events of a whole file's bytes, or one record carrying the file's fault."""
    try:
        events = list(split_events(decode(data)))
    except FileFault as exc:
        yield EventRecord(file, 0, "", entry, str(exc))
        return
    for index, event_text in events:
        yield EventRecord(file, index, event_text, entry)


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


def snapshot_records(snapshot: Snapshot, path: str, entry: str | None = None) -> Iterator[EventRecord]:
    """The events of one file of a snapshot (JSON lines are read whole too: a repository's files are small)."""
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
    """Numbered non-blank lines, split at ``\\n``, ``\\r\\n`` or ``\\r`` as Hadoop's line reader does."""
    index = 0
    for chunk in chunks:
        for line in chunk.splitlines():
            if line.strip():
                yield line_record(file, index, line, entry)
                index += 1


def expand_local(patterns: Iterable[str]) -> list[str]:
    """Event files named by local paths: a file, a folder (searched recursively) or a glob."""
    found: list[str] = []
    for pattern in patterns:
        path = Path(pattern)
        if path.is_dir():
            found.extend(str(p) for p in sorted(path.rglob("*")) if p.is_file() and p.name.endswith(EVENT_SUFFIXES))
        elif path.is_file():
            found.append(str(path))
        else:
            found.extend(p for p in sorted(glob.glob(pattern, recursive=True))  # noqa: PTH207  # absolute globs
                         if Path(p).is_file() and p.endswith(EVENT_SUFFIXES))
    return list(dict.fromkeys(found))


def is_remote(path: str) -> bool:
    """A location only Spark can read (HDFS, S3, ...)."""
    return "://" in path and not path.startswith("file://")


def file_records(paths: Iterable[str]) -> Iterator[EventRecord]:
    """Events of local files, read by this process: a whole ``.json`` file at once (up to
    ``MAX_WHOLE_FILE_BYTES``), JSON lines streamed line by line; the faults are the ones Spark reports."""
    for path in paths:
        try:
            if not path.endswith(WHOLE_SUFFIX):
                with Path(path).open("rb") as stream:
                    yield from _lines(path, stream)
                continue
            size = Path(path).stat().st_size
            if size > MAX_WHOLE_FILE_BYTES:
                yield EventRecord(path, 0, "", None, too_large(size))
                continue
            data = Path(path).read_bytes()
        except OSError as exc:
            yield EventRecord(path, 0, "", None, unreadable(exc))
            continue
        yield from whole_records(path, data)


def unreadable(exc: OSError) -> str:
    return f"unreadable: {exc.strerror or exc}"


def event_locations(config: Config, extra: Iterable[str] = ()) -> list[str]:
    """Event locations from the configuration plus the command line."""
    return [*config.regression.events, *extra]
