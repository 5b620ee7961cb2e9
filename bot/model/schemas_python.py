"""The pure-Python ``jsonschema`` side of ``bot.model.schemas``: complete error lists with paths,
for explaining.

Imported only where something failed (or where every error is wanted): a clean registry, a passing
event or example is decided by ``jsonschema-rs`` and never loads this stack or its format checkers.
Its regexes run bounded (``bot.model.schemas.bounded_search``) and every keyword checks the
``deadline``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import regex
from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from bot.core.regex_size import check_size, compile_unkept
from bot.core.uri_templates import is_uri_template
from bot.model.schemas import MAX_PATTERN_CHARS, _remaining, _unusable, bounded_search


def _refused(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def offline_registry() -> Registry[Any]:
    """A pure-Python ``jsonschema`` registry resolving nothing beyond the schema itself (never
    fetching: without a registry, jsonschema falls back to ``urlopen`` for remote references)."""
    return Registry(retrieve=_refused)  # type: ignore[call-arg]


def _matches_any(patterns: Iterable[str], key: str) -> bool:
    return any(bounded_search(pattern, key) for pattern in patterns)


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    matched = bounded_search(pattern, instance)
    if matched is None:
        yield ValidationError(_unusable(pattern))
    elif not matched:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            matched = bounded_search(pattern, key)
            if matched is None:
                yield ValidationError(_unusable(pattern))
                break
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Validator, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """jsonschema's ``additionalProperties``, with ``patternProperties`` matched by
    ``bounded_search`` (jsonschema's own runs ``re.search`` on the joined patterns, unbounded and
    holding the GIL)."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = {k for k in instance if k not in properties and not _matches_any(patterns, k)}
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            listed, verb = _extras_msg(sorted(extras, key=str))
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )


def _evaluated_keys(validator: Any, instance: Any, schema: Any) -> set[str]:
    """jsonschema's ``find_evaluated_property_keys_by_schema`` (4.26), matching
    ``patternProperties`` with ``bounded_search`` instead of ``re.search``."""
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            keys |= _evaluated_keys(
                validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                instance,
                resolved.contents,
            )
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            keys |= {k for k, v in instance.items() if _valid(validator.descend(v, subschema))}
    if "patternProperties" in schema:
        keys |= {k for k in instance if _matches_any(schema["patternProperties"], k)}
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator.descend(instance, subschema)):
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _extras_msg(extras: list[str]) -> tuple[str, str]:
    """jsonschema's wording for extra keys (``'a', 'b'`` and ``were``)."""
    return ", ".join(repr(extra) for extra in extras), "was" if len(extras) == 1 else "were"


def _valid(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is None


def _unevaluated_properties(
    validator: Validator, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """jsonschema's ``unevaluatedProperties`` over ``_evaluated_keys``."""
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    failing = [
        k
        for k in instance
        if k not in evaluated
        and not _valid(validator.descend(instance[k], unevaluated, path=k, schema_path=k))
    ]
    if failing:
        if unevaluated is False:
            listed, verb = _extras_msg(sorted(failing, key=str))
            yield ValidationError(
                f"Unevaluated properties are not allowed ({listed} {verb} unexpected)"
            )
        else:
            listed, verb = _extras_msg(failing)
            yield ValidationError(
                f"Unevaluated properties are not valid under the given schema ({listed} {verb} "
                "unevaluated and invalid)"
            )


def _budgeted(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``keyword``, first checking the ``deadline`` of the validation (a few hundred ns per
    call)."""

    def checked(validator: Validator, value: Any, instance: Any, schema: Any) -> Any:
        _remaining()
        return keyword(validator, value, instance, schema)

    checked.__name__ = checked.__qualname__ = getattr(keyword, "__name__", "keyword")
    return checked


BOUNDED_KEYWORDS: dict[str, Callable[..., Any]] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
}


# A format check is one call no deadline interrupts (most run in ``re``, holding the GIL): a longer
# string does not conform. The slowest stock check, ``duration``, takes 0.2 s on 100,000 characters.
MAX_FORMAT_CHARS = 100_000


class FormatTooLong(ValueError):
    """A string over ``MAX_FORMAT_CHARS``, not checked."""


def _checker() -> FormatChecker:
    """Draft 2020-12's format checker on strings of at most ``MAX_FORMAT_CHARS``, with ``regex``
    compiled by ``regex`` under ``MAX_PATTERN_CHARS`` (``re.compile`` takes seconds on a few
    kilobytes of character ranges, holding the GIL) and ``uri-template`` decided in linear time."""
    checker = FormatChecker(formats=Draft202012Validator.FORMAT_CHECKER.checkers)
    stock = {
        name: (check, raises if isinstance(raises, tuple) else (raises,))
        for name, (check, raises) in checker.checkers.items()
    }
    for name, (check, raises) in (stock | OWN_FORMATS).items():
        checker.checks(name, raises=(*raises, FormatTooLong))(_capped(check))
    return checker


def _capped(check: Callable[[object], bool]) -> Callable[[object], bool]:
    """``check``, refusing a string over ``MAX_FORMAT_CHARS`` without running."""

    def capped(instance: object) -> bool:
        if isinstance(instance, str) and len(instance) > MAX_FORMAT_CHARS:
            raise FormatTooLong(f"over the {MAX_FORMAT_CHARS}-character limit for format checks")
        return check(instance)

    capped.__name__ = capped.__qualname__ = getattr(check, "__name__", "format")
    return capped


def _is_regex(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    if len(instance) > MAX_PATTERN_CHARS:
        raise ValueError(f"over the {MAX_PATTERN_CHARS}-character limit for patterns")
    check_size(instance)
    compile_unkept(instance)
    return True


def _is_uri_template(instance: object) -> bool:
    return not isinstance(instance, str) or is_uri_template(instance)


# the formats checked here rather than by jsonschema's stock functions, with what they raise
OWN_FORMATS: dict[str, tuple[Callable[[object], bool], tuple[type[Exception], ...]]] = {
    "regex": (_is_regex, (regex.error, ValueError, RecursionError, OverflowError)),
    "uri-template": (_is_uri_template, ()),
}


FORMAT_CHECKER = _checker()


HardenedValidator = validators.extend(
    Draft202012Validator,
    {
        name: _budgeted(BOUNDED_KEYWORDS.get(name, keyword))
        for name, keyword in Draft202012Validator.VALIDATORS.items()
    },
    format_checker=FORMAT_CHECKER,
)


def check_schema_errors(schema: Any) -> list[ValidationError]:
    """Errors of ``schema`` against the draft 2020-12 meta-schema (all of them, best first)."""
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=None)
    return sorted(meta.iter_errors(schema), key=lambda e: (len(e.absolute_path), str(e.message)))
