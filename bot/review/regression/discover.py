"""The repository's own events, found without being told: files matching the configured globs
(``regression.discover``) whose content has the shape of OpenLineage events.

Test suites keep expected events next to everything else a test needs (configuration, dbt manifests,
facet schemas). A file counts when its first JSON document is an event by shape
(``bot.model.naming.events.document_kind``: ``eventType``, ``run`` and ``job``, or a dataset or job
event), so partial expected events with placeholders are found and the rest is left alone. They are
*expected* events: test suites compare them as subsets of what the integration emits (json-unit's
lenient comparison, dbt's and Flink's matchers), so a key they leave out is not an error, as with
placeholders. The files are read from the reviewed revision by the driver (a repository's own
fixtures are small); an entry's ``samples/`` are read by ``events.sample_records`` and not twice.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.naming.events import EVENT_KINDS, document_kind
from bot.review.regression.events import (
    EVENT_SUFFIXES,
    EventError,
    EventRecord,
    parse_event,
    snapshot_records,
)


@dataclass
class Discovered:
    records: list[EventRecord]
    files: int  # event files found
    ignored: int  # files matching the globs that hold no event (configuration, schemas, manifests)


@functools.lru_cache(maxsize=64)
def glob_pattern(glob: str) -> re.Pattern[str]:
    """A glob over repository paths: ``**`` matches any number of folders, ``*`` and ``?`` stay in
    one."""
    out = []
    for part in re.split(r"(\*\*/?|\*|\?)", glob.strip("/")):
        if part in ("**/", "**"):
            out.append("(?:.*/)?" if part == "**/" else ".*")
        elif part == "*":
            out.append("[^/]*")
        elif part == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out) + "(?:/.*)?")  # a glob naming a folder takes what is under it


def _prefix(glob: str) -> str:
    """The folder every match of ``glob`` is under (listing only that part of the tree)."""
    fixed = re.split(r"[*?\[]", glob, maxsplit=1)[0]
    return fixed.rsplit("/", 1)[0] if "/" in fixed else ""


def is_event_file(records: list[EventRecord]) -> bool:
    """Whether a file's first document is an OpenLineage event by shape (a file whose reading failed
    is not)."""
    if not records or records[0].error is not None:
        return False
    try:
        return document_kind(parse_event(records[0].text)) in EVENT_KINDS
    except EventError:
        return False


def _candidates(snapshot: Snapshot, globs: Iterable[str], exclude: Iterable[str]) -> list[str]:
    """The event-suffixed files of ``snapshot`` matching ``globs``, but ``exclude``."""
    skip = set(exclude)
    candidates: set[str] = set()
    for glob in (g for g in globs if g.strip("/")):
        pattern = glob_pattern(glob)
        candidates.update(
            p
            for p in snapshot.files(_prefix(glob.strip("/")))
            if p.endswith(EVENT_SUFFIXES) and p not in skip and pattern.fullmatch(p)
        )
    return sorted(candidates)


def discover(snapshot: Snapshot, globs: Iterable[str], exclude: Iterable[str] = ()) -> Discovered:
    """The events of the files of ``snapshot`` that match ``globs`` and hold events (``exclude``:
    files read already)."""
    found = Discovered([], 0, 0)
    for path in _candidates(snapshot, globs, exclude):
        records = list(snapshot_records(snapshot, path))
        if is_event_file(records):
            found.records += [replace(r, expected=True) for r in records]
            found.files += 1
        else:
            found.ignored += 1
    return found


def _content_id(snapshot: Snapshot, path: str) -> str | None:
    """What identifies a file's content without reading it (a git blob id), if ``snapshot`` says."""
    for name in ("object_id", "blob_id"):
        method = getattr(snapshot, name, None)
        if method is not None:
            try:
                value = method(path)
            except (KeyError, SnapshotError):
                return None
            return value if isinstance(value, str) and value else None
    return None


def _unchanged(base: Snapshot, head: Snapshot, path: str) -> bool:
    """Whether ``path`` has the same content on both sides (by blob id when both have one, so an
    unchanged file is not read)."""
    old, new = _content_id(base, path), _content_id(head, path)
    if old is not None and new is not None:
        return old == new
    try:
        return base.read(path) == head.read(path)
    except SnapshotError:
        return False  # each side's records say what they can


def dropped_records(
    base: Snapshot,
    head: Snapshot,
    globs: Iterable[str],
    found: Discovered,
    exclude: Iterable[str] = (),
) -> Iterator[EventRecord]:
    """The base side's discovered events that the head drops: the events of a base event file the
    head deletes, or no longer holds as an event file, or holds without them byte for byte
    (``found``: the head's discovery). Deleting or editing the expected event a change breaks
    would hide the break. Only the matching files that differ between the sides are read (by blob
    id where the snapshots have one), each within the size limit of any repository file."""
    kept: dict[str, set[str]] = {}
    for record in found.records:
        if record.error is None:
            kept.setdefault(record.file, set()).add(record.text)
    for path in _candidates(base, globs, exclude):
        if path in kept and _unchanged(base, head, path):
            continue
        records = list(snapshot_records(base, path))
        if not is_event_file(records):
            continue
        still = kept.get(path, set())
        yield from (
            replace(r, expected=True) for r in records if r.error is None and r.text not in still
        )
