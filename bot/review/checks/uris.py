"""URI rules: every declared short URI resolves to a facet file, and every facet file is
declared."""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.changes import Status
from bot.core.findings import Finding, Fix, Severity
from bot.core.jsondoc import JsonDoc
from bot.model.registry import FACET_FIELDS, Declared, Entry, declared_facets
from bot.model.uris import ShortUri, UriError, parse_short_uri
from bot.review.checks._common import append_to_array_fix, at
from bot.review.input import ReviewInput

RULES = {
    "uris/malformed": "Each entry of `produced_facets` / `consumed_facets` is a short URI "
    "`ol:<name>[:<sub>...]:[<M-R-A>/]<File>.json`.",
    "uris/unknown-name": "The name part of a short URI is a registered name (`ol:core:...` for "
    "core facets).",
    "uris/unresolved": "A short URI resolves to an existing facet file of the named entry, and a "
    "pinned version (`ol:core:1-0-1/X.json`) is the file's current version or is published in the "
    "mirror. A change that deletes or renames a facet file (or a whole entry) answers for every "
    "entry's declarations of it: each one it leaves unresolved is a new finding of the change on "
    "that entry's `registry.json` (`uris/unknown-name` when the entry is gone), though the change "
    "does not touch it; its owners are not asked: the change keeps the facet or updates the "
    "declarations too.",
    "uris/undeclared": "Every facet schema file of an entry is declared in its own `registry.json` "
    "(`produced_facets` or `consumed_facets`).",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    registry = review.head_registry
    names = set(registry.entries)
    gone = _gone_facets(review)
    reviewed = review.reviewed_entries()
    for entry in reviewed:
        loaded = registry.files.json(entry.registry_json)
        if loaded.doc is None:
            continue
        doc = loaded.doc
        declared_files: set[str] = set()
        for item in declared_facets(doc.value):
            short, finding = _declaration(review, names, entry, doc, item, gone)
            if short is not None and short.name == entry.name:
                declared_files.add(short.file)
            if finding is not None:
                yield finding
        yield from _undeclared(entry, declared_files, doc)
    if gone:
        yield from _dangling(review, {e.name for e in reviewed}, gone)


def _gone_facets(review: ReviewInput) -> dict[str, str | None]:
    """The facet schema files of the base that the change deletes (path -> None) or renames
    (path -> new path)."""
    base = review.base_registry
    if review.changes is None or base is None:
        return {}
    gone: dict[str, str | None] = {}
    for change in review.changes.files:
        if change.status is Status.DELETED:
            old, new = change.path, None
        elif change.status is Status.RENAMED and change.old_path:
            old, new = change.old_path, change.path
        else:
            continue
        owner = base.entry_for(old)
        if owner is not None and old.rpartition("/")[0] == owner.facets_dir:
            gone[old] = new
    return gone


def _dangling(
    review: ReviewInput, reviewed: set[str], gone: dict[str, str | None]
) -> Iterator[Finding]:
    """The declarations of the entries the change leaves alone that name a facet it deletes or
    renames away: the change breaks them, so they are its findings (the entries' owners are not
    asked; the author keeps the facet or updates them)."""
    registry = review.head_registry
    names = set(registry.entries)
    for entry in registry.entries.values():
        if entry.name in reviewed:
            continue
        loaded = registry.files.json(entry.registry_json)
        if loaded.doc is None:
            continue
        for item in declared_facets(loaded.doc.value):
            if _base_path(review, item.uri) not in gone:
                continue
            _, finding = _declaration(review, names, entry, loaded.doc, item, gone)
            if finding is not None:
                yield finding


def _base_path(review: ReviewInput, uri: str) -> str | None:
    """The facet file a short URI names on the base side."""
    base = review.base_registry
    if base is None:
        return None
    try:
        short = parse_short_uri(uri, base.entries)
    except UriError:
        return None
    return f"{base.entries[short.name].facets_dir}/{short.file}"


def _by_this_change(
    review: ReviewInput, entry: Entry, item: Declared, gone: dict[str, str | None]
) -> str:
    """What the change did to the facet a declaration names, when it deleted or renamed it."""
    path = _base_path(review, item.uri) if gone else None
    if path is None or path not in gone:
        return ""
    new = gone[path]
    did = f"renames it to {new}" if new else "deletes it"
    return f": this change {did}, and {entry.name} still declares it in {item.field}"


def _declaration(
    review: ReviewInput,
    names: set[str],
    entry: Entry,
    doc: JsonDoc,
    item: Declared,
    gone: dict[str, str | None],
) -> tuple[ShortUri | None, Finding | None]:
    """A declaration's short URI when it parses, and the finding when it does not resolve."""
    try:
        short = parse_short_uri(item.uri, names)
    except UriError as exc:
        return None, _unparsed(review, entry, doc, item, exc, gone)
    return short, _unresolved(review, entry, doc, item, short, gone)


def _unparsed(
    review: ReviewInput,
    entry: Entry,
    doc: JsonDoc,
    item: Declared,
    exc: UriError,
    gone: dict[str, str | None],
) -> Finding:
    rule = (
        "uris/unknown-name"
        if item.uri.startswith("ol:") and "registered" in str(exc)
        else "uris/malformed"
    )
    hint = "Short URIs look like ol:<name>:<File>.json, for example ol:core:SQLJobFacet.json."
    return _on_declaration(review, rule, entry, doc, item, str(exc), hint, gone)


def _unresolved(
    review: ReviewInput,
    entry: Entry,
    doc: JsonDoc,
    item: Declared,
    short: ShortUri,
    gone: dict[str, str | None],
) -> Finding | None:
    owner = review.head_registry.entries[short.name]
    problem = _resolution_problem(review, owner, short.file, short.version)
    if not problem:
        return None
    hint = f"Facet files of {owner.name} live in {owner.facets_dir}/."
    return _on_declaration(
        review, "uris/unresolved", entry, doc, item, f"{item.uri}: {problem}", hint, gone
    )


def _on_declaration(
    review: ReviewInput,
    rule: str,
    entry: Entry,
    doc: JsonDoc,
    item: Declared,
    problem: str,
    hint: str,
    gone: dict[str, str | None],
) -> Finding:
    """A finding on a declaration; when the change deleted or renamed the facet it names, the
    message says so and the hint says what the author can do."""
    note = _by_this_change(review, entry, item, gone)
    if note:
        hint = (
            f"Keep {item.uri} while registered entries declare it, or remove it from "
            f"{entry.registry_json} in the same change (then {entry.name}'s owners approve it too)."
        )
    return at(
        rule,
        Severity.ERROR,
        doc,
        item.pointer,
        problem + note,
        entry=entry.name,
        hint=hint,
        subject=item.uri,
        anchor=_list_of(item),
    )


def _list_of(item: Declared) -> str:
    """Where a finding about the declared URI ``item`` is matched (its subject is the URI): in its
    list, not at its index, which a URI declared before it shifts without changing the problem."""
    return item.pointer.rpartition("/")[0]


def _resolution_problem(
    review: ReviewInput, owner: Entry, file: str, version: str | None
) -> str | None:
    schema = next((s for s in owner.schemas if s.filename == file), None)
    if schema is None:
        if review.head.size(f"{owner.facets_dir}/{file}") is not None:
            return None  # there but unreadable: facets/unreadable says why (one message per cause)
        return f"{owner.facets_dir}/{file} does not exist"
    if version is None:
        return None
    current = "-".join(map(str, schema.version)) if schema.version else None
    if version == current:
        return None
    mirror = review.config.paths.mirrored(f"facets/{version}/{file}")
    if review.head.size(mirror) is not None:
        return None
    return f"version {version} is neither the current version ({current}) nor published at {mirror}"


def _undeclared(entry: Entry, declared: set[str], doc: JsonDoc) -> Iterator[Finding]:
    for schema in entry.schemas:
        if schema.filename in declared:
            continue
        yield Finding(
            rule="uris/undeclared",
            severity=Severity.ERROR,
            path=schema.path,
            line=1,
            column=1,
            entry=entry.name,
            fix=_declare(doc, f"ol:{entry.name}:{schema.filename}"),
            message=f"{schema.filename} is not declared in {entry.registry_json}",
            hint=f'Add "ol:{entry.name}:{schema.filename}" to produced_facets or consumed_facets.',
        )


def _declare(doc: JsonDoc, uri: str) -> Fix | None:
    """Append ``uri`` to the entry's short-URI list: ``produced_facets`` if it has a producer block,
    else ``consumed_facets``; no fix when that list is missing or holds the proposal's object
    form."""
    value = doc.value if isinstance(doc.value, dict) else {}
    for block, key in FACET_FIELDS.items():
        body = value.get(block)
        if isinstance(body, dict):
            items = body.get(key)
            if isinstance(items, list) and all(isinstance(i, str) for i in items):
                return append_to_array_fix(doc, f"/{block}/{key}", uri, f"declare {uri} in {key}")
            return None
    return None
