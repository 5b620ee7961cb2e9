"""Key rules: facet keys and facet `$defs` names are unique modulo case across core and every entry.

Entry names are compared case-folded; keys and type names deserve the same: `SCHEMA` beside `schema`
is a second facet to a case-sensitive reader and the same one to a case-insensitive file system, a
generated client or a person. The exact duplicates are `facets/duplicate-key` and
`facets/duplicate-file`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.findings import Finding, Severity
from bot.core.jsondoc import escape_pointer_token
from bot.model.registry import FacetSchema, Registry
from bot.review.checks._common import at
from bot.review.input import ReviewInput

RULES = {
    "keys/case-twin": "A facet key, and a facet's `$defs` name (the name its `_schemaURL` fragment "
    "and the clients' generated types carry), differs from every other one of core and every entry "
    "by more than letter case (`SCHEMA` beside `schema`); the finding names the key that exists "
    "already.",
}


@dataclass(frozen=True)
class _Name:
    kind: str  # "facet key" | "$defs name"
    text: str
    schema: FacetSchema
    pointer: str


def check(review: ReviewInput) -> Iterator[Finding]:
    reviewed = {e.name for e in review.reviewed_entries()}
    before = _existing(review.base_registry)
    groups: dict[tuple[str, str], list[_Name]] = {}
    for name in _names(review.head_registry):
        groups.setdefault((name.kind, name.text.casefold()), []).append(name)
    for names in groups.values():
        if len({n.text for n in names}) < 2:
            continue
        names.sort(
            key=lambda n: ((n.kind, n.text, n.schema.path) not in before, n.schema.path, n.text)
        )
        first = names[0]
        for name in names[1:]:
            if name.text == first.text or name.schema.entry.name not in reviewed:
                continue
            where = "" if name.schema.path == first.schema.path else f" in {first.schema.path}"
            yield at(
                "keys/case-twin",
                Severity.ERROR,
                name.schema.doc,
                name.pointer,
                f"{name.kind} {name.text!r} differs only in case from the existing {first.kind} "
                f"{first.text!r}{where}",
                entry=name.schema.entry.name,
                key=True,
                hint=f"Use {first.text!r} if it is the same facet, or a name that differs by more "
                f"than case.",
            )


def _names(registry: Registry) -> Iterator[_Name]:
    for schema in registry.schemas():
        seen: set[tuple[str, str]] = set()
        for facet in schema.facets:
            for kind, text, pointer in (
                ("facet key", facet.key, f"/properties/{escape_pointer_token(facet.key)}"),
                ("$defs name", facet.name, f"/$defs/{escape_pointer_token(facet.name)}"),
            ):
                if (kind, text) not in seen:
                    seen.add((kind, text))
                    yield _Name(kind, text, schema, pointer)


def _existing(registry: Registry | None) -> set[tuple[str, str, str]]:
    """``(kind, name, path)`` of every key and name of the base side: the ones a change meets, not
    adds."""
    return (
        set() if registry is None else {(n.kind, n.text, n.schema.path) for n in _names(registry)}
    )
