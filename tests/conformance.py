"""The bot's requests held to GitHub's published descriptions: ``@octokit/openapi`` (REST) and
``@octokit/graphql-schema`` (GraphQL), pinned in tests/node/package.json and installed by ``make node-deps``.

The stand-in records every request it is sent (``STANDIN_RECORD``: a JSON-lines file); ``problems`` checks
each against the description: a REST request must be an operation of api.github.com (method and path), its
query parameters ones the operation declares, its JSON body valid against the operation's request schema; a
GraphQL document must validate against GitHub's schema. The stand-in's answers are not checked here (its
answers leave out fields GitHub's schema requires; docs/github.md says which part is checked).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import graphql
from jsonschema import Draft4Validator

ROOT = Path(__file__).resolve().parents[1]
OCTOKIT = ROOT / "tests" / "node" / "node_modules" / "@octokit"
REST = OCTOKIT / "openapi" / "generated" / "api.github.com.json"
GRAPHQL = OCTOKIT / "graphql-schema" / "schema.graphql"
NOT_GITHUB = ("/_standin/", "/settings/apps/new", "/organizations/")  # the stand-in's own, github.com's pages


def installed() -> None:
    """Fail (never skip) when the descriptions are not installed."""
    missing = [str(p) for p in (REST, GRAPHQL) if not p.is_file()]
    assert not missing, f"GitHub's descriptions are not installed ({', '.join(missing)}): run `make node-deps`"


@cache
def description() -> dict[str, Any]:
    return _openapi_30_to_json_schema(json.loads(REST.read_text(encoding="utf-8")))


@cache
def operations() -> list[tuple[str, re.Pattern[str], str, dict[str, Any]]]:
    """(method, path pattern, path template, operation), templates with fewer parameters first."""
    out = []
    for template, item in description()["paths"].items():
        pattern = re.escape(template)
        pattern = re.sub(r"\\\{path\\\}", r"(?P<path>.+)", pattern)
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", pattern)
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                out.append((method.upper(), re.compile(f"^{pattern}$"), template, operation))
    return sorted(out, key=lambda o: o[2].count("{"))


@cache
def graphql_schema() -> graphql.GraphQLSchema:
    """GitHub's schema as published. It breaks two of graphql-core's rules about the schema itself (a field
    defined twice, deprecations of interface fields), which do not bear on validating a document against it:
    those checks are marked done."""
    schema = graphql.build_schema(GRAPHQL.read_text(encoding="utf-8"), assume_valid_sdl=True)
    schema._validation_errors = []  # graphql-core's cache of the schema's own validation
    return schema


def _validator(schema: Mapping[str, Any]) -> Draft4Validator:
    return Draft4Validator(description()).evolve(schema=schema)  # refs resolve in the whole description


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = description()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def problems(record: Mapping[str, Any]) -> list[str]:
    """What in one recorded request GitHub's description does not allow (empty: it conforms)."""
    method, path = str(record["method"]), str(record["path"])
    if path.startswith(NOT_GITHUB):
        return []
    if path == "/graphql":
        query = (record.get("json") or {}).get("query", "")
        errors = graphql.validate(graphql_schema(), graphql.parse(query))
        return [f"GraphQL: {e.message}" for e in errors]
    found = next(((t, o) for m, p, t, o in operations() if m == method and p.match(path)), None)
    if found is None:
        return [f"{method} {path}: no such operation"]
    template, operation = found
    where = f"{method} {template}"
    out = []
    declared = {p["name"]: p for p in map(_resolve, operation.get("parameters", [])) if p.get("in") == "query"}
    for name in record.get("query") or {}:
        if name not in declared:
            out.append(f"{where}: query parameter {name!r} is not declared")
    body = record.get("json")
    schema = (((operation.get("requestBody") or {}).get("content") or {}).get("application/json") or {}).get("schema")
    if body is not None and schema is None:
        out.append(f"{where}: sends a body the operation does not take")
    elif schema is not None:
        out += [f"{where}: body: {e.message} at {list(e.absolute_path)}" for e in _validator(schema).iter_errors(body)]
    return out


CHECKED = {"rest": 0, "graphql": 0, "other": 0}  # requests checked in this process, by kind


def check(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every problem of ``records``, each once (``CHECKED`` counts them)."""
    installed()
    found = dict[str, None]()
    for record in records:
        path = str(record["path"])
        CHECKED["graphql" if path == "/graphql" else "other" if path.startswith(NOT_GITHUB) else "rest"] += 1
        found.update(dict.fromkeys(problems(record)))
    return list(found)


def read(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _openapi_30_to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema's ``null`` type (the rest of 3.0's schema is Draft 4's)."""
    if isinstance(node, list):
        return [_openapi_30_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _openapi_30_to_json_schema(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out
