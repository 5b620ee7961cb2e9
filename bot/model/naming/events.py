"""Find the dataset and job identifiers in OpenLineage events and judge each by the naming rules.

More in docs/module-notes.md (bot/model/naming/events.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from bot.core.jsondoc import MAX_BYTES, MAX_DEPTH, JsonProblem, escape_pointer_token, strict_loads
from bot.model.naming.model import ParseResult
from bot.model.naming.placeholders import SYNTAXES, is_placeholder
from bot.model.naming.rules import TOO_SLOW, NamingRules

VALID, INVALID, UNKNOWN, PLACEHOLDER = "valid", "invalid", "unknown", "placeholder"
EVENT_KINDS = ("RunEvent", "DatasetEvent", "JobEvent")
# document_kind of a facet document: {key: facet}, every facet with _producer or _schemaURL
FACETS = "facets"
_EVENT_FIELDS = ("eventTime", "producer", "schemaURL")


class EventsProblem(Exception):
    """A file that holds no readable events."""


class Found(NamedTuple):
    """One identifier inside a document, with the job's own jobType facet when it has one.

    A named tuple (the regression makes one per identifier of every event); ``path`` is the location
    as linked ``(parent, key)`` tuples, written out as ``pointer`` or ``subject`` only when asked.
    """

    role: str  # "dataset" or "job"
    namespace: str
    name: str
    path: Any = None
    integration: str | None = None  # the job's own jobType.integration
    job_type: str | None = None  # the job's own jobType.jobType

    def tokens(self) -> list[str | int]:
        out: list[str | int] = []
        path = self.path
        while path is not None:
            path, token = path
            out.append(token)
        out.reverse()
        return out

    @property
    def pointer(self) -> str:
        """The JSON pointer of the identifier's object: ``/run/facets/parent/job``."""
        return "".join(
            f"/{escape_pointer_token(t) if isinstance(t, str) else t}" for t in self.tokens()
        )

    @property
    def subject(self) -> str:
        """The location as the regression names subjects: ``run.facets.parent.job``,
        ``inputs[0]``."""
        out = ""
        for token in self.tokens():
            out += f"[{token}]" if isinstance(token, int) else (f".{token}" if out else token)
        return out or "event"


@dataclass(frozen=True, slots=True)
class Judged:
    found: Found
    verdict: str
    result: ParseResult

    def to_json(self) -> dict[str, Any]:
        data = {
            "role": self.found.role,
            "pointer": self.found.pointer,
            "namespace": self.found.namespace,
            "name": self.found.name,
            "verdict": self.verdict,
            **self.result.to_json(),
        }
        if self.found.integration or self.found.job_type:
            data["jobType"] = {
                "integration": self.found.integration,
                "jobType": self.found.job_type,
            }
        return data


def document_kind(doc: Any) -> str | None:
    """``RunEvent``, ``DatasetEvent``, ``JobEvent``, ``FACETS`` (a facet document), or None for
    other JSON.

    By shape, so that partial expected events count: a RunEvent has ``eventType`` or both ``run``
    and ``job``; a DatasetEvent a ``dataset`` object, a JobEvent a ``job`` object, each with one of
    ``eventTime``, ``producer``, ``schemaURL`` (a JobEvent also with ``inputs``/``outputs``).
    """
    if not isinstance(doc, dict) or not doc:
        return None
    if "eventType" in doc or (
        isinstance(doc.get("run"), dict) and isinstance(doc.get("job"), dict)
    ):
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
        # a key written twice means different events to different readers
        value = strict_loads(text)
    except json.JSONDecodeError as whole:
        values = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                values.append(strict_loads(line))
            except json.JSONDecodeError as exc:
                raise EventsProblem(
                    f"{path}: neither JSON ({whole.msg}, line {whole.lineno}) nor JSON lines "
                    f"(line {number}: {exc.msg})"
                ) from None
            except JsonProblem as exc:
                raise EventsProblem(f"{path} line {number}: {exc.message}") from None
        return values
    except JsonProblem as exc:
        raise EventsProblem(f"{path}: {exc.message}") from None
    except RecursionError:
        raise EventsProblem(f"{path}: JSON is nested too deeply") from None
    return value if isinstance(value, list) else [value]


def identifiers(event: Any, candidates: int | None = None, ordered: bool = True) -> list[Found]:
    """Every identifier inside one document (iteratively: deep nesting cannot crash it), sorted by
    pointer unless ``ordered`` is false.

    The walk is breadth-first, so the shallow identifiers (the job, inputs, outputs, the parent job)
    come before the bulk of an event (schema fields, column lineage). ``candidates``, when the
    caller knows it, is how many objects with a ``namespace`` key the document holds at most (the
    regression counts ``"namespace"`` in the raw text): once that many are found, the rest of the
    document cannot hold one and is not walked.
    """
    found: list[Found] = []
    if candidates == 0:
        return found
    if candidates is not None and type(event) is dict:
        shallow, seen = _shallow(event)
        if seen == candidates:  # all of them are where events keep most identifiers
            if ordered:
                shallow.sort(key=lambda f: f.pointer)
            return shallow
    seen = 0
    # (node, path as linked tuples, key above)
    level: list[tuple[Any, Any, Any]] = [(event, None, "")]
    dict_, list_ = dict, list
    for _depth in range(MAX_DEPTH + 1):
        below: list[tuple[Any, Any, Any]] = []
        for node, path, key in level:
            if type(node) is dict_:
                if "namespace" in node:
                    identifier = _identifier(node, path, key)
                    if identifier is not None:
                        found.append(identifier)
                    seen += 1
                    if seen == candidates:
                        below = []
                        break
                for k, v in node.items():
                    if type(v) is dict_ or type(v) is list_:
                        below.append((v, (path, k), k))
            else:
                for i, v in enumerate(node):
                    if type(v) is dict_ or type(v) is list_:
                        below.append((v, (path, i), key))
        if not below:
            break
        level = below
    if ordered:
        found.sort(key=lambda f: f.pointer)
    return found


def _identifier(node: dict[str, Any], path: Any, key: Any) -> Found | None:
    """The job or dataset identifier of an object holding ``namespace`` (None unless both parts are
    strings)."""
    ns, nm = node["namespace"], node.get("name")
    if type(ns) is not str or type(nm) is not str:
        return None
    if key == "job" or node.get("type") == "JOB":
        return Found("job", ns, nm, path, *_job_type(node))
    return Found("dataset", ns, nm, path)


def _shallow(event: dict[str, Any]) -> tuple[list[Found], int]:
    """The identifiers in the places an event's structure puts them (the job, inputs, outputs,
    dataset, and the objects directly inside a run or job facet, such as a parent job), and how many
    objects with a ``namespace`` key those places hold: the same ``Found`` values the full walk
    gives for them."""
    found: list[Found] = []
    seen = 0

    def visit(node: dict[str, Any], path: Any, key: Any) -> None:
        nonlocal seen
        seen += 1
        identifier = _identifier(node, path, key)
        if identifier is not None:
            found.append(identifier)

    for key in ("job", "dataset"):
        value = event.get(key)
        if type(value) is dict and "namespace" in value:
            visit(value, (None, key), key)
    for key in ("inputs", "outputs"):
        items = event.get(key)
        if type(items) is list:
            for i, item in enumerate(items):
                if type(item) is dict and "namespace" in item:
                    visit(item, ((None, key), i), key)
    for holder_key in ("run", "job"):
        holder = event.get(holder_key)
        facets = holder.get("facets") if type(holder) is dict else None
        if type(facets) is dict:
            for facet_key, facet in facets.items():
                if type(facet) is dict:
                    for k, v in facet.items():
                        if type(v) is dict and "namespace" in v:
                            visit(v, ((((None, holder_key), "facets"), facet_key), k), k)
    return found, seen


# (role, namespace, name, integration, job type)
Identity = tuple[str, str, str, "str | None", "str | None"]


def shallow_identities(
    event: dict[str, Any], limit: int | None = None
) -> tuple[list[Identity], int]:
    """What ``_shallow`` finds, without locations: each identifier as (role, namespace, name,
    integration, job type), which is all a verdict depends on (the regression needs a location only
    for one that fails), and how many objects with a ``namespace`` key those places hold.

    ``limit``, like ``identifiers``' ``candidates``, is how many such objects the whole document
    holds at most: once that many are seen the rest cannot hold one, and the walk stops (the facets
    of the run and the job, the widest places, are looked in last)."""
    found: list[Identity] = []
    seen = 0
    for key in ("job", "dataset"):
        node = event.get(key)
        if type(node) is dict and "namespace" in node:
            seen += 1
            _add_identity(node, key, found)
            if seen == limit:
                return found, seen
    for key in ("inputs", "outputs"):
        items = event.get(key)
        if type(items) is list:
            for item in items:
                if type(item) is dict and "namespace" in item:
                    seen += 1
                    _add_identity(item, key, found)
                    if seen == limit:
                        return found, seen
    for holder_key in ("run", "job"):
        holder = event.get(holder_key)
        facets = holder.get("facets") if type(holder) is dict else None
        if type(facets) is dict:
            for facet in facets.values():
                if type(facet) is dict:
                    for k, v in facet.items():
                        if type(v) is dict and "namespace" in v:
                            seen += 1
                            _add_identity(v, k, found)
                            if seen == limit:
                                return found, seen
    return found, seen


def _add_identity(node: dict[str, Any], key: Any, found: list[Identity]) -> None:
    """``_identifier``'s rules, appending an ``Identity`` when both parts are strings."""
    ns, nm = node["namespace"], node.get("name")
    if type(ns) is str and type(nm) is str:
        if key == "job" or node.get("type") == "JOB":
            found.append(("job", ns, nm, *_job_type(node)))
        else:
            found.append(("dataset", ns, nm, None, None))


def _job_type(job: dict[str, Any]) -> tuple[str | None, str | None]:
    """The job's own ``facets.jobType`` (integration, jobType), placeholders dropped."""
    facets = job.get("facets")
    facet = facets.get("jobType") if isinstance(facets, dict) else None
    if not isinstance(facet, dict):
        return None, None
    values = [facet.get("integration"), facet.get("jobType")]
    integration, job_type = (
        v if isinstance(v, str) and v and not is_placeholder(v) else None for v in values
    )
    return integration, job_type


def identifiers_in_file(path: Path) -> Iterator[Found]:
    for event in read_events(path):
        yield from identifiers(event)


def judge(rules: NamingRules, found: Found) -> tuple[str, ParseResult]:
    """The verdict (valid, invalid, unknown or placeholder) on one identifier, and the parse behind
    it."""
    if is_placeholder(found.namespace) or is_placeholder(found.name):
        return PLACEHOLDER, ParseResult(
            False, reason=f"a test-suite placeholder ({' or '.join(SYNTAXES)}), not an identifier"
        )
    if found.role == "job":
        return _judge_job(rules, found)
    result = rules.parse_dataset(found.namespace, found.name)
    if result.ok:
        return VALID, result
    try:
        covered = rules.covers_namespace(found.namespace)
    except TimeoutError:  # past its limit on this machine: invalid or unknown is not said
        return INVALID, result._replace(reason=TOO_SLOW)
    return (INVALID if covered else UNKNOWN), result


def _judge_job(rules: NamingRules, found: Found) -> tuple[str, ParseResult]:
    if found.integration is None:  # no evidence of its own: any job kind whose shape it has
        result = rules.parse_job(found.namespace, found.name)
        if result.ok:  # name every kind that accepts it: the shape alone does not tell them apart
            kinds = [
                k
                for k in rules.jobs
                if k == result.source or rules.parse_job(found.namespace, found.name, k).ok
            ]
            return VALID, result._replace(source=" or ".join(kinds))
        return UNKNOWN, result._replace(
            reason="no jobType facet says what kind of job this is, and no job naming "
            f"convention accepts it: {result.reason}"
        )
    kind = rules.job_kind(found.integration)
    if kind is None:
        return UNKNOWN, ParseResult(
            False,
            reason=f"no job naming convention for the integration "
            f"{found.integration!r} (jobType facet)",
        )
    if not rules.job_forms(kind, found.job_type):
        return UNKNOWN, ParseResult(
            False,
            source=kind,
            reason=f"the {kind} job naming convention has no form for jobType {found.job_type!r}",
        )
    result = rules.parse_job(found.namespace, found.name, kind, found.job_type)
    return (VALID if result.ok else INVALID), result


def judge_event(rules: NamingRules, event: Any) -> list[Judged]:
    return [Judged(f, *judge(rules, f)) for f in identifiers(event)]
