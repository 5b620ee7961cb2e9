"""Find the dataset and job identifiers in OpenLineage events and judge each by the naming rules.

Reads JSON files (one event, an array of events, or facet documents such as the spec's test
files) and JSON lines. Every object holding string ``namespace`` and ``name`` is an identifier:
under a ``job`` key, or typed ``JOB`` (lineage facets), it is a job; otherwise a dataset (inputs,
outputs, DatasetEvent's ``dataset``, symlinks, column-lineage input fields, lineage entries).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.jsondoc import MAX_BYTES, MAX_DEPTH, escape_pointer_token
from bot.naming.model import ParseResult
from bot.naming.rules import NamingRules

PLACEHOLDER = "${json-unit."  # the integration tests' expected events use json-unit placeholders


class EventsProblem(Exception):
    """A file that holds no readable events."""


@dataclass(frozen=True, slots=True)
class Found:
    """One identifier at ``pointer`` inside event ``index`` of a file."""

    role: str  # "dataset" or "job"
    namespace: str
    name: str
    pointer: str
    integration: str | None = None  # jobType.integration of the job, when the event says


@dataclass(frozen=True, slots=True)
class Judged:
    found: Found
    result: ParseResult

    def to_json(self) -> dict[str, Any]:
        return {"role": self.found.role, "pointer": self.found.pointer, "namespace": self.found.namespace,
                "name": self.found.name, **self.result.to_json()}


def read_events(path: Path) -> list[Any]:
    """The JSON values of a file: its elements if it is an array, each line for JSON lines."""
    size = path.stat().st_size
    if size > MAX_BYTES * 10:
        raise EventsProblem(f"{path} is {size:,} bytes, over the {MAX_BYTES * 10:,}-byte limit")
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as whole:
        values = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise EventsProblem(f"{path}: neither JSON ({whole.msg}, line {whole.lineno}) nor JSON lines "
                                    f"(line {number}: {exc.msg})") from None
        return values
    except RecursionError:
        raise EventsProblem(f"{path}: JSON is nested too deeply") from None
    return value if isinstance(value, list) else [value]


def identifiers(event: Any) -> list[Found]:
    """Every identifier inside one event (iteratively, so deep nesting cannot crash it)."""
    found: list[Found] = []
    integration = _integration(event)
    stack: list[tuple[Any, str, str, int]] = [(event, "", "", 0)]
    while stack:
        node, pointer, key, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if isinstance(node, dict):
            ns, nm = node.get("namespace"), node.get("name")
            if isinstance(ns, str) and isinstance(nm, str):
                is_job = key == "job" or node.get("type") == "JOB"
                found.append(Found("job" if is_job else "dataset", ns, nm, pointer,
                                   integration if is_job and pointer == "/job" else None))
            for k, v in node.items():
                if isinstance(v, dict | list):
                    stack.append((v, f"{pointer}/{escape_pointer_token(k)}", k, depth + 1))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, dict | list):
                    stack.append((v, f"{pointer}/{i}", key, depth + 1))
    found.sort(key=lambda f: f.pointer)
    return found


def _integration(event: Any) -> str | None:
    try:
        value = event["job"]["facets"]["jobType"]["integration"]
    except (KeyError, TypeError):
        return None
    return value.lower() if isinstance(value, str) else None


def identifiers_in_file(path: Path) -> Iterator[Found]:
    for event in read_events(path):
        yield from identifiers(event)


def judge(rules: NamingRules, found: Found) -> ParseResult:
    """The verdict on one identifier; json-unit placeholders are reported as such."""
    if PLACEHOLDER in found.namespace or PLACEHOLDER in found.name:
        return ParseResult(False, reason="a json-unit test placeholder (${json-unit...}), not an identifier")
    if found.role == "job":
        kind = found.integration if found.integration in rules.jobs else None
        return rules.parse_job(found.namespace, found.name, kind)
    return rules.parse_dataset(found.namespace, found.name)


def judge_event(rules: NamingRules, event: Any) -> list[Judged]:
    return [Judged(f, judge(rules, f)) for f in identifiers(event)]
