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
from collections.abc import Iterable
from dataclasses import dataclass, replace

from bot.core.snapshot import Snapshot
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


def discover(snapshot: Snapshot, globs: Iterable[str], exclude: Iterable[str] = ()) -> Discovered:
    """The events of the files of ``snapshot`` that match ``globs`` and hold events (``exclude``:
    files read already)."""
    globs = [g for g in globs if g.strip("/")]
    skip = set(exclude)
    candidates: set[str] = set()
    for glob in globs:
        pattern = glob_pattern(glob)
        candidates.update(
            p
            for p in snapshot.files(_prefix(glob.strip("/")))
            if p.endswith(EVENT_SUFFIXES) and p not in skip and pattern.fullmatch(p)
        )
    found = Discovered([], 0, 0)
    for path in sorted(candidates):
        records = list(snapshot_records(snapshot, path))
        if is_event_file(records):
            found.records += [replace(r, expected=True) for r in records]
            found.files += 1
        else:
            found.ignored += 1
    return found
