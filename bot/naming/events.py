"""Find the dataset and job identifiers in OpenLineage events and judge each by the naming rules.

One code path for ``registry-bot naming check`` and the regression's ``dataset-name`` / ``job-name``
rules: ``identifiers`` finds them, ``judge`` gives the verdict, so both always agree.

- Which JSON documents are judged: ``document_kind`` tells OpenLineage events (RunEvent, DatasetEvent,
  JobEvent, partial expected events included) and facet documents (the spec's test files) from any other
  JSON (a scenario's ``config.json``, a ``maintainers.json``, a schema), which is skipped.
- Every object holding string ``namespace`` and ``name`` is an identifier: under a ``job`` key, or typed
  ``JOB`` (lineage facets), it is a job; otherwise a dataset (inputs, outputs, DatasetEvent's ``dataset``,
  symlinks, column-lineage input fields, lineage entries).
- A job's kind comes from its *own* ``jobType`` facet (``integration`` and ``jobType``), matched against the
  naming files (their ``integration`` and each form's ``jobTypes``). A job without one, such as a parent
  job in a ParentRunFacet, is judged by its name's shape against every job kind; it never borrows the
  kind of the event's own job.
- Verdicts: ``valid``; ``invalid`` (the rules say why); ``unknown`` (no rule covers it: a dataset scheme
  without a convention, a job of an integration without a naming file, or a job with no ``jobType`` that
  no convention accepts); ``placeholder`` (a test-suite matcher, see ``bot.naming.placeholders``: never
  judged as an identifier).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.jsondoc import MAX_BYTES, MAX_DEPTH, escape_pointer_token
from bot.naming.model import ParseResult
from bot.naming.placeholders import SYNTAXES, is_placeholder
from bot.naming.rules import NamingRules

VALID, INVALID, UNKNOWN, PLACEHOLDER = "valid", "invalid", "unknown", "placeholder"
EVENT_KINDS = ("RunEvent", "DatasetEvent", "JobEvent")
FACETS = "facets"  # document_kind of a facet document: {key: facet}, every facet with _producer or _schemaURL
_EVENT_FIELDS = ("eventTime", "producer", "schemaURL")


class EventsProblem(Exception):
    """A file that holds no readable events."""


@dataclass(frozen=True, slots=True)
class Found:
    """One identifier at ``pointer`` inside a document, with the job's own jobType facet when it has one."""

    role: str  # "dataset" or "job"
    namespace: str
    name: str
    pointer: str
    integration: str | None = None  # the job's own jobType.integration
    job_type: str | None = None  # the job's own jobType.jobType

    @property
    def subject(self) -> str:
        """The pointer written as the regression names subjects: ``run.facets.parent.job``, ``inputs[0]``."""
        out = ""
        for token in self.pointer.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            out += f"[{token}]" if token.isdigit() else (f".{token}" if out else token)
        return out or "event"


@dataclass(frozen=True, slots=True)
class Judged:
    found: Found
    verdict: str
    result: ParseResult

    def to_json(self) -> dict[str, Any]:
        data = {"role": self.found.role, "pointer": self.found.pointer, "namespace": self.found.namespace,
                "name": self.found.name, "verdict": self.verdict, **self.result.to_json()}
        if self.found.integration or self.found.job_type:
            data["jobType"] = {"integration": self.found.integration, "jobType": self.found.job_type}
        return data


def document_kind(doc: Any) -> str | None:
    """``RunEvent``, ``DatasetEvent``, ``JobEvent``, ``FACETS`` (a facet document), or None for other JSON.

    By shape, so that partial expected events count: a RunEvent has ``eventType`` or both ``run`` and
    ``job``; a DatasetEvent a ``dataset`` object, a JobEvent a ``job`` object, each with one of
    ``eventTime``, ``producer``, ``schemaURL`` (a JobEvent also with ``inputs``/``outputs``).
    """
    if not isinstance(doc, dict) or not doc:
        return None
    if "eventType" in doc or (isinstance(doc.get("run"), dict) and isinstance(doc.get("job"), dict)):
        return "RunEvent"
    has_fields = any(k in doc for k in _EVENT_FIELDS)
    if isinstance(doc.get("dataset"), dict) and has_fields:
        return "DatasetEvent"
    if isinstance(doc.get("job"), dict) and (has_fields or "inputs" in doc or "outputs" in doc):
        return "JobEvent"
    if all(isinstance(v, dict) and ("_producer" in v or "_schemaURL" in v) for v in doc.values()):
        return FACETS
    return None


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
    """Every identifier inside one document, sorted by pointer (iteratively: deep nesting cannot crash it).

    The regression calls this for every event, so the walk is lean: pointers are built as linked tuples
    and joined only for the identifiers found.
    """
    found: list[Found] = []
    stack: list[tuple[Any, Any, str, int]] = [(event, None, "", 0)]  # (node, path, key above, depth)
    dict_, list_ = dict, list
    while stack:
        node, path, key, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if type(node) is dict_:
            ns = node.get("namespace")
            if ns is not None:
                nm = node.get("name")
                if isinstance(ns, str) and isinstance(nm, str):
                    found.append(_found(node, path, key, ns, nm))
            for k, v in node.items():
                if type(v) is dict_ or type(v) is list_:
                    stack.append((v, (path, k), k, depth + 1))
        else:
            for i, v in enumerate(node):
                if type(v) is dict_ or type(v) is list_:
                    stack.append((v, (path, i), key, depth + 1))
    found.sort(key=lambda f: f.pointer)
    return found


def _found(node: dict[str, Any], path: Any, key: str, ns: str, nm: str) -> Found:
    tokens: list[str] = []
    while path is not None:
        path, token = path
        tokens.append(escape_pointer_token(token) if isinstance(token, str) else str(token))
    pointer = "".join(f"/{t}" for t in reversed(tokens))
    if key == "job" or node.get("type") == "JOB":
        integration, job_type = _job_type(node)
        return Found("job", ns, nm, pointer, integration, job_type)
    return Found("dataset", ns, nm, pointer)


def _job_type(job: dict[str, Any]) -> tuple[str | None, str | None]:
    """The job's own ``facets.jobType`` (integration, jobType), placeholders dropped."""
    facets = job.get("facets")
    facet = facets.get("jobType") if isinstance(facets, dict) else None
    if not isinstance(facet, dict):
        return None, None
    values = [facet.get("integration"), facet.get("jobType")]
    integration, job_type = (v if isinstance(v, str) and v and not is_placeholder(v) else None for v in values)
    return integration, job_type


def identifiers_in_file(path: Path) -> Iterator[Found]:
    for event in read_events(path):
        yield from identifiers(event)


def judge(rules: NamingRules, found: Found) -> tuple[str, ParseResult]:
    """The verdict (valid, invalid, unknown or placeholder) on one identifier, and the parse behind it."""
    if is_placeholder(found.namespace) or is_placeholder(found.name):
        return PLACEHOLDER, ParseResult(False, reason=f"a test-suite placeholder ({' or '.join(SYNTAXES)}), "
                                                      "not an identifier")
    if found.role == "job":
        return _judge_job(rules, found)
    result = rules.parse_dataset(found.namespace, found.name)
    if result.ok:
        return VALID, result
    if rules.covers_namespace(found.namespace):
        return INVALID, result
    return UNKNOWN, result


def _judge_job(rules: NamingRules, found: Found) -> tuple[str, ParseResult]:
    if found.integration is None:  # no evidence of its own: any job kind whose shape it has
        result = rules.parse_job(found.namespace, found.name)
        if result.ok:  # name every kind that accepts it: the shape alone does not tell them apart
            kinds = [k for k in rules.jobs if k == result.source or rules.parse_job(found.namespace, found.name, k).ok]
            return VALID, result._replace(source=" or ".join(kinds))
        return UNKNOWN, result._replace(reason="no jobType facet says what kind of job this is, and no job naming "
                                               f"convention accepts it: {result.reason}")
    kind = rules.job_kind(found.integration)
    if kind is None:
        return UNKNOWN, ParseResult(False, reason=f"no job naming convention for the integration "
                                                  f"{found.integration!r} (jobType facet)")
    if not rules.job_forms(kind, found.job_type):
        return UNKNOWN, ParseResult(False, source=kind, reason=f"the {kind} job naming convention has no form for "
                                                               f"jobType {found.job_type!r}")
    result = rules.parse_job(found.namespace, found.name, kind, found.job_type)
    return (VALID if result.ok else INVALID), result


def judge_event(rules: NamingRules, event: Any) -> list[Judged]:
    return [Judged(f, *judge(rules, f)) for f in identifiers(event)]
