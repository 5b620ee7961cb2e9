"""Typed objects per source, made from the naming files (no hand-written class per source).

    Postgres = rules.dataset_type("postgres")
    table = Postgres(host="db", port="5432", database="shop", schema="public", table="orders")
    table.namespace, table.name, table.uri
    Postgres.parse("postgres://db:5432", "shop.public.orders").table   # 'orders'

Construction validates (``FormatError``), so an instance always holds a valid identifier.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

from bot.model.naming.model import FormatError, Identifier, Source

_TYPES: weakref.WeakKeyDictionary[Any, dict[str, type]] = weakref.WeakKeyDictionary()


def _class_name(source: Source) -> str:
    suffix = "Dataset" if source.kind == "dataset" else "Job"
    return "".join(part.capitalize() for part in source.id.split("-")) + suffix


def type_for(rules: Any, source: Source) -> type:
    """The frozen dataclass for ``source``; one per rules object and source."""
    cache = _TYPES.setdefault(rules, {})
    if source.id in cache:
        return cache[source.id]
    required = set.intersection(
        *(set(f.namespace.required()) | set(f.name.required()) for f in source.forms)
    )
    fields: list[Any] = [(n, str) for n in source.components if n in required]
    fields += [
        (n, "str | None", dataclasses.field(default=None))
        for n in source.components
        if n not in required
    ]
    fields.append(
        (
            "_identifier",
            Identifier | None,
            dataclasses.field(default=None, init=False, repr=False, compare=False),
        )
    )

    def __post_init__(self: Any) -> None:
        values = {n: getattr(self, n) for n in source.components if getattr(self, n) is not None}
        fmt = rules.format_dataset if source.kind == "dataset" else rules.format_job
        object.__setattr__(self, "_identifier", fmt(source.id, **values))

    def parse(cls: type, namespace: str, name: str) -> Any:
        result = (
            rules.parse_dataset(namespace, name)
            if source.kind == "dataset"
            else rules.parse_job(namespace, name, source.id)
        )
        if not result.ok or result.source != source.id:
            raise FormatError(
                result.reason
                or f"{namespace!r} / {name!r} is a {result.source} identifier, not {source.id}"
            )
        return cls(**result.components)

    cls = dataclasses.make_dataclass(
        _class_name(source),
        fields,
        frozen=True,
        namespace={
            "__post_init__": __post_init__,
            "__doc__": f"{source.title}: {source.raw.get('description', '')}",
            "source": source.id,
            "namespace": property(lambda self: self._identifier.namespace),
            "name": property(lambda self: self._identifier.name),
            "uri": property(lambda self: self._identifier.uri),
            "parse": classmethod(parse),
        },
    )
    cache[source.id] = cls
    return cls
