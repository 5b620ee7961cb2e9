"""Example rules: every facet has examples, they validate, and negative examples fail as declared."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import ValidationError
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from bot.checks._common import at, json_pointer, unreadable
from bot.findings import Finding, Severity
from bot.jsondoc import JsonDoc
from bot.registry import Entry, FacetSchema
from bot.review_input import ReviewInput
from bot.schemas import ValidationTimeout, deadline

EXAMPLE_BUDGET_SECONDS = 2.0
MAX_ERRORS_PER_EXAMPLE = 50
EXPECT_KEY = "$expect"

RULES = {
    "examples/missing": "Each facet has at least one example: `facets/examples/<FacetName>/<n>.json` in its "
    "entry (core: `spec/tests/<FacetName>/`). A facet a change adds without one fails it; an adoption gap of "
    "today's registry, so a warning with `--all`.",
    "examples/unreadable": "An example is valid UTF-8 JSON within the size and depth limits.",
    "examples/invalid": "An example validates against its facet schema. Every validation error is reported, "
    "each on the line of the offending value.",
    "examples/unknown-key": "An example's top-level keys are facet keys the schema defines (a wrong key would "
    "otherwise validate vacuously).",
    "examples/negative-passes": "A negative example (`<FacetName>/invalid/*.json`) must fail validation.",
    "examples/negative-wrong-error": "A negative example that declares its expected error "
    "(`\"$expect\": {\"keyword\": \"required\", \"pointer\": \"/myFacet\"}`) fails with that error.",
    "examples/timeout": f"Validating one example takes at most {EXAMPLE_BUDGET_SECONDS:g} s (a schema pattern "
    "with catastrophic backtracking is stopped, not waited for).",
    "examples/orphan": "An examples folder names a facet file of its entry.",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    store = review.head_schemas
    for entry in review.reviewed_entries():
        names = {s.stem for s in entry.schemas}
        for schema in entry.schemas:  # one validator per schema, compiled once per review
            validator = Validators(store.fast_validator(schema.value), store.validator(schema.value))
            yield from _facet_examples(review, entry, schema, validator)
        yield from _orphans(review, entry, names)


def _facet_examples(review: ReviewInput, entry: Entry, schema: FacetSchema, validator: Validators) -> Iterator[Finding]:
    folder = f"{entry.examples_dir}/{schema.stem}"
    paths = review.head.files(folder)
    positive = [p for p in paths if p.endswith(".json") and p.count("/") == folder.count("/") + 1]
    negative = [p for p in paths if p.startswith(f"{folder}/invalid/") and p.endswith(".json")]
    if not positive:
        yield Finding(rule="examples/missing", severity=Severity.ERROR, path=schema.path,
                      line=1, column=1, entry=entry.name,
                      message=f"{schema.stem} has no example in {folder}/",
                      hint=f"Add {folder}/1.json: an object whose key is the facet key and value a full facet.")
    keys = {f.key for f in schema.facets}
    files = review.head_registry.files
    for path in positive + negative:
        severity = Severity.ERROR
        loaded = files.json(path)
        if loaded.doc is None:
            yield unreadable("examples/unreadable", severity, loaded, "example", entry.name)
            continue
        if path in negative:
            yield from _negative(loaded.doc, validator, severity, entry.name, schema)
        else:
            yield from _positive(loaded.doc, validator, keys, severity, entry.name, schema)


@dataclass(frozen=True)
class Validators:
    """A compiled validator deciding pass/fail, and the pure-Python one explaining failures."""

    fast: Any | None
    explain: Validator


def _errors(validator: Validators, instance: Any) -> list[ValidationError] | None:
    """All validation errors (capped), or None when the time budget ran out."""
    if validator.fast is not None:
        try:
            if validator.fast.is_valid(instance):
                return []
        except Exception:  # noqa: BLE001 - the explaining validator decides instead
            pass
    try:
        with deadline(EXAMPLE_BUDGET_SECONDS):
            out = []
            for error in validator.explain.iter_errors(instance):
                out.append(error)
                if len(out) >= MAX_ERRORS_PER_EXAMPLE:
                    break
            return out
    except (ValidationTimeout, RecursionError, Unresolvable):
        return None


def _timeout(doc: JsonDoc, severity: Severity, entry: str, schema: FacetSchema) -> Finding:
    return at("examples/timeout", severity, doc, "", f"validating against {schema.filename} took over "
              f"{EXAMPLE_BUDGET_SECONDS:g} s and was stopped", entry=entry,
              hint="A pattern in the schema probably backtracks catastrophically; simplify it.")


def _positive(doc: JsonDoc, validator: Validators, keys: set[str], severity: Severity, entry: str,
              schema: FacetSchema) -> Iterator[Finding]:
    value = doc.value
    if isinstance(value, dict):
        for key in value:
            if key not in keys:
                yield at("examples/unknown-key", severity, doc, "/" + key.replace("~", "~0").replace("/", "~1"),
                         f"{key!r} is not a facet key of {schema.filename} (expected {', '.join(sorted(keys))})",
                         entry=entry, key=True, hint="An example is {\"<facet key>\": {...the facet...}}.")
    errors = _errors(validator, value)
    if errors is None:
        yield _timeout(doc, severity, entry, schema)
        return
    for error in errors:
        yield at("examples/invalid", severity, doc, json_pointer(error.absolute_path),
                 f"{error.message} (schema: {'/'.join(map(str, error.absolute_schema_path))})", entry=entry,
                 hint=f"Against {schema.filename}.")


def _negative(doc: JsonDoc, validator: Validators, severity: Severity, entry: str,
              schema: FacetSchema) -> Iterator[Finding]:
    value = doc.value
    expect = value.get(EXPECT_KEY) if isinstance(value, dict) else None
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != EXPECT_KEY}
    errors = _errors(validator, value)
    if errors is None:
        yield _timeout(doc, severity, entry, schema)
        return
    if not errors:
        yield at("examples/negative-passes", severity, doc, "", f"this negative example of {schema.stem} validates",
                 entry=entry, hint="A file under invalid/ must break the schema; move it or make it invalid.")
        return
    wanted = expect if isinstance(expect, list) else [expect] if isinstance(expect, dict) else []
    for item in wanted:
        keyword, pointer = item.get("keyword"), item.get("pointer", "")
        if not any(e.validator == keyword and json_pointer(e.absolute_path) == pointer for e in _flat(errors)):
            got = "; ".join(f"{e.validator} at {json_pointer(e.absolute_path) or '/'}" for e in errors[:5])
            yield at("examples/negative-wrong-error", severity, doc, f"/{EXPECT_KEY}",
                     f"expected a {keyword!r} error at {pointer or '/'!r}, got: {got}", entry=entry, key=True)


def _flat(errors: list[ValidationError]) -> Iterator[ValidationError]:
    """Errors and the sub-errors of oneOf/anyOf/allOf, so an expected inner error is found."""
    stack = list(errors)
    while stack:
        error = stack.pop()
        yield error
        stack.extend(error.context or ())


def _orphans(review: ReviewInput, entry: Entry, names: set[str]) -> Iterator[Finding]:
    prefix = entry.examples_dir + "/"
    folders = {p[len(prefix):].split("/", 1)[0] for p in review.head.files(entry.examples_dir)
               if "/" in p[len(prefix):]}
    for folder in sorted(folders - names):
        path = f"{entry.examples_dir}/{folder}"
        yield Finding(rule="examples/orphan", severity=Severity.WARNING, path=path, entry=entry.name,
                      message=f"examples folder {folder}/ matches no facet file of {entry.name}",
                      hint="Name the folder after the facet file (without .json).")
