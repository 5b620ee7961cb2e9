"""Every class of schema change the comparison tells apart, with what it needs in each direction.

*Backward* is SchemaVer's question (``spec/Versioning.md``): can the new schema still read
historical data? Its digit is the bump the version needs. *Forward* is the consumers' question: can
a reader of the old version take data written to the new one? It names who is affected, and never
sets the digit. *Category* is the level at which the change breaks: ``data`` (an instance one side
accepts and the other rejects can show it), ``wire`` (the keys and fields events carry change, but
no instance shows it, as with a field removed from an open object) or ``codegen`` (only what
OpenLineage's Java and Python clients generate changes: names of types, defaults, documentation).

docs/versions.md renders this table (``registry-bot`` keeps it in sync: tests/test_evolution.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Bump(IntEnum):
    NONE = 0
    ADDITION = 1
    REVISION = 2
    MODEL = 3


CATEGORIES = ("data", "wire", "codegen")
OPEN_ADD = "property-added-open"  # its backward digit comes from versions.open_model_optional_add


@dataclass(frozen=True)
class ChangeClass:
    name: str
    backward: Bump
    forward: Bump
    category: str
    why: str
    codegen: bool = False  # also changes the names generated code uses


A, R, M, N = Bump.ADDITION, Bump.REVISION, Bump.MODEL, Bump.NONE

_ROWS = [
    # types
    ChangeClass(
        "type-narrowed",
        M,
        A,
        "data",
        "a type no longer accepted (or a type constraint added): data of "
        "that type, historical or any, fails",
    ),
    ChangeClass(
        "type-extended",
        A,
        M,
        "data",
        "a new type accepted: old readers meet values of a type they never saw",
    ),
    ChangeClass(
        "type-changed", M, M, "data", "types replaced: each side rejects the other's values"
    ),
    # enum / const
    ChangeClass(
        "enum-narrowed",
        M,
        A,
        "data",
        "enum values removed (or an enum added): data holding them fails",
    ),
    ChangeClass(
        "enum-extended", A, M, "data", "enum values added: old readers meet values they do not know"
    ),
    ChangeClass(
        "enum-removed",
        A,
        M,
        "data",
        "the enum no longer restricts the value: old readers meet any value",
    ),
    ChangeClass("const-changed", M, M, "data", "the one allowed value changed"),
    ChangeClass("const-added", M, A, "data", "a value pinned: every other historical value fails"),
    ChangeClass(
        "const-removed", A, M, "data", "a pinned value freed: old readers meet other values"
    ),
    # constraints
    ChangeClass(
        "string-tightened", R, A, "data", "minLength/maxLength/pattern tighter: some strings fail"
    ),
    ChangeClass(
        "string-loosened",
        A,
        R,
        "data",
        "a string constraint looser: old readers reject some new strings",
    ),
    ChangeClass(
        "number-tightened", R, A, "data", "bounds or multipleOf tighter: some numbers fail"
    ),
    ChangeClass(
        "number-loosened",
        A,
        R,
        "data",
        "a numeric bound looser: old readers reject some new numbers",
    ),
    ChangeClass(
        "array-tightened", R, A, "data", "minItems/maxItems/uniqueItems tighter: some arrays fail"
    ),
    ChangeClass(
        "array-loosened",
        A,
        R,
        "data",
        "an array constraint looser: old readers reject some new arrays",
    ),
    ChangeClass(
        "object-tightened", R, A, "data", "minProperties/maxProperties tighter: some objects fail"
    ),
    ChangeClass(
        "object-loosened",
        A,
        R,
        "data",
        "an object-size constraint looser: old readers reject some objects",
    ),
    ChangeClass(
        "constraint-changed",
        R,
        R,
        "data",
        "a constraint replaced by one neither tighter nor looser "
        "(another pattern, multipleOf): some values fail on each side",
    ),
    ChangeClass(
        "format-added",
        R,
        A,
        "data",
        "format asserted (as OpenLineage's CI validates examples): some historical strings fail",
    ),
    ChangeClass(
        "format-removed",
        A,
        R,
        "data",
        "a format no longer asserted: old readers reject some new strings",
    ),
    ChangeClass("format-changed", R, R, "data", "another format: some strings fail on each side"),
    # required
    ChangeClass(
        "required-added", M, A, "data", "a field became required: historical data without it fails"
    ),
    ChangeClass(
        "required-corrected",
        R,
        A,
        "data",
        "required names the old schema never declared replaced by "
        "declared fields: only data carrying the undeclared names was valid, so some of it fails",
    ),
    ChangeClass(
        "required-removed",
        A,
        M,
        "data",
        "a field no longer required: old readers meet data without it",
    ),
    # properties
    ChangeClass(
        "property-added-open",
        R,
        A,
        "data",
        "an optional field added to an open object: "
        "strictly, historical data may carry that name with another value (REVISION); OpenLineage "
        "bumps it either way (versions.open_model_optional_add)",
    ),
    ChangeClass(
        "property-added-closed",
        A,
        M,
        "data",
        "an optional field added to a closed object: no historical "
        "data carried it, but old readers reject data that does",
    ),
    ChangeClass(
        "property-added-required", M, A, "data", "a required field added: historical data lacks it"
    ),
    ChangeClass(
        "property-removed-open",
        M,
        M,
        "wire",
        "a field removed from an open object: historical data "
        "still validates but its field is no longer in the model; old readers miss it",
        codegen=True,
    ),
    ChangeClass(
        "property-removed-closed",
        M,
        A,
        "data",
        "a field removed from a closed object: historical data "
        "carrying it fails (new data never carries it, so old readers take it)",
        codegen=True,
    ),
    ChangeClass(
        "property-renamed",
        M,
        M,
        "wire",
        "a field renamed: historical data keeps the old name, new data "
        "the new one; neither side reads the other's field",
        codegen=True,
    ),
    ChangeClass(
        "facet-key-renamed",
        M,
        M,
        "wire",
        "the facet key events carry changed: events written with the "
        "old key are not read as this facet",
        codegen=True,
    ),
    ChangeClass(
        "facet-key-removed", M, M, "wire", "a facet this file defined is gone", codegen=True
    ),
    ChangeClass(
        "facet-key-added",
        A,
        A,
        "codegen",
        "a new facet key in the file: a new generated type",
        codegen=True,
    ),
    # open / closed content model
    ChangeClass(
        "object-closed",
        R,
        A,
        "data",
        "additionalProperties/unevaluatedProperties false: historical data "
        "carrying other fields fails",
    ),
    ChangeClass(
        "object-opened",
        A,
        R,
        "data",
        "extra fields allowed again: old readers reject data carrying them",
    ),
    # conditionals and dependencies
    ChangeClass(
        "dependency-added",
        R,
        A,
        "data",
        "dependentRequired/dependentSchemas added: data carrying the "
        "trigger field without its dependents fails",
    ),
    ChangeClass(
        "dependency-removed",
        A,
        R,
        "data",
        "a dependency dropped: old readers reject data without the dependents",
    ),
    ChangeClass(
        "conditional-added",
        R,
        A,
        "data",
        "if/then/else added: some historical data fails its branch",
    ),
    ChangeClass(
        "conditional-removed",
        A,
        R,
        "data",
        "if/then/else dropped: old readers reject some new data",
    ),
    ChangeClass("not-added", R, A, "data", "a `not` subschema added: the values it excludes fail"),
    ChangeClass(
        "not-removed",
        A,
        R,
        "data",
        "a `not` subschema dropped: old readers reject the values it excluded",
    ),
    ChangeClass(
        "not-changed",
        R,
        R,
        "data",
        "a `not` subschema or an `if` condition changed: what is excluded or "
        "which branch applies changed",
    ),
    # composition
    ChangeClass(
        "branch-added",
        A,
        M,
        "data",
        "an anyOf alternative added: old readers meet data of the new shape",
    ),
    ChangeClass(
        "oneof-branch-added",
        R,
        M,
        "data",
        "a oneOf alternative added: data matching two alternatives now fails",
    ),
    ChangeClass(
        "branch-removed",
        R,
        A,
        "data",
        "an anyOf/oneOf alternative removed: data of that shape fails",
    ),
    ChangeClass(
        "composition-changed",
        R,
        R,
        "data",
        "a list of subschemas reshaped (prefixItems, a keyword's "
        "form, a boolean schema): some values may fail on each side (judged conservatively)",
    ),
    ChangeClass(
        "keyword-changed",
        R,
        R,
        "data",
        "another keyword changed (unevaluatedItems, contentEncoding, a "
        "vendor keyword): judged conservatively, its witness shown only when one exists",
    ),
    # names and annotations
    ChangeClass(
        "definition-removed",
        R,
        N,
        "codegen",
        "a `$defs` entry removed: the type generated for it is "
        "gone (refs to it are followed, so data is judged where it is used)",
        codegen=True,
    ),
    ChangeClass(
        "definition-renamed",
        R,
        N,
        "codegen",
        "a `$defs` entry renamed: the generated type is renamed",
        codegen=True,
    ),
    ChangeClass("definition-added", A, N, "codegen", "a `$defs` entry added: a new generated type"),
    ChangeClass(
        "default-changed",
        A,
        N,
        "codegen",
        "`default` is an annotation: no instance changes validity, "
        "but generated code and readers filling in defaults read another value",
    ),
    ChangeClass(
        "documentation",
        A,
        N,
        "codegen",
        "description, title, examples, $comment, deprecated: "
        "documentation of the published version (and of generated code) changes",
    ),
    ChangeClass(
        "ref-unverified",
        N,
        N,
        "data",
        "a `$ref` whose target is neither in the repository nor in its "
        "mirror: what changed behind it was not compared",
    ),
]
CLASSES: dict[str, ChangeClass] = {c.name: c for c in _ROWS}


def backward(name: str, open_add: Bump) -> Bump:
    """The backward digit of a class, ``open_add`` standing for the policy's digit of
    ``property-added-open``."""
    return open_add if name == OPEN_ADD else CLASSES[name].backward


def table() -> str:
    """The Markdown table of docs/versions.md."""
    lines = [
        "| class | backward (the bump) | forward | category | why |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in _ROWS:
        backward = (
            "ADDITION or REVISION (`open_model_optional_add`)"
            if c.name == OPEN_ADD
            else c.backward.name
        )
        also = " (+ codegen)" if c.codegen and c.category != "codegen" else ""
        lines.append(
            f"| `{c.name}` | {backward} | {c.forward.name} | {c.category}{also} | {c.why} |"
        )
    return "\n".join(lines) + "\n"
