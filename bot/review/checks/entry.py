"""Entry rules: the entry's folder and name, its registry.json, and name collisions."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from bot import bundled
from bot.core.findings import Finding, Severity
from bot.model.error_subject import about
from bot.model.explanations import from_python
from bot.model.logo import LOGO_NAME, logo_problem, source_limit
from bot.model.presentation import MAX_USE_CASES, declared_use_cases, visible
from bot.model.registry import ENTRY_SEGMENT, FACET_FIELDS, LEGACY_KEYS, Entry, fold_name
from bot.model.schemas import BACKTRACK_LIMIT, RS_FORMATS, rs_validator
from bot.review.checks._common import at, json_pointer, token_fix, unreadable
from bot.review.input import ReviewInput

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

SCHEMA_PATH = bundled.path("registry", "registry.schema.json")
DOCS_HINT = "See registry/registry.schema.json and the README section 'entry'."

RULES = {
    "entry/folder-name": "Entry folders are lower-case segments `[a-z0-9][a-z0-9-]*`; nesting is "
    "allowed and `gcp/composer` registers the name `gcp:composer`.",
    "entry/missing-registry-json": "Every entry folder (one holding CODEOWNERS or facets/) has a "
    "registry.json.",
    "entry/unreadable": "registry.json is valid UTF-8 JSON within the size and depth limits.",
    "entry/schema": "registry.json is valid against registry/registry.schema.json (draft 2020-12): "
    "a `producer` and/or `consumer` block, each with an https `root_doc_URL` (or a `sample_URL`), "
    "facet lists as short URIs (or the proposal's object form with `owner`, `spec_versions`, "
    "`use_cases`). Each error sits on its line.",
    "entry/misplaced-facets": "`produced_facets` belongs only under `producer` and "
    "`consumed_facets` only under `consumer`.",
    "entry/duplicate-facet": "A facet list names each short URI once.",
    "entry/legacy-key": "A legacy spelling such as `root_doc_url` (core's) is accepted with a "
    "warning; the registry spells it `root_doc_URL`.",
    "entry/acceptance": "The proposal's acceptance rule: to claim a name an entity has "
    "documentation or a sample (a `root_doc_URL`, a `sample_URL`, sample events in `samples/` or "
    "facet examples).",
    "entry/logo": "The `logo` of registry.json is a file of the entry's folder, at most 100 KB, "
    "whose content is the type its name says (PNG, JPEG, WebP or SVG); an SVG is published "
    "re-serialised without what could run or fetch, and refused when it is not well-formed, has a "
    "DOCTYPE or is over 100 KB without its metadata.",
    "entry/use-cases": f"An entry declares at most {MAX_USE_CASES} distinct use cases (the "
    "proposal lists 6): each one no `use-cases.json` describes is a page of the published site.",
    "entry/blank-name": "`display_name` and `organization.name` show something: not only spaces, "
    "invisible, combining or filler characters (the site shows the registered name instead).",
    "entry/name-collision": "A new name must not collide with an existing one when compared "
    "case-insensitively with `-`, `_` and `:` folded (`my-tool` and `My_Tool` are the same name).",
}


@functools.cache
def _registry_schema() -> Any:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.cache
def registry_validator() -> Draft202012Validator:
    """The explaining (pure-Python) validator: every error with its path, for an entry that
    fails."""
    from jsonschema import Draft202012Validator

    from bot.model.schemas import FORMAT_CHECKER

    return Draft202012Validator(_registry_schema(), format_checker=FORMAT_CHECKER)


@functools.cache
def registry_is_valid() -> Any:
    """jsonschema-rs' ``is_valid`` for the registry schema (its formats checked as the explaining
    validator checks them), or None when it cannot compile the schema. The schema is the bot's own,
    with a lookahead: fancy-regex, with a backtrack limit (a match that hits it fails, and the
    explaining validator decides)."""
    try:
        return rs_validator(
            _registry_schema(),
            validate_formats=True,
            formats=RS_FORMATS,
            pattern_options=jsonschema_rs.FancyRegexOptions(backtrack_limit=BACKTRACK_LIMIT),
        ).is_valid
    except Exception:  # noqa: BLE001 - the explaining validator decides alone
        return None


def check(review: ReviewInput) -> Iterator[Finding]:
    for entry in review.reviewed_entries():
        yield from _folder(review, entry)
        if entry.is_core and review.head_registry.files.json(entry.registry_json).missing:
            continue  # core may be implicit (spec/facets only)
        yield from _registry_json(review, entry)
    yield from _collisions(review)


def _folder(review: ReviewInput, entry: Entry) -> Iterator[Finding]:
    rel = entry.folder[len(review.config.paths.registry) + 1 :]
    for segment in rel.split("/"):
        if not ENTRY_SEGMENT.fullmatch(segment):
            yield Finding(
                rule="entry/folder-name",
                severity=Severity.ERROR,
                path=entry.folder,
                message=f"entry folder segment {segment!r} is not lower-case [a-z0-9][a-z0-9-]*",
                hint=f"Rename the folder, for example to {fold_name(segment) or 'a-name'!r}.",
                entry=entry.name,
            )


def _registry_json(review: ReviewInput, entry: Entry) -> Iterator[Finding]:
    loaded = review.head_registry.files.json(entry.registry_json)
    if loaded.missing:
        yield Finding(
            rule="entry/missing-registry-json",
            severity=Severity.ERROR,
            path=entry.registry_json,
            message=f"entry {entry.name} has no registry.json",
            entry=entry.name,
            hint="Declare the producer and/or consumer block with its documentation URL. "
            + DOCS_HINT,
        )
        return
    if loaded.doc is None:
        yield unreadable("entry/unreadable", Severity.ERROR, loaded, "registry.json", entry.name)
        return
    doc = loaded.doc
    value: Any = doc.value
    normalized = json.loads(json.dumps(value)) if isinstance(value, dict) else value
    skip: set[str] = set()
    for block, body in value.items() if isinstance(value, dict) else ():
        if not isinstance(body, dict):
            continue
        for key in body:
            pointer = f"/{block}/{key}"
            if key in LEGACY_KEYS:
                new = LEGACY_KEYS[key]
                fix = (
                    None
                    if new in body
                    else token_fix(doc, pointer, new, f"rename {key!r} to {new!r}", key=True)
                )
                yield at(
                    "entry/legacy-key",
                    Severity.WARNING,
                    doc,
                    pointer,
                    f"legacy key {key!r}: the registry spells it {new!r}",
                    hint=f"Rename {key!r} to {new!r}.",
                    entry=entry.name,
                    key=True,
                    fix=fix,
                )
                normalized[block][LEGACY_KEYS[key]] = normalized[block].pop(key)
            elif key in FACET_FIELDS.values() and FACET_FIELDS.get(block) != key:
                right = "producer" if key == "produced_facets" else "consumer"
                yield at(
                    "entry/misplaced-facets",
                    Severity.ERROR,
                    doc,
                    pointer,
                    f"{key!r} belongs under {right!r}, not under {block!r}",
                    hint=f"Move the list into the {right!r} block.",
                    entry=entry.name,
                    key=True,
                )
                del normalized[block][key]
                skip.add(pointer)
            elif key in FACET_FIELDS.values() and isinstance(body[key], list):
                seen: dict[str, int] = {}
                for i, uri in enumerate(body[key]):
                    if isinstance(uri, str) and uri in seen:
                        yield at(
                            "entry/duplicate-facet",
                            Severity.ERROR,
                            doc,
                            f"{pointer}/{i}",
                            f"{uri} is listed twice (first at index {seen[uri]})",
                            entry=entry.name,
                            hint="Remove the duplicate.",
                            # matched by the URI in its list: one listed before it moves both
                            subject=uri,
                            anchor=pointer,
                        )
                    elif isinstance(uri, str):
                        seen[uri] = i
    is_valid = registry_is_valid()
    errors = (
        ()
        if is_valid is not None and is_valid(normalized)
        else registry_validator().iter_errors(normalized)
    )
    for error in errors:
        pointer = json_pointer(error.absolute_path)
        if any(pointer.startswith(s) for s in skip):
            continue
        yield at(
            "entry/schema",
            Severity.ERROR,
            doc,
            pointer,
            _schema_message(error),
            hint=DOCS_HINT,
            entry=entry.name,
            subject=about(from_python(error), normalized),
        )
    yield from _acceptance(review, entry, normalized, doc)
    yield from _logo(review, entry, normalized, doc)
    yield from _use_cases(entry, normalized, doc)
    yield from _blank_names(entry, normalized, doc)


def _schema_message(error: Any) -> str:
    if error.validator in ("oneOf", "anyOf") and error.context:
        # the branch whose type the value has says what is wrong, not the other's type error
        typed = [e for e in error.context if e.validator != "type"] or error.context
        best = min(typed, key=lambda e: len(e.absolute_path))
        if error.validator == "anyOf" and all(e.validator == "required" for e in error.context):
            return "needs one of: " + ", ".join(
                sorted(e.message.split("'")[1] for e in error.context)
            )
        return _bounded(best)
    if error.validator == "additionalProperties":
        return f"{error.message} (allowed: {', '.join(sorted(error.schema.get('properties', {})))})"
    return _bounded(error)


def _bounded(error: Any, limit: int = 80) -> str:
    """The error's message with the value it starts with cut to ``limit`` characters (a list of
    3,000 use cases is not repeated in the finding)."""
    text, shown = str(error.message), repr(error.instance)
    if len(shown) > limit and text.startswith(shown):
        return f"{shown[:limit]}... ({len(shown):,} characters){text[len(shown) :]}"
    return text


def _acceptance(review: ReviewInput, entry: Entry, value: Any, doc: Any) -> Iterator[Finding]:
    if not isinstance(value, dict):
        return
    blocks = [b for b in ("producer", "consumer") if isinstance(value.get(b), dict)]
    has_doc = any(
        isinstance(value[b].get(k), str) and value[b][k].startswith("https://")
        for b in blocks
        for k in ("root_doc_URL", "sample_URL")
    )
    has_samples = bool(review.head.files(f"{entry.folder}/samples")) or bool(
        review.head.files(entry.examples_dir)
    )
    if blocks and not has_doc and not has_samples:
        yield at(
            "entry/acceptance",
            Severity.ERROR,
            doc,
            "",
            f"{entry.name} has neither documentation nor a sample: reserving a name before public "
            "functionality is discouraged",
            entry=entry.name,
            hint="Add an https root_doc_URL, a sample_URL, sample events under samples/ or facet "
            "examples.",
        )


def _logo(review: ReviewInput, entry: Entry, value: Any, doc: Any) -> Iterator[Finding]:
    name = value.get("logo") if isinstance(value, dict) else None
    if not isinstance(name, str) or not LOGO_NAME.fullmatch(name):
        return  # absent, or already an entry/schema error
    size = review.head.size(f"{entry.folder}/{name}")
    data = (
        review.head.read(f"{entry.folder}/{name}")
        if size is not None and size <= source_limit(name)
        else None
    )
    problem = (
        f"{name} is not a file of the entry's folder"
        if size is None
        else logo_problem(name, data if data is not None else b"\0" * size)
    )
    if problem:
        yield at(
            "entry/logo",
            Severity.ERROR,
            doc,
            "/logo",
            problem,
            entry=entry.name,
            hint="Add a PNG, JPEG, WebP or SVG of at most 100 KB next to registry.json.",
        )


def _use_cases(entry: Entry, value: Any, doc: Any) -> Iterator[Finding]:
    declared = declared_use_cases(value)
    if len(declared) <= MAX_USE_CASES:
        return
    over = list(declared.items())[MAX_USE_CASES:]
    shown = ", ".join(repr(case) for case, _ in over[:5]) + (", ..." if len(over) > 5 else "")
    yield at(
        "entry/use-cases",
        Severity.ERROR,
        doc,
        over[0][1],
        f"{entry.name} declares {len(declared)} distinct use cases, more than the "
        f"{MAX_USE_CASES} an entry may: the site leaves out {shown}",
        entry=entry.name,
        hint="Name the use cases the entry serves (the proposal's: privacy, bcbs-239, "
        "data-quality, catalog, governance, lineage), or ask the maintainers to describe new "
        "ones in use-cases.json.",
    )


def _blank_names(entry: Entry, value: Any, doc: Any) -> Iterator[Finding]:
    org = value.get("organization") if isinstance(value, dict) else None
    for pointer, name in (
        ("/display_name", value.get("display_name") if isinstance(value, dict) else None),
        ("/organization/name", org.get("name") if isinstance(org, dict) else None),
    ):
        if isinstance(name, str) and name and not visible(name):
            yield at(
                "entry/blank-name",
                Severity.ERROR,
                doc,
                pointer,
                f"{pointer[1:].replace('/', '.')} {name!r} shows nothing: only spaces, "
                "invisible, combining or filler characters",
                entry=entry.name,
                hint="Write the name as it should be read, or leave the field out.",
            )


def _collisions(review: ReviewInput) -> Iterator[Finding]:
    names = list(review.head_registry.entries)
    by_fold: dict[str, list[str]] = {}
    for name in names:
        by_fold.setdefault(fold_name(name), []).append(name)
    for group in by_fold.values():
        if len(group) < 2:
            continue
        new = [n for n in group if review.is_new_entry(n)] if review.base is not None else group[1:]
        for name in new:
            others = ", ".join(n for n in group if n != name)
            entry = review.head_registry.entries[name]
            yield Finding(
                rule="entry/name-collision",
                severity=Severity.ERROR,
                path=entry.folder,
                entry=name,
                message=f"the name {name!r} collides with {others} (case, '-', '_' and ':' folded)",
                hint="Pick a distinct name; facet prefixes and PascalCase names would clash.",
            )
