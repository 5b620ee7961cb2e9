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
MAX_EVENT_FILE_BYTES = 256 * 1024 * 1024  # read by one process; larger inputs go through Spark
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


def split_events(text: str) -> Iterator[tuple[int, str]]:
    """(index, event text) for a file holding one event, an array of events, or JSON lines.

    A file that is not valid JSON as a whole is read as JSON lines; a bad line is still yielded, so it
    is reported with its index instead of silently lost.
    """
    stripped = text.strip()
    if not stripped:
        return
    try:
        whole = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        whole = None
    else:
        if isinstance(whole, list):
            for index, item in enumerate(whole):
                yield index, orjson.dumps(item).decode()
            return
        yield 0, stripped
        return
    index = 0
    for line in stripped.splitlines():
        if line.strip():
            yield index, line
            index += 1


def records_from_text(file: str, text: str, entry: str | None = None) -> Iterator[EventRecord]:
    for index, event_text in split_events(text):
        yield EventRecord(file, index, event_text, entry)


def sample_records(snapshot: Snapshot, registry: Registry) -> Iterator[EventRecord]:
    """The events in each entry's ``samples/`` folder."""
    for name, entry in sorted(registry.entries.items()):
        for path in snapshot.files(f"{entry.folder}/{SAMPLES_FOLDER}"):
            if not path.endswith(EVENT_SUFFIXES):
                continue
            try:
                size = snapshot.size(path) or 0
                data = snapshot.read(path) if size <= MAX_EVENT_FILE_BYTES else None
            except SnapshotError as exc:
                yield EventRecord(path, 0, "", name, f"unreadable: {exc}")
                continue
            if data is None:
                yield EventRecord(path, 0, "", name, f"file of {size:,} bytes is too large to read here")
                continue
            yield from records_from_text(path, data.decode("utf-8", "replace"), name)


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
    """Events of local files, read by this process (the single-process path and small Spark runs)."""
    for path in paths:
        try:
            size = Path(path).stat().st_size
            if size > MAX_EVENT_FILE_BYTES:
                yield EventRecord(path, 0, "", None, f"file of {size:,} bytes: too large for one process, use Spark")
                continue
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            yield EventRecord(path, 0, "", None, f"unreadable: {exc.strerror}")
            continue
        yield from records_from_text(path, text)


def event_locations(config: Config, extra: Iterable[str] = ()) -> list[str]:
    """Event locations from the configuration plus the command line."""
    return [*config.regression.events, *extra]
