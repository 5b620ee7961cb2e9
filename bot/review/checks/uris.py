"""URI rules: every declared short URI resolves to a facet file, and every facet file is
declared."""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.findings import Finding, Fix, Severity
from bot.core.jsondoc import JsonDoc
from bot.model.registry import FACET_FIELDS, Entry, declared_facets
from bot.model.uris import UriError, parse_short_uri
from bot.review.checks._common import append_to_array_fix, at
from bot.review.input import ReviewInput

RULES = {
    "uris/malformed": "Each entry of `produced_facets` / `consumed_facets` is a short URI "
    "`ol:<name>[:<sub>...]:[<M-R-A>/]<File>.json`.",
    "uris/unknown-name": "The name part of a short URI is a registered name (`ol:core:...` for "
    "core facets).",
    "uris/unresolved": "A short URI resolves to an existing facet file of the named entry, and a "
    "pinned version (`ol:core:1-0-1/X.json`) is the file's current version or is published in the "
    "mirror.",
    "uris/undeclared": "Every facet schema file of an entry is declared in its own `registry.json` "
    "(`produced_facets` or `consumed_facets`).",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    registry = review.head_registry
    names = set(registry.entries)
    for entry in review.reviewed_entries():
        loaded = registry.files.json(entry.registry_json)
        if loaded.doc is None:
            continue
        doc = loaded.doc
        declared_files: set[str] = set()
        for item in declared_facets(doc.value):
            try:
                short = parse_short_uri(item.uri, names)
            except UriError as exc:
                rule = (
                    "uris/unknown-name"
                    if item.uri.startswith("ol:") and "registered" in str(exc)
                    else "uris/malformed"
                )
                yield at(
                    rule,
                    Severity.ERROR,
                    doc,
                    item.pointer,
                    str(exc),
                    entry=entry.name,
                    hint="Short URIs look like ol:<name>:<File>.json, for example "
                    "ol:core:SQLJobFacet.json.",
                )
                continue
            owner = registry.entries[short.name]
            if short.name == entry.name:
                declared_files.add(short.file)
            problem = _resolution_problem(review, owner, short.file, short.version)
            if problem:
                yield at(
                    "uris/unresolved",
                    Severity.ERROR,
                    doc,
                    item.pointer,
                    f"{item.uri}: {problem}",
                    entry=entry.name,
                    hint=f"Facet files of {owner.name} live in {owner.facets_dir}/.",
                )
        yield from _undeclared(entry, declared_files, doc)


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
    mirror = f"{review.config.paths.mirror}/facets/{version}/{file}"
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
