"""Facet rules: each facet schema is a valid, well-named, correctly based, offline-resolvable
schema."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from urllib.parse import urljoin

from bot.core.changes import Status
from bot.core.findings import Finding, Fix, Severity
from bot.core.jsondoc import pointer_exists, pointer_from
from bot.model.error_subject import about
from bot.model.explanations import from_python
from bot.model.registry import (
    BASE_FACETS,
    FACET_ID,
    Entry,
    FacetSchema,
    camel,
    carried_prefix,
    carries_name_prefix,
    carries_prefix,
    key_prefixes,
    pascal,
    prefix_holder,
)
from bot.model.schemas import SchemaStore, iter_refs, meta_is_valid
from bot.review.checks._common import at, json_pointer, token_fix, unreadable
from bot.review.checks.samples import renamed_in_samples
from bot.review.input import ReviewInput

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MAX_META_ERRORS = 20
MAX_LISTED = 5  # other files a uniqueness finding names

RULES = {
    "facets/unreadable": "A facet schema is valid UTF-8 JSON within the size and depth limits.",
    "facets/meta-schema": "A facet schema declares `$schema` draft 2020-12 and is valid against "
    "that meta-schema.",
    "facets/id": "`$id` is "
    "`https://openlineage.io/spec/facets/<MODEL>-<REVISION>-<ADDITION>/<File>.json`, with the "
    "file's own name.",
    "facets/no-facet": "A facet schema defines at least one facet: a top-level `properties` member "
    "(the facet key) whose value refers to a `$defs` facet definition.",
    "facets/name-mismatch": "The file name, the `$defs` facet name and the `$id` basename agree "
    "(`FooRunFacet.json` defines `$defs/FooRunFacet`). A file holding a union of facets under one "
    "key, like core's `LineageFacet.json`, names each member `<Stem><Entity>Facet`.",
    "facets/base": "Each facet extends exactly one OpenLineage base facet "
    "(`OpenLineage.json#/$defs/{Run,Job,Dataset,InputDataset,OutputDataset}Facet`).",
    "facets/suffix": "A facet's name ends with the suffix of the base it extends "
    "(`...InputDatasetFacet` for an InputDatasetFacet).",
    "facets/prefix-name": "A custom facet's name starts with the PascalCase of the registered name "
    "(`gcp/composer` -> `GcpComposer...`), ending a word (an upper-case letter follows: "
    "`AirflowDagRunFacet` does not start with `air`'s `Air`).",
    "facets/prefix-key": "A custom facet's key starts with the registered prefix "
    "(`gcp_composer...` or `gcpComposer...`), ending a word (the key ends there or goes on with "
    "`_` or an upper-case letter: `icebergCommitReport`, not `airflow_secrets` for `air`).",
    "facets/prefix-taken": "A custom facet's key and name carry no other registered name's "
    "prefix: the longest registered prefix they start with, ending a word, is their own entry's "
    "(`air` may not define `airflow_secrets` or `AirflowSecretsRunFacet` while `airflow` is "
    "registered; `gcp` may not define `gcp_composer_x` while `gcp:composer` is). A name registered "
    "while another entry's facet already carries its prefix (`iceberg-commit` beside iceberg's "
    "`icebergCommitReport`) is reported on the new name's registry.json: registering it makes the "
    "clash.",
    "facets/key-form": "Warning: `spec/OpenLineage.md` recommends facet keys of the form "
    "`{prefix}_{name}` in camelCase (`bigQuery_statistics`).",
    "facets/duplicate-key": "A facet key is defined once per place in an event (run, job, dataset, "
    "input or output facets) across the registry and core facets.",
    "facets/duplicate-file": "A facet file name is unique across the registry and core facets.",
    "facets/remote-ref": "A `$ref` may point only inside the repository or its published mirror; "
    "any other location is an error and is never fetched.",
    "facets/unverified-ref": "Warning: an openlineage.io `$ref` that is not in the repository "
    "cannot be checked offline when the repository keeps no published mirror (`paths.mirror`); it "
    "is never fetched.",
    "facets/unresolved-ref": "Every `$ref` resolves offline: local `#/$defs/...` pointers exist, "
    "and openlineage.io URLs are present in the repository or its published mirror.",
    "facets/nested-id": "`$id` only at the schema's root: an embedded resource (an `$id` below "
    "the root) can stand in for a document the repository or its mirror holds (naming "
    "`OpenLineage.json`, its base facets become whatever the file says), so that examples "
    "validate against it instead of the real one.",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    store = review.head_schemas
    files = review.head_registry.files
    for entry in review.reviewed_entries():
        for path in entry.facet_paths():
            loaded = files.json(path)
            severity = Severity.ERROR
            if loaded.doc is None:
                yield unreadable("facets/unreadable", severity, loaded, "facet schema", entry.name)
                continue
            schema = next(s for s in entry.schemas if s.path == path)
            for finding in _schema_findings(schema, store, severity):
                if finding.rule == "facets/prefix-key" and _unpublished(review, schema):
                    finding = dataclasses.replace(
                        finding, fix=_prefix_key_fix(schema, finding.pointer or "")
                    )
                yield finding
    yield from _taken_by_reviewed(review)
    yield from _uniqueness(review)


def _taken_by_reviewed(review: ReviewInput) -> Iterator[Finding]:
    """``facets/prefix-taken`` on a reviewed entry whose registered name is the longest prefix of
    another, unreviewed entry's facet key or name: the clash is the reviewed entry's (registering
    ``iceberg-commit`` takes iceberg's ``icebergCommitReport``), which that other entry's own review
    would report only once it is touched. Each key and name once (a union repeats its key)."""
    registry = review.head_registry
    names = registry.entries
    reviewed = {e.name for e in review.reviewed_entries() if not e.is_core}
    if not reviewed:
        return
    seen: set[tuple[str, str, bool]] = set()
    for entry in names.values():
        if entry.name in reviewed or entry.is_core:
            continue
        for schema in entry.schemas:
            for facet in schema.facets:
                for text, is_name in ((facet.name, True), (facet.key, False)):
                    carries = carries_name_prefix if is_name else carries_prefix
                    # the common case: it carries no reviewed name's prefix
                    if (schema.path, text, is_name) in seen or not any(
                        carries(text, name) for name in reviewed
                    ):
                        continue
                    seen.add((schema.path, text, is_name))
                    holder = prefix_holder(text, names, entry.name, facet_name=is_name)
                    if holder in reviewed and holder != entry.name:
                        yield _taken_finding(review, names[holder], schema, text, is_name)


def _taken_finding(
    review: ReviewInput, holder: Entry, schema: FacetSchema, text: str, is_name: bool
) -> Finding:
    what = "facet name" if is_name else "facet key"
    loaded = review.head_registry.files.json(holder.registry_json)
    message = (
        f"the registered name {holder.name!r} is the longest registered prefix of {what} "
        f"{text!r} of {schema.entry.name!r} ({schema.path}): registering it takes that "
        f"{what} from {schema.entry.name!r}"
    )
    hint = (
        f"Pick a name whose prefix no facet of another entry carries, or move {text!r} to "
        f"{holder.name!r} first."
    )
    subject = f"{schema.path} {what} {text}"
    if loaded.doc is None:
        return Finding(
            rule="facets/prefix-taken",
            severity=Severity.ERROR,
            path=holder.registry_json if not loaded.missing else holder.folder,
            message=message,
            hint=hint,
            entry=holder.name,
            subject=subject,
        )
    return at(
        "facets/prefix-taken",
        Severity.ERROR,
        loaded.doc,
        "",
        message,
        hint=hint,
        entry=holder.name,
        subject=subject,
    )


def _unpublished(review: ReviewInput, schema: FacetSchema) -> bool:
    """A facet no event can carry yet, so its key may still change: one the change adds (or,
    reviewing a whole tree, one whose version has no copy in the published mirror)."""
    if review.changes is not None:
        change = review.changes.get(schema.path)
        return change is not None and change.status is Status.ADDED
    match = FACET_ID.match(schema.schema_id or "")
    if match is None or not review.head_schemas.has_mirror:
        return False
    major, revision, addition, name = match.groups()
    copy = review.config.paths.mirrored(f"facets/{major}-{revision}-{addition}/{name}")
    return review.head.size(copy) is None


def _prefix_key_fix(schema: FacetSchema, pointer: str) -> Fix | None:
    """Rename the facet key in the schema, in every example of the facets the file defines and in
    the entry's sample events (which would otherwise carry a key the entry no longer declares)."""
    key = pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    entry = schema.entry
    new = f"{entry.prefix}_{camel(key)}"
    description = (
        f"rename the facet key {key!r} to {new!r} in the schema, its examples and its entry's "
        f"samples"
    )
    edits = [token_fix(schema.doc, pointer, new, description, key=True)]
    member = "/" + key.replace("~", "~0").replace("/", "~1")
    files = entry.registry.files
    for facet in {f.name for f in schema.facets} | {
        schema.path.rsplit("/", 1)[-1].removesuffix(".json")
    }:
        for path in entry.example_paths(facet):
            doc = files.json(path).doc
            if doc is not None and isinstance(doc.value, dict) and key in doc.value:
                edits.append(token_fix(doc, member, new, description, key=True))
    edits += renamed_in_samples(entry, key, new, description)
    if any(e is None for e in edits):
        return None  # a key not written on a line of its own: no safe edit
    return Fix(description, tuple(edit for fix in edits if fix is not None for edit in fix.edits))


def _schema_findings(schema: FacetSchema, store: SchemaStore, sev: Severity) -> Iterator[Finding]:
    doc, name = schema.doc, schema.entry.name
    value = schema.value
    if not isinstance(value, dict):
        yield at(
            "facets/meta-schema", sev, doc, "", "a facet schema must be a JSON object", entry=name
        )
        return
    yield from _meta(schema, sev)
    yield from _schema_id(schema, sev)
    yield from _nested_ids(schema, sev)
    yield from _names(schema, sev)
    for facet in schema.facets:
        if facet.base not in BASE_FACETS:
            yield at(
                "facets/base",
                sev,
                doc,
                facet.pointer,
                f"{facet.name} does not extend an OpenLineage base facet"
                + (f" ({facet.base} is not one)" if facet.base else ""),
                entry=name,
                hint='Start its allOf with {"$ref": '
                '"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"} (or '
                "JobFacet, DatasetFacet, InputDatasetFacet, OutputDatasetFacet).",
                key=True,
            )
        else:
            suffix = _suffix(facet.name)
            if suffix != facet.base:
                yield at(
                    "facets/suffix",
                    sev,
                    doc,
                    facet.pointer,
                    f"{facet.name} extends {facet.base} but its name ends with "
                    f"{suffix or 'no facet suffix'}",
                    entry=name,
                    hint=f"Name it ...{facet.base}.",
                    key=True,
                )
        if not schema.entry.is_core:
            yield from _prefixes(schema, facet.key, facet.name, facet.pointer, sev)
    yield from _refs(schema, store, sev)


def _meta(schema: FacetSchema, sev: Severity) -> Iterator[Finding]:
    doc, value = schema.doc, schema.value
    if value.get("$schema") != DRAFT_2020_12:
        yield at(
            "facets/meta-schema",
            sev,
            doc,
            "/$schema" if "$schema" in value else "",
            f"$schema must be {DRAFT_2020_12!r}",
            entry=schema.entry.name,
        )
    if meta_is_valid(value):  # never resolves a remote $schema
        return
    # explaining a failure: the pure-Python stack
    from bot.model.schemas_python import check_schema_errors

    for error in check_schema_errors(value)[:MAX_META_ERRORS]:
        yield at(
            "facets/meta-schema",
            sev,
            doc,
            json_pointer(error.absolute_path),
            f"not a valid draft 2020-12 schema: {error.message}",
            entry=schema.entry.name,
            subject=about(from_python(error), value),
        )


def _schema_id(schema: FacetSchema, sev: Severity) -> Iterator[Finding]:
    sid = schema.schema_id
    match = FACET_ID.match(sid or "")
    expected = f"https://openlineage.io/spec/facets/1-0-0/{schema.filename}"
    if match is None:
        yield at(
            "facets/id",
            sev,
            schema.doc,
            "/$id" if sid else "",
            f"$id {sid!r} is not https://openlineage.io/spec/facets/<M-R-A>/<File>.json",
            entry=schema.entry.name,
            hint=f'For a new facet: "$id": "{expected}".',
        )
    elif match[4] != schema.filename:
        yield at(
            "facets/name-mismatch",
            sev,
            schema.doc,
            "/$id",
            f"$id names {match[4]} but the file is {schema.filename}",
            entry=schema.entry.name,
            hint="Rename the file or fix the $id so they agree.",
        )


def _names(schema: FacetSchema, sev: Severity) -> Iterator[Finding]:
    doc, entry = schema.doc, schema.entry.name
    facets = schema.facets
    if not facets:
        yield at(
            "facets/no-facet",
            sev,
            doc,
            "/properties" if "properties" in schema.value else "",
            "the schema defines no facet: no top-level property refers to a $defs facet definition",
            entry=entry,
            hint=f'Add "properties": {{"<key>": {{"$ref": "#/$defs/{schema.stem}"}}}}.',
        )
        return
    names = {f.name for f in facets} | {f.via for f in facets if f.via}
    if schema.stem in names:
        return
    root = schema.stem[: -len("Facet")] if schema.stem.endswith("Facet") else None
    if root and all(f.name.startswith(root) and f.via is None for f in facets) and len(facets) > 1:
        # a union of facets under one key: LineageFacet.json -> LineageDatasetFacet, LineageJobFacet
        return
    listed = ", ".join(sorted(names))
    yield at(
        "facets/name-mismatch",
        sev,
        doc,
        facets[0].pointer,
        f"the file is {schema.filename} but it defines {listed}",
        entry=entry,
        hint=f"Name the file after its facet ({sorted(names)[0]}.json) or the facet after the "
        f"file.",
        key=True,
    )


def _suffix(name: str) -> str | None:
    for base in sorted(BASE_FACETS, key=len, reverse=True):
        if name.endswith(base):
            return base
    return None


def _prefixes(
    schema: FacetSchema, key: str, facet_name: str, pointer: str, sev: Severity
) -> Iterator[Finding]:
    entry = schema.entry
    names = entry.registry.entries
    holder = prefix_holder(facet_name, names, entry.name, facet_name=True)
    if holder is not None and holder != entry.name:
        other = pascal(holder)
        yield at(
            "facets/prefix-taken",
            sev,
            schema.doc,
            pointer,
            f"{facet_name} starts with {other}, the PascalCase of the registered name "
            f"{holder!r}; a facet of {entry.name!r} starts with {entry.pascal}",
            entry=entry.name,
            hint=f"A facet is named after its own entry: rename it "
            f"{entry.pascal}{facet_name[len(other) :]}.",
            key=True,
        )
    elif not carries_name_prefix(facet_name, entry.name):
        yield at(
            "facets/prefix-name",
            sev,
            schema.doc,
            pointer,
            f"{facet_name} does not start with {entry.pascal}, the PascalCase of {entry.name!r}",
            entry=entry.name,
            hint=f"Rename it {entry.pascal}{facet_name}.",
            key=True,
        )
    spellings = key_prefixes(entry.name)
    key_pointer = "/properties/" + key.replace("~", "~0").replace("/", "~1")
    holder = prefix_holder(key, names, entry.name)
    if holder is not None and holder != entry.name:
        taken = carried_prefix(key, holder) or ""
        yield at(
            "facets/prefix-taken",
            sev,
            schema.doc,
            key_pointer,
            f"facet key {key!r} carries {taken!r}, the prefix of the registered name {holder!r}; "
            f"a key of {entry.name!r} carries {entry.prefix!r}",
            entry=entry.name,
            hint=f"A facet key carries its own entry's prefix: use a key such as "
            f"{entry.prefix}_{camel(key[len(taken) :]) or 'name'}.",
            key=True,
        )
    elif not carries_prefix(key, entry.name):
        yield at(
            "facets/prefix-key",
            sev,
            schema.doc,
            key_pointer,
            f"facet key {key!r} does not start with the registered prefix {entry.prefix!r}",
            entry=entry.name,
            hint=f"Use a key such as {entry.prefix}_{camel(key)}.",
            key=True,
        )
    elif not any(re.fullmatch(re.escape(p) + r"_[a-z][A-Za-z0-9]*", key) for p in spellings):
        yield at(
            "facets/key-form",
            Severity.WARNING,
            schema.doc,
            key_pointer,
            f"facet key {key!r} does not follow the recommended {{prefix}}_{{name}} form",
            entry=entry.name,
            hint=f"For example {entry.prefix}_{camel(key[len(entry.prefix) :]) or 'name'}.",
            key=True,
        )


_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})  # values, not schemas


def _nested_ids(schema: FacetSchema, sev: Severity) -> Iterator[Finding]:
    """Every ``$id`` below the root outside the keywords whose values are data (under any other
    key alike, a subschema or not: a validator may take either for an embedded resource)."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [
        (value, (key,))
        for key, value in schema.value.items()
        if isinstance(value, dict | list) and key not in _DATA_KEYWORDS
    ]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$id"), str):
                yield at(
                    "facets/nested-id",
                    sev,
                    schema.doc,
                    pointer_from([*where, "$id"]),
                    f"$id {node['$id'][:200]!r} below the schema's root embeds a resource that "
                    "can stand in for another schema (OpenLineage.json's base facets among them)",
                    entry=schema.entry.name,
                    hint="Remove the nested $id; refer to other schemas with $ref.",
                )
            stack.extend(
                (v, (*where, k))
                for k, v in node.items()
                if isinstance(v, dict | list) and k not in _DATA_KEYWORDS
            )
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(node) if isinstance(v, dict | list))


def _refs(schema: FacetSchema, store: SchemaStore, sev: Severity) -> Iterator[Finding]:
    base = schema.schema_id or "https://openlineage.io/spec/facets/"
    for ref, where in iter_refs(schema.value):
        pointer = pointer_from(where)
        target = urljoin(base, ref) if not ref.startswith("#") else ref
        if ref.startswith("#"):
            if not pointer_exists(schema.value, ref[1:]):
                yield at(
                    "facets/unresolved-ref",
                    sev,
                    schema.doc,
                    pointer,
                    f"$ref {ref!r} points at nothing in this file",
                    entry=schema.entry.name,
                )
            continue
        url, _, fragment = target.partition("#")
        stored = store.lookup(url)
        if stored is None:
            if url.startswith("https://openlineage.io/") and not store.has_mirror:
                yield at(
                    "facets/unverified-ref",
                    Severity.WARNING,
                    schema.doc,
                    pointer,
                    f"$ref {ref!r} cannot be checked offline: the repository has no published "
                    f"mirror ({store.config.paths.mirror}) and no schema with that $id",
                    entry=schema.entry.name,
                    hint="Keep the published schemas in the repository (paths.mirror) so refs can "
                    "be checked.",
                )
            elif url.startswith("https://openlineage.io/"):
                yield at(
                    "facets/unresolved-ref",
                    sev,
                    schema.doc,
                    pointer,
                    f"$ref {ref!r} is neither in the repository nor in the published mirror",
                    entry=schema.entry.name,
                    hint="Refer to a published version of the schema.",
                )
            else:
                yield at(
                    "facets/remote-ref",
                    sev,
                    schema.doc,
                    pointer,
                    f"$ref {ref!r} points outside the repository; the bot never fetches it",
                    entry=schema.entry.name,
                    hint="Copy what you need into $defs, or refer to "
                    "https://openlineage.io/spec/... schemas.",
                )
        elif fragment and not pointer_exists(stored.schema, fragment):
            yield at(
                "facets/unresolved-ref",
                sev,
                schema.doc,
                pointer,
                f"$ref {ref!r}: {stored.path} has nothing at #{fragment}",
                entry=schema.entry.name,
            )


def _listed(paths: list[str]) -> str:
    """The first ``MAX_LISTED`` paths and how many more: each of n files sharing a key names the
    others, so the whole list would make n² text (500 facets of one key, a 5.9 MB dashboard)."""
    more = len(paths) - MAX_LISTED
    return ", ".join(paths[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def _uniqueness(review: ReviewInput) -> Iterator[Finding]:
    registry = review.head_registry
    reviewed = {e.name for e in review.reviewed_entries()}
    by_key: dict[tuple[str | None, str], list[tuple[FacetSchema, str]]] = {}
    for schema in registry.schemas():
        for facet in schema.facets:
            places = by_key.setdefault((facet.container, facet.key), [])
            if not places or places[-1][0].path != schema.path:  # a schema's facets in a row
                places.append((schema, facet.name))
    for (container, key), places in by_key.items():
        if len(places) < 2 or container is None:
            continue
        for schema, _ in places:
            if schema.entry.name not in reviewed:
                continue
            others = _listed([s.path for s, _ in places if s is not schema])
            yield at(
                "facets/duplicate-key",
                Severity.ERROR,
                schema.doc,
                "/properties/" + key.replace("~", "~0").replace("/", "~1"),
                f"facet key {key!r} ({container} facets) is also defined by {others}",
                entry=schema.entry.name,
                hint="Facet keys must be unique: add your prefix.",
                key=True,
            )
    for filename, schemas in registry.schema_by_filename.items():
        if len(schemas) < 2:
            continue
        for schema in schemas:
            if schema.entry.name in reviewed:
                others = _listed([s.path for s in schemas if s is not schema])
                yield at(
                    "facets/duplicate-file",
                    Severity.ERROR,
                    schema.doc,
                    "",
                    f"{filename} also exists at {others}",
                    entry=schema.entry.name,
                    hint="Facet file names are global (they become schema URLs): rename one.",
                )
