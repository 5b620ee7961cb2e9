"""The registry as data: entries, their facet schemas and examples, read from one snapshot.

Everything is parsed lazily and cached, so each file is read and parsed once per review however
many checks look at it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.core.config import Config
from bot.core.jsondoc import JsonDoc, JsonProblem
from bot.core.snapshot import Snapshot, SnapshotError

CORE = "core"
ENTRY_SEGMENT = re.compile(r"[a-z0-9][a-z0-9-]*")
BASE_FACETS = {
    "RunFacet": ("run", "RunFacet"),
    "JobFacet": ("job", "JobFacet"),
    "DatasetFacet": ("dataset", "DatasetFacet"),
    "InputDatasetFacet": ("inputDataset", "InputDatasetFacet"),
    "OutputDatasetFacet": ("outputDataset", "OutputDatasetFacet"),
}
BASE_REF = re.compile(r"^https://openlineage\.io/spec/\d+-\d+-\d+/OpenLineage\.json#/\$defs/(\w+)$")
FACET_ID = re.compile(
    r"^https://openlineage\.io/spec/facets/(\d+)-(\d+)-(\d+)/([A-Za-z0-9_]+\.json)$"
)


def pascal(name: str) -> str:
    """``gcp:composer`` -> ``GcpComposer``; ``my-tool`` -> ``MyTool``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[:/_-]+", name) if part)


def camel(name: str) -> str:
    text = pascal(name)
    return text[:1].lower() + text[1:]


def key_prefixes(name: str) -> tuple[str, str, str]:
    """The spellings of an entry's facet key prefix: ``gcp:dataproc`` -> ``gcp_dataproc``,
    ``gcpDataproc``, ``gcpdataproc``. The one definition of the prefix rule: the checks and the
    regression both apply it."""
    snake = re.sub(r"[:/-]", "_", name)
    return snake, camel(name), snake.replace("_", "")


def _at_boundary(text: str, end: int) -> bool:
    """Whether a prefix of ``text`` ending at ``end`` ends a word: the text ends there or goes on
    with anything but a lower-case letter or a digit (``_``, an upper-case letter)."""
    return end == len(text) or not ("a" <= text[end] <= "z" or "0" <= text[end] <= "9")


def _longest_spelling(text: str, spellings: tuple[str, ...]) -> str | None:
    matches = [p for p in spellings if text.startswith(p) and _at_boundary(text, len(p))]
    return max(matches, key=len, default=None)


def carried_prefix(key: str, name: str) -> str | None:
    """The spelling of entry ``name``'s prefix (``key_prefixes``) facet key ``key`` starts with,
    ending a word: ``icebergCommitReport`` and ``gcp_lineage`` carry theirs, ``airflow_secrets``
    does not carry ``air``'s."""
    return _longest_spelling(key, key_prefixes(name))


def carries_prefix(key: str, name: str) -> bool:
    """Whether facet key ``key`` carries entry ``name``'s prefix (``carried_prefix``)."""
    return carried_prefix(key, name) is not None


def carries_name_prefix(facet_name: str, name: str) -> bool:
    """Whether facet name ``facet_name`` starts with the PascalCase of entry ``name`` ending a word
    (``GcpComposerRunFacet`` for ``gcp:composer``; ``AirflowDagRunFacet`` not for ``air``)."""
    return _longest_spelling(facet_name, (pascal(name),)) is not None


def prefix_holder(
    text: str, names: Iterable[str], own: str | None = None, *, facet_name: bool = False
) -> str | None:
    """The registered name whose prefix facet key ``text`` (or, with ``facet_name``, facet name)
    carries: the one with the longest spelling when several do (``gcp_composer_job`` belongs to
    ``gcp:composer``, not to ``gcp``), ``own`` on a tie; core has no prefix. ``None`` when it
    carries none."""
    best: tuple[int, str] | None = None
    for name in sorted(names):
        if name == CORE:
            continue
        spellings = (pascal(name),) if facet_name else key_prefixes(name)
        found = _longest_spelling(text, spellings)
        if found is None or (best is not None and len(found) < best[0]):
            continue
        if best is None or len(found) > best[0] or name == own:
            best = (len(found), name)
    return None if best is None else best[1]


def fold_name(name: str) -> str:
    """The form two names are compared in for collisions: case-insensitive, ``-``, ``_``, ``:``
    folded."""
    return re.sub(r"[-_:/]", "", name.lower())


class Loaded:
    """A JSON file as loaded: a document, a problem, or absent."""

    __slots__ = ("doc", "path", "problem")

    def __init__(
        self, path: str, doc: JsonDoc | None = None, problem: JsonProblem | None = None
    ) -> None:
        self.path = path
        self.doc = doc
        self.problem = problem

    @property
    def missing(self) -> bool:
        return self.doc is None and self.problem is None


class Files:
    """Cached, defensive JSON loading from a snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._cache: dict[str, Loaded] = {}

    def json(self, path: str) -> Loaded:
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        result = self._load(path)
        self._cache[path] = result
        return result

    def _load(self, path: str) -> Loaded:
        try:
            size = self.snapshot.size(path)
            if size is None:
                return Loaded(path)
            if size > 10 * 1024 * 1024:
                return Loaded(
                    path,
                    problem=JsonProblem(
                        f"file is {size:,} bytes, over the 10,485,760-byte limit for JSON files",
                        1,
                        1,
                    ),
                )
            data = self.snapshot.read(path)
        except SnapshotError as exc:
            return Loaded(path, problem=JsonProblem(str(exc), None, None))
        if data is None:
            return Loaded(path)
        try:
            return Loaded(path, doc=JsonDoc.parse(data, path))
        except JsonProblem as exc:
            return Loaded(path, problem=exc)

    def text(self, path: str, limit: int = 1024 * 1024) -> str | None:
        """A small text file (CODEOWNERS), decoded leniently; ``None`` when absent or too large."""
        try:
            size = self.snapshot.size(path)
            if size is None or size > limit:
                return None
            data = self.snapshot.read(path)
        except SnapshotError:
            return None
        return None if data is None else data.decode("utf-8", "replace")


@dataclass(frozen=True)
class FacetDef:
    """One facet a schema file defines: its key in an event, its ``$defs`` name and base facet."""

    key: str
    name: str
    base: str | None  # RunFacet, JobFacet, DatasetFacet, InputDatasetFacet, OutputDatasetFacet
    pointer: str  # where the definition sits in the file
    via: str | None = None  # the $defs name the key points at, when it is a union of facets

    @property
    def container(self) -> str | None:
        return BASE_FACETS[self.base][0] if self.base in BASE_FACETS else None


@dataclass
class FacetSchema:
    """A facet schema file of an entry."""

    path: str
    entry: Entry
    doc: JsonDoc

    @property
    def value(self) -> Any:
        return self.doc.value

    @property
    def stem(self) -> str:
        return self.filename.rsplit(".", 1)[0]

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def schema_id(self) -> str | None:
        value = self.value.get("$id") if isinstance(self.value, dict) else None
        return value if isinstance(value, str) else None

    @property
    def version(self) -> tuple[int, int, int] | None:
        match = FACET_ID.match(self.schema_id or "")
        return (int(match[1]), int(match[2]), int(match[3])) if match else None

    @functools.cached_property
    def facets(self) -> tuple[FacetDef, ...]:
        """The facets this file defines, from its top-level ``properties`` (unions expanded)."""
        value = self.value
        if not isinstance(value, dict) or not isinstance(value.get("properties"), dict):
            return ()
        raw_defs = value.get("$defs")
        defs: dict[str, Any] = raw_defs if isinstance(raw_defs, dict) else {}
        out: list[FacetDef] = []
        for key, prop in value["properties"].items():
            via = _local_ref(prop)
            for name in _facet_defs(prop, defs, depth=0):
                out.append(
                    FacetDef(
                        key=key,
                        name=name,
                        base=_base_of(defs.get(name)),
                        pointer=f"/$defs/{name}",
                        via=via if via != name else None,
                    )
                )
        return tuple(out)


def _local_ref(node: Any) -> str | None:
    if (
        isinstance(node, dict)
        and isinstance(node.get("$ref"), str)
        and node["$ref"].startswith("#/$defs/")
    ):
        return str(node["$ref"])[len("#/$defs/") :]
    return None


def _facet_defs(node: Any, defs: dict[str, Any], depth: int) -> list[str]:
    """Names of the facet definitions a property points at, following unions of local refs."""
    if depth > 8 or not isinstance(node, dict):
        return []
    name = _local_ref(node)
    if name is None:
        union = node.get("oneOf") or node.get("anyOf")
        if isinstance(union, list) and union and all(_local_ref(n) for n in union):
            return [n for sub in union for n in _facet_defs(sub, defs, depth + 1)]
        return []
    target = defs.get(name)
    if isinstance(target, dict) and _base_of(target) is None:
        union = target.get("oneOf") or target.get("anyOf")
        if isinstance(union, list) and union and all(_local_ref(n) for n in union):
            return [n for sub in union for n in _facet_defs(sub, defs, depth + 1)]
    return [name]


def _base_of(node: Any) -> str | None:
    if not isinstance(node, dict):
        return None
    candidates = list(node.get("allOf") or []) if isinstance(node.get("allOf"), list) else []
    candidates.append(node)
    for item in candidates:
        if isinstance(item, dict) and isinstance(item.get("$ref"), str):
            match = BASE_REF.match(item["$ref"])
            if match:
                return match[1]
    return None


@dataclass(eq=False)
class Entry:
    """A registered name and where its files live."""

    name: str
    folder: str
    facets_dir: str
    examples_dir: str
    registry: Registry = field(repr=False)

    @property
    def is_core(self) -> bool:
        return self.name == CORE

    @property
    def prefix(self) -> str:
        """The facet key prefix: ``gcp:composer`` -> ``gcp_composer``."""
        return re.sub(r"[:-]", "_", self.name)

    @property
    def pascal(self) -> str:
        return pascal(self.name)

    @property
    def registry_json(self) -> str:
        return f"{self.folder}/registry.json"

    @property
    def codeowners(self) -> str:
        return f"{self.folder}/CODEOWNERS"

    @property
    def has_folder(self) -> bool:
        """Whether the entry has files in the registry (core's facets exist before the registry
        did)."""
        return bool(self.registry.snapshot.files(self.folder))

    def owns(self, path: str) -> bool:
        return any(
            path.startswith(d + "/") for d in (self.folder, self.facets_dir, self.examples_dir)
        )

    def facet_paths(self) -> list[str]:
        folder = self.facets_dir + "/"
        return [
            p
            for p in self.registry.snapshot.files(self.facets_dir)
            if p.endswith(".json") and "/" not in p[len(folder) :]
        ]

    @functools.cached_property
    def schemas(self) -> tuple[FacetSchema, ...]:
        out = []
        for path in self.facet_paths():
            loaded = self.registry.files.json(path)
            if loaded.doc is not None:
                out.append(FacetSchema(path=path, entry=self, doc=loaded.doc))
        return tuple(out)

    def example_paths(self, facet_name: str) -> list[str]:
        folder = f"{self.examples_dir}/{facet_name}"
        return [p for p in self.registry.snapshot.files(folder) if p.endswith(".json")]


class Registry:
    """All entries of one snapshot."""

    def __init__(self, snapshot: Snapshot, config: Config) -> None:
        self.snapshot = snapshot
        self.config = config
        self.files = Files(snapshot)

    @functools.cached_property
    def entries(self) -> dict[str, Entry]:
        root = self.config.paths.registry
        folders: set[str] = set()
        for path in self.snapshot.files(root):
            parts = path[len(root) + 1 :].split("/")
            # An entry folder holds registry.json, CODEOWNERS or a facets/ folder.
            for i, part in enumerate(parts):
                if part in ("registry.json", "CODEOWNERS") and i == len(parts) - 1 and i > 0:
                    folders.add("/".join(parts[:i]))
                elif part == "facets" and i > 0:
                    folders.add("/".join(parts[:i]))
                    break
        # A folder nested inside another entry's facets/ is not an entry of its own.
        entries: dict[str, Entry] = {}
        for rel_folder in sorted(folders):
            segments = rel_folder.split("/")
            if any(
                segments[i] == "facets" and "/".join(segments[:i]) in folders
                for i in range(1, len(segments))
            ):
                continue
            name = rel_folder.replace("/", ":")
            folder = f"{root}/{rel_folder}"
            if name == CORE:
                entries[name] = Entry(
                    name, folder, self.config.paths.facets, self.config.paths.tests, self
                )
            else:
                entries[name] = Entry(
                    name, folder, f"{folder}/facets", f"{folder}/facets/examples", self
                )
        if CORE not in entries and self.snapshot.files(self.config.paths.facets):
            folder = f"{root}/{CORE}"
            entries[CORE] = Entry(
                CORE, folder, self.config.paths.facets, self.config.paths.tests, self
            )
        return entries

    @functools.cached_property
    def _by_folder(self) -> dict[str, Entry]:
        index: dict[str, Entry] = {}
        for entry in self.entries.values():
            for folder in (entry.examples_dir, entry.facets_dir, entry.folder):
                index.setdefault(folder, entry)
        return index

    def entry_for(self, path: str) -> Entry | None:
        """The entry a path belongs to (the deepest folder of an entry containing it)."""
        folder = path
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            entry = self._by_folder.get(folder)
            if entry is not None:
                return entry
        return None

    def schemas(self) -> Iterator[FacetSchema]:
        for entry in self.entries.values():
            yield from entry.schemas

    @functools.cached_property
    def schema_by_filename(self) -> dict[str, list[FacetSchema]]:
        out: dict[str, list[FacetSchema]] = {}
        for schema in self.schemas():
            out.setdefault(schema.filename, []).append(schema)
        return out

    def registry_doc(self, entry: Entry) -> dict[str, Any] | None:
        loaded = self.files.json(entry.registry_json)
        return (
            loaded.doc.value
            if loaded.doc is not None and isinstance(loaded.doc.value, dict)
            else None
        )


@dataclass(frozen=True)
class Declared:
    """One facet a ``registry.json`` declares: in which block, as which URI, and where in the
    file."""

    block: str  # "producer" | "consumer"
    field: str  # "produced_facets" | "consumed_facets" (also for the proposal's ``facets``)
    uri: str  # a short URI (bare file names in the object form get their owner's name)
    pointer: str


FACET_FIELDS = {"producer": "produced_facets", "consumer": "consumed_facets"}
LEGACY_KEYS = {"root_doc_url": "root_doc_URL", "sample_url": "sample_URL"}


def declared_facets(doc: Any) -> list[Declared]:
    """Every facet URI declared in a ``registry.json`` value, in either list or object form.

    Misplaced lists (``consumed_facets`` under ``producer``) are included under the block they sit
    in, so the URI checks still resolve them; the entry check reports the misplacement.
    """
    from bot.core.jsondoc import escape_pointer_token

    out: list[Declared] = []
    if not isinstance(doc, dict):
        return out
    for block in ("producer", "consumer"):
        body = doc.get(block)
        if not isinstance(body, dict):
            continue
        for written in ("produced_facets", "consumed_facets", "facets"):
            facets = body.get(written)
            base = f"/{block}/{written}"
            # the proposal's spelling ``facets`` is the block's own list (``produced_facets`` for a
            # producer)
            fld = FACET_FIELDS[block] if written == "facets" else written
            if isinstance(facets, list):
                out.extend(
                    Declared(block, fld, uri, f"{base}/{i}")
                    for i, uri in enumerate(facets)
                    if isinstance(uri, str)
                )
            elif isinstance(facets, dict):
                for key, details in facets.items():
                    uri = key
                    owner = details.get("owner") if isinstance(details, dict) else None
                    if not key.startswith("ol:") and isinstance(owner, str):
                        uri = f"ol:{owner}:{key}"
                    out.append(Declared(block, fld, uri, f"{base}/{escape_pointer_token(key)}"))
    return out
