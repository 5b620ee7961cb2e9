"""Example rules: every facet has examples, they validate, and negative examples fail as
declared."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from bot.core.findings import Finding, Severity
from bot.core.incomplete import NOT_VALIDATED
from bot.core.jsondoc import JsonDoc
from bot.model.error_subject import about
from bot.model.registry import Entry, FacetSchema
from bot.model.schemas import (
    PATTERN_TIMEOUT_SECONDS,
    PUBLISHED,
    WORK_LIMIT,
    PatternTimeout,
    ValidationTimeout,
    deadline,
    meta_is_valid,
)
from bot.review.checks._common import at, json_pointer, unreadable
from bot.review.checks._example_facets import (
    event_url_findings,
    schema_url_findings,
    undeclared_field_findings,
)
from bot.review.input import ReviewInput

if TYPE_CHECKING:  # the pure-Python stack explains what jsonschema-rs cannot word, imported then
    from jsonschema.protocols import Validator

    from bot.model.explanations import Explanation

EXAMPLE_BUDGET_SECONDS = 2.0
REVIEW_BUDGET_SECONDS = 60.0  # pure-Python validation of all the examples of one review
MAX_ERRORS_PER_EXAMPLE = 50
EXPECT_KEY = "$expect"

RULES = {
    "examples/missing": "Each facet has at least one example: "
    "`facets/examples/<FacetName>/<n>.json` in its entry (core: `spec/tests/<FacetName>/`). A "
    "facet a change adds without one fails it; an adoption gap of today's registry, so a warning "
    "with `--all`.",
    "examples/unreadable": "An example is valid UTF-8 JSON within the size and depth limits.",
    "examples/invalid": "An example validates against its facet schema. Every validation error is "
    "reported, each on the line of the offending value. Judged against the base by what it is "
    "about (the example, the offending value and its place, the failing keyword and its place in "
    "the schema), not by its message, which quotes the schema (an enum value the change adds "
    "leaves an example that was invalid pre-existing).",
    "examples/unknown-key": "An example's top-level keys are facet keys the schema defines (a "
    "wrong key would otherwise validate vacuously).",
    "examples/negative-passes": "A negative example (`<FacetName>/invalid/*.json`) must fail "
    "validation.",
    "examples/negative-wrong-error": "A negative example that declares its expected error "
    '(`"$expect": {"keyword": "required", "pointer": "/myFacet"}`) fails with that error.',
    "examples/timeout": f"Validating one example takes at most {EXAMPLE_BUDGET_SECONDS:g} s, and "
    f"one regular expression of its schema at most {PATTERN_TIMEOUT_SECONDS:g} s on one value (a "
    f"pattern with catastrophic backtracking is stopped and named, not waited for); once a review "
    f"has spent {REVIEW_BUDGET_SECONDS:g} s "
    "explaining examples, the remaining failing ones are reported as not validated. An example "
    "not validated is never waived, and pre-existing only where the change touches neither it "
    "nor its schema nor any schema behind it (the same timeout on the base says nothing of what "
    "a change wrote there).",
    "examples/unresolved-ref": "Validating an example reaches no reference that cannot be resolved "
    "offline (`facets/unresolved-ref` and `facets/remote-ref` on the schema say why). The example "
    "was not validated: never waived, pre-existing only where the change touches neither it nor "
    "its schema nor any schema behind it.",
    "examples/unverified": "Warning: an example whose schema refers to an openlineage.io schema "
    "that is not in the repository cannot be checked offline when the repository keeps no "
    "published mirror (`paths.mirror`).",
    "examples/recursion": "Validating an example does not recurse without end (a `$ref` cycle that "
    "consumes nothing of the example). The example was not validated: never waived, pre-existing "
    "only where the change touches neither it nor its schema nor any schema behind it.",
    "examples/unchecked": "An example is checked against a valid draft 2020-12 schema, and so is "
    "every schema it refers to (the specification, a core facet): against one that is not "
    "(`facets/meta-schema` or `spec/meta-schema` says where), it could not be checked. The "
    "example was not validated: never waived, pre-existing only where the change touches neither "
    "the example nor its schema nor any schema behind it (the same schema on the base says "
    "nothing of what a change wrote in the example).",
    "examples/orphan": "An examples folder names a facet file of its entry.",
    "examples/schema-url": "Each facet of an example names its schema in `_schemaURL`: the "
    "schema's own file, a version of it that exists (the current one or a published copy) and, "
    "after `#`, a `$defs` entry that exists and is the facet under that key. The finding says what "
    "the URL should be. The events kept beside the core examples (`spec/tests/*.json`) are checked "
    "too: each openlineage.io facet URL names a facet file, a version and a `$defs` entry that "
    "exist (an older version is fine in an event).",
    "examples/stale-schema-url": "An example the change adds or edits names the current version of "
    "its facet in `_schemaURL` (it is checked against that version), not an older published one. "
    "Judged against the base: it blocks only when the change made it stale (it bumped the schema, "
    "wrote the URL, or made the example use fields the named version lacks); an edit elsewhere in "
    "an example that was already stale leaves it pre-existing. A warning with `--all`.",
    "examples/undeclared-field": "A field of an example that no version of its (open) schema "
    "declares where it stands is a warning naming the closest declared field; an error when it is "
    "a respelling of a declared field (`ordinal_position` for `ordinalPosition`): the example and "
    "the schema have drifted apart.",
}


def check(review: ReviewInput) -> Iterator[Finding]:
    store = review.head_schemas
    budget = Budget(REVIEW_BUDGET_SECONDS)
    for entry in review.reviewed_entries():
        names = {s.stem for s in entry.schemas}
        for schema in entry.schemas:  # one validator per schema, compiled once per review
            validator = Validators(
                None,
                None,
                budget,
                functools.partial(store.work_bound, schema.value),
                store.has_mirror,
                functools.partial(store.validator, schema.value),
                functools.partial(store.fast_validator, schema.value),
                store.document,
                functools.partial(store.broken_ground, schema.value)
                if isinstance(schema.value, dict)
                else lambda: None,
            )
            yield from _facet_examples(review, entry, schema, validator)
        yield from _orphans(review, entry, names)
        if entry.is_core:
            yield from _sample_events(review, entry)


def _facet_examples(
    review: ReviewInput, entry: Entry, schema: FacetSchema, validator: Validators
) -> Iterator[Finding]:
    folder = f"{entry.examples_dir}/{schema.stem}"
    paths = review.head.files(folder)
    positive = [p for p in paths if p.endswith(".json") and p.count("/") == folder.count("/") + 1]
    negative = [p for p in paths if p.startswith(f"{folder}/invalid/") and p.endswith(".json")]
    if not positive:
        yield Finding(
            rule="examples/missing",
            severity=Severity.ERROR,
            path=schema.path,
            line=1,
            column=1,
            entry=entry.name,
            message=f"{schema.stem} has no example in {folder}/",
            hint=f"Add {folder}/1.json: an object whose key is the facet key and value a full "
            f"facet.",
        )
    keys = {f.key for f in schema.facets}
    files = review.head_registry.files
    before = _before(review, schema)
    # the schema as its examples' verdicts depend on it: its text and every schema behind it
    against = (
        entry.name,
        schema.path,
        schema.doc.text,
        review.head_schemas.has_mirror,
        review.head_schemas.closure(schema.value) if isinstance(schema.value, dict) else (),
    )
    for path in positive + negative:
        loaded = files.json(path)
        if loaded.doc is None:
            yield unreadable("examples/unreadable", Severity.ERROR, loaded, "example", entry.name)
            continue
        # the same example against the same schemas on the other side of the change: its verdict
        # is known (a verdict that ran out of time is not kept)
        key = ("examples", path, loaded.doc.text, path in negative, against)
        verdict = cast(list[Finding] | None, review.memo.get(key))
        if verdict is None:
            verdict = list(
                _negative(loaded.doc, validator, entry.name, schema)
                if path in negative
                else _positive(loaded.doc, validator, keys, entry.name, schema)
            )
            if not any(f.rule == "examples/timeout" for f in verdict):
                review.memo[key] = verdict
        # not validated: the example, its schema and every schema behind it are what it stood on
        grounds = (path, schema.path, *(p for _, p, _ in against[4] if p))
        yield from (replace(f, grounds=grounds) if f.rule in NOT_VALIDATED else f for f in verdict)
        if path not in negative:
            written = None if review.changes is None else review.changes.get(path) is not None
            yield from schema_url_findings(loaded.doc, schema, review.head_schemas, written)
            yield from undeclared_field_findings(loaded.doc, schema, review.head_schemas, before)


def _before(review: ReviewInput, schema: FacetSchema) -> Any:
    """The schema's value before a change that edits it (``None`` when the change leaves it
    alone)."""
    changes, registry = review.changes, review.base_registry
    change = changes.get(schema.path) if changes is not None else None
    if change is None or registry is None:
        return None
    loaded = registry.files.json(change.old_path or schema.path)
    return loaded.doc.value if loaded.doc is not None else None


class Budget:
    """Seconds of pure-Python validation left for the whole review (shared by every example)."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds


@dataclass(frozen=True)
class Validators:
    """A compiled validator deciding pass/fail and explaining the failures it can word
    (``bot.model.explanations``), and the pure-Python one explaining the rest."""

    fast: Any | None
    explain: Validator | None  # None: ``make_explain`` builds it when an example first fails
    budget: Budget
    # the schema's work for an instance this deep
    work_bound: Callable[[int], int] = lambda depth: 0
    # whether the repository keeps a published mirror to resolve openlineage.io refs
    mirror: bool = True
    make_explain: Callable[[], Validator] | None = None
    # builds ``fast`` when an example is first validated (the examples of the other side of a
    # change are known already, and need none)
    make_fast: Callable[[], Any] | None = None
    # the schema document stored at a URI (what jsonschema-rs's errors point into), or None
    document: Callable[[str], Any] = lambda uri: None
    # the path of a schema the schema refers to that is not a valid schema, or None
    broken_ground: Callable[[], str | None] = lambda: None

    def explainer(self) -> Validator:
        """The explaining validator, built on first use (passing examples, and failing ones
        jsonschema-rs words, never import pure-Python jsonschema)."""
        if self.explain is None:
            if self.make_explain is None:
                raise ValueError("Validators needs an explaining validator or a way to build one")
            # a cache on a frozen dataclass
            object.__setattr__(self, "explain", self.make_explain())
        return self.explain

    def fast_for(self, instance: Any) -> Any | None:
        """The compiled validator, unless this schema could make it work exponentially on
        ``instance`` (jsonschema-rs cannot be stopped; the pure-Python validator is bounded by
        ``deadline``)."""
        if self.make_fast is not None:
            # a cache on a frozen dataclass
            object.__setattr__(self, "fast", self.make_fast())
            object.__setattr__(self, "make_fast", None)
        if self.fast is None or self.work_bound(_depth(instance)) > WORK_LIMIT:
            return None
        return self.fast


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar is 0), level by level, without recursion."""
    depth, level = -1, [value]
    while level:
        depth += 1
        level = [
            v
            for node in level
            if isinstance(node, (dict, list))
            for v in (node.values() if isinstance(node, dict) else node)
        ]
    return depth


@dataclass(frozen=True)
class Stopped:
    """Why validating an example stopped before it could say valid or invalid."""

    rule: str
    message: str
    hint: str
    severity: Severity = Severity.ERROR


def _errors(
    validator: Validators, instance: Any, schema: FacetSchema
) -> list[Explanation] | Stopped:
    """All validation errors (capped), or why validation stopped (time budget, reference,
    recursion). jsonschema-rs decides and, where it can (``bot.model.explanations``), explains;
    the pure-Python validator explains the rest. Errors at one place are listed by schema path,
    whichever engine found them."""
    ground = validator.broken_ground()
    if ground is not None:
        return Stopped(
            "examples/unchecked",
            f"could not be checked against {schema.filename}: it refers to {ground}, which is not "
            "a valid draft 2020-12 schema",
            f"Fix {ground} first; the example is then checked against it.",
        )
    fast = validator.fast_for(instance)
    if fast is not None:
        try:
            if fast.is_valid(instance):
                return []
            from bot.model.explanations import from_rs  # a passing registry never needs it

            root = schema.value if isinstance(schema.value, dict) else {}
            errors = fast.iter_errors(instance)
            worded = from_rs(errors, instance, root, validator.document, MAX_ERRORS_PER_EXAMPLE)
            if worded is not None:
                return _ordered(worded)
        except Exception:  # noqa: BLE001 - the explaining validator decides instead
            pass
    explained = _explained(validator, instance, schema)
    return explained if isinstance(explained, Stopped) else _ordered(explained)


def _ordered(errors: list[Explanation]) -> list[Explanation]:
    return sorted(errors, key=lambda e: (tuple(map(str, e.path)), tuple(map(str, e.schema_path))))


def _explained(
    validator: Validators, instance: Any, schema: FacetSchema
) -> list[Explanation] | Stopped:
    """The pure-Python validator's errors, bounded by the review's time budget."""
    budget = validator.budget
    if budget.left <= 0:
        return Stopped(
            "examples/timeout",
            f"not validated against {schema.filename}: this review already spent "
            f"its {REVIEW_BUDGET_SECONDS:g} s on validating examples",
            "Other examples took long to validate: see the first examples/timeout findings.",
        )
    from referencing.exceptions import Unresolvable

    from bot.model.explanations import from_python

    start = time.monotonic()
    try:
        with deadline(min(EXAMPLE_BUDGET_SECONDS, budget.left)):
            out = []
            for error in validator.explainer().iter_errors(instance):
                out.append(from_python(error))
                if len(out) >= MAX_ERRORS_PER_EXAMPLE:
                    break
            return out
    except PatternTimeout as exc:
        return Stopped(
            "examples/timeout",
            f"validating against {schema.filename} was stopped: {exc}",
            "The pattern backtracks catastrophically: remove nested quantifiers like (a+)+ or "
            "overlapping alternatives like (a|aa)+.",
        )
    except ValidationTimeout:
        return Stopped(
            "examples/timeout",
            f"validating against {schema.filename} took over "
            f"{EXAMPLE_BUDGET_SECONDS:g} s and was stopped",
            "Simplify the schema: deeply nested anyOf/oneOf or many patterns multiply the work.",
        )
    except Unresolvable as exc:
        ref = getattr(exc, "ref", None) or str(exc)
        if str(ref).startswith(PUBLISHED) and not validator.mirror:
            return Stopped(
                "examples/unverified",
                f"validating against {schema.filename} reached $ref {ref!r}, "
                "which cannot be checked offline: the repository keeps no published mirror; the "
                "example was not checked",
                "Keep the published schemas in the repository (paths.mirror) so examples can be "
                "checked.",
                Severity.WARNING,
            )
        return Stopped(
            "examples/unresolved-ref",
            f"validating against {schema.filename} reached $ref {ref!r}, "
            "which does not resolve offline; the example could not be checked",
            "Refer only to schemas in the repository or its published mirror "
            "(https://openlineage.io/spec/...).",
        )
    except (TypeError, AttributeError, KeyError, ValueError, IndexError):
        # the explaining validator assumes a valid schema: ``"type": 5`` makes it raise
        if meta_is_valid(schema.value):
            raise  # a bug of the bot's, which fails closed as an internal error
        return Stopped(
            "examples/unchecked",
            f"could not be checked against {schema.filename}: it is not a valid draft 2020-12 "
            "schema (facets/meta-schema on the schema says where)",
            "Fix the schema first; its examples are then checked against it.",
        )
    except RecursionError:
        return Stopped(
            "examples/recursion",
            f"validating against {schema.filename} recursed without end "
            "(a $ref cycle that consumes nothing of the example); the example could not be checked",
            "Break the cycle: a $ref back to an enclosing schema must sit under a property or "
            "items.",
        )
    finally:
        budget.left -= time.monotonic() - start


def _stopped(doc: JsonDoc, entry: str, stopped: Stopped) -> Finding:
    return at(
        stopped.rule, stopped.severity, doc, "", stopped.message, entry=entry, hint=stopped.hint
    )


def _positive(
    doc: JsonDoc, validator: Validators, keys: set[str], entry: str, schema: FacetSchema
) -> Iterator[Finding]:
    value = doc.value
    if isinstance(value, dict):
        for key in value:
            if key not in keys:
                yield at(
                    "examples/unknown-key",
                    Severity.ERROR,
                    doc,
                    "/" + key.replace("~", "~0").replace("/", "~1"),
                    f"{key!r} is not a facet key of {schema.filename} (expected "
                    f"{', '.join(sorted(keys))})",
                    entry=entry,
                    key=True,
                    hint='An example is {"<facet key>": {...the facet...}}.',
                    # matched by the key, not by the message, which lists the schema's keys
                    subject=f"{schema.filename}: {key}",
                )
    errors = _errors(validator, value, schema)
    if isinstance(errors, Stopped):
        yield _stopped(doc, entry, errors)
        return
    for error in errors:
        pointer = json_pointer(error.path)
        yield at(
            "examples/invalid",
            Severity.ERROR,
            doc,
            pointer,
            f"{error.message} (schema: {'/'.join(map(str, error.schema_path))})",
            entry=entry,
            hint=f"Against {schema.filename}.",
            subject=about(error, value),
        )


def _negative(
    doc: JsonDoc, validator: Validators, entry: str, schema: FacetSchema
) -> Iterator[Finding]:
    value = doc.value
    expect = value.get(EXPECT_KEY) if isinstance(value, dict) else None
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != EXPECT_KEY}
    errors = _errors(validator, value, schema)
    if isinstance(errors, Stopped):
        yield _stopped(doc, entry, errors)
        return
    if not errors:
        yield at(
            "examples/negative-passes",
            Severity.ERROR,
            doc,
            "",
            f"this negative example of {schema.stem} validates",
            entry=entry,
            hint="A file under invalid/ must break the schema; move it or make it invalid.",
        )
        return
    wanted = expect if isinstance(expect, list) else [expect] if isinstance(expect, dict) else []
    for item in wanted:
        keyword, pointer = item.get("keyword"), item.get("pointer", "")
        if not any(e.keyword == keyword and json_pointer(e.path) == pointer for e in _flat(errors)):
            got = "; ".join(f"{e.keyword} at {json_pointer(e.path) or '/'}" for e in errors[:5])
            yield at(
                "examples/negative-wrong-error",
                Severity.ERROR,
                doc,
                f"/{EXPECT_KEY}",
                f"expected a {keyword!r} error at {pointer or '/'!r}, got: {got}",
                entry=entry,
                key=True,
            )


def _flat(errors: list[Explanation]) -> Iterator[Explanation]:
    """Errors and the sub-errors of oneOf/anyOf/allOf, so an expected inner error is found."""
    stack = list(errors)
    while stack:
        error = stack.pop()
        yield error
        stack.extend(error.context)


def _sample_events(review: ReviewInput, entry: Entry) -> Iterator[Finding]:
    """The events kept beside the core examples (``spec/tests/*.json``): their facets'
    ``_schemaURL``s."""
    folder = entry.examples_dir + "/"
    registry = review.head_registry
    for path in review.head.files(entry.examples_dir):
        if path.endswith(".json") and "/" not in path[len(folder) :]:
            loaded = registry.files.json(path)
            if loaded.doc is not None:  # spec/unreadable reports an unreadable one
                yield from event_url_findings(
                    loaded.doc,
                    registry.schema_by_filename,
                    review.head_schemas,
                    entry.name,
                )


def _orphans(review: ReviewInput, entry: Entry, names: set[str]) -> Iterator[Finding]:
    prefix = entry.examples_dir + "/"
    folders = {
        p[len(prefix) :].split("/", 1)[0]
        for p in review.head.files(entry.examples_dir)
        if "/" in p[len(prefix) :]
    }
    for folder in sorted(folders - names):
        path = f"{entry.examples_dir}/{folder}"
        yield Finding(
            rule="examples/orphan",
            severity=Severity.WARNING,
            path=path,
            entry=entry.name,
            message=f"examples folder {folder}/ matches no facet file of {entry.name}",
            hint="Name the folder after the facet file (without .json).",
        )
