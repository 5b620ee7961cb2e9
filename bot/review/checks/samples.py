"""Sample rules: a sample event of an entry (`<entry>/samples/`) agrees with the entry's own
registration.

A producer registers the facets it emits in `registry.json`; its sample events show them. A sample
carrying a facet key the registration does not declare (and no core facet has), or a `_schemaURL`
naming no schema of the registry, contradicts the entry: the review says so on the line, with the
fix. Every sample of each entry under review is read, so a change to a sample, or to the
registration a sample relies on, is judged (what was wrong before stays pre-existing); the
regression (`bot/review/regression/`) validates the samples against the schemas.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from bot.core import anchors
from bot.core.findings import Finding, Fix, Severity
from bot.core.jsondoc import JsonDoc, JsonProblem
from bot.core.snapshot import Snapshot
from bot.model.registry import CORE, Entry, Registry, declared_facets
from bot.model.uris import UriError, resolve
from bot.review.checks._common import at, token_fix
from bot.review.checks._example_facets import event_facets, event_url_findings
from bot.review.input import ReviewInput

SAMPLES_FOLDER = "samples"  # bot.review.regression.events reads the same folder
EVENT_SUFFIXES = (".json", ".jsonl", ".ndjson")
MAX_SAMPLE_BYTES = 10 * 1024 * 1024

RULES = {
    "samples/undeclared-facet": "Every facet key of a sample event in an entry's `samples/` folder "
    "is a key of a facet that the entry's `registry.json` declares (`produced_facets` or "
    "`consumed_facets`), or of a core facet. The finding sits on the key and says which file to "
    "declare, or which declared key was meant.",
    "samples/schema-url": "Each openlineage.io facet `_schemaURL` of a sample event names a facet "
    "file, a version and a `$defs` entry of the registry that exist (as `examples/schema-url` "
    "does for core's events).",
    "samples/unreadable": "A sample event file is UTF-8 JSON (one event, an array of events, or "
    "JSON lines).",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    registry = review.head_registry
    for entry in review.reviewed_entries():
        folder = f"{entry.folder}/{SAMPLES_FOLDER}"
        paths = [p for p in review.head.files(folder) if p.endswith(EVENT_SUFFIXES)]
        if not paths:
            continue
        keys = _declared_keys(registry, entry)
        for path in paths:
            for doc in _documents(review.head, path, entry):
                if isinstance(doc, Finding):
                    yield doc
                    continue
                for finding in _facet_keys(doc, entry, keys, registry):
                    yield _placed(finding, doc)
                for finding in event_url_findings(
                    doc,
                    registry.schema_by_filename,
                    review.head_schemas,
                    entry.name,
                ):
                    yield _placed(replace(finding, rule="samples/schema-url"), doc)


def _placed(finding: Finding, doc: JsonDoc) -> Finding:
    """A finding on an event of an array of events, pointed at in the whole file and matched at the
    event's identity (``_Element.key``), which an event inserted before it does not move."""
    if not isinstance(doc, _Element):
        return finding
    inner = finding.anchor if finding.anchor is not None else finding.pointer
    return replace(finding, pointer=doc.prefix + finding.pointer, anchor=doc.key + inner)


def _documents(snapshot: Snapshot, path: str, entry: Entry) -> Iterator[JsonDoc | Finding]:
    """The events of one sample file, each a document that locates its nodes on the file's own
    lines."""
    size = snapshot.size(path) or 0
    data = snapshot.read(path) if size <= MAX_SAMPLE_BYTES else None
    if data is None:
        yield Finding(
            rule="samples/unreadable",
            severity=Severity.ERROR,
            path=path,
            entry=entry.name,
            message=f"sample file is {size:,} bytes, over the {MAX_SAMPLE_BYTES:,}-byte limit",
            hint="Keep sample events small: a few events that show each declared facet.",
        )
        return
    docs: list[JsonDoc] = []
    try:
        if path.endswith(".json"):
            docs.append(JsonDoc.parse(data, path))
    except JsonProblem as exc:
        if not _json_lines_text(data):
            yield _unreadable(path, entry, exc)
            return
    # JSON lines (a .json file may hold them too): one document per line, on its own line
    if not docs:
        for number, line in enumerate(data.split(b"\n")):
            if line.strip():
                try:
                    docs.append(JsonDoc.parse(b"\n" * number + line, path))
                except JsonProblem as exc:
                    yield _unreadable(path, entry, exc)
    for doc in docs:
        if isinstance(doc.value, list):
            for i, value in enumerate(doc.value):
                named = event_identity(value)
                key = f"/{i}" if named is None else "/" + anchors.token(named)
                yield _Element(path=doc.path, text=doc.text, value=value, prefix=f"/{i}", key=key)
        else:
            yield doc


def _json_lines_text(data: bytes) -> bool:
    lines = [x for x in data.split(b"\n") if x.strip()]
    return len(lines) > 1 and all(x.lstrip().startswith(b"{") for x in lines)


def _unreadable(path: str, entry: Entry, exc: JsonProblem) -> Finding:
    return Finding(
        rule="samples/unreadable",
        severity=Severity.ERROR,
        path=path,
        line=exc.line,
        column=exc.column,
        entry=entry.name,
        message=exc.message,
        hint="A sample file holds one event, an array of events, or one event per line.",
    )


@dataclass
class _Element(JsonDoc):
    """One event of an array of events: located within the whole file (its pointers gain
    ``prefix``)."""

    prefix: str = ""
    key: str = ""  # where its findings are matched: ``prefix``, or the event's identity

    def locate(self, pointer: str) -> tuple[int, int]:
        return super().locate(self.prefix + pointer)

    def locate_key(self, pointer: str) -> tuple[int, int]:
        return super().locate_key(self.prefix + pointer)


def event_identity(event: Any) -> str | None:
    """What names a sample event among the others of its file: its type, run id and the job or
    dataset it is about (None when it has none of them)."""
    if not isinstance(event, dict):
        return None
    named = {k: event[k] for k in ("eventType",) if isinstance(event.get(k), str)}
    for holder, keys in (
        ("run", ("runId",)),
        ("job", ("namespace", "name")),
        ("dataset", ("namespace", "name")),
    ):
        part = event.get(holder)
        if isinstance(part, dict):
            named.update({f"{holder}.{k}": part[k] for k in keys if isinstance(part.get(k), str)})
    return anchors.bounded(named) if named else None


def renamed_in_samples(entry: Entry, key: str, new: str, description: str) -> list[Fix | None]:
    """The edits renaming facet ``key`` to ``new`` in every sample event of ``entry`` (``None``
    where a key is not written on a line of its own); the facet key fix renames a new facet's key
    there too."""
    snapshot = entry.registry.snapshot
    edits: list[Fix | None] = []
    for path in snapshot.files(f"{entry.folder}/{SAMPLES_FOLDER}"):
        if not path.endswith(EVENT_SUFFIXES):
            continue
        for doc in _documents(snapshot, path, entry):
            if isinstance(doc, JsonDoc):
                edits += [
                    token_fix(doc, pointer, new, description, key=True)
                    for pointer, found, _ in event_facets(doc.value)
                    if found == key
                ]
    return edits


def _declared_keys(registry: Registry, entry: Entry) -> dict[str, str]:
    """Facet key -> the facet file defining it, for every facet the entry declares and every core
    facet."""
    keys: dict[str, str] = {}
    core = registry.entries.get(CORE)
    for schema in core.schemas if core is not None else ():
        for facet in schema.facets:
            keys.setdefault(facet.key, schema.filename)
    doc = registry.registry_doc(entry)
    for declared in declared_facets(doc):
        try:
            schema = resolve(declared.uri, registry)
        except UriError:
            continue  # uris/unresolved reports it
        for facet in schema.facets:
            keys.setdefault(facet.key, schema.filename)
    return keys


def _facet_keys(
    doc: JsonDoc, entry: Entry, keys: dict[str, str], registry: Registry
) -> Iterator[Finding]:
    for pointer, key, _ in event_facets(doc.value):
        if key in keys:
            continue
        defining = sorted(
            (s for s in registry.schemas() if any(f.key == key for f in s.facets)),
            key=lambda s: s.path,
        )
        if defining:
            schema = defining[0]
            owner = schema.entry.name.replace("/", ":")
            hint = (
                f'Declare it: add "ol:{owner}:{schema.filename}" to produced_facets in '
                f"{entry.registry_json} (or emit the key {entry.name} declares)."
            )
            why = f"which {schema.path} defines, but {entry.registry_json} does not declare"
        else:
            close = difflib.get_close_matches(key, list(keys), n=1, cutoff=0.6)
            folded = [k for k in keys if k.casefold() == key.casefold()]
            meant = next(iter(folded or close), None)
            hint = (
                f"Correct the key to {meant!r} ({keys[meant]})."
                if meant is not None
                else f"Declare the facet in {entry.registry_json} (with its schema under "
                f"{entry.facets_dir}/), "
                "or correct the key."
            )
            why = f"which no facet that {entry.registry_json} declares defines, nor any core facet"
        yield at(
            "samples/undeclared-facet",
            Severity.ERROR,
            doc,
            pointer,
            f"sample event of {entry.name} carries facet key {key!r}, {why}",
            hint=hint,
            entry=entry.name,
            key=True,
        )
