"""Short URIs of the registry: ``ol:<name>[:<sub>...]:[<M-R-A>/]<File>.json`` and back.

``ol:core:X.json`` names a core facet. The name part is the longest colon-separated prefix that is a
registered name, so ``ol:gcp:composer:GcpComposerJobFacet.json`` belongs to ``gcp:composer``.
Producer URIs (``ol:<name>`` or ``ol:<name>:<sub>``) name a registered producer.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from bot.model.registry import FACET_ID, FacetSchema, Registry

FACETS_URL = "https://openlineage.io/spec/facets/"
_SHORT = re.compile(
    r"^ol:(?P<body>[a-z0-9][a-z0-9-]*(?::[a-z0-9][a-z0-9-]*)*):"
    r"(?:(?P<version>\d+-\d+-\d+)/)?(?P<file>[A-Za-z0-9_]+\.json)$"
)
# ol:<name>[:<sub>...]; a sub-component may be anything without a colon (a version, for example)
_PRODUCER = re.compile(r"^ol:(?P<body>[a-z0-9][a-z0-9-]*(?::[^:\s]+)*)$")


class UriError(ValueError):
    """A short URI that is malformed or does not resolve."""


@dataclass(frozen=True)
class ShortUri:
    name: str  # the registered name (``gcp:composer``)
    file: str  # ``GcpComposerJobFacet.json``
    version: str | None = None  # ``1-0-0`` when pinned
    sub: tuple[str, ...] = ()  # components after the name, before the file (rare)

    def __str__(self) -> str:
        parts = ["ol", self.name, *self.sub]
        return ":".join(parts) + ":" + (f"{self.version}/" if self.version else "") + self.file


def parse_short_uri(uri: str, names: Collection[str]) -> ShortUri:
    """Split a facet short URI, taking the longest registered name as its owner."""
    match = _SHORT.match(uri)
    if match is None:
        raise UriError(f"{uri!r} is not a short URI of the form ol:<name>:[<M-R-A>/]<File>.json")
    segments = match["body"].split(":")
    for cut in range(len(segments), 0, -1):
        name = ":".join(segments[:cut])
        if name in names:
            return ShortUri(
                name=name, file=match["file"], version=match["version"], sub=tuple(segments[cut:])
            )
    raise UriError(f"{uri!r} names {':'.join(segments)!r}, which is not a registered name")


def resolve(uri: str, registry: Registry) -> FacetSchema:
    """The facet schema file a short URI names (any pinned version must exist)."""
    short = parse_short_uri(uri, registry.entries)
    entry = registry.entries[short.name]
    for schema in entry.schemas:
        if schema.filename == short.file:
            return schema
    raise UriError(f"{uri!r}: {entry.facets_dir}/{short.file} does not exist")


def expand(uri: str, registry: Registry) -> str:
    """The full schema URL of a short URI: its pinned version, else the file's current ``$id``
    version."""
    short = parse_short_uri(uri, registry.entries)
    if short.version is not None:
        return f"{FACETS_URL}{short.version}/{short.file}"
    schema = resolve(uri, registry)
    if schema.version is None:
        raise UriError(f"{uri!r}: {schema.path} has no versioned $id to expand to")
    return f"{FACETS_URL}{'-'.join(map(str, schema.version))}/{short.file}"


def shorten(url: str, registry: Registry) -> str:
    """The short URI of a full facet schema URL; unpinned when the version is the file's current
    one."""
    match = FACET_ID.match(url.split("#", 1)[0])
    if match is None:
        raise UriError(f"{url!r} is not a facet schema URL under {FACETS_URL}")
    version, file = f"{match[1]}-{match[2]}-{match[3]}", match[4]
    owners = registry.schema_by_filename.get(file, [])
    if len(owners) != 1:
        problem = "no registered facet file" if not owners else "several registered facet files"
        raise UriError(f"{url!r}: {problem} named {file}")
    schema = owners[0]
    current = "-".join(map(str, schema.version)) if schema.version else None
    pinned = "" if version == current else f"{version}/"
    return f"ol:{schema.entry.name}:{pinned}{file}"


def producer_name(uri: str, names: Collection[str]) -> str | None:
    """The registered name a producer URI ``ol:<name>[:<sub>...]`` belongs to, if any."""
    match = _PRODUCER.match(uri)
    if match is None:
        return None
    segments = match["body"].split(":")
    for cut in range(len(segments), 0, -1):
        name = ":".join(segments[:cut])
        if name in names:
            return name
    return None
