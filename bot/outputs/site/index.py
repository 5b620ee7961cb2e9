"""The discovery index: one JSON document listing every name, role, facet, short URI and schema URL.

A consumer reads it to discover custom facets programmatically; ``INDEX_SCHEMA`` is its JSON Schema,
published beside it.
"""

from __future__ import annotations

from typing import Any

from bot.core.quoting import safe_url
from bot.outputs.site.model import Site

INDEX_FILE, SCHEMA_FILE = "registry-index.json", "registry-index.schema.json"
SCHEMA_ID = "https://openlineage.io/spec/registry/registry-index.schema.json"

_STR = {"type": "string"}
_URL = {"type": "string", "pattern": "^https?://", "maxLength": 2047}  # as safe_url links
INDEX_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "OpenLineage registry discovery index",
    "type": "object",
    "required": ["version", "entries", "facets"],
    "additionalProperties": False,
    "properties": {
        "$schema": _STR,
        "version": {"const": 1},
        "source": _STR,
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "roles"],
                "additionalProperties": False,
                "properties": {
                    "name": _STR,
                    "display_name": _STR,
                    "description": _STR,
                    "homepage": _URL,
                    "logo": _STR,
                    "categories": {"type": "array", "items": _STR},
                    "organization": {
                        "type": "object",
                        "required": ["name"],
                        "additionalProperties": False,
                        "properties": {
                            "name": _STR,
                            "homepage": _URL,
                            # the partner as the ecosystem page groups and shows it: entries of
                            # one partner share this label (group by it, never by ``name``)
                            "partner": _STR,
                            "owners": {"type": "array", "items": _STR},
                        },
                    },
                    "roles": {
                        "type": "array",
                        "items": {"enum": ["producer", "consumer"]},
                        "uniqueItems": True,
                    },
                    "producer": {"$ref": "#/$defs/role"},
                    "consumer": {"$ref": "#/$defs/role"},
                },
            },
        },
        "facets": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["uri", "owner", "file", "keys", "versions", "page"],
                "properties": {
                    "uri": {"type": "string", "pattern": "^ol:"},
                    "owner": _STR,
                    "file": _STR,
                    "keys": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["key", "definition"],
                            "additionalProperties": False,
                            "properties": {
                                "key": _STR,
                                "definition": _STR,
                                "base": {
                                    "enum": [
                                        "RunFacet",
                                        "JobFacet",
                                        "DatasetFacet",
                                        "InputDatasetFacet",
                                        "OutputDatasetFacet",
                                        None,
                                    ]
                                },
                            },
                        },
                    },
                    "version": {"type": ["string", "null"], "pattern": "^\\d+-\\d+-\\d+$"},
                    "schema_url": {"type": ["string", "null"], "pattern": "^https://"},
                    "versions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["version", "schema_url"],
                            "additionalProperties": False,
                            "properties": {
                                "version": {"type": "string", "pattern": "^\\d+-\\d+-\\d+$"},
                                "schema_url": {"type": "string", "pattern": "^https://"},
                            },
                        },
                    },
                    "producers": {"type": "array", "items": _STR},
                    "consumers": {"type": "array", "items": _STR},
                    "use_cases": {"type": "array", "items": _STR},
                    "page": _STR,
                },
            },
        },
    },
    "$defs": {
        "role": {
            "type": "object",
            "required": ["facets"],
            "additionalProperties": False,
            "properties": {
                "documentation": _URL,
                "sample": _URL,
                "facets": {"type": "array", "items": _STR},
                "versions": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "array",
                        "items": {"type": "string", "pattern": "^\\d+-\\d+-\\d+$"},
                    },
                },
            },
        }
    },
}


def discovery_index(site: Site) -> dict[str, Any]:
    entries = []
    for card in site.entries:
        item: dict[str, Any] = {"name": card.name}
        for key in ("display_name", "description", "logo"):
            if getattr(card, key):
                item[key] = getattr(card, key)
        if safe_url(card.homepage):
            item["homepage"] = card.homepage
        if card.categories:
            item["categories"] = list(card.categories)
        if card.organization:
            org: dict[str, Any] = {"name": card.organization}
            if safe_url(card.organization_url):
                org["homepage"] = card.organization_url
            # the page's grouping: one organization claimed by entries of other owners is other
            # partners (``Site.organizations``)
            org["partner"] = card.partner or card.organization
            org["owners"] = list(card.owners)
            item["organization"] = org
        item["roles"] = list(card.roles)
        for role in card.roles:
            body: dict[str, Any] = {
                "facets": card.produced if role == "producer" else card.consumed
            }
            if card.versions.get(role):
                body["versions"] = {uri: list(v) for uri, v in card.versions[role].items()}
            for key, source in (("documentation", card.documentation), ("sample", card.samples)):
                url = source.get(role)
                if safe_url(url):
                    body[key] = url
            item[role] = body
        entries.append(item)
    facets = [
        {
            "uri": f.uri,
            "owner": f.owner,
            "file": f.file,
            "keys": [
                {"key": d.key, "definition": d.name, "base": d.base or None} for d in f.definitions
            ],
            "version": f.version or None,
            "schema_url": f.url or None,
            "versions": [{"version": v.version, "schema_url": v.url} for v in f.versions],
            "producers": f.producers,
            "consumers": f.consumers,
            "use_cases": sorted(f.use_cases),
            "page": f.page,
        }
        for f in site.facets.values()
    ]
    return {
        "$schema": SCHEMA_FILE,
        "version": 1,
        "source": site.label,
        "entries": entries,
        "facets": facets,
    }
