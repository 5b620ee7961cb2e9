"""Short URIs on the real registry: expand, shorten, producer names."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.config import Config
from bot.core.snapshot import DirSnapshot
from bot.model.registry import Registry
from bot.model.uris import UriError, expand, parse_short_uri, producer_name, resolve, shorten


@pytest.fixture(scope="module")
def registry(corpus: Path) -> Registry:
    return Registry(DirSnapshot(corpus), Config())


def test_nested_names_take_the_longest_registered_prefix(registry: Registry) -> None:
    short = parse_short_uri("ol:gcp:composer:GcpComposerJobFacet.json", registry.entries)
    assert (short.name, short.file, short.version) == (
        "gcp:composer",
        "GcpComposerJobFacet.json",
        None,
    )
    assert (
        resolve(str(short), registry).path
        == "spec/registry/gcp/composer/facets/GcpComposerJobFacet.json"
    )


def test_every_declared_uri_of_the_real_registry_round_trips(registry: Registry) -> None:
    from bot.model.registry import declared_facets

    uris = [
        d.uri for e in registry.entries.values() for d in declared_facets(registry.registry_doc(e))
    ]
    assert len(uris) > 30
    for uri in uris:
        url = expand(uri, registry)
        assert url.startswith("https://openlineage.io/spec/facets/")
        assert shorten(url, registry) == uri


def test_core_and_pinned_versions(registry: Registry) -> None:
    assert (
        expand("ol:core:SQLJobFacet.json", registry)
        == "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json"
    )
    pinned = "https://openlineage.io/spec/facets/1-0-0/SQLJobFacet.json"
    assert expand("ol:core:1-0-0/SQLJobFacet.json", registry) == pinned
    assert shorten(pinned, registry) == "ol:core:1-0-0/SQLJobFacet.json"


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("ol:nosuch:X.json", "not a registered name"),
        ("gcp:composer:GcpComposerJobFacet.json", "not a short URI"),
        ("ol:gcp:composer:Missing.json", "does not exist"),
        ("ol:core:../../etc/passwd", "not a short URI"),
    ],
)
def test_bad_uris_say_why(registry: Registry, uri: str, problem: str) -> None:
    with pytest.raises(UriError, match=problem):
        resolve(uri, registry)


def test_shorten_refuses_foreign_urls(registry: Registry) -> None:
    with pytest.raises(UriError, match="not a facet schema URL"):
        shorten("https://example.com/X.json", registry)


def test_producer_names(registry: Registry) -> None:
    names = registry.entries
    assert producer_name("ol:gcp:composer", names) == "gcp:composer"
    assert producer_name("ol:gcp:composer:2.9.1", names) == "gcp:composer"
    assert producer_name("ol:iceberg:Spark-Runtime", names) == "iceberg"
    assert producer_name("ol:gcp", names) is None
    assert producer_name("https://github.com/OpenLineage/OpenLineage", names) is None
