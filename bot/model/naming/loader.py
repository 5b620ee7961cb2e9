"""Read naming files (from a snapshot folder) and build sources from them, reporting every problem.

A file that cannot be used is skipped and described by a ``Problem``; the others still load, so one
broken file never hides the rest. The checks turn problems into findings located on their line.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from bot import bundled
from bot.core.config import NAMING_BASE_FILE
from bot.core.jsondoc import JsonDoc, JsonProblem, pointer_from
from bot.core.regex_size import MAX_UNITS, PatternTooLarge, check_size
from bot.core.small_cache import small_cache
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.naming.model import Component, Example, Form, Quoting, SchemeDecision, Source
from bot.model.naming.patterns import (
    Bounded,
    BudgetSpent,
    PatternProblem,
    UnitBudget,
    check_pattern,
    compile_ascii,
    compile_full,
    compile_hot,
)
from bot.model.naming.template import Template, TemplateError

if TYPE_CHECKING:  # the pure-Python stack explains a naming file that fails its base schema
    import jsonschema
    import regex

BASE_FILE = NAMING_BASE_FILE
DECISIONS_FILE = "decisions.json"
KINDS = {"datasets": "dataset", "jobs": "job"}
MAX_FILES = 2000
SCHEMA_BUDGET_SECONDS = 2.0  # CPU seconds: one naming file against the base schema


@dataclass(frozen=True)
class Problem:
    """Why (part of) a naming file cannot be used."""

    rule: str
    path: str
    pointer: str
    message: str
    subject: str = ""  # what it is about, where the message quotes more (``Finding.subject``)


@dataclass
class NamingFiles:
    """The parsed JSON files of one naming folder (paths are repository paths)."""

    folder: str
    docs: dict[str, JsonDoc]
    problems: list[Problem]

    def source_paths(self) -> list[str]:
        return [p for p in self.docs if _kind_of(self.folder, p) is not None]


def _kind_of(folder: str, path: str) -> str | None:
    rel = PurePosixPath(path).relative_to(folder) if folder else PurePosixPath(path)
    if len(rel.parts) >= 2 and rel.parts[0] in KINDS and rel.suffix == ".json":
        return KINDS[rel.parts[0]]
    return None


def read_folder(snapshot: Snapshot, folder: str) -> NamingFiles:
    """Parse every JSON file of a naming folder; unreadable files become problems."""
    folder = folder.strip("/")
    docs: dict[str, JsonDoc] = {}
    problems: list[Problem] = []
    paths = [p for p in snapshot.files(folder) if p.endswith(".json")]
    if len(paths) > MAX_FILES:
        problems.append(
            Problem(
                "naming/invalid-file",
                folder,
                "",
                f"{len(paths)} JSON files, over the {MAX_FILES}-file limit; only the first are "
                f"read",
            )
        )
        paths = paths[:MAX_FILES]
    for path in paths:
        try:
            data = snapshot.read(path)
            if data is None:
                continue
            docs[path] = JsonDoc.parse(data, path)
        except JsonProblem as exc:
            problems.append(Problem("naming/invalid-file", path, "", _located(exc)))
        except SnapshotError as exc:
            problems.append(Problem("naming/invalid-file", path, "", str(exc)))
    return NamingFiles(folder, docs, problems)


def _located(exc: JsonProblem) -> str:
    where = f" (line {exc.line}, column {exc.column})" if exc.line else ""
    return exc.message + where


# a pull request's base schema is kept only when about the size of the shipped one (11 KB)
@small_cache(maxsize=8, largest=64_000)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    import json

    from bot.model.schemas import FORMAT_CHECKER, HardenedValidator, offline_registry

    # from the pull request: offline, bounded regexes (bot/model/schemas.py)
    schema = json.loads(schema_json)
    return HardenedValidator(schema, registry=offline_registry(), format_checker=FORMAT_CHECKER)


@functools.lru_cache(maxsize=1)
def _shipped_base() -> Any:
    import json

    return json.loads(bundled.path("naming", BASE_FILE).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=8)
def _fast_is_valid(schema_json: str) -> Any:
    """jsonschema-rs' ``is_valid`` for a base schema the bot ships (None if it cannot compile): it
    cannot be stopped, so a base schema from a pull request always takes the bounded pure-Python
    validator."""
    import json

    from bot.model.schemas import RS_FORMATS, rs_validator

    try:
        return rs_validator(
            json.loads(schema_json), validate_formats=True, formats=RS_FORMATS
        ).is_valid
    except Exception:  # noqa: BLE001 - the explaining validator decides alone
        return None


def schema_problems(base_schema: Mapping[str, Any], path: str, value: Any) -> list[Problem]:
    """Every way ``value`` breaks the base schema, each with its JSON pointer (a file that passes
    the shipped base schema is decided by jsonschema-rs; the pure-Python validator explains the
    others)."""
    import json

    schema = dict(base_schema)
    kind = value.get("kind") if isinstance(value, dict) else None
    branch = {"dataset": "DatasetNaming", "job": "JobNaming", "decisions": "Decisions"}.get(
        str(kind)
    )
    defs = schema.get("$defs")
    # errors point into the right branch
    if branch is not None and isinstance(defs, dict) and branch in defs:
        schema.pop("oneOf", None)
        schema["$ref"] = f"#/$defs/{branch}"
    schema_json = json.dumps(schema, sort_keys=True)
    if base_schema == _shipped_base():
        is_valid = _fast_is_valid(schema_json)
        if is_valid is not None and is_valid(value):
            return []
    from referencing.exceptions import Unresolvable

    from bot.model.schemas import ValidationTimeout, deadline

    validator = _validator(schema_json)
    try:
        # CPU time of this thread: a loaded machine (waiting, not working) skips no file
        with deadline(SCHEMA_BUDGET_SECONDS, clock=time.thread_time):
            errors = list(validator.iter_errors(value))
    except (ValidationTimeout, Unresolvable, RecursionError) as exc:
        return [
            Problem(
                "naming/unchecked",
                path,
                "",
                f"the file could not be checked against the base schema: {exc}",
            )
        ]
    from bot.model.error_subject import about
    from bot.model.explanations import from_python

    out = []
    for err in sorted(errors, key=lambda e: list(map(str, e.absolute_path))):
        out.append(
            Problem(
                "naming/schema",
                path,
                pointer_from(list(err.absolute_path)),
                f"{err.message} (base schema: {'/'.join(map(str, err.absolute_schema_path))})",
                about(from_python(err), value),
            )
        )
    return out


def build_sources(
    documents: Iterable[tuple[str, Any]],
    folder: str,
    base_schema: Mapping[str, Any] | None,
    match_timeout: float | None = None,
    judged: dict[str, tuple[Problem, ...]] | None = None,
) -> tuple[list[Source], list[SchemeDecision], list[Problem]]:
    """Build sources and scheme decisions from (path, JSON value) pairs of one naming folder.

    ``match_timeout``: the files come from a pull request, so the patterns matched on their own
    (quoting, decisions) are ``Bounded`` by it. ``judged``: each file's base-schema problems by
    path, filled where missing and used where present: the validation has a time limit
    (``SCHEMA_BUDGET_SECONDS``), so rules rebuilt elsewhere (a Spark worker) take the verdicts
    judged where they were built, never deciding again on another machine's speed."""
    sources: list[Source] = []
    decisions: list[SchemeDecision] = []
    problems: list[Problem] = []
    budget = UnitBudget()
    for path, value in documents:
        kind = _kind_of(folder, path)
        is_decisions = PurePosixPath(path) == PurePosixPath(folder, DECISIONS_FILE)
        if kind is None and not is_decisions:
            continue
        if base_schema is not None:
            found = judged.get(path) if judged is not None else None
            if found is None:
                found = tuple(schema_problems(base_schema, path, value))
                if judged is not None:
                    judged[path] = found
            if found:
                problems.extend(found)
                if any(p.rule == "naming/schema" for p in found):
                    # pre-existing at base, the schema errors would let a change to the rest pass
                    problems.append(_unchecked(path, "its forms, patterns, examples and decisions"))
                continue
        try:
            if is_decisions:
                decisions.extend(_decisions(path, value, problems, budget, match_timeout))
            else:
                source = _source(path, kind or "dataset", value, problems, budget, match_timeout)
                if source is not None:
                    sources.append(source)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(
                Problem(
                    "naming/schema", path, "", f"file does not have the expected shape: {exc!r}"
                )
            )
            problems.append(_unchecked(path, "its forms, patterns, examples and decisions"))
    return sources, decisions, problems


def _examples(items: Any, pointer: str) -> tuple[Example, ...]:
    out = []
    for i, item in enumerate(items or ()):
        job_type = item.get("jobType")
        out.append(
            Example(
                str(item["namespace"]),
                str(item["name"]),
                f"{pointer}/{i}",
                str(item.get("reason", "")),
                str(job_type) if job_type is not None else None,
            )
        )
    return tuple(out)


def _source(
    path: str,
    kind: str,
    raw: dict[str, Any],
    problems: list[Problem],
    budget: UnitBudget,
    match_timeout: float | None,
) -> Source | None:
    sid = raw["id"]
    components: dict[str, Component] = {}
    broken = False
    quoting_raw = raw.get("quoting")
    quoted_names = set(quoting_raw.get("components", ())) if quoting_raw else set()
    quoting: Quoting | None = None
    if quoting_raw:
        try:
            unquoted = check_pattern(quoting_raw["unquoted"], budget)
            quoting = Quoting(
                quoting_raw.get("quote", '"'),
                compile_hot(quoting_raw["unquoted"])
                if match_timeout is None
                else Bounded(unquoted, match_timeout),
                quoting_raw.get("resolves", "preserve"),
            )
        except PatternProblem as exc:
            problems.append(
                Problem("naming/unsafe-pattern", path, "/quoting/unquoted", str(exc), exc.subject)
            )
            broken = True  # the components are still checked, unquoted
    skipped: set[str] = set()  # broken components: the forms using them are checked without
    for name, spec in raw.get("components", {}).items():
        pointer = f"/components/{name}/pattern"
        try:
            compiled = check_pattern(spec["pattern"], budget)
            pattern = spec["pattern"]
            if name in quoted_names and quoting is not None:
                q = regex_escape(quoting.quote)
                pattern = f"(?:{quoting_raw['unquoted']}|{q}(?:[^{q}]|{q}{q})+{q})"  # type: ignore[index]
                budget.take(check_size(pattern), "the quoted form of this pattern")
                compiled = compile_full(pattern)
        except (PatternProblem, PatternTooLarge) as exc:
            problems.append(
                Problem(
                    "naming/unsafe-pattern",
                    path,
                    pointer,
                    f"component {name}: {exc}",
                    _about(f"component {name}: ", exc),
                )
            )
            if isinstance(exc, BudgetSpent):  # so would every pattern after it: said once
                problems.append(_unchecked(path, "its patterns after this one and the rest"))
                return None
            broken = True
            skipped.add(name)
            continue
        components[name] = Component(
            name=name,
            pattern=pattern,
            description=spec.get("description", ""),
            expect=spec.get("expect", ""),
            case=spec.get("case", "preserve"),
            quoting=quoting if name in quoted_names else None,
            compiled=compiled,
        )
    forms: list[Form] = []
    for i, form in enumerate(raw["forms"]):  # every form, each broken one said
        made = _form(path, sid, i, form, components, problems, budget, skipped)
        if made is None:
            broken = True
        else:
            forms.append(made)
    if broken:
        problems.append(_unchecked(path, "its examples, decisions and round trips"))
        return None
    for name in quoted_names - set(components):
        problems.append(
            Problem(
                "naming/undeclared-component",
                path,
                "/quoting/components",
                f"quoting names component {name!r}, which is not declared",
            )
        )
    used = {c for f in forms for c in f.components()}
    for name in sorted(set(components) - used):
        problems.append(
            Problem(
                "naming/unused-component",
                path,
                f"/components/{name}",
                f"component {name!r} is declared but no template uses it",
            )
        )
    examples = raw.get("examples", {})
    decisions = raw.get("decisions", [])
    decided = [(i, d) for i, d in enumerate(decisions)]
    return Source(
        id=sid,
        kind=kind,
        title=raw.get("title", sid),
        path=path,
        scheme=raw.get("scheme"),
        forms=tuple(forms),
        components=components,
        quoting=quoting,
        uri=raw.get("uri", "{namespace}/{name}"),
        raw=raw,
        valid=_examples(examples.get("valid"), "/examples/valid"),
        invalid=_examples(examples.get("invalid"), "/examples/invalid"),
        decided_valid=tuple(
            Example(d["namespace"], d["name"], f"/decisions/{i}")
            for i, d in decided
            if d["verdict"] == "valid"
        ),
        decided_invalid=tuple(
            Example(d["namespace"], d["name"], f"/decisions/{i}", d.get("expect", ""))
            for i, d in decided
            if d["verdict"] == "invalid"
        ),
        wins_over=frozenset(raw.get("precedence", {}).get("over", ())),
    )


def _about(prefix: str, exc: Exception) -> str:
    """A pattern problem's subject (``PatternProblem.subject``), "" for one its message says."""
    subject = exc.subject if isinstance(exc, PatternProblem) else ""
    return prefix + subject if subject else ""


def _unchecked(path: str, what: str) -> Problem:
    """What of a file was not checked once a problem dropped its source (said, never silent)."""
    return Problem(
        "naming/unchecked",
        path,
        "",
        f"{what} were not checked: the file's source is not built while its other problems stand",
        path,
    )


def regex_escape(text: str) -> str:
    import regex

    return str(regex.escape(text))


def _form(
    path: str,
    sid: str,
    index: int,
    raw: dict[str, Any],
    components: dict[str, Component],
    problems: list[Problem],
    budget: UnitBudget,
    skipped: set[str] | frozenset[str] = frozenset(),
) -> Form | None:
    """One form, or None after its problems (``skipped``: broken components, said already)."""
    templates: dict[str, Template] = {}
    for part in ("namespace", "name"):
        try:
            templates[part] = Template.parse(raw[part])
        except TemplateError as exc:
            problems.append(
                Problem(
                    "naming/template-syntax",
                    path,
                    f"/forms/{index}/{part}",
                    f"{part} template: {exc}",
                )
            )
            return None
    ns, nm = templates["namespace"], templates["name"]
    names = [*ns.slots(), *nm.slots()]
    missing = [n for n in names if n not in components and n not in skipped]
    if any(n in skipped for n in names) and not missing:
        return None
    if missing:
        for n in missing:
            problems.append(
                Problem(
                    "naming/undeclared-component",
                    path,
                    f"/forms/{index}",
                    f"template uses {{{n}}}, which is not declared under components",
                )
            )
        return None
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        problems.append(
            Problem(
                "naming/template-syntax",
                path,
                f"/forms/{index}",
                f"component {{{twice[0]}}} appears in both the namespace and the name",
            )
        )
        return None

    def pattern_of(name: str) -> str:
        return components[name].pattern

    joined = ns.regex_source(pattern_of) + "\\x00" + nm.regex_source(pattern_of)
    # its components are checked one by one; joined, any number of them is one program
    try:
        # namespace, name and both are compiled apart
        budget.take(3 * check_size(joined, MAX_UNITS), f"form {raw.get('label', 'default')!r}")
    except (PatternProblem, PatternTooLarge) as exc:
        problems.append(
            Problem(
                "naming/unsafe-pattern",
                path,
                f"/forms/{index}",
                f"this form ({len(names)} components joined): {exc}",
                _about(f"this form ({len(names)} components joined): ", exc),
            )
        )
        return None
    hot_re = compile_hot(joined)
    return Form(
        source=sid,
        label=raw.get("label", "default"),
        namespace=ns,
        name=nm,
        namespace_source=ns.regex_source(pattern_of),
        name_source=nm.regex_source(pattern_of),
        both_source=joined,
        hot_re=hot_re,
        hot_ascii=compile_ascii(joined) if not isinstance(hot_re, re.Pattern) else None,
        has_optional=ns.required() != list(ns.slots()) or nm.required() != list(nm.slots()),
        checked=tuple(
            components[n] for n in names if components[n].quoted or components[n].case != "preserve"
        ),
        job_types=tuple(str(t) for t in raw.get("jobTypes", ())),
    )


def _decisions(
    path: str,
    raw: dict[str, Any],
    problems: list[Problem],
    budget: UnitBudget,
    match_timeout: float | None,
) -> list[SchemeDecision]:
    out = []
    for i, item in enumerate(raw.get("namespaces", [])):
        pointer = f"/namespaces/{i}"
        pattern: regex.Pattern[str] | Bounded | None = None
        if "namespacePattern" in item:
            try:
                pattern = check_pattern(item["namespacePattern"], budget)
                if match_timeout is not None:
                    pattern = Bounded(pattern, match_timeout)
            except PatternProblem as exc:
                problems.append(
                    Problem(
                        "naming/unsafe-pattern",
                        path,
                        pointer + "/namespacePattern",
                        str(exc),
                        exc.subject,
                    )
                )
                continue
        out.append(
            SchemeDecision(
                pointer=pointer,
                reason=item["reason"],
                scheme=item.get("scheme"),
                pattern=pattern,
                examples=_examples(item.get("examples"), pointer + "/examples"),
            )
        )
    return out
