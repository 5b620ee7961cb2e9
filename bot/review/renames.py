"""Renames git and GitHub did not pair: a deleted JSON file and an added one that are the same file.

Git (``git diff -M``) and GitHub (``previous_filename`` in a pull request's files) pair a deleted
and an added file as a rename when their lines are similar enough; the App's tree diff pairs only
identical blobs; a working tree's change (``check --worktree``) lists none. A move that also
re-indents or reorders a JSON file shares no line with its old self and is listed as a deletion and
an addition: every problem the file had at base would then be judged new, and a contributor fixing
a misnamed file is blocked by gaps the registry already had.

``paired_renames`` pairs them, the same way for every door (the engine calls it on whatever change
set the door listed), among the deleted and added ``.json`` files the listing left unpaired:

1. the same JSON value (parsed strictly, objects compared without regard to key order): pairs in
   path order, as identical blobs are paired;
2. then the same facet by ``$id`` (the facet file it names, its version aside; any other ``$id`` as
   written), only where exactly one deleted and one added file of those left name it. Never by the
   ``$defs`` name alone: an ``$id`` naming another facet is a new facet (docs/versions.md), whatever
   its ``$defs`` entry is called, and a ``$defs`` name may be shared by unrelated facet files.

It is bounded: at most ``MAX_FILES`` files of each side are read (the first in path order), none
over ``MAX_FILE_BYTES``, through the side's cached JSON loading (a file of an entry the checks read
anyway: no second download), and comparing is one dictionary lookup per file. A paired file is a
rename as if git had listed it: the checks see its old path and its findings at base are followed
to its new path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.config import Config
from bot.core.snapshot import Snapshot
from bot.model.registry import FACET_ID
from bot.model.sides import side_model

MAX_FILES = 100  # deleted files read, and as many added ones
MAX_FILE_BYTES = 1_000_000  # larger files are left unpaired, as the format check leaves them alone


def paired_renames(changes: ChangeSet, base: Snapshot, head: Snapshot, config: Config) -> ChangeSet:
    """``changes`` with each unpaired deleted JSON file and the added one it is the same file as
    listed as one rename (at the added file's place, with its lines)."""
    deleted = _candidates(changes, Status.DELETED)
    added = _candidates(changes, Status.ADDED)
    if not deleted or not added:
        return changes
    old = {f.path: _value(base, config, f.path) for f in deleted}
    new = {f.path: _value(head, config, f.path) for f in added}
    pairs = _pair(old, new)
    if not pairs:
        return changes
    moved = set(pairs.values())
    files = tuple(
        replace(f, status=Status.RENAMED, old_path=pairs[f.path])
        if f.status is Status.ADDED and f.path in pairs
        else f
        for f in changes.files
        if not (f.status is Status.DELETED and f.path in moved)
    )
    return replace(changes, files=files)


def _candidates(changes: ChangeSet, status: Status) -> list[FileChange]:
    """The first ``MAX_FILES`` readable ``.json`` files of ``status`` no listing paired, by path."""
    found = sorted(
        (
            f
            for f in changes.files
            if f.status is status and f.old_path is None and not f.unread
            if f.path.endswith(".json")
        ),
        key=lambda f: f.path,
    )
    return found[:MAX_FILES]


_ABSENT = object()


def _value(snapshot: Snapshot, config: Config, path: str) -> Any:
    """The file's JSON value (``_ABSENT`` when it cannot be read or is not JSON), loaded as the
    checks load it (cached: a check asking again reads nothing more)."""
    size = snapshot.size(path)
    if size is None or size > MAX_FILE_BYTES:
        return _ABSENT
    loaded = side_model(snapshot, config).registry.files.json(path)
    return _ABSENT if loaded.doc is None else loaded.doc.value


def _pair(old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """added path -> deleted path: the same value first, then the same facet ``$id``."""
    pairs: dict[str, str] = {}
    by_value: dict[str, list[str]] = {}
    for path in sorted(old):
        key = _canonical(old[path])
        if key is not None:
            by_value.setdefault(key, []).append(path)
    for path in sorted(new):
        key = _canonical(new[path])
        same = by_value.get(key) if key is not None else None
        if same:
            pairs[path] = same.pop(0)
    taken = set(pairs.values())
    left_old = _unique_ids([p for p in sorted(old) if p not in taken], old)
    left_new = _unique_ids([p for p in sorted(new) if p not in pairs], new)
    for facet, path in left_new.items():
        if facet in left_old:
            pairs[path] = left_old[facet]
    return pairs


def _canonical(value: Any) -> str | None:
    """One spelling of a JSON value: keys sorted, no blanks (``None`` when not JSON)."""
    if value is _ABSENT:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _unique_ids(paths: Sequence[str], values: dict[str, Any]) -> dict[str, str]:
    """facet -> path, for the facets exactly one of ``paths`` names by its ``$id``."""
    named: dict[str, list[str]] = {}
    for path in paths:
        facet = _facet(values[path])
        if facet is not None:
            named.setdefault(facet, []).append(path)
    return {facet: found[0] for facet, found in named.items() if len(found) == 1}


def _facet(value: Any) -> str | None:
    """What a schema's ``$id`` names: the facet file, its version aside, or the ``$id`` itself."""
    schema_id = value.get("$id") if isinstance(value, dict) else None
    if not isinstance(schema_id, str) or not schema_id:
        return None
    match = FACET_ID.match(schema_id)
    return match[4] if match else schema_id
