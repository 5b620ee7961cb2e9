"""An offline store of every JSON schema a repository holds, and validators that never fetch.

Schemas come from the repository (``spec/OpenLineage.json``, core facets, registry facets, each under
its ``$id``) and from the published mirror (``website/static/spec/X`` is ``https://openlineage.io/spec/X``).
A ``$ref`` to anything else is refused, never fetched.

Validation uses pure-Python ``jsonschema`` (complete error lists with paths, for explaining) with two
hardenings: ``pattern`` and ``patternProperties`` run under the ``regex`` module with a time limit, so a
schema with catastrophic backtracking cannot hang a review, and formats are checked with one pinned
format checker on both sides of a change.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import jsonschema_rs
import regex
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import DRAFT202012

from bot.config import Config
from bot.registry import Files
from bot.snapshot import Snapshot

PUBLISHED = "https://openlineage.io/spec/"
PATTERN_TIMEOUT_SECONDS = 0.25
FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER


@dataclass(frozen=True)
class StoredSchema:
    url: str
    path: str
    schema: Any


def _split(url: str) -> str:
    return url.split("#", 1)[0]


class SchemaStore:
    """Every schema of one snapshot, addressable by URL, for offline ``$ref`` resolution."""

    def __init__(self, snapshot: Snapshot, config: Config, files: Files | None = None) -> None:
        self.snapshot = snapshot
        self.config = config
        self.files = files or Files(snapshot)
        self._registries: dict[frozenset[str], Any] = {}

    @functools.cached_property
    def repository(self) -> dict[str, StoredSchema]:
        """Repository schemas under their ``$id`` (they win over mirror copies)."""
        found: dict[str, StoredSchema] = {}
        for path in self._repository_schema_paths():
            loaded = self.files.json(path)
            if loaded.doc is None or not isinstance(loaded.doc.value, dict):
                continue
            schema_id = loaded.doc.value.get("$id")
            if isinstance(schema_id, str) and schema_id.startswith("https://"):
                found[_split(schema_id)] = StoredSchema(_split(schema_id), path, loaded.doc.value)
        return found

    def _repository_schema_paths(self) -> Iterator[str]:
        paths = self.config.paths
        yield paths.spec
        for folder in (paths.facets, paths.registry):
            for path in self.snapshot.files(folder):
                if path.endswith(".json") and "/facets/" in f"/{path}" and "/examples/" not in path:
                    yield path

    def _mirrored(self, url: str) -> StoredSchema | None:
        """The published copy of ``url``: ``https://openlineage.io/spec/X`` is ``<mirror>/X``."""
        if not url.startswith(PUBLISHED) or ".." in url:
            return None
        path = f"{self.config.paths.mirror.strip('/')}/{url[len(PUBLISHED):]}"
        loaded = self.files.json(path)
        return StoredSchema(url, path, loaded.doc.value) if loaded.doc is not None else None

    @functools.cached_property
    def has_mirror(self) -> bool:
        """Whether the repository keeps a published mirror at all (older histories have none)."""
        return bool(self.snapshot.files(self.config.paths.mirror.strip("/")))

    def lookup(self, url: str) -> StoredSchema | None:
        base = _split(url)
        return self.repository.get(base) or self._mirrored(base)

    def published(self, url: str) -> StoredSchema | None:
        """Only the mirror's copy (for checks that compare a schema with what was published)."""
        return self._mirrored(_split(url))

    @functools.cached_property
    def by_url(self) -> dict[str, StoredSchema]:
        """Every schema: the whole mirror, then repository schemas over it."""
        found: dict[str, StoredSchema] = {}
        mirror = self.config.paths.mirror.strip("/")
        for path in self.snapshot.files(mirror):
            if path.endswith(".json"):
                stored = self._mirrored(PUBLISHED + path[len(mirror) + 1:])
                if stored is not None:
                    found[stored.url] = stored
        found.update(self.repository)
        return found

    def resources(self) -> Iterable[tuple[str, Any]]:
        """(url, schema) pairs, for building other validators (jsonschema-rs) over the same store."""
        return ((url, stored.schema) for url, stored in self.by_url.items())

    def _referenced(self, url: str, schema: Any) -> frozenset[str]:
        """Every schema URL ``schema`` refers to, transitively (resolvable ones only)."""
        found: dict[str, Any] = {}
        pending = [(url, schema)]
        while pending:
            here, node = pending.pop()
            for ref, _ in iter_refs(node):
                if ref.startswith("#"):
                    continue
                target = _split(urljoin(here, ref))
                if target in found or target == url:
                    continue
                stored = self.lookup(target)
                if stored is not None:
                    found[target] = stored.schema
                    pending.append((target, stored.schema))
        return frozenset(found)

    def _compiled_registry(self, urls: frozenset[str]) -> Any:
        """A jsonschema-rs registry of exactly these schemas, shared by every schema needing the same set.

        Compiling against a registry of the whole repository costs time in proportion to its size;
        most facets refer only to OpenLineage.json, so they all share one small registry.
        """
        cached = self._registries.get(urls)
        if cached is None:
            cached = jsonschema_rs.Registry([(u, self.lookup(u).schema) for u in sorted(urls)])  # type: ignore[union-attr]
            self._registries[urls] = cached
        return cached

    def fast_validator(self, schema: Mapping[str, Any]) -> Any | None:
        """A compiled (jsonschema-rs) validator for pass/fail decisions, or None when it cannot compile
        (unresolvable or remote ``$ref``, unsupported pattern): callers then use ``validator()``.

        Pure-Python ``validator()`` explains failures; the two agree on the corpus (tests/test_schemas.py).
        """
        try:
            base = str(schema.get("$id") or "urn:registry-bot:anonymous")
            registry = self._compiled_registry(self._referenced(base, schema))
            return jsonschema_rs.validator_for(dict(schema), registry=registry, validate_formats=True)
        except Exception:  # noqa: BLE001 - any compile failure falls back to the explaining validator
            return None

    def _retrieve(self, uri: str) -> Resource[Any]:
        stored = self.lookup(uri)
        if stored is None:
            raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # outside the repository and its mirror: never fetched
        return DRAFT202012.create_resource(stored.schema)

    @functools.cached_property
    def registry(self) -> Registry[Any]:
        return Registry(retrieve=self._retrieve)  # type: ignore[call-arg]

    def validator(self, schema: Mapping[str, Any]) -> Validator:
        """A validator for ``schema`` resolving ``$ref`` offline, with bounded regex matching."""
        return HardenedValidator(schema, registry=self.registry, format_checker=FORMAT_CHECKER)

    def validator_for_url(self, url: str) -> Validator | None:
        """A validator for the schema (or ``#/$defs/...`` fragment) at ``url``."""
        stored = self.lookup(url)
        if stored is None:
            return None
        base = _split(url)
        if "#" in url:
            return self.validator({"$ref": url, "$schema": "https://json-schema.org/draft/2020-12/schema",
                                   "$id": f"urn:registry-bot:wrapper:{base}"})
        return self.validator(stored.schema)


class ValidationTimeout(Exception):
    """Validating one instance took longer than its budget (see ``deadline``)."""


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("validation_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Bound the total regex time of the validations inside the block; past it, ``ValidationTimeout``."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _bounded_search(pattern: str, instance: str) -> bool | None:
    """``regex.search`` with a time limit; None when the pattern is invalid or too slow."""
    timeout = PATTERN_TIMEOUT_SECONDS
    end = _DEADLINE.get()
    if end is not None:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise ValidationTimeout("validation ran out of time")
        timeout = min(timeout, remaining)
    try:
        return regex.search(pattern, instance, timeout=timeout) is not None
    except TimeoutError:
        return None
    except regex.error:
        return None


def _pattern(validator: Validator, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    matched = _bounded_search(pattern, instance)
    if matched is None:
        yield ValidationError(
            f"pattern {pattern!r} could not be evaluated on {instance[:80]!r} within "
            f"{PATTERN_TIMEOUT_SECONDS}s (catastrophic backtracking or invalid regex)")
    elif not matched:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Validator, patterns: Mapping[str, Any], instance: Any,
                        schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            matched = _bounded_search(pattern, key)
            if matched is None:
                yield ValidationError(f"patternProperties {pattern!r} could not be evaluated on key {key[:80]!r} "
                                      f"within {PATTERN_TIMEOUT_SECONDS}s")
            elif matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


HardenedValidator = validators.extend(
    Draft202012Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties},
)


def check_schema_errors(schema: Any) -> list[ValidationError]:
    """Errors of ``schema`` against the draft 2020-12 meta-schema (all of them, best first)."""
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=None)
    return sorted(meta.iter_errors(schema), key=lambda e: (len(e.absolute_path), str(e.message)))


def iter_refs(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """Every ``$ref`` string in a schema with its location, without recursion limits."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(node, path)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str):
                yield ref, (*where, "$ref")
            stack.extend((v, (*where, k)) for k, v in current.items() if k not in ("enum", "const", "examples"))
        elif isinstance(current, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(current))
