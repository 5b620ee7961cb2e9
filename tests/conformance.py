"""The bot's traffic held to GitHub's published descriptions: ``@octokit/openapi`` (REST),
``@octokit/graphql-schema`` (GraphQL) and ``@octokit/webhooks-schemas`` (webhook payloads), pinned
in tests/node/package.json and installed by ``make node-deps``.

The stand-in records every request it is sent and its answer (``STANDIN_RECORD``: a JSON-lines
file); ``problems`` checks each against the description: a REST request must be an operation of
api.github.com (method and path), its query parameters ones the operation declares, its JSON body
valid against the operation's request schema; the stand-in's answer must be valid against the
operation's response schema for its status (a 4xx/5xx the operation does not list against GitHub's
``basic-error``, the body every REST error of GitHub has; a 2xx or 3xx it does not list is a drift).
A GraphQL document must validate against GitHub's schema, its variables' values coerce to their
types, and the stand-in's answer be what executing the document against that schema gives.
``payload_problems`` checks a webhook payload against its event's schema. The in-thread ``StandIn``
and ``Fleet`` keep the record in memory and check it when they stop (docs/github.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import graphql
from jsonschema import Draft4Validator, Draft7Validator, ValidationError
from jsonschema.exceptions import best_match

ROOT = Path(__file__).resolve().parents[1]
OCTOKIT = ROOT / "tests" / "node" / "node_modules" / "@octokit"
REST = OCTOKIT / "openapi" / "generated" / "api.github.com.json"
GRAPHQL = OCTOKIT / "graphql-schema" / "schema.graphql"
WEBHOOKS = OCTOKIT / "webhooks-schemas" / "schema.json"
# every REST error's body ("message", ...)
BASIC_ERROR = {"$ref": "#/components/schemas/basic-error"}
# the stand-in's own, github.com's pages
NOT_GITHUB = ("/_standin/", "/settings/apps/new", "/organizations/")


def installed() -> None:
    """Fail (never skip) when the descriptions are not installed."""
    missing = [str(p) for p in (REST, GRAPHQL, WEBHOOKS) if not p.is_file()]
    assert not missing, (
        f"GitHub's descriptions are not installed ({', '.join(missing)}): run `make node-deps`"
    )


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
    """GitHub's schema as published. It breaks two of graphql-core's rules about the schema itself
    (a field defined twice, deprecations of interface fields), which do not bear on validating a
    document against it: those checks are marked done."""
    schema = graphql.build_schema(GRAPHQL.read_text(encoding="utf-8"), assume_valid_sdl=True)
    schema._validation_errors = []  # graphql-core's cache of the schema's own validation
    return schema


def _validator(schema: Mapping[str, Any]) -> Draft4Validator:
    # refs resolve in the whole description
    return Draft4Validator(description()).evolve(schema=schema)


@cache
def _answer_validator(template: str, method: str, status: int) -> Draft4Validator | str | None:
    """The validator of the answer ``status`` of an operation; None: no body; a string: not
    documented."""
    responses = description()["paths"][template][method.lower()].get("responses", {})
    documented = _resolve(responses.get(str(status)) or {})
    if not documented and status < 400:
        return f"answers {status}, which the operation does not document"
    schema = ((documented.get("content") or {}).get("application/json") or {}).get("schema")
    # an error GitHub's description lists without a body, or not at all
    if schema is None and status >= 400:
        schema = BASIC_ERROR
    return None if schema is None else _validator(schema)


def answer_problems(where: str, template: str, method: str, status: int, answer: Any) -> list[str]:
    """What in the stand-in's answer (status, JSON body) the operation's response schema does not
    allow. The stand-in answers the same object many times (the pull request, its check runs): each
    distinct answer is validated once."""
    return list(
        _answer_problems(where, template, method, status, json.dumps(answer, sort_keys=True))
    )


@cache
def _answer_problems(
    where: str, template: str, method: str, status: int, text: str
) -> tuple[str, ...]:
    answer = json.loads(text)
    found = _answer_validator(template, method, status)
    if isinstance(found, str):
        return (f"{where}: {found}",)
    if found is None:
        return (
            ()
            if answer is None
            else (f"{where}: answers {status} with a body the operation does not document",)
        )
    if answer is None:
        return (f"{where}: answers {status} without the JSON body the operation documents",)
    return tuple(f"{where}: answer {status}: {said}" for said in _said(found.iter_errors(answer)))


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = description()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


@cache
def _graphql_document(query: str) -> tuple[graphql.DocumentNode, list[graphql.GraphQLError]]:
    """A document parsed and validated once (the bot sends the same queries again and again)."""
    document = graphql.parse(query)
    return document, graphql.validate(graphql_schema(), document)


def graphql_problems(query: str, variables: Mapping[str, Any] | None = None) -> list[str]:
    """What GitHub's schema does not allow in a GraphQL document and, when sent, the values of its
    variables."""
    document, errors = _graphql_document(query)
    if not errors and variables is not None:
        for operation in document.definitions:
            if isinstance(operation, graphql.OperationDefinitionNode):
                coerced = graphql.get_variable_values(
                    graphql_schema(), operation.variable_definitions or (), dict(variables)
                )
                errors = coerced if isinstance(coerced, list) else []
    return [f"GraphQL: {e.message}" for e in errors]


def graphql_answer_problems(
    query: str, variables: Mapping[str, Any] | None, answer: Any
) -> list[str]:
    """What GitHub's schema does not allow in the stand-in's answer to a valid document: the
    answer's ``data`` is executed as the document's result (each field read from the answer under
    its response key), so a value of the wrong type, a null where the schema says non-null, a field
    left out or one the document did not ask for is a drift. Answers with ``errors`` (a refusal) and
    non-GraphQL bodies (a 502) are not."""
    if (
        not isinstance(answer, dict)
        or not isinstance(answer.get("data"), dict)
        or answer.get("errors")
    ):
        return []
    document, _ = _graphql_document(query)
    result = graphql.execute(
        graphql_schema(),
        document,
        root_value=answer["data"],
        field_resolver=_answered,
        type_resolver=_answered_type,
        variable_values=dict(variables or {}),
    )
    assert not isinstance(result, Awaitable)
    out = [f"GraphQL answer: {e.message} at {list(e.path or ())}" for e in result.errors or ()]
    if not out:
        out = [
            f"GraphQL answer: {what} at {path}"
            for path, what in _differences(answer["data"], result.data, [])
        ]
    return out


def _answered(source: Any, info: graphql.GraphQLResolveInfo, **_: Any) -> Any:
    return source.get(info.path.key) if isinstance(source, dict) else None


def _answered_type(
    value: Any, info: graphql.GraphQLResolveInfo, abstract: graphql.GraphQLAbstractType
) -> str | None:
    """The object type of an interface or union value: its ``__typename``, else the one type among
    the document's fragments on this field whose fields the value carries."""
    if isinstance(value, dict) and "__typename" in value:
        return str(value["__typename"])
    found = []
    for node in info.field_nodes:
        for selection in node.selection_set.selections if node.selection_set else ():
            if isinstance(selection, graphql.InlineFragmentNode) and selection.type_condition:
                kind = info.schema.get_type(selection.type_condition.name.value)
                keys = {
                    (f.alias or f.name).value
                    for f in selection.selection_set.selections
                    if isinstance(f, graphql.FieldNode)
                }
                if (
                    isinstance(kind, graphql.GraphQLObjectType)
                    and info.schema.is_sub_type(abstract, kind)
                    and isinstance(value, dict)
                    and keys <= value.keys()
                ):
                    found.append(kind.name)
    return found[0] if len(found) == 1 else None


def _differences(
    answered: Any, result: Any, path: list[str | int]
) -> list[tuple[list[str | int], str]]:
    """Where the answer and its execution part: a field left out, one not asked for, a value
    changed."""
    if isinstance(answered, dict) and isinstance(result, dict):
        out = [(path, f"{key!r} was not asked for") for key in answered if key not in result]
        out += [(path, f"{key!r} is left out") for key in result if key not in answered]
        for key in answered.keys() & result.keys():
            out += _differences(answered[key], result[key], [*path, key])
        return out
    if isinstance(answered, list) and isinstance(result, list) and len(answered) == len(result):
        pairs = enumerate(zip(answered, result, strict=True))
        return [d for i, (a, r) in pairs for d in _differences(a, r, [*path, i])]
    return (
        []
        if answered == result
        else [(path, f"{answered!r} is not what the schema's type gives ({result!r})")]
    )


def problems(record: Mapping[str, Any], probes: bool = False) -> list[str]:
    """What in one recorded request, and the stand-in's answer to it, GitHub's description does not
    allow (empty: it conforms). ``probes``: a request the stand-in refused (4xx; for GraphQL, an
    answer with ``errors``) was a test of its refusals, sent on purpose: only the answer is
    checked."""
    method, path = str(record["method"]), str(record["path"])
    status = int(record.get("status") or 0)
    if path.startswith(NOT_GITHUB):
        return []
    if path == "/graphql":
        if probes and isinstance(record.get("answer"), dict) and record["answer"].get("errors"):
            return []
        sent = record.get("json") or {}
        out = graphql_problems(sent.get("query", ""), sent.get("variables"))
        if not out and "answer" in record:
            out = graphql_answer_problems(
                sent.get("query", ""), sent.get("variables"), record["answer"]
            )
        return out
    found = next(((t, o) for m, p, t, o in operations() if m == method and p.match(path)), None)
    if found is None:
        return [f"{method} {path}: no such operation"]
    template, operation = found
    where = f"{method} {template}"
    out: list[str] = []
    if "status" in record and "answer" in record:
        out += answer_problems(where, template, method, status, record["answer"])
    if probes and 400 <= status < 500:
        return out
    declared = {
        p["name"]: p
        for p in map(_resolve, operation.get("parameters", []))
        if p.get("in") == "query"
    }
    for name in record.get("query") or {}:
        if name not in declared:
            out.append(f"{where}: query parameter {name!r} is not declared")
    body = record.get("json")
    schema = (
        ((operation.get("requestBody") or {}).get("content") or {}).get("application/json") or {}
    ).get("schema")
    if body is not None and schema is None:
        out.append(f"{where}: sends a body the operation does not take")
    elif schema is not None:
        out += [f"{where}: body: {said}" for said in _said(_validator(schema).iter_errors(body))]
    return out


@cache
def webhook_schemas() -> Draft7Validator:
    """``@octokit/webhooks-schemas``: one Draft 7 document, an event's payload at
    ``definitions/<event>$<action>`` (``<event>$event`` for an event without actions, as
    ``ping``)."""
    return Draft7Validator(json.loads(WEBHOOKS.read_text(encoding="utf-8")))


@cache
def _payload_validator(event: str, action: str) -> Draft7Validator | None:
    definitions = webhook_schemas().schema["definitions"]
    name = next((n for n in (f"{event}${action}", f"{event}$event") if n in definitions), None)
    return (
        None if name is None else webhook_schemas().evolve(schema={"$ref": f"#/definitions/{name}"})
    )


def payload_problems(event: str, payload: Any) -> list[str]:
    """What in a webhook ``payload`` of ``event`` (the X-GitHub-Event header) its schema does not
    allow."""
    action = str(payload.get("action") or "") if isinstance(payload, dict) else ""
    where = f"webhook {event}" + (f".{action}" if action else "")
    validator = _payload_validator(event, action)
    if validator is None:
        return [f"{where}: no such event in GitHub's webhook schemas"]
    return [f"{where}: {said}" for said in _said(validator.iter_errors(payload))]


def _said(errors: Iterable[ValidationError]) -> list[str]:
    """Each error as "what at [path]", sorted by path; for a value no branch of a oneOf/anyOf takes,
    the branch's error that goes deepest (the whole value would be printed otherwise)."""
    out = []
    for error in errors:
        # not "is not of type 'null'"
        while error.validator in ("oneOf", "anyOf") and error.context:
            error = best_match([e for e in error.context if e.validator != "type"] or error.context)
        message = error.message
        if len(repr(error.instance)) > 80:  # a whole object: named, not printed
            message = message.replace(repr(error.instance), f"the {type(error.instance).__name__}")
        out.append(
            (list(map(str, error.absolute_path)), f"{message[:200]} at {list(error.absolute_path)}")
        )
    return [said for _, said in sorted(out)]


def note_payload(record: Path, event: str, payload: Any) -> None:
    """Add a webhook payload a test delivers to ``record`` (the stand-in's request log), for
    ``check``."""
    with record.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"event": event, "payload": payload}) + "\n")


# what was checked in this process, by kind
CHECKED = {"rest": 0, "answers": 0, "graphql": 0, "graphql_answers": 0, "other": 0, "payloads": 0}
# those of the end-to-end suite (``Service.close``): the session's notes
END_TO_END = {**CHECKED, "drifts": 0}


def check_end_to_end(records: list[dict[str, Any]], probes: bool = False) -> list[str]:
    """``check`` for a stand-in's record (the end-to-end suite's, an in-thread ``StandIn``'s),
    counted in ``END_TO_END`` (conftest prints it)."""
    before = dict(CHECKED)
    drift = check(records, probes)
    for kind, count in CHECKED.items():
        END_TO_END[kind] += count - before[kind]
    END_TO_END["drifts"] += len(drift)
    return drift


def notes() -> str:
    """The end-to-end conformance counts, one line (empty when no end-to-end test ran)."""
    n = END_TO_END
    if not any(n.values()):
        return ""
    return (
        f"conformance: {n['rest']} REST requests and {n['answers']} stand-in answers checked "
        f"against @octokit/openapi, {n['graphql']} GraphQL documents and {n['graphql_answers']} "
        f"answers against @octokit/graphql-schema, {n['payloads']} webhook payloads against "
        f"@octokit/webhooks-schemas ({n['other']} stand-in control calls not GitHub's); "
        f"{n['drifts']} drifts"
    )


def check(records: Iterable[Mapping[str, Any]], probes: bool = False) -> list[str]:
    """Every problem of ``records`` (requests, the stand-in's answers, webhook payloads), each once
    (``CHECKED`` counts them)."""
    installed()
    found = dict[str, None]()
    for record in records:
        if "event" in record:  # a webhook payload (note_payload)
            CHECKED["payloads"] += 1
            found.update(dict.fromkeys(payload_problems(str(record["event"]), record["payload"])))
            continue
        path = str(record["path"])
        kind = (
            "graphql" if path == "/graphql" else "other" if path.startswith(NOT_GITHUB) else "rest"
        )
        CHECKED[kind] += 1
        CHECKED["answers"] += kind == "rest" and "answer" in record
        answer = record.get("answer")
        CHECKED["graphql_answers"] += (
            kind == "graphql"
            and isinstance(answer, dict)
            and isinstance(answer.get("data"), dict)
            and not answer.get("errors")
        )
        found.update(dict.fromkeys(problems(record, probes)))
    return list(found)


def read(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _openapi_30_to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema's ``null`` type (the rest of 3.0's schema is
    Draft 4's)."""
    if isinstance(node, list):
        return [_openapi_30_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _openapi_30_to_json_schema(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out
