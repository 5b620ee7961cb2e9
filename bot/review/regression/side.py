"""One side of a change (base or head) as plain, picklable data, and its compiled validators.

``SideSpec.build(snapshot, config)`` runs on the driver: it collects every schema by URL, which
registry entry owns each facet file and which keys it defines, the registered producers and the
naming rules. Spark ships the spec to its workers, where ``Validators`` compiles ``jsonschema-rs``
validators lazily, once per partition (and per worker process), never per event.

Each schema URL carries a digest of itself and of every schema it references: when base and head
give a URL the same digest, the verdict is computed once and used for both sides.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urljoin

import jsonschema_rs
import orjson

from bot.core.config import Config
from bot.core.jsondoc import JsonDoc
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.registry import CORE, Entry, FacetSchema, declared_facets
from bot.model.schemas import (
    BACKTRACK_LIMIT,
    PUBLISHED,
    RemoteReference,
    deadline,
    iter_refs,
    rs_validator,
)
from bot.model.sides import side_model
from bot.model.uris import producer_name
from bot.review.regression.events import is_placeholder

if TYPE_CHECKING:  # the pure-Python stack explains failures only, and is imported then
    from jsonschema import ValidationError
    from referencing import Registry as RefRegistry

# CPU seconds of the pure-Python explanation of one failing instance (a few per group)
EXPLAIN_BUDGET_SECONDS = 1.0
META = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class FacetFile:
    """A facet schema file: who owns it (``None`` outside the registry) and the facets it
    defines."""

    url: str
    owner: str | None
    prefix: str | None
    short_uri: str | None
    defs: tuple[tuple[str, str], ...]  # (facet key, $defs name)

    def keys_for(self, fragment: str) -> set[str]:
        """Keys allowed for a facet that points at ``#/$defs/<name>`` (all keys without a
        fragment)."""
        name = fragment.rsplit("/", 1)[-1] if fragment.startswith("/$defs/") else ""
        keys = {key for key, def_name in self.defs if def_name == name}
        return keys or {key for key, _ in self.defs}

    def defs_for(self, key: str) -> list[str]:
        return [name for k, name in self.defs if k == key]


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:20]


def _facet_defs(url: str, schema: Any) -> tuple[tuple[str, str], ...]:
    doc = JsonDoc(path=url, text="", value=schema)
    return tuple((d.key, d.name) for d in FacetSchema(url, cast(Entry, None), doc).facets)


def _closures(schemas: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """URL -> digest of the schema and every schema it references (transitively), and those URLs."""
    own = {url: _digest(schema) for url, schema in schemas.items()}
    refs: dict[str, set[str]] = {}
    for url, schema in schemas.items():
        targets = {urljoin(url, ref).split("#", 1)[0] for ref, _ in iter_refs(schema)}
        refs[url] = {t for t in targets if t and t != url}
    out: dict[str, str] = {}
    closure: dict[str, tuple[str, ...]] = {}
    for url in schemas:
        seen = {url}
        stack = [url]
        while stack:
            for target in refs.get(stack.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        out[url] = hashlib.sha256(
            "|".join(f"{u}={own.get(u, 'missing')}" for u in sorted(seen)).encode()
        ).hexdigest()[:20]
        closure[url] = tuple(sorted(seen))
    return out, closure


def _file_digest(snapshot: Snapshot, path: str) -> str:
    """The digest of a file's bytes, or of why it cannot be read (a symlink, a blob git cannot
    fetch): the naming rules skip such a file, and the regression judges without it."""
    try:
        data = snapshot.read(path) or b""
    except SnapshotError as exc:
        data = f"unreadable: {exc}".encode()
    return hashlib.sha256(data).hexdigest()


def _load_naming(snapshot: Snapshot, config: Config) -> Any:
    """The naming rules of one side: its own naming folder, else the bundled rules."""
    from bot.model.naming import rules_for

    return rules_for(snapshot, config)


@dataclass(frozen=True)
class SideSpec:
    """Everything the regression needs from one snapshot, as picklable data."""

    label: str
    schemas: Mapping[str, Any]  # URL -> schema (repository wins over the published mirror)
    digests: Mapping[str, str]  # URL -> digest of its reference closure
    closures: Mapping[str, tuple[str, ...]]  # URL -> the URLs it references, itself included
    files: Mapping[str, FacetFile]  # URL -> facet file
    by_filename: Mapping[str, str]  # facet file name -> URL of the registry's current file
    by_key: Mapping[str, str]  # facet key -> URL of the registry file defining it
    short_uris: Mapping[str, str]  # ol:<name>:<file> -> URL
    producers: Mapping[str, str]  # registered producer name -> its documentation URL ("" if none)
    # producer name -> produced_facets (unversioned short URIs)
    declared: Mapping[str, tuple[str, ...]]
    spec_url: str  # the current OpenLineage.json
    naming: Any = None  # bot.model.naming.NamingRules, picklable
    naming_digest: str = ""
    dataset_schemes: frozenset[str] = frozenset()  # namespace schemes the naming rules cover
    # the registered names: whose prefix a facet key carries (``bot.model.registry.prefix_holder``)
    names: frozenset[str] = frozenset()
    token: str = field(default="")

    @classmethod
    def build(
        cls,
        snapshot: Snapshot,
        config: Config,
        label: str,
        naming: Callable[[Snapshot, Config], Any] | None = None,
    ) -> SideSpec:
        """``naming`` loads the side's naming rules (default: ``bot.model.naming.rules_for``)."""
        model = side_model(snapshot, config)
        store, registry = model.schemas, model.registry
        schemas = {url: stored.schema for url, stored in store.by_url.items()}
        files: dict[str, FacetFile] = {}
        by_filename: dict[str, str] = {}
        by_key: dict[str, str] = {}
        short_uris: dict[str, str] = {}
        owned: dict[str, Entry] = {}
        for entry in registry.entries.values():
            for facet in entry.schemas:
                owned[facet.filename] = entry
                if facet.schema_id and facet.schema_id.split("#")[0] in schemas:
                    url = facet.schema_id.split("#")[0]
                    by_filename[facet.filename] = url
                    short_uris[f"ol:{entry.name}:{facet.filename}"] = url
                    for d in facet.facets:
                        by_key.setdefault(d.key, url)
        for url, schema in schemas.items():
            filename = url.rsplit("/", 1)[-1]
            registered = url.startswith(PUBLISHED + "facets/") or url in by_filename.values()
            owner = owned.get(filename) if registered else None
            files[url] = FacetFile(
                url=url,
                owner=owner.name if owner else None,
                prefix=None if owner is None or owner.name == CORE else owner.prefix,
                short_uri=f"ol:{owner.name}:{filename}" if owner else None,
                defs=_facet_defs(url, schema) if isinstance(schema, dict) else (),
            )
        producers: dict[str, str] = {}
        declared: dict[str, tuple[str, ...]] = {}
        for name, entry in registry.entries.items():
            doc = registry.registry_doc(entry)
            block = doc.get("producer") if doc else None
            if isinstance(block, dict):
                root = block.get("root_doc_URL", block.get("root_doc_url", ""))
                producers[name] = root if isinstance(root, str) else ""
                declared[name] = tuple(
                    unversioned(d.uri)
                    for d in declared_facets(doc)
                    if d.block == "producer" and d.field == "produced_facets"
                )
        spec = store.files.json(config.paths.spec)
        spec_id = (
            spec.doc.value.get("$id")
            if spec.doc is not None and isinstance(spec.doc.value, dict)
            else None
        )
        naming_rules = (naming or _load_naming)(snapshot, config)
        naming_digest = _digest(
            {p: _file_digest(snapshot, p) for p in snapshot.files(config.paths.naming)}
        )
        digests, closures = _closures(schemas)
        token = _digest(
            [
                sorted(digests.items()),
                sorted(producers.items()),
                naming_digest,
                sorted(by_key.items()),
                sorted(registry.entries),
            ]
        )
        return cls(
            label=label,
            schemas=schemas,
            digests=digests,
            closures=closures,
            files=files,
            by_filename=by_filename,
            by_key=by_key,
            short_uris=short_uris,
            producers=producers,
            declared=declared,
            spec_url=spec_id if isinstance(spec_id, str) else PUBLISHED + "2-0-2/OpenLineage.json",
            dataset_schemes=frozenset(
                getattr(s, "scheme", "") for s in getattr(naming_rules, "datasets", {}).values()
            ),
            naming=naming_rules,
            naming_digest=naming_digest,
            names=frozenset(registry.entries),
            token=token,
        )

    def resolve(self, url: str) -> tuple[str, str] | None:
        """``(file URL, fragment)`` for a schema URL, a ``#/$defs/`` URL or an ``ol:`` short URI."""
        if url.startswith("ol:"):
            url = self.expand(url) or url
        base, _, fragment = url.partition("#")
        return (base, fragment) if base in self.schemas else None

    def expand(self, uri: str) -> str | None:
        """``ol:<name>[:<sub>]:<file>`` -> the file's URL; ``ol:core:1-0-0/X.json`` -> the published
        one."""
        uri, _, fragment = uri.partition("#")
        suffix = f"#{fragment}" if fragment else ""
        if uri in self.short_uris:
            return self.short_uris[uri] + suffix
        path = uri.rsplit(":", 1)[-1]
        if "/" in path:
            return f"{PUBLISHED}facets/{path}{suffix}"
        return None

    def producer_ok(self, producer: str) -> tuple[bool, str]:
        """Whether ``_producer`` names a registered producer (``ol:<name>[:<sub>]`` or a URL under
        its docs)."""
        if producer.startswith("ol:"):
            if producer_name(producer, self.producers) is not None:
                return True, ""
            return False, f"{producer!r} names no registered producer"
        for name, root in self.producers.items():
            if root and producer.startswith(root.rstrip("/")):
                return True, name
        return False, f"{producer!r} is not under the documentation URL of any registered producer"

    def producer_name(self, producer: str) -> str | None:
        if producer.startswith("ol:"):
            return producer_name(producer, self.producers)
        ok, name = self.producer_ok(producer)
        return name if ok else None


def unversioned(uri: str) -> str:
    """``ol:core:1-0-0/X.json`` -> ``ol:core:X.json`` (coverage compares facet files, not
    versions)."""
    head, _, path = uri.rpartition(":")
    return f"{head}:{path.rsplit('/', 1)[-1]}" if head else uri


class Compiled:
    """A compiled validator for one schema URL (with fragment) and one reference closure."""

    __slots__ = ("key", "rs", "url")

    def __init__(self, key: tuple[str, str], url: str, rs: Any) -> None:
        self.key = key
        self.url = url
        self.rs = rs


class Validators:
    """Compiled ``jsonschema-rs`` validators of one side, built lazily and shared with the other
    side.

    ``pool`` maps (digest, fragment) -> Compiled, so a URL whose schemas did not change between base
    and head compiles once and yields the identical object on both sides.
    """

    def __init__(self, spec: SideSpec, pool: dict[tuple[str, str], Compiled | None]) -> None:
        self.spec = spec
        self.pool = pool

    def compiled(self, url: str, fragment: str) -> Compiled | None:
        key = (self.spec.digests[url], fragment)
        if key not in self.pool:
            target = f"{url}#{fragment}" if fragment else url
            resources = [
                (u, self.spec.schemas[u]) for u in self.spec.closures[url] if u in self.spec.schemas
            ]
            try:  # a reference that leaves the repository and its mirror makes the schema unknown
                rs = self._compile({"$schema": META, "$ref": target}, resources)
            except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
                self.pool[key] = None
            else:
                self.pool[key] = Compiled(key, target, rs)
        return self.pool[key]

    def _compile(self, schema: Any, resources: list[tuple[str, Any]]) -> Any:
        """Patterns on the linear-time engine; a schema it refuses (lookaround, backreference) gets
        fancy-regex with a backtrack limit."""
        # not a method: the compiled validator must not hold self
        retrieve = _side_retriever(self.spec.schemas)
        try:
            return rs_validator(schema, resources, retrieve, validate_formats=True)
        except jsonschema_rs.ValidationError:
            return rs_validator(
                schema,
                resources,
                retrieve,
                validate_formats=True,
                pattern_options=jsonschema_rs.FancyRegexOptions(backtrack_limit=BACKTRACK_LIMIT),
            )

    @functools.cached_property
    def _py_registry(self) -> RefRegistry[Any]:
        from referencing import Registry as RefRegistry
        from referencing import Resource
        from referencing.jsonschema import DRAFT202012

        resources: Iterable[tuple[str, Resource[Any]]] = (
            (url, Resource.from_contents(schema, default_specification=DRAFT202012))
            for url, schema in self.spec.schemas.items()
        )
        return RefRegistry().with_resources(resources)  # type: ignore[call-arg,unused-ignore]

    def explain(self, compiled: Compiled, instance: Any, partial: bool) -> list[ValidationError]:
        """The pure-Python ``jsonschema`` errors for a failing instance (placeholders filtered)."""
        from bot.model.schemas_python import FORMAT_CHECKER, HardenedValidator

        validator = HardenedValidator(
            {"$schema": META, "$ref": compiled.url},
            registry=self._py_registry,
            format_checker=FORMAT_CHECKER,
        )
        # raises ValidationTimeout past it; CPU time, so that a loaded machine (or executor)
        # explains alike
        with deadline(EXPLAIN_BUDGET_SECONDS, clock=time.thread_time):
            return [e for e in validator.iter_errors(instance) if not (partial and ignorable_py(e))]

    def errors_rs(self, compiled: Compiled, instance: Any, partial: bool) -> list[Any]:
        """The ``jsonschema-rs`` errors for an instance (placeholders and missing keys of partial
        events dropped)."""
        return [e for e in compiled.rs.iter_errors(instance) if not (partial and ignorable_rs(e))]


def _side_retriever(schemas: Mapping[str, Any]) -> Callable[[str], Any]:
    """Only one side's schemas (a closure can miss one a relative ``$ref`` names); never the
    network."""

    def retrieve(uri: str) -> Any:
        if uri in schemas:
            return schemas[uri]
        raise RemoteReference(uri)

    return retrieve


def ignorable_py(error: ValidationError) -> bool:
    """In a partial expected event: a missing key or a placeholder value is not an error.

    An ``anyOf``/``oneOf`` failure is ignorable when one of its branches failed only for such
    reasons.
    """
    if error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        return any(all(ignorable_py(sub) for sub in branch) for branch in branches.values())
    return error.validator == "required" or is_placeholder(error.instance)


def ignorable_rs(error: Any) -> bool:
    """The same rule as ``ignorable_py`` for a ``jsonschema-rs`` error."""
    kind = error.kind
    name = type(kind).__name__
    if name in ("AnyOf", "OneOfNotValid"):
        return any(all(ignorable_rs(sub) for sub in branch) for branch in kind.context)
    return name == "Required" or is_placeholder(error.instance)
