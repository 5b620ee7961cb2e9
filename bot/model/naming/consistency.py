"""A naming file agrees with itself: its ``scheme``, ``datasourceHierarchy`` and ``namingHierarchy``
say what its templates (``forms``) do.

- ``scheme`` is the scheme every namespace template starts with (``postgres`` for
  ``postgres://{host}:{port}``, ``arn`` for ``arn:aws:glue:{region}``, ``bigquery`` for the
  namespace ``bigquery``);
- each ``datasourceHierarchy`` item names components of the namespace templates;
- each ``namingHierarchy`` item names components of the templates (or a literal word of them, such
  as Pub/Sub's ``topic``), and the items run in the order the templates write them, outermost first.

An item may offer alternatives (``serviceName or sid``) and join parts with ``-``
(``organization-account``); words separated by spaces are one camelCase name (``account locator`` is
``accountLocator``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from bot.model.naming.loader import Problem
from bot.model.naming.model import Form, Source
from bot.model.naming.template import Literal, Node, Optional, Slot, Template

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def problems(source: Source) -> Iterator[Problem]:
    if source.kind != "dataset" or not source.forms:
        return
    yield from _scheme(source)
    yield from _hierarchy(
        source, "datasourceHierarchy", [f.namespace for f in source.forms], ordered=False
    )
    yield from _hierarchy(
        source,
        "namingHierarchy",
        [t for f in source.forms for t in (f.namespace, f.name)],
        ordered=True,
    )


def _scheme(source: Source) -> Iterator[Problem]:
    if not source.scheme:
        return
    for i, form in enumerate(source.forms):
        written = template_scheme(form.namespace)
        if written is not None and written != source.scheme:
            yield Problem(
                "naming/scheme-mismatch",
                source.path,
                "/scheme",
                f"scheme {source.scheme!r} is not the scheme {written!r} that the namespace "
                f"template {form.namespace.text!r} of form {_label(form, i)} starts with",
            )
            return


def template_scheme(template: Template) -> str | None:
    """The scheme a namespace template starts with, when it starts with a literal that shows one."""
    first = template.parts[0] if template.parts else None
    if not isinstance(first, Literal):
        return None
    match = _SCHEME.match(first.text)
    if match is None:
        return None
    rest = first.text[match.end() :]
    whole = len(template.parts) == 1 and rest == ""
    return match[0] if whole or rest.startswith(":") else None


def _hierarchy(
    source: Source, field: str, templates: list[Template], ordered: bool
) -> Iterator[Problem]:
    items = source.raw.get(field)
    if not isinstance(items, list):
        return
    slots = {s for t in templates for s in t.slots()}
    words = {w.casefold() for t in templates for w in re.findall(r"[A-Za-z]+", _literals(t.parts))}
    named: list[tuple[int, list[list[str]]]] = []
    for index, item in enumerate(items):
        if not isinstance(item, str):
            continue
        alternatives = _alternatives(item)
        if any(all(part in slots for part in alt) for alt in alternatives):
            named.append((index, alternatives))
        elif not (
            field == "namingHierarchy"
            and any(len(a) == 1 and a[0].casefold() in words for a in alternatives)
        ):
            where = "namespace templates" if field == "datasourceHierarchy" else "templates"
            yield Problem(
                "naming/hierarchy-mismatch",
                source.path,
                f"/{field}/{index}",
                f"{field} item {item!r} names no component of the {where} "
                f"({', '.join(sorted(slots)) or 'none'})",
            )
    if ordered:
        yield from _order(source, field, named)


def _order(
    source: Source, field: str, named: list[tuple[int, list[list[str]]]]
) -> Iterator[Problem]:
    """Within each form, the items' components appear in the hierarchy's order (namespace, then
    name)."""
    for i, form in enumerate(source.forms):
        order = {name: n for n, name in enumerate([*form.namespace.slots(), *form.name.slots()])}
        positions = []
        for index, alternatives in named:
            placed = [
                min(order[p] for p in alt) for alt in alternatives if all(p in order for p in alt)
            ]
            if placed:
                positions.append((index, placed[0]))
        for (a, pa), (b, pb) in itertools.pairwise(positions):
            if pb < pa:
                items = source.raw[field]
                yield Problem(
                    "naming/hierarchy-mismatch",
                    source.path,
                    f"/{field}/{b}",
                    f"{field} lists {items[a]!r} before {items[b]!r}, but form {_label(form, i)} "
                    f"writes them the other way round ({form.namespace.text!r}, "
                    f"{form.name.text!r}); the "
                    "hierarchy runs outermost first",
                )
                return


def _alternatives(item: str) -> list[list[str]]:
    """``"serviceName or sid"`` -> [[serviceName], [sid]]; ``"organization-account"`` ->
    [[organization, account]]."""
    out = []
    for alternative in item.split(" or "):
        parts = [_camel(p) for p in alternative.split("-") if p.strip()]
        if parts:
            out.append(parts)
    return out


def _camel(words: str) -> str:
    first, *rest = words.split()
    return first + "".join(w[:1].upper() + w[1:] for w in rest)


def _literals(parts: tuple[Node, ...]) -> str:
    out = []
    for p in parts:
        if isinstance(p, Literal):
            out.append(p.text)
        elif isinstance(p, Optional):
            out.append(_literals(p.parts))
        elif isinstance(p, Slot):
            out.append(" ")
    return " ".join(out)


def _label(form: Form, index: int) -> str:
    return repr(form.label) if form.label else f"#{index + 1}"
