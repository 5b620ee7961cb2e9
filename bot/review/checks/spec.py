"""Spec rules: the specification itself (``spec/OpenLineage.json``) and the published mirror are
checked like facets: readable JSON, a new ``$id`` version when the content changes, an identical
published copy.

Facet schemas, examples, ``registry.json`` and naming files are read (strictly) by their own checks;
this check reads the watched JSON files no other check reads, so an invalid file anywhere is an
error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.changes import Status
from bot.core.findings import Finding, Severity
from bot.core.jsondoc import JsonDoc
from bot.core.snapshot import Snapshot
from bot.model.registry import CORE
from bot.model.schemas import PUBLISHED, meta_is_valid
from bot.review.checks._common import at, unreadable
from bot.review.checks.versions import skipped
from bot.review.input import ReviewInput

RULES = {
    "spec/unreadable": "The specification (`paths.spec`, `spec/OpenLineage.json`), the other JSON "
    "files of its folder, the top-level files of the core examples folder and every file of the "
    "published mirror that a change adds or edits are valid UTF-8 JSON, with no key written twice "
    "in one object.",
    "spec/removed": "A change never deletes or moves the specification (`paths.spec`, "
    "`spec/OpenLineage.json`) that the base branch has: it is the ground the facet schemas refer "
    "to and that their examples are validated against, so a head without it leaves the registry "
    "unjudged. A rule about the change itself (never pre-existing).",
    "spec/meta-schema": "The specification (`paths.spec`) is a valid draft 2020-12 JSON Schema: "
    "the facet schemas refer to its `$defs`, so their examples could not be checked against one "
    "that is not (`examples/unchecked` says so on each).",
    "spec/not-bumped": "A change to the content of `spec/OpenLineage.json` changes its `$id` "
    "version (`https://openlineage.io/spec/MODEL-REVISION-ADDITION/OpenLineage.json`) to a greater "
    "one, and a published version is never taken back (not even for an older published copy): a "
    "published version is immutable. Versions `0-*` are initial development (as in SemVer's "
    "0.y.z) and may change in place.",
    "spec/not-published": "Where the repository keeps a published mirror, the copy of the "
    "specification's version there is identical to `spec/OpenLineage.json`; when core copies its "
    "versions in the same change (`versions.require_published_copy`), a new version is copied "
    "there too.",
}

SPEC_ID = re.compile(r"^https://openlineage\.io/spec/(\d+-\d+-\d+)/OpenLineage\.json$")


def check(review: ReviewInput) -> Iterator[Finding]:
    paths = review.config.paths
    spec = paths.spec.strip("/")
    head = review.head_registry.files
    yield from _unreadable(review, spec)
    yield from _removed(review, spec)
    if review.changes is not None and review.changes.get(spec) is None:
        return  # the change leaves the specification alone
    loaded = head.json(spec)
    if loaded.doc is None or not isinstance(loaded.doc.value, dict):
        return
    doc = loaded.doc
    if not meta_is_valid(doc.value):
        yield at(
            "spec/meta-schema",
            Severity.ERROR,
            doc,
            "",
            f"{spec} is not a valid draft 2020-12 JSON Schema: no facet schema that refers to it "
            "can be checked",
            entry=CORE,
            hint="Validate it against https://json-schema.org/draft/2020-12/schema.",
        )
    schema_id = doc.value.get("$id")
    version = SPEC_ID.match(schema_id) if isinstance(schema_id, str) else None
    if version is None:
        return
    store = review.head_schemas
    if review.base_registry is not None and review.changes is not None:
        old = review.base_registry.files.json(spec)
        old_id = (
            old.doc.value.get("$id")
            if old.doc is not None and isinstance(old.doc.value, dict)
            else None
        )
        old_version = SPEC_ID.match(old_id) if isinstance(old_id, str) else None
        base_store = review.base_schemas
        if (
            old_version is not None
            and _parts(version[1]) < _parts(old_version[1])
            and base_store is not None
            and base_store.published(str(old_id)) is not None
        ):
            # a published version is not taken back, not even for the published copy of an older
            # one (an unreleased version may be reverted: #1920 took 2-0-0 back to 1-0-5)
            yield at(
                "spec/not-bumped",
                Severity.ERROR,
                doc,
                "/$id",
                f"{spec}'s $id version went from {old_version[1]} to {version[1]}, which is not "
                "an increase",
                entry=CORE,
                hint=f"Keep {old_version[1]}, or give the change a version above it.",
            )
            return
        if old_version is not None:
            yield from _skipped(review, doc, spec, old_version[1], version[1])
        if (
            old.doc is not None
            and old.doc.value != doc.value
            and isinstance(old.doc.value, dict)
            and old.doc.value.get("$id") == schema_id
            and not version[1].startswith("0-")
        ):
            published = base_store.published(schema_id) if base_store is not None else None
            if published is None or published.schema != doc.value:
                yield at(
                    "spec/not-bumped",
                    Severity.ERROR,
                    doc,
                    "/$id",
                    f"{spec} changed but its $id is still {version[1]}",
                    entry=CORE,
                    hint="Give the changed specification a new version in its $id.",
                )
                return
    if not store.has_mirror:
        return
    copy = paths.mirrored(f"{version[1]}/OpenLineage.json")
    published = store.published(schema_id)
    if (
        published is None
        and head.json(copy).problem is None
        and review.config.versions.requires_copy(CORE)
    ):
        yield at(
            "spec/not-published",
            Severity.ERROR,
            doc,
            "/$id",
            f"version {version[1]} of {spec} is not in the published mirror",
            entry=CORE,
            hint=f"Add an identical copy at {copy}.",
        )
    elif published is not None and published.schema != doc.value:
        yield at(
            "spec/not-published",
            Severity.ERROR,
            doc,
            "/$id",
            f"{published.path} differs from {spec} although both claim {schema_id}",
            entry=CORE,
            hint="Either the specification needs a new version or the copy is stale.",
        )


def _removed(review: ReviewInput, spec: str) -> Iterator[Finding]:
    """The specification the base has and the head lacks at its path: deleted, or moved (into an
    entry, anywhere). Every facet schema's ``$ref`` to it then resolves only through the mirror,
    if at all, and no spec rule judges the head."""
    changes, base = review.changes, review.base
    if changes is None or base is None or not _is_file(base, spec) or _is_file(review.head, spec):
        return
    moved = next((c.path for c in changes.files if c.old_path == spec and c.path != spec), None)
    yield Finding(
        rule="spec/removed",
        severity=Severity.ERROR,
        path=moved or spec,
        line=1 if moved is not None and review.head.size(moved) else None,
        entry=CORE,
        message=f"this change {f'moves {spec} to {moved}' if moved else f'deletes {spec}'}: the "
        "specification every facet schema refers to and every example is validated against is "
        "gone from the head",
        hint=f"Keep {spec} where it is; a new version of the specification edits it in place "
        "and changes its $id.",
        subject=spec,
    )


def _is_file(snapshot: Snapshot, path: str) -> bool:
    return snapshot.size(path) is not None


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("-"))


def _skipped(review: ReviewInput, doc: JsonDoc, spec: str, old: str, new: str) -> Iterator[Finding]:
    """The notice facets get (``versions/skipped``) when the specification's version is not the
    next one of the part it bumps (1-0-1 -> 1-0-5); a next version already published on the base
    is no skip."""
    o, r, a = _parts(old)
    m, n, x = _parts(new)
    yield from skipped(
        review,
        doc,
        CORE,
        ((o, r, a), (m, n, x)),
        lambda version: f"{PUBLISHED}{version}/OpenLineage.json",
        what=f"{spec}'s $id version ",
    )


def _watched(review: ReviewInput, spec: str) -> list[str]:
    """The JSON files this check reads: the spec's folder (top level), the core examples folder (top
    level) and the mirror; those the change adds or edits, or all of them for a whole-tree
    review."""
    paths = review.config.paths
    folders = {spec.rpartition("/")[0], paths.tests.strip("/")}
    mirror = paths.mirror_prefix

    def watched(path: str) -> bool:
        return path.endswith(".json") and (
            path.startswith(mirror) or path.rpartition("/")[0] in folders
        )

    if review.changes is None:
        return [p for p in review.head.files() if watched(p)]
    return sorted(
        f.path for f in review.changes.files if f.status is not Status.DELETED and watched(f.path)
    )


def _unreadable(review: ReviewInput, spec: str) -> Iterator[Finding]:
    files = review.head_registry.files
    for path in _watched(review, spec):
        loaded = files.json(path)
        if loaded.problem is not None:
            what = (
                "the specification"
                if path == spec
                else "published schema"
                if path.startswith(review.config.paths.mirror_prefix)
                else "JSON file"
            )
            yield unreadable("spec/unreadable", Severity.ERROR, loaded, what)
