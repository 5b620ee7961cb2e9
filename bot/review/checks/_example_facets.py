"""What an example says about its facets beyond validating: the ``_schemaURL`` each facet claims,
and fields the schema does not declare (an open schema validates them silently).

Helpers of the examples check (``bot/review/checks/examples.py``); pure functions of one side's
registry.
"""

from __future__ import annotations

import difflib
import weakref
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from bot.core.findings import Finding, Severity
from bot.core.jsondoc import JsonDoc, escape_pointer_token, resolve_pointer
from bot.model.mirror import facet_versions
from bot.model.registry import FACET_ID, FacetSchema, fold_name
from bot.model.schemas import PUBLISHED, SchemaStore
from bot.review.checks._common import at, token_fix

# A facet's own fields that come from the OpenLineage base facets, declared by every facet.
BASE_FIELDS = frozenset({"_producer", "_schemaURL", "_deleted"})
MAX_WALK = 20_000  # nodes of one example walked for undeclared fields


def parse_version(text: str) -> tuple[int, int, int]:
    """``M-R-A`` as a tuple."""
    m, r, a = text.split("-")
    return int(m), int(r), int(a)


def fmt_version(version: tuple[int, int, int] | None) -> str:
    """A version as ``M-R-A`` (``?`` when unknown)."""
    return "-".join(map(str, version)) if version else "?"


_MIRRORED: weakref.WeakKeyDictionary[SchemaStore, dict[str, list[str]]] = (
    weakref.WeakKeyDictionary()
)


def mirrored(store: SchemaStore) -> dict[str, list[str]]:
    """File name -> the version folders of the mirror holding it (``bot.model.mirror``, the index
    ``publish`` serves), listed once per side of a review."""
    index = _MIRRORED.get(store)
    if index is None:
        index = {
            file: list(versions)
            for file, versions in facet_versions(store.snapshot, store.config.paths).items()
        }
        _MIRRORED[store] = index
    return index


class Versions:
    """The versions of one facet file that exist: its own and the published ones, each read when
    asked for."""

    def __init__(self, store: SchemaStore, schema: FacetSchema) -> None:
        self.store, self.filename = store, schema.filename
        self.folders = {parse_version(v): v for v in mirrored(store).get(schema.filename, ())}
        self.current, self.value = schema.version, schema.value

    def known(self) -> list[tuple[int, int, int]]:
        return sorted({*self.folders, *([self.current] if self.current else [])})

    def get(self, version: tuple[int, int, int]) -> Any:
        if version == self.current:
            return self.value
        folder = self.folders.get(version)
        stored = (
            self.store.published(f"{PUBLISHED}facets/{folder}/{self.filename}") if folder else None
        )
        return stored.schema if stored is not None else None


def published_versions(store: SchemaStore, filename: str) -> dict[tuple[int, int, int], Any]:
    """Every version of ``filename`` in the published mirror, with its schema."""
    out: dict[tuple[int, int, int], Any] = {}
    for version in mirrored(store).get(filename, ()):
        stored = store.published(f"{PUBLISHED}facets/{version}/{filename}")
        if stored is not None:
            out[parse_version(version)] = stored.schema
    return out


def schema_url_findings(
    doc: JsonDoc, schema: FacetSchema, store: SchemaStore, written: bool | None
) -> Iterator[Finding]:
    """Each facet's ``_schemaURL`` names this schema file, an existing version of it and an existing
    ``$defs`` entry that is the facet under its key.

    ``written`` says whether the change adds or edits the example (``None`` for a whole-tree
    review): a URL naming an older, existing version is an error in content the change writes, a
    warning with ``--all``, and not reported on examples the change leaves alone. It is judged
    against the base like any finding, so it blocks only when the change made it stale: it bumped
    the schema, wrote the URL, or made the example use fields the named version lacks (they are part
    of the finding's subject).
    """
    value = doc.value
    if not isinstance(value, dict) or schema.version is None or schema.schema_id is None:
        return
    versions = Versions(store, schema)
    for key, facet in value.items():
        names = [f.name for f in schema.facets if f.key == key]
        if not names or not isinstance(facet, dict) or not isinstance(facet.get("_schemaURL"), str):
            continue
        pointer = f"/{escape_pointer_token(key)}/_schemaURL"
        url: str = facet["_schemaURL"]
        problem, stale = _url_problem(url, schema, names, versions, store.has_mirror)
        if problem is None:
            continue
        fragment = f"#/$defs/{names[0]}" if "#" in url or len(names) > 1 else ""
        expected = f"{schema.schema_id}{fragment}"
        fix = (
            token_fix(doc, pointer, expected, f"set the _schemaURL of {key} to {expected}")
            if len(names) == 1
            else None
        )
        should = (
            expected
            if len(names) == 1
            else " or ".join(f"{schema.schema_id}#/$defs/{n}" for n in names)
        )
        # what identifies the problem across versions (the message names the right URL)
        subject = f"{key} {url}"
        if stale:
            if written is False:
                continue
            lacks = _lacking(value, key, url, schema, store) if written else []
            if lacks:
                problem += f", which lacks {', '.join(lacks)} that this example uses"
                subject += " lacks " + " ".join(lacks)
            yield replace(
                at(
                    "examples/stale-schema-url",
                    Severity.ERROR if written else Severity.WARNING,
                    doc,
                    pointer,
                    f"{problem}; this example is checked against {fmt_version(schema.version)}: "
                    f"it should be {should}",
                    entry=schema.entry.name,
                    fix=fix,
                    hint="An example shows the current version of its facet: name that version.",
                ),
                subject=subject,
            )
            continue
        yield replace(
            at(
                "examples/schema-url",
                Severity.ERROR,
                doc,
                pointer,
                f"{problem}: it should be {should}",
                entry=schema.entry.name,
                fix=fix,
                hint="A facet's _schemaURL is the $id of its schema, with #/$defs/<facet> where "
                "the file defines it there; consumers resolve it to validate the facet.",
            ),
            subject=subject,
        )


def _lacking(
    value: dict[str, Any], key: str, url: str, schema: FacetSchema, store: SchemaStore
) -> list[str]:
    """Fields of the facet under ``key`` that the version ``url`` names leaves undeclared and the
    current version declares: what the example uses that the named version lacks."""
    address = url.partition("#")[0]
    named = store.published(address)
    if named is None or schema.schema_id is None:
        return []
    instance = {key: value[key]}
    old = _undeclared(instance, named.schema, address, store)
    current = _undeclared(instance, schema.value, schema.schema_id, store)
    return sorted(pointer for pointer in old if pointer not in current)


def _url_problem(
    url: str, schema: FacetSchema, names: list[str], versions: Versions, has_mirror: bool
) -> tuple[str | None, bool]:
    """Why ``url`` is not a right ``_schemaURL`` for the facet (``None`` when it is), and whether
    the only problem is that it names an older version."""
    address, _, fragment = url.partition("#")
    match = FACET_ID.match(address)
    if match is None or match[4] != schema.filename:
        named = match[4] if match else "no facet schema of openlineage.io"
        return f"_schemaURL {url!r} names {named}, not {schema.filename}", False
    version = (int(match[1]), int(match[2]), int(match[3]))
    known = versions.known()
    target = versions.get(version)
    if target is None and (has_mirror or not known or version > max(known)):
        # the $defs too, when no version of the file defines it: both are wrong, say both at once
        also = ""
        if fragment and not any(
            resolve_pointer(versions.get(v), fragment, None) is not None for v in known
        ):
            also = f", and #{fragment}, which no version of it defines"
        return (
            f"_schemaURL {url!r} names version {fmt_version(version)} of {schema.filename}, which "
            f"does not exist (versions: {', '.join(map(fmt_version, known))}){also}"
        ), False
    if fragment:
        defs = target.get("$defs") if isinstance(target, dict) else None
        name = fragment[len("/$defs/") :] if fragment.startswith("/$defs/") else None
        if target is not None and (
            name is None
            or resolve_pointer(target, fragment, None) is None
            or not isinstance(defs, dict)
        ):
            return (
                f"_schemaURL {url!r} names #{fragment}, which {schema.filename} "
                f"{fmt_version(version)} does not "
                "define"
            ), False
        if name not in names:
            return (
                f"_schemaURL {url!r} names #{fragment}, which is not the facet under this key",
                False,
            )
    if version != schema.version:
        return f"_schemaURL {url!r} names version {fmt_version(version)} of {schema.filename}", True
    return None, False


# --- fields the schema does not declare ---------------------------------------------------------


def undeclared_field_findings(
    doc: JsonDoc, schema: FacetSchema, store: SchemaStore, before: Any = None
) -> Iterator[Finding]:
    """Fields of the example's facets that no version of the schema declares where they stand.

    An open schema (no ``additionalProperties: false``) accepts any extra field, so a field renamed
    in the schema but not in its example still validates. A field whose spelling folds to a field
    the schema declares there (``ordinal_position`` / ``ordinalPosition``) is an error: the two have
    drifted apart. So is a field that ``before`` (the schema before the change) declared: the change
    renamed or removed it and left the example behind. Any other undeclared field is a warning
    naming the closest declared one.
    """
    value = doc.value
    if not isinstance(value, dict) or schema.schema_id is None:
        return
    head = _undeclared(value, schema.value, schema.schema_id, store)
    if not head:
        return
    others = [
        _undeclared(value, old, f"{PUBLISHED}facets/{fmt_version(v)}/{schema.filename}", store)
        for v, old in published_versions(store, schema.filename).items()
        if v != schema.version
    ]
    old = _undeclared(value, before, schema.schema_id, store) if isinstance(before, dict) else None
    for pointer, (key, declared) in sorted(head.items()):
        folded = [d for d in declared if fold_name(d) == fold_name(key)]
        if old is not None and pointer not in old:
            closest = folded or difflib.get_close_matches(key, sorted(declared), n=1, cutoff=0.3)
            near = f"; the schema now declares {closest[0]!r}" if closest else ""
            yield replace(
                at(
                    "examples/undeclared-field",
                    Severity.ERROR,
                    doc,
                    pointer,
                    f"field {key!r} is no longer declared by {schema.filename} "
                    f"{fmt_version(schema.version)}: this change removed or renamed it in the "
                    f"schema but not in this example{near}",
                    entry=schema.entry.name,
                    key=True,
                    hint="Update the example with the schema: it validates only because the schema "
                    "allows extra fields.",
                ),
                subject=key,
            )
            continue
        if not folded and any(pointer not in other for other in others):
            continue  # declared by another version: written for it
        closest = folded or difflib.get_close_matches(key, sorted(declared), n=1, cutoff=0.6)
        near = f"; the schema declares {closest[0]!r}" if closest else ""
        if folded:
            yield replace(
                at(
                    "examples/undeclared-field",
                    Severity.ERROR,
                    doc,
                    pointer,
                    f"field {key!r} is not declared by {schema.filename} "
                    f"{fmt_version(schema.version)}{near}: the "
                    "example and the schema spell the field differently",
                    entry=schema.entry.name,
                    key=True,
                    fix=token_fix(
                        doc, pointer, folded[0], f"rename {key!r} to {folded[0]!r}", key=True
                    ),
                    hint="The schema allows extra fields, so the old name validates but means "
                    "nothing: use the schema's name.",
                ),
                subject=key,
            )
        else:
            yield replace(
                at(
                    "examples/undeclared-field",
                    Severity.WARNING,
                    doc,
                    pointer,
                    f"field {key!r} is declared by no version of {schema.filename}{near}",
                    entry=schema.entry.name,
                    key=True,
                    hint="Declare the field in the schema, or fix its name in the example.",
                ),
                subject=key,
            )


def _undeclared(
    instance: Any, schema: Any, url: str, store: SchemaStore
) -> dict[str, tuple[str, frozenset[str]]]:
    """``pointer -> (field, fields declared there)`` for every field of ``instance`` that sits in an
    object whose schema lists its ``properties`` and leaves other fields open (no schema for
    them)."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    stack: list[tuple[Any, list[tuple[Any, str]], str]] = [(instance, [(schema, url)], "")]
    walked = 0
    while stack and walked < MAX_WALK:
        node, schemas, pointer = stack.pop()
        walked += 1
        parts = _flatten(schemas, store, {url: schema})
        if isinstance(node, list):
            items = [(p["items"], u) for p, u in parts if isinstance(p.get("items"), dict)]
            if items:
                stack.extend((v, items, f"{pointer}/{i}") for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        properties: dict[str, list[tuple[Any, str]]] = {}
        open_object = bool(parts)
        for part, part_url in parts:
            props = part.get("properties")
            if isinstance(props, dict):
                for name, sub in props.items():
                    properties.setdefault(name, []).append((sub, part_url))
            extra = part.get("additionalProperties")
            if (
                isinstance(extra, dict)
                or extra is False
                or "patternProperties" in part
                or "unevaluatedProperties" in part
            ):
                open_object = False  # other fields have a schema of their own (or are refused)
        for key, child in node.items():
            here = f"{pointer}/{escape_pointer_token(key)}"
            if key in properties:
                stack.append((child, properties[key], here))
            # facet keys: unknown-key
            elif open_object and properties and pointer and key not in BASE_FIELDS:
                out[here] = (key, frozenset(properties) - BASE_FIELDS)
    return out


def _flatten(
    schemas: list[tuple[Any, str]], store: SchemaStore, roots: dict[str, Any]
) -> list[tuple[dict[str, Any], str]]:
    """The object schemas that apply together: ``$ref``s followed, ``allOf``/``anyOf``/``oneOf``
    expanded."""
    out: list[tuple[dict[str, Any], str]] = []
    pending = list(schemas)
    seen: set[int] = set()
    while pending and len(seen) < 200:
        node, url = pending.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        out.append((node, url))
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _resolve(ref, url, store, roots)
            if target is not None:
                pending.append(target)
        for combinator in ("allOf", "anyOf", "oneOf"):
            branches = node.get(combinator)
            if isinstance(branches, list):
                pending.extend((b, url) for b in branches)
    return out


def _resolve(
    ref: str, url: str, store: SchemaStore, roots: dict[str, Any]
) -> tuple[Any, str] | None:
    """The node ``ref`` names from a schema at ``url``: in ``roots`` (the schema walked, which may
    be an older version than the store's) first, then in the store."""
    from urllib.parse import urljoin

    target = urljoin(url, ref)
    address, _, fragment = target.partition("#")
    if address in roots:
        root = roots[address]
    else:
        stored = store.lookup(address)
        if stored is None:
            return None
        root = stored.schema
    node = resolve_pointer(root, fragment, None)
    return (node, address) if node is not None else None


# --- sample events --------------------------------------------------------------------------------

EVENT_FACETS = (("run", "facets"), ("job", "facets"), ("dataset", "facets"))
DATASET_LISTS = (("inputs", ("facets", "inputFacets")), ("outputs", ("facets", "outputFacets")))


def event_facets(value: Any) -> Iterator[tuple[str, str, Any]]:
    """``(pointer, key, facet)`` of every facet of a RunEvent, JobEvent or DatasetEvent."""
    if not isinstance(value, dict):
        return
    places: list[tuple[str, Any]] = [
        (f"/{a}/{b}", (value.get(a) or {}).get(b) if isinstance(value.get(a), dict) else None)
        for a, b in EVENT_FACETS
    ]
    for name, containers in DATASET_LISTS:
        datasets = value.get(name)
        for i, dataset in enumerate(datasets if isinstance(datasets, list) else []):
            for container in containers:
                places.append(
                    (
                        f"/{name}/{i}/{container}",
                        dataset.get(container) if isinstance(dataset, dict) else None,
                    )
                )
    for pointer, facets in places:
        if isinstance(facets, dict):
            for key, facet in facets.items():
                yield f"{pointer}/{escape_pointer_token(key)}", key, facet


def event_url_findings(
    doc: JsonDoc, schemas: dict[str, list[FacetSchema]], store: SchemaStore, entry: str
) -> Iterator[Finding]:
    """Each openlineage.io facet ``_schemaURL`` of a sample event names an existing facet file,
    version and ``$defs`` entry (an event may carry an older version: a producer emits what it was
    built with)."""
    for pointer, key, facet in event_facets(doc.value):
        url = facet.get("_schemaURL") if isinstance(facet, dict) else None
        if not isinstance(url, str) or not url.startswith(f"{PUBLISHED}facets/"):
            continue  # a custom facet's schema lives where its producer keeps it
        address = url.partition("#")[0]
        match = FACET_ID.match(address)
        candidates = schemas.get(match[4], []) if match else []
        here = f"{pointer}/_schemaURL"
        if not candidates:
            yield replace(
                at(
                    "examples/schema-url",
                    Severity.ERROR,
                    doc,
                    here,
                    f"_schemaURL {url!r} names {match[4] if match else address}, which is no facet "
                    f"file "
                    "of the registry",
                    entry=entry,
                    hint="Name the $id of the facet's schema file.",
                ),
                subject=f"{key} {url}",
            )
            continue
        schema = candidates[0]
        names = [f.name for f in schema.facets if f.key == key] or [f.name for f in schema.facets]
        problem, stale = _url_problem(url, schema, names, Versions(store, schema), store.has_mirror)
        if problem is not None and not stale:
            yield replace(
                at(
                    "examples/schema-url",
                    Severity.ERROR,
                    doc,
                    here,
                    problem,
                    entry=entry,
                    hint="Name the $id of the facet's schema at a version that exists.",
                ),
                subject=f"{key} {url}",
            )
