"""Version rules: a changed facet schema bumps its ``$id`` by the part the change needs, and published
copies in the mirror are added, never edited. How versions are judged: ``docs/versions.md``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from bot.changes import Status
from bot.checks._common import at, token_fix
from bot.findings import Finding, Severity
from bot.jsondoc import pointer_exists
from bot.registry import FACET_ID, FacetSchema
from bot.review_input import ReviewInput
from bot.schema_diff import Bump, Change, actual_bump, required_bump
from bot.schemas import SchemaStore

RULES = {
    "versions/not-bumped": "A facet schema whose content changes also changes its `$id` version "
    "(`spec/Versioning.md`): the published URL of a version is immutable. A schema made identical to the "
    "published copy of its version needs no bump; a file renamed with a new facet `$id` is a new facet.",
    "versions/insufficient-bump": "The version bump matches the change (SchemaVer MODEL-REVISION-ADDITION): "
    "a new optional field needs at least ADDITION, a tighter constraint REVISION, a removed or newly required "
    "field or a changed type MODEL. `$ref`s are followed: moving a schema into `$defs` is no change, and a "
    "`$ref` moved to another published version counts for what differs between the two referenced definitions.",
    "versions/not-increased": "A changed `$id` version is greater than the base version.",
    "versions/not-published": "Where the repository keeps a published mirror (`website/static/spec`), a copy "
    "of a facet version that is already there is identical to the schema; entries listed in "
    "`versions.require_published_copy` (default: core) also copy each new version in the same change.",
    "versions/published-modified": "A published copy of a version in the mirror (a file under a "
    "`MODEL-REVISION-ADDITION` folder) is never modified or deleted: publish a new version instead.",
    "versions/ref-not-compared": "A notice: a `$ref` changed to or from a schema that is neither in the "
    "repository nor in its published mirror, so the bump the change behind it needs was not checked.",
}

VERSION_FOLDER = re.compile(r"(^|/)\d+-\d+-\d+/")


def _fmt(version: tuple[int, int, int] | None) -> str:
    return "-".join(map(str, version)) if version else "?"


def check(review: ReviewInput) -> Iterator[Finding]:
    yield from _published_modified(review)
    has_mirror = review.head_schemas.has_mirror
    for entry in review.reviewed_entries():
        for schema in entry.schemas:
            if review.changes is not None and review.changes.get(schema.path) is None:
                continue  # unchanged by this change
            old = _base_schema(review, schema)
            if old is not None and old.value == schema.value:
                continue
            bump = list(_bump(review, schema, old)) if old is not None else []
            yield from bump
            if has_mirror and not any(f.rule != "versions/ref-not-compared" for f in bump):
                yield from _published(review, schema)  # one cause, one finding


def _published_modified(review: ReviewInput) -> Iterator[Finding]:
    if review.changes is None:
        return
    mirror = review.config.paths.mirror
    for change in review.changes.under(mirror):
        renamed_from_mirror = (change.status is Status.RENAMED and change.old_path is not None
                               and change.old_path.startswith(mirror + "/"))
        if change.status not in (Status.MODIFIED, Status.DELETED) and not renamed_from_mirror:
            continue
        path = change.old_path if renamed_from_mirror and change.old_path else change.path
        if not VERSION_FOLDER.search(path[len(mirror) + 1:]):
            continue  # not a copy of a version (an unversioned file such as OpenLineage.yml)
        yield Finding(rule="versions/published-modified", severity=Severity.ERROR, path=path,
                      message=f"published schema {path} is {change.status.value}; published versions "
                      "are immutable", hint="Restore it and publish a new version next to it.")


def _identity(schema: FacetSchema) -> str | None:
    """The facet an ``$id`` names, without its version: a new name is a new facet, not a new version."""
    match = FACET_ID.match(schema.schema_id or "")
    return match[4] if match else None


def _base_schema(review: ReviewInput, schema: FacetSchema) -> FacetSchema | None:
    """The base version of ``schema``: same file (or the file it was renamed from) and same facet ``$id``."""
    registry = review.base_registry
    if registry is None:
        return None
    change = review.changes.get(schema.path) if review.changes is not None else None
    old_path = change.old_path if change is not None and change.old_path else schema.path
    entry = registry.entry_for(old_path)
    if entry is None:
        return None
    old = next((s for s in entry.schemas if s.path == old_path), None)
    if old is None or _identity(old) != _identity(schema):
        return None  # added, or renamed with a new facet $id: a new facet
    return old


def _resolver(store: SchemaStore | None) -> Any:
    def resolve(url: str) -> Any:
        stored = store.lookup(url) if store is not None else None
        return stored.schema if stored is not None else None
    return resolve


def _bump(review: ReviewInput, schema: FacetSchema, old: FacetSchema) -> Iterator[Finding]:
    if old.version is None or schema.version is None:
        return  # the facets check reports a malformed $id
    needed, changes = required_bump(old.value, schema.value, _resolver(review.base_schemas),
                                    _resolver(review.head_schemas))
    unverified = [c for c in changes if c.unverified]
    if unverified:
        first = unverified[0]
        yield at("versions/ref-not-compared", Severity.NOTICE, schema.doc, _existing(schema, first.pointer),
                 first.what, entry=schema.entry.name,
                 hint="Check the bump by hand, or add the referenced version to the published mirror.")
    if needed is Bump.NONE or _is_published_copy(review, schema):
        return
    reasons = _reasons(changes)
    pointer = "/$id"
    right = _next(old.version, needed)
    fix = token_fix(schema.doc, pointer, f"https://openlineage.io/spec/facets/{right}/{schema.filename}",
                    f"set the $id version of {schema.filename} to {right}")
    if old.version == schema.version:
        yield at("versions/not-bumped", Severity.ERROR, schema.doc, pointer,
                 f"{schema.filename} changed but $id is still {_fmt(schema.version)} (needs a {needed.name} "
                 f"bump: {reasons})", entry=schema.entry.name, hint=f"Bump to {right}.", fix=fix)
        return
    actual = actual_bump(old.version, schema.version)
    if actual is None:
        yield at("versions/not-increased", Severity.ERROR, schema.doc, pointer,
                 f"$id version went from {_fmt(old.version)} to {_fmt(schema.version)}, which is not an increase",
                 entry=schema.entry.name, hint=f"Use {right}.", fix=fix)
    elif actual < needed:
        yield at("versions/insufficient-bump", Severity.ERROR, schema.doc, pointer,
                 f"{_fmt(old.version)} -> {_fmt(schema.version)} is an {actual.name} bump but the change needs "
                 f"{needed.name}: {reasons}", entry=schema.entry.name, hint=f"Use {right}.", fix=fix)


def _reasons(changes: list[Change]) -> str:
    verified = sorted((c for c in changes if not c.unverified), key=lambda c: -c.bump)
    return "; ".join(f"{c.what} at {c.where}" for c in verified[:3])


def _existing(schema: FacetSchema, pointer: str) -> str:
    """``pointer`` if it names a node of the file, else ``/$id`` (a finding must point into its file)."""
    return pointer if pointer_exists(schema.value, pointer) else "/$id"


def _is_published_copy(review: ReviewInput, schema: FacetSchema) -> bool:
    """Whether the schema is exactly the copy of its version published before this change (the base
    mirror's): then the schema is that version, and the base was what had drifted from it."""
    store = review.base_schemas
    if schema.schema_id is None or store is None:
        return False
    published = store.published(schema.schema_id)
    return published is not None and published.schema == schema.value


def _next(version: tuple[int, int, int], bump: Bump) -> str:
    m, r, a = version
    if bump is Bump.MODEL:
        return f"{m + 1}-0-0"
    if bump is Bump.REVISION:
        return f"{m}-{r + 1}-0"
    return f"{m}-{r}-{a + 1}"


def _published(review: ReviewInput, schema: FacetSchema) -> Iterator[Finding]:
    if schema.schema_id is None or schema.version is None:
        return
    published = review.head_schemas.published(schema.schema_id)
    mirror_path = f"{review.config.paths.mirror}/facets/{_fmt(schema.version)}/{schema.filename}"
    if published is None:
        copy = review.head_registry.files.json(mirror_path)
        if copy.problem is not None:  # there, but unusable: say so (spec/unreadable does when the change writes it)
            if review.changes is None or review.changes.get(mirror_path) is None:
                yield at("versions/not-published", Severity.ERROR, schema.doc, "/$id",
                         f"the published copy {mirror_path} of version {_fmt(schema.version)} cannot be read: "
                         f"{copy.problem.message}", entry=schema.entry.name,
                         hint=f"Restore {mirror_path} as an identical copy of {schema.path}.")
        elif review.config.versions.requires_copy(schema.entry.name):
            yield at("versions/not-published", Severity.ERROR, schema.doc, "/$id",
                     f"version {_fmt(schema.version)} of {schema.filename} is not in the published mirror",
                     entry=schema.entry.name, hint=f"Add an identical copy at {mirror_path} (entries in "
                     "versions.require_published_copy copy each new version in the same change).")
    elif published.schema != schema.value:
        yield at("versions/not-published", Severity.ERROR, schema.doc, "/$id",
                 f"{published.path} differs from {schema.path} although both claim {schema.schema_id}",
                 entry=schema.entry.name, hint="Either the schema needs a new version or the copy is stale.")
