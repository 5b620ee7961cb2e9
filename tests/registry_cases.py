"""A complete, valid new registry participant ("acme") and helpers to break it one rule at a
time."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.gitrepo import Repo

ENTRY = "spec/registry/acme"
FACET = f"{ENTRY}/facets/AcmeWidgetRunFacet.json"
EXAMPLE = f"{ENTRY}/facets/examples/AcmeWidgetRunFacet/1.json"
NEGATIVE = f"{ENTRY}/facets/examples/AcmeWidgetRunFacet/invalid/1.json"
MIRROR = "website/static/spec/facets/1-0-0/AcmeWidgetRunFacet.json"
SCHEMA_URL = "https://openlineage.io/spec/facets/1-0-0/AcmeWidgetRunFacet.json"

REGISTRY_JSON: dict[str, Any] = {
    "producer": {
        "root_doc_URL": "https://acme.example.org/docs/openlineage",
        "produced_facets": ["ol:acme:AcmeWidgetRunFacet.json", "ol:core:SQLJobFacet.json"],
    },
    "consumer": {
        "root_doc_URL": "https://acme.example.org/docs/openlineage",
        "consumed_facets": ["ol:acme:AcmeWidgetRunFacet.json"],
    },
}

FACET_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_URL,
    "$defs": {
        "AcmeWidgetRunFacet": {
            "allOf": [
                {"$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"},
                {
                    "type": "object",
                    "properties": {
                        "widgetId": {"type": "string", "description": "The widget that ran"},
                        "settings": {
                            "type": "object",
                            "properties": {
                                "retries": {"type": "integer"},
                                "labels": {"type": "array", "items": {"type": "string"}},
                            },
                        },
                    },
                    "required": ["widgetId"],
                },
            ],
            "type": "object",
        }
    },
    "type": "object",
    "properties": {"acme_widget": {"$ref": "#/$defs/AcmeWidgetRunFacet"}},
}

EXAMPLE_JSON: dict[str, Any] = {
    "acme_widget": {
        "_producer": "https://acme.example.org/openlineage/1.0",
        "_schemaURL": SCHEMA_URL,
        "widgetId": "w-42",
        "settings": {"retries": 3, "labels": ["nightly", "eu"]},
    }
}

NEGATIVE_JSON: dict[str, Any] = {
    "$expect": {"keyword": "required", "pointer": "/acme_widget"},
    "acme_widget": {
        "_producer": "https://acme.example.org/openlineage/1.0",
        "_schemaURL": SCHEMA_URL,
        "settings": {"retries": 1},
    },
}


def dump(value: Any) -> str:
    """JSON as a contributor who runs prettier commits it (format/json reports any other layout)."""
    from bot.core.jsonformat import format_json

    return format_json(json.dumps(value))


def good_files() -> dict[str, str]:
    """The files of the valid participant, path -> content."""
    return {
        f"{ENTRY}/CODEOWNERS": "* @alice @acme-corp/lineage\n",
        f"{ENTRY}/registry.json": dump(REGISTRY_JSON),
        FACET: dump(FACET_SCHEMA),
        EXAMPLE: dump(EXAMPLE_JSON),
        NEGATIVE: dump(NEGATIVE_JSON),
        MIRROR: dump(FACET_SCHEMA),
    }


def add_good(repo: Repo) -> None:
    for path, content in good_files().items():
        repo.write(path, content)


def edit(repo: Repo, path: str, change: Any) -> None:
    """Apply ``change(value)`` to a JSON file of the work tree (in place, or by returning a new
    value)."""
    repo.edit_json(path, change)


def schema_with(**overrides: Any) -> dict[str, Any]:
    schema = copy.deepcopy(FACET_SCHEMA)
    schema.update(overrides)
    return schema


def line_of(path: Path, needle: str) -> int:
    """1-based line number of the first line containing ``needle``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")
