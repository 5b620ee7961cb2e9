"""What a change does to the published site: new or changed ecosystem cards, new facet pages and a
field-level diff of changed ones, as a short section of the check run's summary."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Report, Section
from bot.core.quoting import code
from bot.core.snapshot import Snapshot
from bot.outputs.site.fields import Field
from bot.outputs.site.model import EntryCard, FacetPage, Site, build_site
from bot.review.compose import ReviewRequest

log = logging.getLogger(__name__)

TITLE = "Published site"
# the card fields a change is named by, with their old and new values
PRESENTATION = (
    "display_name",
    "description",
    "homepage",
    "logo",
    "categories",
    "organization",
    "organization_url",
)
MOST_ROWS, MOST_FIELD_CHANGES, MOST_VALUE = 25, 8, 80


@dataclass
class SiteDiff:
    new_cards: list[str] = field(default_factory=list)
    changed_cards: dict[str, list[str]] = field(default_factory=dict)  # name -> what changed
    removed_cards: list[str] = field(default_factory=list)
    new_facets: list[FacetPage] = field(default_factory=list)
    changed_facets: dict[str, list[str]] = field(default_factory=dict)  # URI -> field-level changes
    removed_facets: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(
            (
                self.new_cards,
                self.changed_cards,
                self.removed_cards,
                self.new_facets,
                self.changed_facets,
                self.removed_facets,
            )
        )


def compare(base: Site | None, head: Site) -> SiteDiff:
    out = SiteDiff()
    old_cards = {c.name: c for c in base.entries} if base else {}
    new_cards = {c.name: c for c in head.entries}
    for name, card in new_cards.items():
        if name not in old_cards:
            out.new_cards.append(name)
        elif changes := _card_changes(old_cards[name], card):
            out.changed_cards[name] = changes
    out.removed_cards = sorted(set(old_cards) - set(new_cards))
    old_facets = base.facets if base else {}
    for uri, page in head.facets.items():
        if uri not in old_facets:
            out.new_facets.append(page)
        elif changes := _facet_changes(old_facets[uri], page):
            out.changed_facets[uri] = changes
    out.removed_facets = sorted(set(old_facets) - set(head.facets))
    return out


def _listed(label: str, old: list[str], new: list[str]) -> list[str]:
    added, gone = [x for x in new if x not in old], [x for x in old if x not in new]
    return [f"{label} {code(x)}" for x in added] + [f"no longer {label} {code(x)}" for x in gone]


def _card_changes(old: EntryCard, new: EntryCard) -> list[str]:
    out = []
    if old.roles != new.roles:
        out.append(
            f"roles: {', '.join(new.roles) or 'none'} (was {', '.join(old.roles) or 'none'})"
        )
    if old.documentation != new.documentation or old.samples != new.samples:
        out.append("documentation or sample links changed")
    out += _listed("produces", old.produced, new.produced) + _listed(
        "consumes", old.consumed, new.consumed
    )
    for key in PRESENTATION:
        before, after = getattr(old, key), getattr(new, key)
        if before != after:
            out.append(f"{key.replace('_', ' ')}: {_value(after)} (was {_value(before)})")
    if old.versions != new.versions:
        out.append("declared versions changed")
    if old.all_use_cases != new.all_use_cases:
        out.append(f"use cases: {', '.join(code(u) for u in new.all_use_cases) or 'none'}")
    return out


def _value(value: str | tuple[str, ...]) -> str:
    """A card field's value as the preview quotes it: inert, and short enough for a table cell."""
    text = ", ".join(value) if isinstance(value, tuple) else value
    if not text:
        return "none"
    return code(text if len(text) <= MOST_VALUE else text[: MOST_VALUE - 1] + "…")


def _rows(page: FacetPage) -> dict[str, Field]:
    return {f"{d.key}.{x.path}": x for d in page.definitions for x in d.fields}


def _describe(row: Field) -> str:
    return (
        f"{row.type}{f' ({row.format})' if row.format else ''}, "
        f"{'required' if row.required else 'optional'}"
    )


def _facet_changes(old: FacetPage, new: FacetPage) -> list[str]:
    out = []
    if old.version != new.version:
        out.append(f"version {code(old.version or 'none')} → {code(new.version or 'none')}")
    before, after = _rows(old), _rows(new)
    for path, row in after.items():
        was = before.get(path)
        if was is None:
            out.append(f"field {code(path)} added ({_describe(row)})")
        elif (was.type, was.format, was.required, was.enum) != (
            row.type,
            row.format,
            row.required,
            row.enum,
        ):
            out.append(
                f"field {code(path)}: {_describe(was)} → {_describe(row)}"
                + (" (values changed)" if was.enum != row.enum else "")
            )
        elif was.description != row.description:
            out.append(f"field {code(path)}: description changed")
    out += [f"field {code(path)} removed" for path in before if path not in after]
    if old.examples != new.examples:
        out.append("examples changed")
    out += _listed("produced by", old.producers, new.producers) + _listed(
        "consumed by", old.consumers, new.consumers
    )
    if not out and _schema_differs(old, new):
        out.append("schema text changed (no field-level difference)")
    return out


def _schema_differs(old: FacetPage, new: FacetPage) -> bool:
    return old.path != new.path or old.url != new.url


def render(diff: SiteDiff) -> str:
    lines = [_headline(diff), ""]
    rows: list[str] = []
    rows += [f"| ecosystem card | {code(n)} | new |" for n in diff.new_cards]
    rows += [
        f"| ecosystem card | {code(n)} | {'; '.join(ch)} |" for n, ch in diff.changed_cards.items()
    ]
    rows += [f"| ecosystem card | {code(n)} | removed |" for n in diff.removed_cards]
    for page in diff.new_facets:
        count = sum(len(d.fields) for d in page.definitions)
        rows.append(
            f"| facet page | {code(page.uri)} | new: version {code(page.version or 'none')}, "
            f"{count} field(s), extends {', '.join(page.bases) or 'no base facet'} |"
        )
    for uri, changes in diff.changed_facets.items():
        shown = changes[:MOST_FIELD_CHANGES]
        more = (
            f"; and {len(changes) - MOST_FIELD_CHANGES} more"
            if len(changes) > MOST_FIELD_CHANGES
            else ""
        )
        rows.append(f"| facet page | {code(uri)} | {'<br>'.join(shown)}{more} |")
    rows += [f"| facet page | {code(u)} | removed |" for u in diff.removed_facets]
    if rows:
        lines += ["| page | name | change |", "| --- | --- | --- |", *rows[:MOST_ROWS]]
        if len(rows) > MOST_ROWS:
            lines.append(f"\n… and {len(rows) - MOST_ROWS} more pages change.")
    return "\n".join(lines) + "\n"


def _headline(diff: SiteDiff) -> str:
    parts = [
        (len(diff.new_cards), "new ecosystem card"),
        (len(diff.changed_cards), "changed card"),
        (len(diff.removed_cards), "removed card"),
        (len(diff.new_facets), "new facet page"),
        (len(diff.changed_facets), "changed facet page"),
        (len(diff.removed_facets), "removed facet page"),
    ]
    said = [f"**{n}** {what}{'s' if n != 1 else ''}" for n, what in parts if n]
    return (
        "On the published registry (`registry-bot publish`), this change makes "
        + ", ".join(said)
        + "."
    )


def data(diff: SiteDiff) -> dict[str, Any]:
    return {
        "new_cards": diff.new_cards,
        "changed_cards": diff.changed_cards,
        "removed_cards": diff.removed_cards,
        "new_facets": [p.uri for p in diff.new_facets],
        "changed_facets": diff.changed_facets,
        "removed_facets": diff.removed_facets,
    }


def preview(
    base: Snapshot | None, head: Snapshot, config: Config, changes: ChangeSet | None = None
) -> Section | None:
    """The section for the check run; None when the change leaves the published site as it was.

    With ``changes``, only the facet files and ``registry.json`` files the change touches are read
    (on the App every read is a download); without, both whole sites are compared.
    """
    only = changes.paths() if changes is not None else None
    diff = compare(
        build_site(base, config, light=True, only=only) if base is not None else None,
        build_site(head, config, light=True, only=only),
    )
    return Section(TITLE, render(diff), data=data(diff)) if diff else None


def site_preview(request: ReviewRequest, report: Report) -> Report:
    """The review stage of the preview: what the change does to the published site, as the last
    section; a preview that cannot be built is left out and never changes the verdict."""
    if request.base is None or request.changes is None:
        return report
    try:
        section = preview(request.base, request.head, request.settings, request.changes)
    except Exception:
        log.exception("site preview failed")
        return report
    return report.with_sections(section) if section else report
