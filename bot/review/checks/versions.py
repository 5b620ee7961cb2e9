"""Version rules: a changed facet schema bumps its ``$id`` by the part the change needs, and
published copies in the mirror are added, never edited. How versions are judged:
``docs/versions.md``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.core.changes import Status
from bot.core.findings import Finding, Severity
from bot.core.jsondoc import JsonDoc, pointer_exists
from bot.model.registry import FACET_ID, FacetSchema, declared_facets
from bot.model.schemas import PUBLISHED, SchemaStore
from bot.review.checks._common import at, token_fix
from bot.review.checks._example_facets import fmt_version as _fmt
from bot.review.checks._example_facets import mirrored, parse_version
from bot.review.input import ReviewInput

# schema evolution is judged only where a change edits a schema (never with --all)
if TYPE_CHECKING:
    from bot.model.evolution.schema_diff import Bump, Change
    from bot.model.evolution.verdict import Direction, Evolution

RULES = {
    "versions/not-bumped": "A facet schema whose content changes also changes its `$id` version "
    "(`spec/Versioning.md`): the published URL of a version is immutable. A schema made identical "
    "to the published copy of its version needs no bump; a file renamed with a new facet `$id` is "
    "a new facet.",
    "versions/insufficient-bump": "The version bump matches the change (SchemaVer "
    "MODEL-REVISION-ADDITION): a new optional field needs at least ADDITION, a tighter constraint "
    "REVISION, a removed or newly required field or a changed type MODEL. `$ref`s are followed: "
    "moving a schema into `$defs` is no change, and a `$ref` moved to another published version "
    "counts for what differs between the two referenced definitions.",
    "versions/not-increased": "A changed `$id` version is greater than the base version.",
    "versions/not-published": "Where the repository keeps a published mirror "
    "(`website/static/spec`), a copy of a facet version that is already there is identical to the "
    "schema; entries listed in `versions.require_published_copy` (default: core) also copy each "
    "new version in the same change.",
    "versions/published-modified": "A published copy of a version in the mirror (a file under a "
    "`MODEL-REVISION-ADDITION` folder) is never modified or deleted: publish a new version "
    "instead.",
    "versions/ref-not-compared": "A notice: a `$ref` changed to or from a schema that is neither "
    "in the repository nor in its published mirror, so the bump the change behind it needs was "
    "not checked.",
    "versions/transitive-break": "SchemaVer is transitive within a MODEL: the schema is also "
    "compared with every published version of the same MODEL (the mirror), and the bump from each "
    "of them matches what differs (a field removed in 1-1-0 and re-added with another type in "
    "1-2-0 breaks 1-0-0 data).",
    "versions/forward-break": "A notice: readers of the previous version meet data they do not "
    "expect (new enum values, extended types, removed or renamed fields); it names the registered "
    "consumers of the facet.",
    "versions/over-bump": "A notice: the `$id` bumps a higher part than the change needs (a MODEL "
    "bump for a changed description tells consumers to expect a break that is not there); it names "
    "the part the change needs, read as strict SchemaVer (an optional field added to an open "
    "object needs REVISION).",
    "versions/skipped": "A notice: the `$id` version of a facet schema or of the specification "
    "(`spec/OpenLineage.json`) skips versions (1-0-1 -> 1-0-5, or "
    "1-0-1 -> 1-2-0): SchemaVer increments one part by one and resets the parts after it, so the "
    "versions in between never exist; it names the next version of the part bumped. A next "
    "version already published (in the base's mirror) is not a skip.",
    "versions/codegen": "A notice: a facet key, `$defs` name, field name or file/`$id` name "
    "changed, which changes the types OpenLineage's Java and Python clients generate, even when "
    "data stays compatible.",
}
_BUMP_RULES = ("versions/not-bumped", "versions/not-increased", "versions/insufficient-bump")

VERSION_FOLDER = re.compile(r"(^|/)\d+-\d+-\d+/")


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
            bump = (
                list(_bump(review, schema, old))
                if old is not None
                else list(_renamed_facet(review, schema))
            )
            yield from bump
            if any(f.rule in _BUMP_RULES for f in bump):
                continue  # one cause, one finding
            if has_mirror:
                yield from _published(review, schema)
            if old is not None:
                yield from _skipped(review, schema, old)
                yield from _transitive(review, schema, old)


def _published_modified(review: ReviewInput) -> Iterator[Finding]:
    if review.changes is None:
        return
    mirror = review.config.paths.mirror_prefix
    for change in review.changes.under(review.config.paths.mirror_folder):
        renamed_from_mirror = (
            change.status is Status.RENAMED
            and change.old_path is not None
            and change.old_path.startswith(mirror)
        )
        if change.status not in (Status.MODIFIED, Status.DELETED) and not renamed_from_mirror:
            continue
        path = change.old_path if renamed_from_mirror and change.old_path else change.path
        if not VERSION_FOLDER.search(path[len(mirror) :]):
            continue  # not a copy of a version (an unversioned file such as OpenLineage.yml)
        yield Finding(
            rule="versions/published-modified",
            severity=Severity.ERROR,
            path=path,
            message=f"published schema {path} is {change.status.value}; published versions "
            "are immutable",
            hint="Restore it and publish a new version next to it.",
            category="wire",
        )


def _identity(schema: FacetSchema) -> str | None:
    """The facet an ``$id`` names, without its version: a new name is a new facet, not a new
    version."""
    match = FACET_ID.match(schema.schema_id or "")
    return match[4] if match else None


def _base_schema(review: ReviewInput, schema: FacetSchema) -> FacetSchema | None:
    """The base version of ``schema``: same file (or the file it was renamed from) and same facet
    ``$id``."""
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


def _label(schema: FacetSchema, side: str) -> str:
    return f"{schema.schema_id or schema.path} ({side}: {schema.path})"


def _policy(review: ReviewInput) -> Bump:
    from bot.model.evolution.schema_diff import Bump

    return Bump[review.config.versions.open_model_optional_add.upper()]


def _compare(
    review: ReviewInput,
    old: Any,
    new: FacetSchema,
    old_label: str,
    old_store: SchemaStore | None,
    witnesses: tuple[bool, bool] = (False, False),
) -> Evolution:
    """``old`` (a schema value) against the head's ``new``, ``old``'s refs resolved in
    ``old_store``."""
    from bot.model.evolution.verdict import compare

    return compare(
        old,
        new.value,
        _resolver(old_store),
        _resolver(review.head_schemas),
        _policy(review),
        (old_label, _label(new, "head")),
        witnesses,
    )


def _bump(review: ReviewInput, schema: FacetSchema, old: FacetSchema) -> Iterator[Finding]:
    from bot.model.evolution.schema_diff import Bump, actual_bump

    if old.version is None or schema.version is None:
        # both sides name no version (a head that breaks a good $id is a new facet, and facets/id
        # fails it): the facets check reports the $id, pre-existing on the base, so this change's
        # edit would pass with its bump never judged
        yield at(
            "versions/not-bumped",
            Severity.ERROR,
            schema.doc,
            "/$id",
            f"{schema.filename} changed, but its $id {str(schema.schema_id)[:200]!r} names no "
            "version (https://openlineage.io/spec/facets/<M-R-A>/<File>.json), so whether the "
            "change is bumped enough cannot be checked",
            entry=schema.entry.name,
            hint="Give the $id its published form, with a version above the last published one.",
        )
        return
    evolution = _compare(review, old.value, schema, _label(old, "base"), review.base_schemas)
    unverified = [c for c in evolution.changes if c.unverified]
    if unverified:
        first = unverified[0]
        yield replace(
            at(
                "versions/ref-not-compared",
                Severity.NOTICE,
                schema.doc,
                _existing(schema, first.pointer),
                first.what,
                entry=schema.entry.name,
                hint="Check the bump by hand, or add the referenced version to the published "
                "mirror.",
            ),
            category="wire",
        )
    yield from _codegen(schema, evolution)
    yield from _forward(review, schema, old, evolution)
    yield from _over_bump(review, schema, old, evolution)
    needed = evolution.backward.bump
    pointer = "/$id"
    right = _next(old.version, needed) if needed is not Bump.NONE else _fmt(old.version)
    fix = token_fix(
        schema.doc,
        pointer,
        f"https://openlineage.io/spec/facets/{right}/{schema.filename}",
        f"set the $id version of {schema.filename} to {right}",
    )
    actual = (
        actual_bump(old.version, schema.version) if old.version != schema.version else Bump.NONE
    )
    if actual is None:
        # before the published-copy exemption, which is for a base that drifted from its own
        # version: a head that is the published copy of an older one moves the version back
        yield replace(
            at(
                "versions/not-increased",
                Severity.ERROR,
                schema.doc,
                pointer,
                f"$id version went from "
                f"{_fmt(old.version)} to {_fmt(schema.version)}, which is not an increase",
                entry=schema.entry.name,
                hint=f"Use {right}.",
                fix=fix,
            ),
            category="wire",
        )
        return
    if needed is Bump.NONE or _is_published_copy(review, schema) or actual >= needed:
        return
    backward = _compare(
        review, old.value, schema, _label(old, "base"), review.base_schemas, (True, False)
    ).backward
    reasons = backward.describe()
    if actual is Bump.NONE:
        finding = at(
            "versions/not-bumped",
            Severity.ERROR,
            schema.doc,
            pointer,
            f"{schema.filename} changed but $id is still {_fmt(schema.version)} (needs a "
            f"{needed.name} bump: {reasons}).",
            entry=schema.entry.name,
            hint=f"Bump to {right}.",
            fix=fix,
        )
    else:
        finding = at(
            "versions/insufficient-bump",
            Severity.ERROR,
            schema.doc,
            pointer,
            f"{_fmt(old.version)} -> {_fmt(schema.version)} is an {actual.name} bump but the "
            f"change needs {needed.name}: {reasons}.",
            entry=schema.entry.name,
            hint=f"Use {right}.",
            fix=fix,
        )
    yield _evidence(finding, backward)


def _over_bump(
    review: ReviewInput, schema: FacetSchema, old: FacetSchema, evolution: Evolution
) -> Iterator[Finding]:
    """A notice when the version bumps a higher part than anything the change does needs: backward
    or forward, under strict SchemaVer; a renamed key or type (``versions/codegen``) may justify any
    bump, so it is left alone."""
    from bot.model.evolution.schema_diff import Bump, actual_bump
    from bot.model.evolution.verdict import compare

    if old.version is None or schema.version is None:
        return
    actual = actual_bump(old.version, schema.version)
    justified = max(evolution.backward.bump, evolution.forward.bump, Bump.ADDITION)
    if actual is None or actual <= justified or evolution.codegen:
        return
    # strict SchemaVer: an optional field added to an open object
    if _policy(review) is not Bump.REVISION:
        strict = compare(
            old.value,
            schema.value,
            _resolver(review.base_schemas),
            _resolver(review.head_schemas),
            Bump.REVISION,
            (_label(old, "base"), _label(schema, "head")),
            # only the digit is read: a witness would be searched for and never shown
            witnesses=(False, False),
        )
        justified = max(justified, strict.backward.bump)
        if actual <= justified:
            return
    what = (
        evolution.backward.describe()
        or evolution.forward.describe()
        or "no change of what validates"
    )
    right = _next(old.version, justified)
    yield replace(
        at(
            "versions/over-bump",
            Severity.NOTICE,
            schema.doc,
            "/$id",
            f"{_fmt(old.version)} -> {_fmt(schema.version)} is a {actual.name} bump but the change "
            f"needs only {justified.name} ({what}): consumers are told to expect a break that is "
            f"not there.",
            entry=schema.entry.name,
            hint=f"Use {right}, unless the change means more than its schema shows.",
        ),
        category="wire",
    )


def skip(
    old: tuple[int, int, int], new: tuple[int, int, int], published: Callable[[str], bool]
) -> tuple[str, str] | None:
    """``(part, next version)`` when ``new`` is not the next version of the part it bumps from
    ``old`` (1-0-1 -> 1-0-5: the versions in between never exist), None otherwise. A next version
    already ``published`` (given the version, on the base) is no skip."""
    from bot.model.evolution.schema_diff import actual_bump

    actual = actual_bump(old, new)
    if actual is None:
        return None
    right = _next(old, actual)
    if right == _fmt(new) or published(right):
        return None
    return actual.name, right


def _skipped(review: ReviewInput, schema: FacetSchema, old: FacetSchema) -> Iterator[Finding]:
    """A notice when the version is not the next one of the part it bumps (1-0-1 -> 1-0-5): the
    versions in between never exist. The next one already published on the base is no skip."""
    if old.version is None or schema.version is None:
        return
    yield from skipped(
        review,
        schema.doc,
        schema.entry.name,
        (old.version, schema.version),
        lambda version: f"{PUBLISHED}facets/{version}/{schema.filename}",
    )


def skipped(
    review: ReviewInput,
    doc: JsonDoc,
    entry: str,
    versions: tuple[tuple[int, int, int], tuple[int, int, int]],
    published_at: Callable[[str], str],
    what: str = "",
) -> Iterator[Finding]:
    """``versions/skipped`` at ``doc``'s ``$id`` when its version went from the first of
    ``versions`` to one that is not the next of the part it bumps; a next version whose published
    copy (``published_at(version)``, on the base) exists is no skip. ``what`` names the file."""
    store = review.base_schemas
    old, new = versions
    found = skip(
        old,
        new,
        lambda version: store is not None and store.published(published_at(version)) is not None,
    )
    if found is None:
        return
    part, right = found
    yield replace(
        at(
            "versions/skipped",
            Severity.NOTICE,
            doc,
            "/$id",
            f"{what}{_fmt(old)} -> {_fmt(new)} skips versions: the next {part} version is "
            f"{right}, so the versions in between never exist",
            entry=entry,
            hint=f"Use {right}, unless the versions in between were published elsewhere.",
        ),
        category="wire",
    )


def _evidence(finding: Finding, direction: Direction) -> Finding:
    """The finding with its category, and its witness when one was found."""
    return replace(
        finding,
        message=finding.message + direction.evidence(),
        category=direction.category,
        witness=direction.witness if direction.category == "data" else None,
    )


def _codegen(schema: FacetSchema, evolution: Evolution) -> Iterator[Finding]:
    names = evolution.codegen
    if names:
        listed = "; ".join(c.what for c in names[:4]) + (
            f" and {len(names) - 4} more" if len(names) > 4 else ""
        )
        yield replace(
            at(
                "versions/codegen",
                Severity.NOTICE,
                schema.doc,
                _existing(schema, names[0].where),
                f"the types OpenLineage's Java and Python clients generate from {schema.filename} "
                f"change: {listed}",
                entry=schema.entry.name,
                hint="Code written against the generated types of the previous version needs "
                "changing.",
            ),
            category="codegen",
        )


def _renamed_facet(review: ReviewInput, schema: FacetSchema) -> Iterator[Finding]:
    """A file renamed with a new facet ``$id``: a new facet to the data, new type names to generated
    code."""
    change = review.changes.get(schema.path) if review.changes is not None else None
    registry = review.base_registry
    if change is None or not change.old_path or registry is None:
        return
    entry = registry.entry_for(change.old_path)
    old = (
        next((s for s in entry.schemas if s.path == change.old_path), None)
        if entry is not None
        else None
    )
    if old is None or old.schema_id == schema.schema_id:
        return
    yield replace(
        at(
            "versions/codegen",
            Severity.NOTICE,
            schema.doc,
            "/$id",
            f"{old.filename} became {schema.filename} with a new $id ({old.schema_id} -> "
            f"{schema.schema_id}): a new facet, whose generated types have new names",
            entry=schema.entry.name,
            hint="Code using the types generated for the old file needs changing.",
        ),
        category="codegen",
    )


def consumers(review: ReviewInput, schema: FacetSchema) -> list[str]:
    """Registered entries whose ``consumed_facets`` name ``schema`` (any version)."""
    from bot.model.uris import UriError, resolve

    registry = review.head_registry
    found = []
    for name, entry in sorted(registry.entries.items()):
        for declared in declared_facets(registry.registry_doc(entry)):
            if declared.field != "consumed_facets":
                continue
            try:
                if resolve(declared.uri, registry).path == schema.path:
                    found.append(name)
                    break
            except UriError:
                continue
    return found


def _forward(
    review: ReviewInput, schema: FacetSchema, old: FacetSchema, evolution: Evolution
) -> Iterator[Finding]:
    from bot.model.evolution.schema_diff import Bump

    forward = evolution.forward
    if forward.bump < Bump.REVISION:
        return
    forward = _compare(
        review, old.value, schema, _label(old, "base"), review.base_schemas, (False, True)
    ).forward
    readers = consumers(review, schema)
    who = (
        f"registered consumers reading it: {', '.join(readers)}"
        if readers
        else "no registered consumer declares it in consumed_facets"
    )
    finding = at(
        "versions/forward-break",
        Severity.NOTICE,
        schema.doc,
        _existing(schema, forward.reasons[0].where),
        f"readers of {_fmt(old.version)} meet data written to {_fmt(schema.version)} that they do "
        f"not expect ({forward.bump.name} in that direction: {forward.describe()}); {who}.",
        entry=schema.entry.name,
        hint="Consumers should upgrade before producers emit the new version.",
    )
    yield _evidence(finding, forward)


def _published_versions(
    review: ReviewInput, schema: FacetSchema
) -> list[tuple[tuple[int, int, int], str]]:
    """Versions of ``schema`` in the head's mirror: (version, URL), oldest first (the mirror is
    indexed once per side of a review, ``_example_facets.mirrored``)."""
    folders = mirrored(review.head_schemas).get(schema.filename, ())
    return sorted((parse_version(v), f"{PUBLISHED}facets/{v}/{schema.filename}") for v in folders)


def _breaks(evolution: Evolution, actual: Bump | None) -> dict[tuple[str, str], Change]:
    """The differences that need more than ``actual``, by (class, place)."""
    from bot.model.evolution.schema_diff import Bump

    limit = Bump.NONE if actual is None else actual
    return {(c.kind, c.where): c for c in evolution.changes if not c.unverified and c.bump > limit}


def _transitive(review: ReviewInput, schema: FacetSchema, old: FacetSchema) -> Iterator[Finding]:
    """The head against every other published version of its MODEL, older than it. Only breaks the
    base did not already have against that version are the change's doing (a field the base removed
    is a break the base had; the same field re-added with another type is a new one)."""
    from bot.model.evolution.schema_diff import actual_bump
    from bot.model.evolution.verdict import compare, direction
    from bot.model.evolution.witness import Search

    if schema.version is None or old.version is None:
        return
    store = review.head_schemas
    for version, url in _published_versions(review, schema):
        if version[0] != schema.version[0] or version >= schema.version or version == old.version:
            continue
        stored = store.published(url)
        if stored is None:
            continue
        label = f"{url} (published: {stored.path})"
        actual = actual_bump(version, schema.version)
        breaks = _breaks(_compare(review, stored.schema, schema, label, store), actual)
        if breaks and old.version[0] == version[0] and old.version > version:
            before = compare(
                stored.schema,
                old.value,
                _resolver(store),
                _resolver(review.base_schemas),
                _policy(review),
                (label, _label(old, "base")),
                (False, False),
            )
            breaks = {
                k: c
                for k, c in breaks.items()
                if k not in _breaks(before, actual_bump(version, old.version))
            }
        if not breaks or actual is None:
            continue
        changes = list(breaks.values())
        search = Search(
            stored.schema,
            schema.value,
            _resolver(store),
            _resolver(store),
            label,
            _label(schema, "head"),
        )
        backward = direction(changes, lambda c: c.bump, search, True)
        finding = at(
            "versions/transitive-break",
            Severity.ERROR,
            schema.doc,
            "/$id",
            f"against published {_fmt(version)} (same MODEL), {_fmt(version)} -> "
            f"{_fmt(schema.version)} is a {actual.name} bump but what differs needs "
            f"{backward.bump.name}: {backward.describe()}.",
            entry=schema.entry.name,
            hint=f"Use {_next(schema.version, backward.bump)}, or keep {_fmt(version)} data valid.",
        )
        yield _evidence(finding, backward)
        return  # the oldest broken version says it


def _existing(schema: FacetSchema, pointer: str) -> str:
    """``pointer`` if it names a node of the file, else ``/$id`` (a finding must point into its
    file)."""
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
    from bot.model.evolution.schema_diff import Bump

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
    mirror_path = review.config.paths.mirrored(f"facets/{_fmt(schema.version)}/{schema.filename}")
    if published is None:
        copy = review.head_registry.files.json(mirror_path)
        # there, but unusable: say so (spec/unreadable does when the change writes it)
        if copy.problem is not None:
            if review.changes is None or review.changes.get(mirror_path) is None:
                yield replace(
                    at(
                        "versions/not-published",
                        Severity.ERROR,
                        schema.doc,
                        "/$id",
                        f"the published copy {mirror_path} of version {_fmt(schema.version)} "
                        f"cannot be read: {copy.problem.message}",
                        entry=schema.entry.name,
                        hint=f"Restore {mirror_path} as an identical copy of {schema.path}.",
                    ),
                    category="wire",
                )
        elif review.config.versions.requires_copy(schema.entry.name):
            yield replace(
                at(
                    "versions/not-published",
                    Severity.ERROR,
                    schema.doc,
                    "/$id",
                    f"version {_fmt(schema.version)} of {schema.filename} is not in the published "
                    f"mirror",
                    entry=schema.entry.name,
                    hint=f"Add an identical copy at {mirror_path} (entries in "
                    "versions.require_published_copy copy each new version in the same change).",
                ),
                category="wire",
            )
    elif published.schema != schema.value:
        yield replace(
            at(
                "versions/not-published",
                Severity.ERROR,
                schema.doc,
                "/$id",
                f"{published.path} differs from {schema.path} although both claim "
                f"{schema.schema_id}",
                entry=schema.entry.name,
                hint="Either the schema needs a new version or the copy is stale.",
            ),
            category="wire",
        )
