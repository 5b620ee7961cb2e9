"""Version rules: a changed facet schema bumps its ``$id`` by the part the change needs, and published
copies in the mirror are added, never edited."""

from __future__ import annotations

from collections.abc import Iterator

from bot.changes import Status
from bot.checks._common import at
from bot.findings import Finding, Severity
from bot.registry import FacetSchema
from bot.review_input import ReviewInput
from bot.schema_diff import Bump, actual_bump, required_bump

RULES = {
    "versions/not-bumped": "A facet schema whose content changes also changes its `$id` version "
    "(`spec/Versioning.md`): the published URL of a version is immutable.",
    "versions/insufficient-bump": "The version bump matches the change (SchemaVer MODEL-REVISION-ADDITION): "
    "a new optional field needs at least ADDITION, a tighter constraint REVISION, a removed or newly required "
    "field or a changed type MODEL.",
    "versions/not-increased": "A changed `$id` version is greater than the base version.",
    "versions/not-published": "Where the repository keeps a published mirror (`website/static/spec`), the new "
    "version of a changed or added facet is in it, identical to the schema.",
    "versions/published-modified": "A published copy in the mirror is never modified or deleted: publish a "
    "new version instead.",
}


def _fmt(version: tuple[int, int, int] | None) -> str:
    return "-".join(map(str, version)) if version else "?"


def check(review: ReviewInput) -> Iterator[Finding]:
    mirror = review.config.paths.mirror
    has_mirror = bool(review.head.files(mirror))
    if review.changes is not None:
        for change in review.changes.under(mirror):
            if change.status in (Status.MODIFIED, Status.DELETED) or (
                    change.status is Status.RENAMED and change.old_path and change.old_path.startswith(mirror + "/")):
                path = change.old_path if change.status is Status.RENAMED and change.old_path else change.path
                yield Finding(rule="versions/published-modified", severity=Severity.ERROR, path=path,
                              message=f"published schema {path} is {change.status.value}; published versions "
                              "are immutable", hint="Restore it and publish a new version next to it.")
    base_registry = review.base_registry
    for entry in review.reviewed_entries():
        for schema in entry.schemas:
            if review.changes is not None and review.changes.get(schema.path) is None:
                continue  # unchanged by this change
            old = _base_schema(review, schema) if base_registry is not None else None
            if old is not None:
                yield from _bump(review, schema, old)
            if has_mirror and (review.changes is None or old is None or old.value != schema.value):
                yield from _published(review, schema)


def _base_schema(review: ReviewInput, schema: FacetSchema) -> FacetSchema | None:
    change = review.changes.get(schema.path) if review.changes is not None else None
    old_path = change.old_path if change is not None and change.old_path else schema.path
    registry = review.base_registry
    if registry is None:
        return None
    entry = registry.entry_for(old_path)
    if entry is None:
        return None
    return next((s for s in entry.schemas if s.path == old_path), None)


def _bump(review: ReviewInput, schema: FacetSchema, old: FacetSchema) -> Iterator[Finding]:
    needed, changes = required_bump(old.value, schema.value)
    if needed is Bump.NONE:
        return
    severity = Severity.ERROR
    reasons = "; ".join(f"{c.what} at {c.where}" for c in sorted(changes, key=lambda c: -c.bump)[:3])
    if old.version is None or schema.version is None:
        return  # the facets check reports a malformed $id
    pointer = "/$id"
    if old.version == schema.version:
        yield at("versions/not-bumped", severity, schema.doc, pointer,
                 f"{schema.filename} changed but $id is still {_fmt(schema.version)} (needs a {needed.name} "
                 f"bump: {reasons})", entry=schema.entry.name, hint=f"Bump to {_next(old.version, needed)}.")
        return
    actual = actual_bump(old.version, schema.version)
    if actual is None:
        yield at("versions/not-increased", severity, schema.doc, pointer,
                 f"$id version went from {_fmt(old.version)} to {_fmt(schema.version)}, which is not an increase",
                 entry=schema.entry.name, hint=f"Use {_next(old.version, needed)}.")
    elif actual < needed:
        yield at("versions/insufficient-bump", severity, schema.doc, pointer,
                 f"{_fmt(old.version)} -> {_fmt(schema.version)} is an {actual.name} bump but the change needs "
                 f"{needed.name}: {reasons}", entry=schema.entry.name, hint=f"Use {_next(old.version, needed)}.")


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
    severity = Severity.ERROR
    mirror_path = f"{review.config.paths.mirror}/facets/{_fmt(schema.version)}/{schema.filename}"
    if published is None:
        yield at("versions/not-published", severity, schema.doc, "/$id",
                 f"version {_fmt(schema.version)} of {schema.filename} is not in the published mirror",
                 entry=schema.entry.name, hint=f"Add an identical copy at {mirror_path}.")
    elif published.schema != schema.value:
        yield at("versions/not-published", severity, schema.doc, "/$id",
                 f"{published.path} differs from {schema.path} although both claim {schema.schema_id}",
                 entry=schema.entry.name, hint="Either the schema needs a new version or the copy is stale.")
