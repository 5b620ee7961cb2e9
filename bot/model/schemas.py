"""An offline store of every JSON schema a repository holds, and validators that never fetch.

More in docs/module-notes.md (bot/model/schemas.py).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import jsonschema_rs
import regex

from bot.core import budget
from bot.core.config import Config
from bot.core.deferred_format_libraries import rfc3986
from bot.core.regex_size import PatternTooLarge, check_size, compile_unkept
from bot.core.small_cache import small_cache
from bot.core.snapshot import Snapshot
from bot.model.ecma_regex import python_pattern
from bot.model.registry import Files

if TYPE_CHECKING:  # the pure-Python stack, imported on first use (``__getattr__`` below)
    from jsonschema.protocols import Validator
    from referencing import Registry, Resource

    from bot.model.schemas_python import FORMAT_CHECKER as FORMAT_CHECKER
    from bot.model.schemas_python import HardenedValidator as HardenedValidator
    from bot.model.schemas_python import check_schema_errors as check_schema_errors
    from bot.model.schemas_python import offline_registry as offline_registry

PUBLISHED = "https://openlineage.io/spec/"
# subschema evaluations jsonschema-rs may do for one instance (it cannot be stopped)
WORK_LIMIT = 100_000
PATTERN_TIMEOUT_SECONDS = 0.25  # one match; a whole validation is bounded by ``deadline``
# compiling is not covered by the timeout: ``regex`` compiles 4 KB in milliseconds
MAX_PATTERN_CHARS = 4096
# jsonschema-rs: the linear-time ``regex`` crate, never the backtracking fancy-regex engine
# fancy-regex, only for the bot's own schemas and patterns the linear-time engine refuses: ~4 ms per
# match at worst
BACKTRACK_LIMIT = 100_000
RS_PATTERN_OPTIONS = jsonschema_rs.RegexOptions(
    size_limit=10 * 1024 * 1024, dfa_size_limit=2 * 1024 * 1024
)


class RemoteReference(LookupError):
    """A reference outside the repository and its published mirror: refused, never fetched."""

    def __init__(self, uri: str) -> None:
        super().__init__(
            f"{uri} is outside the repository and its published mirror; the bot never fetches it"
        )
        self.uri = uri


def refuse(uri: str) -> Any:
    """The retriever of validators that may resolve nothing beyond what they are given."""
    raise RemoteReference(uri)


# Formats jsonschema-rs decides as the pure-Python ``FORMAT_CHECKER`` does (the same library), so a
# pass decided by jsonschema-rs is the pass the explaining validator would give.
RS_FORMATS: dict[str, Callable[[str], bool]] = {
    "uri": rfc3986("URI"),
    "uri-reference": rfc3986("URI_reference"),
}


def rs_validator(
    schema: Any,
    resources: Iterable[tuple[str, Any]] = (),
    retrieve: Callable[[str], Any] = refuse,
    **options: Any,
) -> Any:
    """A ``jsonschema-rs`` validator that cannot open a socket and never backtracks on a pattern.

    ``resources`` are registered up front; any other URI goes to ``retrieve`` (the repository, or
    nothing), never to jsonschema-rs' built-in HTTP client, which a given retriever replaces. Raises
    what ``validator_for`` raises: ``ValidationError`` (also for a pattern the ``regex`` crate
    cannot compile), ``ReferencingError``, ``ValueError``.
    """
    interrupted: list[BaseException] = []

    def passing_on_ctrl_c(uri: str) -> Any:
        # jsonschema-rs turns whatever a retriever raises into a ValidationError ("retrieving it
        # failed"), a Ctrl-C included: it is raised again once compiling returns
        try:
            return retrieve(uri)
        except KeyboardInterrupt as exc:
            interrupted.append(exc)
            raise

    try:
        registry = jsonschema_rs.Registry(list(resources), retriever=passing_on_ctrl_c)
        return jsonschema_rs.validator_for(
            schema,
            registry=registry,
            retriever=passing_on_ctrl_c,
            pattern_options=options.pop("pattern_options", RS_PATTERN_OPTIONS),
            **options,
        )
    finally:
        if interrupted:
            raise interrupted[0]


def meta_is_valid(schema: Any) -> bool:
    """Whether ``schema`` is valid against its meta-schema, resolving no remote ``$schema`` (False
    then)."""
    try:
        return bool(
            jsonschema_rs.meta.is_valid(
                schema, registry=jsonschema_rs.Registry([], retriever=refuse)
            )
        )
    except (jsonschema_rs.ReferencingError, jsonschema_rs.ValidationError, ValueError):
        return False


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
        self._work: dict[tuple[int, int], tuple[Any, int]] = {}
        self._work_refs: dict[str, tuple[Any, Any]] = {}
        # the store's schemas and what they embed, by base URL
        self._work_resources: dict[str, Any] = {}
        # a stored schema's URL -> the URLs its $refs name
        self._direct: dict[str, tuple[str, ...]] = {}
        # a stored schema's URL -> whether it is a valid schema
        self._meta_valid: dict[str, bool] = {}

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
        path = self.config.paths.mirrored(url[len(PUBLISHED) :])
        loaded = self.files.json(path)
        return StoredSchema(url, path, loaded.doc.value) if loaded.doc is not None else None

    @functools.cached_property
    def has_mirror(self) -> bool:
        """Whether the repository keeps a published mirror at all (older histories have none)."""
        return bool(self.snapshot.files(self.config.paths.mirror_folder))

    def lookup(self, url: str) -> StoredSchema | None:
        base = _split(url)
        return self.repository.get(base) or self._mirrored(base)

    def document(self, url: str) -> Any | None:
        """The schema stored at ``url`` (the repository's, else the mirror's), or None."""
        stored = self.lookup(url)
        return stored.schema if stored is not None else None

    def published(self, url: str) -> StoredSchema | None:
        """Only the mirror's copy (for checks that compare a schema with what was published)."""
        return self._mirrored(_split(url))

    @functools.cached_property
    def by_url(self) -> dict[str, StoredSchema]:
        """Every schema: the whole mirror, then repository schemas over it."""
        found: dict[str, StoredSchema] = {}
        mirror = self.config.paths.mirror_prefix
        for path in self.snapshot.files(self.config.paths.mirror_folder):
            if path.endswith(".json"):
                stored = self._mirrored(PUBLISHED + path[len(mirror) :])
                if stored is not None:
                    found[stored.url] = stored
        found.update(self.repository)
        return found

    def resources(self) -> Iterable[tuple[str, Any]]:
        """(url, schema) pairs, for building other validators (jsonschema-rs) over the same
        store."""
        return ((url, stored.schema) for url, stored in self.by_url.items())

    def _referenced(self, url: str, schema: Any) -> frozenset[str]:
        """Every schema URL ``schema`` refers to, transitively (resolvable ones only)."""
        found: set[str] = set()
        pending = [_direct_refs(url, schema)]
        while pending:
            for target in pending.pop():
                if target in found or target == url:
                    continue
                stored = self.lookup(target)
                if stored is not None:
                    found.add(target)
                    direct = self._direct.get(target)
                    # a schema of the store refers to the same schemas in every review of it
                    if direct is None:
                        direct = self._direct[target] = _direct_refs(target, stored.schema)
                    pending.append(direct)
        return frozenset(found)

    def broken_ground(self, schema: Mapping[str, Any]) -> str | None:
        """The path of the first schema ``schema`` refers to (transitively) that is not a valid
        draft 2020-12 schema, or None: instances checked against ``schema`` are judged by it too,
        and a validator either crashes on it or reads it wrongly, silently."""
        base = str(schema.get("$id") or "urn:registry-bot:anonymous")
        for url in sorted(self._referenced(base, schema)):
            stored = self.lookup(url)
            if stored is None:
                continue
            valid = self._meta_valid.get(url)
            if valid is None:
                valid = self._meta_valid[url] = meta_is_valid(stored.schema)
            if not valid:
                return stored.path
        return None

    def closure(self, schema: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
        """(URL, path, text) of every schema ``schema`` refers to, transitively: what its
        validators read besides the schema itself. Two stores giving the same closure for the same
        schema validate every instance alike."""
        base = str(schema.get("$id") or "urn:registry-bot:anonymous")
        found = []
        for url in sorted(self._referenced(base, schema)):
            stored = self.lookup(url)
            doc = self.files.json(stored.path).doc if stored is not None else None
            found.append((url, stored.path if stored else "", doc.text if doc else ""))
        return tuple(found)

    def _compiled_registry(self, urls: frozenset[str]) -> Any:
        """A jsonschema-rs registry of exactly these schemas, shared by every schema needing the
        same set.

        Compiling against a registry of the whole repository costs time in proportion to its size;
        most facets refer only to OpenLineage.json, so they all share one small registry.
        """
        cached = self._registries.get(urls)
        if cached is None:
            # ``refuse``, not a method of the store: a Rust object holding the store would make a
            # reference cycle the garbage collector cannot see through, and every review's store
            # would leak.
            cached = jsonschema_rs.Registry(
                [(u, self.lookup(u).schema) for u in sorted(urls)],  # type: ignore[union-attr]
                retriever=refuse,
            )
            self._registries[urls] = cached
        return cached

    def fast_validator(self, schema: Mapping[str, Any]) -> Any | None:
        """A compiled (jsonschema-rs) validator for pass/fail decisions, or None when it cannot
        compile (unresolvable or remote reference, a pattern the linear-time engine refuses):
        callers then use ``validator()``. Its registry holds every repository or mirror schema the
        schema refers to (``_referenced``); anything else is refused.

        Pure-Python ``validator()`` explains failures; the two agree on the corpus
        (tests/test_schemas.py).
        """
        try:
            base = str(schema.get("$id") or "urn:registry-bot:anonymous")
            registry = self._compiled_registry(self._referenced(base, schema))
            return jsonschema_rs.validator_for(
                dict(schema),
                registry=registry,
                retriever=refuse,
                validate_formats=True,
                pattern_options=RS_PATTERN_OPTIONS,
            )
        # any compile failure falls back to the explaining validator
        except Exception:  # noqa: BLE001
            return None

    def _retrieve(self, uri: str) -> Resource[Any]:
        from referencing.exceptions import NoSuchResource
        from referencing.jsonschema import DRAFT202012

        stored = self.lookup(uri)
        if stored is None:
            # outside the repository and its mirror: never fetched
            raise NoSuchResource(ref=uri)  # type: ignore[call-arg]
        return DRAFT202012.create_resource(stored.schema)

    @functools.cached_property
    def registry(self) -> Registry[Any]:
        from referencing import Registry

        return Registry(retrieve=self._retrieve)  # type: ignore[call-arg]

    def work_bound(self, schema: Mapping[str, Any], depth: int) -> int:
        """An upper bound on the subschema evaluations of validating an instance nested ``depth``
        deep (times its size), saturating at ``WORK_LIMIT + 1``. Shared subschemas
        (OpenLineage.json) are counted once per store and depth.

        jsonschema-rs holds the GIL and cannot be stopped: a schema whose references share
        subschemas (``anyOf`` of two ``$ref``s to the next level, 40 levels) makes it work 2^40
        times without any regex. Callers give such a schema (over ``WORK_LIMIT``) to the bounded
        pure-Python validator instead.

        References resolve as draft 2020-12 resolves them (``$id`` bases, JSON pointers, ``$anchor``
        and ``$dynamicAnchor`` fragments, the store's schemas), without importing the pure-Python
        stack.
        """
        limit = WORK_LIMIT
        # (id(node), depth) -> (node, bound): the node is kept, so its id stays its own
        memo = self._work
        active: set[tuple[int, int]] = set()
        # absolute URL -> (contents, its base): context-free, shared
        resolved_in_store = self._work_refs
        root_base = "urn:registry-bot:work-bound"
        # base URL -> the resource's root (this schema and what it embeds)
        resources: dict[str, Any] = {}
        if _nested_id(schema):
            _embedded(schema, root_base, resources, root=True)
        # nothing embedded with its own $id (most schemas): the crawl would find the root alone
        else:
            own_id = schema.get("$id") if isinstance(schema, dict) else None
            resources[
                _split(urljoin(root_base, own_id)) if isinstance(own_id, str) else root_base
            ] = schema

        shared = self._work_resources

        def resource(url: str) -> Any:
            found = resources.get(url)
            if found is None:
                found = shared.get(url)
            if found is None:
                stored = self.lookup(url)
                if stored is None:
                    raise LookupError(url)
                found = stored.schema
                _embedded(found, url, shared, root=True)
            return found

        def lookup(base: str, ref: str) -> tuple[Any, str]:
            target = _split(base) + ref if ref.startswith("#") else urljoin(base, ref)
            url = _split(target)
            if url != _split(base) and self.lookup(url) is not None:
                if target not in resolved_in_store:
                    resolved_in_store[target] = _resolve_fragment(
                        resource(url), url, target[len(url) + 1 :]
                    )
                return resolved_in_store[target]
            return _resolve_fragment(resource(url), url, target[len(url) + 1 :])

        def bound(node: Any, base: str, d: int) -> int:
            if not isinstance(node, dict) or d < 0:
                return 1
            key = (id(node), d)
            if key in memo:
                return memo[key][1]
            if key in active:  # a reference cycle that consumes nothing of the instance
                return limit + 1
            active.add(key)
            if isinstance(node.get("$id"), str):
                base = urljoin(base, node["$id"])
            total = 1
            for keyword in ("$ref", "$dynamicRef"):
                ref = node.get(keyword)
                if isinstance(ref, str):
                    try:
                        contents, target_base = lookup(base, ref)
                    # unresolvable: jsonschema-rs will not compile it anyway
                    except Exception:  # noqa: BLE001
                        continue
                    total += bound(contents, target_base, d)
            for child, deeper in _subschemas(node):
                total += bound(child, base, d - 1 if deeper else d)
                if total > limit:
                    break
            active.discard(key)
            total = min(total, limit + 1)
            memo[key] = (node, total)
            return total

        return bound(schema, root_base, depth)

    def validator(self, schema: Mapping[str, Any]) -> Validator:
        """A validator for ``schema`` resolving ``$ref`` offline, with bounded regex matching."""
        from bot.model.schemas_python import FORMAT_CHECKER, HardenedValidator

        return HardenedValidator(schema, registry=self.registry, format_checker=FORMAT_CHECKER)


_IN_PLACE = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
_DEEPER_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "contains",
    "propertyNames",
    "unevaluatedItems",
)
_DEEPER_MAP = ("properties", "patternProperties")


def _subschemas(node: dict[str, Any]) -> Iterator[tuple[Any, bool]]:
    """(subschema, applies one level deeper in the instance) for every applicator of ``node``."""
    for keyword in _IN_PLACE:
        children = node.get(keyword)
        if isinstance(children, list):
            yield from ((child, False) for child in children)
    for keyword in _IN_PLACE_ONE:
        if keyword in node:
            yield node[keyword], False
    deps = node.get("dependentSchemas")
    if isinstance(deps, dict):
        yield from ((child, False) for child in deps.values())
    for keyword in _DEEPER_ONE:
        if keyword in node:
            yield node[keyword], True
    for keyword in _DEEPER_MAP:
        children = node.get(keyword)
        if isinstance(children, dict):
            yield from ((child, True) for child in children.values())
    prefix = node.get("prefixItems")
    if isinstance(prefix, list):
        yield from ((child, True) for child in prefix)


def _nested_id(schema: Any) -> bool:
    """Whether any object below ``schema``'s root holds an ``$id`` key (anywhere: a superset of what
    ``_embedded`` registers), found without walking the schema keyword by keyword."""
    stack = (
        [v for v in schema.values() if isinstance(v, dict | list)]
        if isinstance(schema, dict)
        else []
    )
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$id" in node:
                return True
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        else:
            stack.extend(v for v in node if isinstance(v, dict | list))
    return False


def _embedded(node: Any, base: str, resources: dict[str, Any], root: bool = False) -> None:
    """Register ``node`` (a resource's root, at ``base``) and every subresource it embeds with its
    own ``$id``."""
    pending = [(node, base, root)]
    while pending:
        here, url, is_root = pending.pop()
        if not isinstance(here, dict):
            continue
        if isinstance(here.get("$id"), str):
            url = _split(urljoin(url, here["$id"]))
            resources.setdefault(url, here)
        elif is_root:
            resources.setdefault(_split(url), here)
        children = [child for child, _ in _subschemas(here)]
        for keyword in ("$defs", "definitions"):
            defs = here.get(keyword)
            if isinstance(defs, dict):
                children.extend(defs.values())
        pending.extend((child, url, False) for child in children)


def _resolve_fragment(document: Any, base: str, fragment: str) -> tuple[Any, str]:
    """The subschema of ``document`` (a resource at ``base``) that ``#fragment`` names, and the base
    URL it sits under: a JSON pointer (``$id`` on the way changes the base) or an
    ``$anchor``/``$dynamicAnchor``."""
    from urllib.parse import unquote

    fragment = unquote(fragment)
    if not fragment:
        return document, base
    if not fragment.startswith("/"):
        pending = [(document, True)]
        while pending:
            here, is_root = pending.pop()
            if not isinstance(here, dict):
                continue
            if not is_root and isinstance(here.get("$id"), str):
                continue  # another resource's anchors are its own
            if fragment in (here.get("$anchor"), here.get("$dynamicAnchor")):
                return here, base
            children = [child for child, _ in _subschemas(here)]
            for keyword in ("$defs", "definitions"):
                defs = here.get(keyword)
                if isinstance(defs, dict):
                    children.extend(defs.values())
            pending.extend((child, False) for child in reversed(children))
        raise LookupError(f"no anchor {fragment!r} in {base}")
    node = document
    for part in fragment[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, dict) and isinstance(node.get("$id"), str):
            base = _split(urljoin(base, node["$id"]))
    return node, base


class ValidationTimeout(Exception):
    """Validating one instance took longer than its budget (see ``deadline``)."""


class PatternTimeout(ValidationTimeout):
    """One regular expression from a schema did not finish within ``PATTERN_TIMEOUT_SECONDS``."""

    def __init__(self, pattern: str, subject: str, seconds: float) -> None:
        super().__init__(
            f"pattern {pattern[:120]!r} did not finish on {subject[:80]!r} within {seconds:g} s "
            "(catastrophic backtracking)"
        )
        self.pattern = pattern
        self.subject = subject


# (end, the clock it is read on)
_DEADLINE: contextvars.ContextVar[tuple[float, Callable[[], float]] | None] = (
    contextvars.ContextVar("validation_deadline", default=None)
)


@contextlib.contextmanager
def deadline(seconds: float, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Bound the validations inside the block: past ``seconds``, the next keyword or regex raises
    ``ValidationTimeout``, and no single regex runs longer than what remains. ``time.thread_time``
    as the clock bounds the work rather than the wait, where the result must not depend on the
    machine's load."""
    token = _DEADLINE.set((clock() + seconds, clock))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _remaining() -> float | None:
    """Seconds left of the validation's ``deadline`` and of the review's budget
    (``bot.core.budget``), the sooner; raises ``BudgetSpent`` or ``ValidationTimeout`` when one has
    run out."""
    review_left = budget.left()
    if review_left is not None and review_left <= 0:
        budget.check()
    bound = _DEADLINE.get()
    if bound is None:
        return review_left
    end, clock = bound
    remaining = end - clock()
    if remaining <= 0:
        raise ValidationTimeout("validation ran out of time")
    return remaining if review_left is None else min(remaining, review_left)


def bounded_search(pattern: str, subject: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``subject``, on the ``regex`` engine with a time
    limit.

    None when the pattern is not a valid regular expression or is over ``MAX_PATTERN_CHARS``;
    ``PatternTimeout`` when it runs too long, ``ValidationTimeout`` when the block's ``deadline``
    passed.
    """
    if len(pattern) > MAX_PATTERN_CHARS or _oversized(pattern):
        return None
    remaining = _remaining()
    timeout = (
        PATTERN_TIMEOUT_SECONDS if remaining is None else min(PATTERN_TIMEOUT_SECONDS, remaining)
    )
    try:
        found = compile_unkept(python_pattern(pattern)).search(subject, timeout=timeout)
        return found is not None
    except TimeoutError:
        # what was left of the block's budget, not this pattern's own limit
        if timeout < PATTERN_TIMEOUT_SECONDS:
            budget.check()
            raise ValidationTimeout("validation ran out of time") from None
        raise PatternTimeout(pattern, subject, timeout) from None
    except (regex.error, RecursionError, OverflowError, ValueError):
        return None


@small_cache(maxsize=1024, largest=MAX_PATTERN_CHARS)
def bounded_runs(pattern: Any) -> bool:
    """Whether ``bounded_search`` runs ``pattern`` at all (within the size limits, and a regular
    expression of the ``regex`` module) rather than answering None."""
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN_CHARS or _oversized(pattern):
        return False
    try:
        compile_unkept(python_pattern(pattern))
    except (regex.error, RecursionError, OverflowError, ValueError):
        return False
    return True


@small_cache(maxsize=1024, largest=MAX_PATTERN_CHARS)
def _oversized(pattern: str) -> str | None:
    """Why compiling ``pattern`` would build an oversized program (``bot.core.regex_size``), else
    None."""
    try:
        check_size(python_pattern(pattern))
    except PatternTooLarge as exc:
        return str(exc)
    return None


def _unusable(pattern: str) -> str:
    if len(pattern) > MAX_PATTERN_CHARS:
        return (
            f"pattern of {len(pattern)} characters is over the {MAX_PATTERN_CHARS}-character "
            f"limit; not evaluated"
        )
    oversized = _oversized(pattern)
    if oversized:
        return f"{oversized} ({pattern[:80]!r})"
    return f"pattern {pattern[:120]!r} is not a valid regular expression"


def _direct_refs(url: str, schema: Any) -> tuple[str, ...]:
    """The schema URLs (no fragment) the ``$ref``s of ``schema``, read at ``url``, name outside
    itself."""
    found: dict[str, None] = {}
    stack = [schema]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                found[_split(urljoin(url, ref))] = None
            stack.extend(
                v
                for k, v in current.items()
                if k not in ("enum", "const", "examples") and isinstance(v, dict | list)
            )
        elif isinstance(current, list):
            stack.extend(v for v in current if isinstance(v, dict | list))
    return tuple(found)


def iter_refs(
    node: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """Every ``$ref`` string in a schema with its location, without recursion limits."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(node, path)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str):
                yield ref, (*where, "$ref")
            stack.extend(
                (v, (*where, k))
                for k, v in current.items()
                if k not in ("enum", "const", "examples")
            )
        elif isinstance(current, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(current))


_PYTHON_SIDE = frozenset(
    {"FORMAT_CHECKER", "HardenedValidator", "check_schema_errors", "offline_registry"}
)


def __getattr__(name: str) -> Any:
    """The pure-Python validators (``bot.model.schemas_python``), imported when first asked for."""
    if name in _PYTHON_SIDE:
        import bot.model.schemas_python

        return getattr(bot.model.schemas_python, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
