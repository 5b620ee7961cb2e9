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
   its ``$defs`` entry is called, and a ``$defs`` name may be shared by unrelated facet files;
3. then by similarity, as git pairs an edited move (``git diff -M``: at least half of the larger
   file's bytes are lines, or 64-byte pieces of a longer line, the other file holds too), the most
   similar pairs first. The working tree's door and the App's tree diff pair no edited move of
   their own, so without it a move git pairs (a facet renamed with a new ``$id``, #3167) kept its
   problems on the command line and in the App's listing, and had them all judged new through
   ``check --worktree``.

It is bounded: at most ``MAX_FILES`` files of each side are read (the first in path order), none
over ``MAX_FILE_BYTES``, through the side's cached JSON loading (a file of an entry the checks read
anyway: no second download); the similarity of two files is measured only where their sizes allow
half to be shared, and not at all past ``MAX_MEASURED`` characters to cut into pieces or
``MAX_COMPARED`` pieces looked up (a move then stays an addition and a deletion: its problems
judged new, never hidden). A paired file is a rename as
if git had listed it: the checks see its old path and its findings at base are followed to its new
path.

Two facet schemas whose ``$id`` names different facets share their boilerplate (``$schema``,
the ``allOf`` ``$ref`` to OpenLineage.json, the facet key's ``$ref``): half of two small unrelated
facets' lines may be that (``OwnershipDatasetFacet`` and ``SymlinksDatasetFacet``: 53%), and a
facet deleted while an unrelated one is added passed its gaps (no example) on to the new one as
pre-existing. Such a pair is a rename only when at least half of the facet's own content is shared
too: the leaves of its ``$defs`` (fields, types, descriptions), the definitions' names and
references outside the file left out (``_own``). A rename git or GitHub listed is held to the same
bar, and listed as a deletion and an addition when it falls short.

``moved_onto`` finds what ``git diff -B -M`` pairs and the listings do not: a file moved onto one
the change deletes (examples renumbered: ``2.json`` deleted, ``3.json`` moved onto it) is listed
as ``2.json`` modified and ``3.json`` deleted. A modified file paired (as above) with a deleted
one and closer to it than to its own base is that deleted file moved; the judge follows the
deleted file's findings to it (so they stay pre-existing), while the checks still see the change as
listed (a modification and a deletion: owners, published copies judged as such).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.config import Config
from bot.core.jsondoc import JsonDoc
from bot.core.snapshot import Snapshot
from bot.model.registry import FACET_ID
from bot.model.sides import side_model

MAX_FILES = 100  # deleted files read, and as many added ones
MAX_FILE_BYTES = 1_000_000  # larger files are left unpaired, as the format check leaves them alone
SIMILAR = 0.5  # the share of the larger file's content two files hold in common: git's -M default
PIECE = 64  # git's similarity cuts a longer line into pieces of this size
MAX_MEASURED = 20_000_000  # characters of the files left unpaired cut into pieces, all together
MAX_COMPARED = 2_000_000  # pieces looked up to measure similarity, all pairs together


def paired_renames(changes: ChangeSet, base: Snapshot, head: Snapshot, config: Config) -> ChangeSet:
    """``changes`` with each unpaired deleted JSON file and the added one it is the same file as
    listed as one rename (at the added file's place, with its lines), and each listed rename of a
    facet into an unrelated one as a deletion and an addition."""
    changes = _unrelated_split(changes, base, head, config)
    deleted = _candidates(changes, Status.DELETED)
    added = _candidates(changes, Status.ADDED)
    if not deleted or not added:
        return changes
    old = {f.path: _doc(base, config, f.path) for f in deleted}
    new = {f.path: _doc(head, config, f.path) for f in added}
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


def moved_onto(
    changes: ChangeSet, base: Snapshot, head: Snapshot, config: Config
) -> dict[str, str]:
    """deleted path -> modified path, for each modified JSON file rewritten into a deleted one."""
    deleted = _candidates(changes, Status.DELETED)
    modified = _candidates(changes, Status.MODIFIED)
    if not deleted or not modified:
        return {}
    old = {f.path: _doc(base, config, f.path) for f in deleted}
    new = {f.path: _doc(head, config, f.path) for f in modified}
    pairs = _pair(old, new)
    out: dict[str, str] = {}
    for path, gone in pairs.items():
        before, after, source = _doc(base, config, path), new[path], old[gone]
        if before is None or after is None or source is None:
            continue
        if _similarity(source.text, after.text) > _similarity(before.text, after.text):
            out[gone] = path
    return out


def _similarity(a: str, b: str) -> float:
    """The share of the larger of ``a`` and ``b`` held by both, as git measures it."""
    mine, theirs = _pieces(a), _pieces(b)
    larger = max(_weight(mine), _weight(theirs))
    return _shared(mine, theirs) / larger if larger else 1.0


def _unrelated_split(
    changes: ChangeSet, base: Snapshot, head: Snapshot, config: Config
) -> ChangeSet:
    """``changes`` with each listed rename of a facet schema into another facet that shares too
    little of its own content (``_related``) as a deletion and an addition (the first
    ``MAX_FILES`` renames of JSON files read, by path)."""
    listed = sorted(
        (
            f
            for f in changes.files
            if f.status is Status.RENAMED and f.old_path and not f.unread
            if f.path.endswith(".json") and f.old_path.endswith(".json")
        ),
        key=lambda f: f.path,
    )[:MAX_FILES]
    split = set()
    for f in listed:
        old, new = _doc(base, config, f.old_path or ""), _doc(head, config, f.path)
        if old is not None and new is not None and not _related(old.value, new.value):
            split.add(f.path)
    if not split:
        return changes
    files: list[FileChange] = []
    for f in changes.files:
        if f.status is Status.RENAMED and f.path in split and f.old_path:
            files += [replace(f, status=Status.ADDED, old_path=None)]
            files += [FileChange(f.old_path, Status.DELETED)]
        else:
            files.append(f)
    return replace(changes, files=tuple(files))


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


def _doc(snapshot: Snapshot, config: Config, path: str) -> JsonDoc | None:
    """The file as JSON (``None`` when it cannot be read or is not JSON), loaded as the checks load
    it (cached: a check asking again reads nothing more)."""
    size = snapshot.size(path)
    if size is None or size > MAX_FILE_BYTES:
        return None
    return side_model(snapshot, config).registry.files.json(path).doc


def _pair(
    old_docs: dict[str, JsonDoc | None], new_docs: dict[str, JsonDoc | None]
) -> dict[str, str]:
    """added path -> deleted path: the same value first, then the same facet ``$id``, then the
    most similar content."""
    old = {p: doc.value for p, doc in old_docs.items() if doc is not None}
    new = {p: doc.value for p, doc in new_docs.items() if doc is not None}
    pairs: dict[str, str] = {}
    by_value: dict[str, list[str]] = {}
    for path in sorted(old):
        by_value.setdefault(_canonical(old[path]), []).append(path)
    for path in sorted(new):
        same = by_value.get(_canonical(new[path]))
        if same:
            pairs[path] = same.pop(0)
    taken = set(pairs.values())
    left_old = _unique_ids([p for p in sorted(old) if p not in taken], old)
    left_new = _unique_ids([p for p in sorted(new) if p not in pairs], new)
    for facet, path in left_new.items():
        if facet in left_old:
            pairs[path] = left_old[facet]
    taken = set(pairs.values())
    similar = _similar(
        {p: doc.text for p, doc in old_docs.items() if doc is not None and p not in taken},
        {p: doc.text for p, doc in new_docs.items() if doc is not None and p not in pairs},
        lambda a, b: _related(old[a], new[b]),
    )
    pairs.update(similar)
    return pairs


def _similar(
    old: dict[str, str], new: dict[str, str], related: Callable[[str, str], bool]
) -> dict[str, str]:
    """added path -> deleted path, for the ``related`` pairs sharing at least ``SIMILAR`` of the
    larger file's content, the most similar first (then in path order)."""
    if sum(len(text) for text in (*old.values(), *new.values())) > MAX_MEASURED:
        return {}  # as git past its rename limit: no pair by similarity, each file judged as listed
    pieces = {p: _pieces(text) for p, text in (*old.items(), *new.items())}
    sizes = {p: sum(len(piece) * n for piece, n in found.items()) for p, found in pieces.items()}
    # too different in size for half of the larger one to be shared: not compared
    candidates = [
        (a, b)
        for a in sorted(old)
        for b in sorted(new)
        if min(sizes[a], sizes[b]) >= SIMILAR * max(sizes[a], sizes[b])
    ]
    if sum(min(len(pieces[a]), len(pieces[b])) for a, b in candidates) > MAX_COMPARED:
        return {}  # as git past its rename limit: no pair by similarity, each file judged as listed
    scored = []
    for a, b in candidates:
        larger = max(sizes[a], sizes[b])
        shared = _shared(pieces[a], pieces[b])
        if shared >= SIMILAR * larger and related(a, b):
            scored.append((-shared / larger, a, b))
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for _score, a, b in sorted(scored, key=lambda s: (s[0], s[2], s[1])):
        if a not in taken and b not in pairs:
            pairs[b] = a
            taken.add(a)
    return pairs


def _pieces(text: str) -> Counter[str]:
    """The pieces git's similarity counts: each line with its newline, a longer one cut every 64
    characters."""
    return Counter(
        line[i : i + PIECE]
        for line in text.splitlines(keepends=True)
        for i in range(0, len(line), PIECE)
    )


def _shared(a: Counter[str], b: Counter[str]) -> int:
    """How much content (characters) ``a`` and ``b`` hold in common, piece by piece."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(len(line) * min(n, large[line]) for line, n in small.items() if line in large)


def _related(old: Any, new: Any) -> bool:
    """Whether two JSON values may be one file renamed: not two facet schemas naming different
    facets by ``$id`` that share less than ``SIMILAR`` of the larger one's own content."""
    old_facet, new_facet = _facet(old), _facet(new)
    if old_facet is None or new_facet is None or old_facet == new_facet:
        return True
    mine, theirs = _own(old), _own(new)
    if mine is None or theirs is None:
        return True
    larger = max(_weight(mine), _weight(theirs))
    return larger > 0 and _shared(mine, theirs) >= SIMILAR * larger


def _own(value: Any) -> Counter[str] | None:
    """A facet schema's own content: each leaf of its ``$defs`` definitions as ``pointer=value``
    below the definition (its name left out), references outside the file (the ``allOf`` one to
    OpenLineage.json every facet holds) left out; None without ``$defs``."""
    defs = value.get("$defs") if isinstance(value, dict) else None
    if not isinstance(defs, dict):
        return None
    own: Counter[str] = Counter()
    for definition in defs.values():
        for pointer, leaf in _leaves(definition, ""):
            if pointer.endswith("/$ref") and isinstance(leaf, str) and not leaf.startswith("#"):
                continue
            own[f"{pointer}={_canonical(leaf)}"] += 1
    return own


def _leaves(value: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    """(pointer, scalar) of every scalar inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{pointer}/{i}")
    else:
        yield pointer, value


def _weight(pieces: Counter[str]) -> int:
    return sum(len(piece) * n for piece, n in pieces.items())


def _canonical(value: Any) -> str:
    """One spelling of a JSON value: keys sorted, no blanks."""
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
