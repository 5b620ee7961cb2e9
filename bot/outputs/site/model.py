"""The site as data: entry cards, facet pages, use cases and schema files, from the checks' registry
model."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.core.config import Config
from bot.core.lookalike import looks, scripts
from bot.core.quoting import URL_LIMIT
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.codeowners import owner_key
from bot.model.evolution.schema_diff import required_bump
from bot.model.logo import LOGO_NAME, published_logo, source_limit
from bot.model.mirror import facet_versions
from bot.model.presentation import (
    MAX_FACETS,
    MAX_USE_CASES,
    MAX_VERSIONS,
    case_id,
    declared_use_cases,
    visible,
)
from bot.model.registry import FACET_ID, Entry, FacetSchema, Registry, declared_facets
from bot.model.schemas import SchemaStore
from bot.model.sides import ownership, side_model
from bot.model.uris import FACETS_URL, UriError, parse_short_uri
from bot.outputs.dashboard import Dashboard
from bot.outputs.site.fields import Field, FieldWalker
from bot.outputs.site.handwritten import HandDoc, by_facet, load_docs
from bot.outputs.site.usecases import UseCase, load_use_cases

VERSION = re.compile(r"^(\d+)-(\d+)-(\d+)$")
MAX_EXAMPLES, MAX_EXAMPLE_BYTES, MAX_CHANGES = 5, 64 * 1024, 30
NAME_MAX = 255  # bytes in one file name: ext4's, APFS's and NTFS's limit
SCHEMA_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.json")  # a schema file a URL can name


class SiteError(ValueError):
    """A registry the site cannot be published from as it is; the message names the files."""


def slug(text: str) -> str:
    """A file-name-safe form of untrusted text (never empty, never ``..``), at most 100 characters:
    a longer one ends with a digest of the whole text, so two long names that share their first 100
    characters never write the same file."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")
    if len(cleaned) > 100:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return f"{cleaned[:87]}-{digest}"
    return cleaned or "x"


def schema_path(version: str, file: str) -> str | None:
    """The output file serving ``https://openlineage.io/spec/facets/<version>/<file>``: named as the
    URL names it, so that a static host serves it there (never shortened, as ``slug`` shortens a
    page's name); None for a name no URL of the site serves (not a plain file name, or too long
    for a file system)."""
    if not SCHEMA_NAME.fullmatch(file):
        return None
    if len(file) > NAME_MAX:
        raise SiteError(
            f"{file}: a schema file name of {len(file)} characters cannot be written to a file "
            f"system (at most {NAME_MAX}); rename the facet"
        )
    return f"spec/facets/{version}/{file}"


class Names:
    """Output paths handed out so that no two are the same on a case-insensitive disk (macOS,
    Windows): a path equal to an earlier one with its case folded gets ``-`` before its extension
    until it is free (``facets/foo/X.html`` after ``facets/Foo/X.html`` is ``facets/foo/X-.html``),
    so one page never overwrites another."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, path: str) -> str:
        stem, dot, ext = path.rpartition(".") if "." in path.rsplit("/", 1)[-1] else (path, "", "")
        while path.casefold() in self._taken:
            stem += "-"
            path = f"{stem}{dot}{ext}"
        self._taken.add(path.casefold())
        return path


def case_clashes(paths: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of ``paths`` that differ only in case: one file on a case-insensitive disk."""
    first: dict[str, str] = {}
    out = []
    for path in sorted(paths):
        other = first.setdefault(path.casefold(), path)
        if other != path:
            out.append((other, path))
    return out


@dataclass(frozen=True)
class Definition:
    key: str  # the facet key in an event
    name: str  # the $defs name
    base: str  # RunFacet, JobFacet, ... or ""
    description: str
    walk: Callable[[], tuple[Field, ...]] = field(repr=False, compare=False)

    @functools.cached_property
    def fields(self) -> tuple[Field, ...]:
        """The rows of its field table, walked on first use: by the process that renders its page,
        so that parallel writers walk their own share (``bot.outputs.site.build``)."""
        return self.walk()


@dataclass(frozen=True)
class Version:
    version: str
    url: str
    changes: tuple[str, ...]  # what changed since the previous version
    bump: str  # MODEL / REVISION / ADDITION / NONE, or "" for the first


@dataclass
class FacetPage:
    uri: str  # ol:<name>:<File>.json
    owner: str
    file: str
    path: str  # in the repository
    page: str  # the page's path in the site
    version: str
    url: str
    definitions: tuple[Definition, ...]
    versions: tuple[Version, ...]
    examples: tuple[tuple[str, str], ...]
    producers: list[str] = field(default_factory=list)
    consumers: list[str] = field(default_factory=list)
    use_cases: set[str] = field(default_factory=set)
    # (role, name) -> versions
    declared: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    @property
    def stem(self) -> str:
        return self.file.rsplit(".", 1)[0]

    @property
    def schema_name(self) -> str:
        """The file name its schemas are served under: the URL's (``schema_path``)."""
        return self.file

    @property
    def bases(self) -> tuple[str, ...]:
        return tuple(sorted({d.base for d in self.definitions if d.base}))


@dataclass
class EntryCard:
    name: str
    page: str  # anchor id on the ecosystem page
    roles: tuple[str, ...]
    documentation: dict[str, str]  # role -> root_doc_URL
    samples: dict[str, str]  # role -> sample_URL
    produced: list[str]
    consumed: list[str]
    use_cases: dict[str, set[str]]  # facet URI -> use cases declared for it
    # role -> URI -> spec versions
    versions: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    display_name: str = ""
    description: str = ""
    homepage: str = ""
    logo: str = ""  # the logo's path in the site, when it has one that passed the checks' judgement
    categories: tuple[str, ...] = ()
    organization: str = ""  # the partner its registry.json names (several entries may share one)
    organization_url: str = ""
    owners: tuple[str, ...] = ()  # who approves its registry.json (not read for the preview)
    # the organization as shown: with the owners beside it where another owner group claims a name
    # that looks the same, or the name mixes scripts (``_partners``)
    partner: str = ""

    @property
    def all_use_cases(self) -> list[str]:
        return sorted({u for cases in self.use_cases.values() for u in cases})

    collides: bool = False  # another card shows the same display name
    # use cases declared beyond the bound an entry shows (``entry/use-cases`` refuses them)
    hidden_use_cases: int = 0
    hidden_facets: int = 0  # facets declared beyond the bound a role's list shows

    @property
    def title(self) -> str:
        """The name shown: the display name, with the registered name when another card shows the
        same."""
        if self.display_name and self.collides:
            return f"{self.display_name} ({self.name})"
        return self.display_name or self.name

    def declared_versions(self, role: str, uri: str) -> tuple[str, ...]:
        """The spec versions the entry declares for ``uri`` in ``role`` (empty: not said)."""
        return self.versions.get(role, {}).get(uri, ())


@dataclass
class Site:
    label: str
    entries: list[EntryCard]
    facets: dict[str, FacetPage]  # by short URI
    schema_files: dict[str, bytes]  # spec/facets/<version>/<File>.json -> bytes
    naming: Any = None  # NamingRules, or None when it cannot be loaded
    use_case_texts: dict[str, UseCase] = field(default_factory=dict)  # id -> title and text
    logo_files: dict[str, bytes] = field(default_factory=dict)  # logos/<name>.<ext> -> bytes
    # the registry dashboard page (``registry-bot publish``), when built
    dashboard: Dashboard | None = None
    # facet URI -> the website's hand-written docs citing its schema
    hand_docs: dict[str, list[HandDoc]] = field(default_factory=dict)
    # where the repository's files are browsed (``publish --source-url``): the dashboard links each
    # finding to its file and line there
    source_url: str = ""

    def organizations(self) -> dict[str, list[EntryCard]]:
        """Partner -> its entries: the entries claiming one organization (names that look the
        same) whose ``registry.json`` has the same owners, under the first one's ``partner``. An
        organization is what an entry says of itself: entries of other owners claiming it are
        other partners, never merged under its heading (nor its homepage given by theirs)."""
        groups: dict[tuple[str, frozenset[str]], list[EntryCard]] = {}
        for card in self.entries:
            if card.organization:
                groups.setdefault((looks(card.organization), _owner_set(card)), []).append(card)
        out = {members[0].partner: members for members in groups.values()}
        return dict(sorted(out.items(), key=lambda item: item[0].casefold()))

    def use_cases(self) -> dict[str, set[str]]:
        """Use case -> facet URIs declared for it; the described use cases are always listed."""
        out: dict[str, set[str]] = {
            case: {u for u in text.facets if u in self.facets}
            for case, text in self.use_case_texts.items()
        }
        for card in self.entries:
            for uri, cases in card.use_cases.items():
                for case in cases:
                    out.setdefault(case, set()).add(uri)
        return out


def build_site(
    snapshot: Snapshot, config: Config, light: bool = False, only: Collection[str] | None = None
) -> Site:
    """Everything the site shows, read from ``snapshot`` only.

    ``light`` (the pull request preview, where every read may be a download) skips what the preview
    does not compare: the naming page, examples, the published copies and the changes between
    versions. ``only`` (the paths a change touches) limits the facet pages to those files and the
    cards to the entries whose ``registry.json`` it touches.
    """
    model = side_model(snapshot, config)
    registry, store = model.registry, model.schemas
    mirror = facet_versions(snapshot, config.paths)
    facets: dict[str, FacetPage] = {}
    schema_files: dict[str, bytes] = {}
    pages, folders = Names(), Names()
    served: dict[str, str] = {}  # schema file -> the repository file it is served for
    for entry in registry.entries.values():
        folder = folders.claim(f"facets/{slug(entry.name.replace(':', '-'))}")
        for schema in _schemas(entry, only):
            published = mirror.get(schema.filename, {})
            page = pages.claim(f"{folder}/{slug(schema.stem)}.html")
            facet = _facet_page(entry, schema, store, published, page, light)
            facets[facet.uri] = facet
            files = {} if light else _schema_files(snapshot, schema, published)
            for written, content in files.items():
                if (other := served.setdefault(written, schema.path)) != schema.path:
                    raise SiteError(
                        f"{other} and {schema.path} are both published as {written}; rename one"
                    )
                schema_files[written] = content
    if not light:  # a published URL stays served even when its facet left the repository
        for file, versions in mirror.items():
            for version, path in versions.items():
                target = schema_path(version, file)
                if (
                    target is not None
                    and target not in schema_files
                    and (data := _read(snapshot, path)) is not None
                ):
                    schema_files[target] = data
        schema_files.update(_spec_files(snapshot, config))
        if clashes := case_clashes(schema_files):
            raise SiteError(
                "; ".join(f"{a} and {b}" for a, b in clashes)
                + ": schema URLs that differ only in case are one file on a case-insensitive "
                "disk (macOS, Windows); rename one facet"
            )
    logos: dict[str, bytes] = {}
    logo_names = Names()
    cards = [
        c
        for c in (
            _card(entry, registry, snapshot, logos, logo_names)
            for entry in registry.entries.values()
            if only is None or entry.registry_json in only
        )
        if c is not None
    ]
    for card in cards:
        for role, uris in (("producer", card.produced), ("consumer", card.consumed)):
            for uri in uris:
                if uri in facets:
                    (facets[uri].producers if role == "producer" else facets[uri].consumers).append(
                        card.name
                    )
                    if pinned := card.declared_versions(role, uri):
                        facets[uri].declared[role, card.name] = pinned
        for uri, cases in card.use_cases.items():
            if uri in facets:
                facets[uri].use_cases |= cases
    use_case_texts = {} if light else load_use_cases(snapshot, config)
    for case, text in use_case_texts.items():
        for uri in text.facets:
            if uri in facets:
                facets[uri].use_cases.add(case)
                for card in cards:  # an entry that emits or reads the facet serves the use case
                    if uri in card.produced or uri in card.consumed:
                        card.use_cases.setdefault(uri, set()).add(case)
    _disambiguate(cards)
    if not light:
        for card in cards:
            entry = registry.entries[card.name]
            card.owners = ownership(model.owners, entry, entry.registry_json).owners
    _partners(cards)
    hand_docs = {}
    if not light:  # the website's generated pages (docs/registry/) are not hand-written
        docs = [
            d for d in load_docs(snapshot, config.paths.docs) if not d.rel.startswith("registry/")
        ]
        names = {uri: f.url.rsplit("/", 1)[-1] for uri, f in facets.items() if f.url}
        hand_docs = by_facet(docs, names)
    return Site(
        snapshot.label,
        sorted(cards, key=lambda c: c.name),
        dict(sorted(facets.items())),
        schema_files,
        None if light else _naming(snapshot, config),
        use_case_texts,
        logos,
        hand_docs=hand_docs,
    )


def _owner_set(card: EntryCard) -> frozenset[str]:
    return frozenset(owner_key(o) for o in card.owners)


def _partners(cards: list[EntryCard]) -> None:
    """Each card's ``partner``: its organization, with its owners beside it (``Google
    (@google/lineage)``) where entries of other owners claim an organization that looks the same,
    or the name mixes scripts, so a claim never passes for another owner group's partner. A name
    written like such a label (``Google (@google/lineage)`` claimed by ``@mallory``) gets its own
    owners beside it too."""
    claimed = [c for c in cards if c.organization]
    for card in claimed:
        card.partner = card.organization
    for first in (True, False):
        groups: dict[str, set[frozenset[str]]] = {}
        for card in claimed:
            groups.setdefault(looks(card.partner), set()).add(_owner_set(card))
        for card in claimed:
            if card.partner == card.organization and (
                len(groups[looks(card.partner)]) > 1
                or (first and len(scripts(card.organization)) > 1)
            ):
                owners = ", ".join(sorted(card.owners, key=owner_key)) or "no owners"
                card.partner = f"{card.organization} ({owners})"


def _disambiguate(cards: list[EntryCard]) -> None:
    """Cards whose display names look the same show their registered name beside it: names with
    one confusable skeleton once case, accents, invisible characters and compatibility forms are
    folded (``bot.core.lookalike``: ``Coca`` in Cyrillic letters beside the Latin one), and every
    name mixing scripts (Google with two Cyrillic o), which may look like a name no entry shows
    yet."""
    seen: dict[str, list[EntryCard]] = {}
    for card in cards:
        seen.setdefault(looks(card.title), []).append(card)
        if card.display_name and len(scripts(card.display_name)) > 1:
            card.collides = True
    for group in seen.values():
        for card in group if len(group) > 1 else ():
            card.collides = True


def _schemas(entry: Entry, only: Collection[str] | None) -> Iterable[FacetSchema]:
    """The entry's facet schemas; with ``only``, just those files (the others are never read)."""
    if only is None:
        return entry.schemas
    loaded = (
        (path, entry.registry.files.json(path)) for path in entry.facet_paths() if path in only
    )
    return [
        FacetSchema(path=path, entry=entry, doc=file.doc)
        for path, file in loaded
        if file.doc is not None
    ]


# what the mirror serves beside facets/
SPEC_FILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(json|ya?ml)")
SPEC_URL = "https://openlineage.io/spec/"


def _spec_files(snapshot: Snapshot, config: Config) -> dict[str, bytes]:
    """The rest of the published mirror, byte for byte: every ``<version>/OpenLineage.json`` and
    ``OpenLineage.yml`` that facet schemas ``$ref``, so the output resolves its own references; plus
    the repository's ``OpenLineage.json`` under its ``$id`` while the mirror has no copy of that
    version yet.

    Only JSON and YAML files with plain names are served (never an HTML page a mirror might
    hold)."""
    root = config.paths.mirror_prefix
    out: dict[str, bytes] = {}
    for path in snapshot.files(config.paths.mirror_folder):
        rel = path[len(root) :]
        if _spec_path(rel) and (data := _read(snapshot, path)) is not None:
            out[f"spec/{rel}"] = data
    spec = _read(snapshot, config.paths.spec)
    try:
        spec_id = json.loads(spec)["$id"] if spec is not None else None
    except (ValueError, TypeError, KeyError):
        spec_id = None
    if spec is not None and isinstance(spec_id, str) and spec_id.startswith(SPEC_URL):
        rel = spec_id[len(SPEC_URL) :]
        if _spec_path(rel) and "/" in rel:
            out.setdefault(f"spec/{rel}", spec)
    return out


def _spec_path(rel: str) -> bool:
    """``OpenLineage.yml`` or ``<M-R-A>/OpenLineage.json``: a spec file of the mirror, outside
    ``facets/``."""
    *folder, name = rel.split("/")
    return bool(SPEC_FILE.fullmatch(name)) and (
        not folder or (len(folder) == 1 and bool(VERSION.match(folder[0])))
    )


def _key(version: str) -> tuple[int, ...]:
    match = VERSION.match(version)
    return tuple(int(x) for x in match.groups()) if match else (-1,)


def _facet_page(
    entry: Entry,
    schema: FacetSchema,
    store: SchemaStore,
    published: dict[str, str],
    page: str,
    light: bool,
) -> FacetPage:
    value = schema.value if isinstance(schema.value, dict) else {}
    # only an $id naming this file is its URL: one naming another file (facets/id at review) would
    # claim that facet's published URL on this page and in the index
    own = (match := FACET_ID.match(schema.schema_id or "")) is not None and (
        match[4] == schema.filename
    )
    version = "-".join(map(str, schema.version)) if schema.version and own else ""
    url = schema.schema_id if schema.version and own else ""

    # the published copy first: no need to read every repository schema
    def lookup(target: str) -> Any:
        stored = store.published(target) or store.lookup(target)
        return stored.schema if stored is not None else None

    walker = FieldWalker(value, (schema.schema_id or "").split("#")[0], lookup)
    defs: dict[str, Any] = value["$defs"] if isinstance(value.get("$defs"), dict) else {}
    definitions = []
    for facet in schema.facets:
        node = defs.get(facet.name)
        description = _description(node)
        definitions.append(
            Definition(
                facet.key,
                facet.name,
                facet.base or "",
                description if isinstance(description, str) else "",
                functools.partial(_walk, walker, node),
            )
        )
    return FacetPage(
        uri=f"ol:{entry.name}:{schema.filename}",
        owner=entry.name,
        file=schema.filename,
        path=schema.path,
        page=page,
        version=version,
        url=url or "",
        definitions=tuple(definitions),
        versions=_versions(schema, store, {} if light else published, version),
        examples=() if light else _examples(entry, schema),
    )


def _walk(walker: FieldWalker, node: Any) -> tuple[Field, ...]:
    return tuple(walker.fields(node))


def _description(node: Any) -> str:
    """A definition's description, or that of the part of its ``allOf`` that adds its own fields."""
    if not isinstance(node, dict):
        return ""
    parts = [node, *(p for p in node.get("allOf") or [] if isinstance(p, dict))]
    return next((p["description"] for p in parts if isinstance(p.get("description"), str)), "")


def _versions(
    schema: FacetSchema, store: SchemaStore, published: dict[str, str], current: str
) -> tuple[Version, ...]:
    if set(published) <= {current}:  # one version: nothing to compare, no published copy to parse
        return tuple(
            Version(v, f"{FACETS_URL}{v}/{schema.filename}", (), "")
            for v in (current or None,)
            if v
        )
    docs: dict[str, Any] = {}
    for version, path in published.items():
        loaded = store.files.json(path)
        if loaded.doc is not None:
            docs[version] = loaded.doc.value
    if current and current not in docs:
        docs[current] = schema.value

    def resolve(url: str) -> Any:
        stored = store.lookup(url)
        return stored.schema if stored is not None else None

    out: list[Version] = []
    previous: Any = None
    for version in sorted(docs, key=_key):
        doc = docs[version]
        changes: tuple[str, ...] = ()
        bump = ""
        if previous is not None:
            try:
                level, found = required_bump(previous, doc, resolve, resolve)
                bump = level.name
                changes = tuple(_change(c.where, c.what) for c in found[:MAX_CHANGES])
            except RecursionError:
                changes, bump = ("not compared (the schema nests too deeply)",), "?"
        out.append(Version(version, f"{FACETS_URL}{version}/{schema.filename}", changes, bump))
        previous = doc
    return tuple(out)


def _change(where: str, what: str) -> str:
    """A change as a reader sees it: ``fields.<key>.type: new optional field 'type'``."""
    out: list[str] = []
    tokens = [t for t in where.split("/") if t]
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if token == "$defs" and i == 0:
            skip = True  # the definition's name
        elif token in ("allOf", "anyOf", "oneOf"):
            skip = True
        elif token == "properties":
            continue
        elif token == "items":
            out.append("[]")
        elif token == "additionalProperties":
            out.append("<key>")
        else:
            out.append(token)
    path = ".".join(out).replace(".[]", "[]")
    return f"{path}: {what}" if path else what


def _examples(entry: Entry, schema: FacetSchema) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for path in sorted(entry.example_paths(schema.stem)):
        if "/invalid/" in path or len(out) >= MAX_EXAMPLES:
            continue
        text = entry.registry.files.text(path, limit=MAX_EXAMPLE_BYTES)
        if text is not None:
            out.append((path.rsplit("/", 1)[-1], text))
    return tuple(out)


def _schema_files(
    snapshot: Snapshot, schema: FacetSchema, published: dict[str, str]
) -> dict[str, bytes]:
    """The bytes served under each ``$id`` path: the mirror's copy, else the repository's file."""
    out: dict[str, bytes] = {}
    for version, path in published.items():
        target = schema_path(version, schema.filename)
        if target is not None and (data := _read(snapshot, path)) is not None:
            out[target] = data
    match = FACET_ID.match(schema.schema_id or "")
    if match and match[4] == schema.filename:
        target = schema_path(f"{match[1]}-{match[2]}-{match[3]}", schema.filename)
        if target is not None and target not in out:
            data = _read(snapshot, schema.path)
            if data is not None:
                out[target] = data
    return out


def _read(snapshot: Snapshot, path: str) -> bytes | None:
    try:
        return snapshot.read(path)
    except SnapshotError:
        return None


def _normal(uri: str, names: Collection[str]) -> tuple[str, str | None]:
    """A declared URI without its pinned version (the facet page it links to; as written when
    unresolvable), and the version it pins, if any."""
    try:
        short = parse_short_uri(uri, names)
    except UriError:
        return uri, None
    return ":".join(["ol", short.name, *short.sub, short.file]), short.version


def _card(
    entry: Entry, registry: Registry, snapshot: Snapshot, logos: dict[str, bytes], files: Names
) -> EntryCard | None:
    doc = registry.registry_doc(entry)
    if doc is None:
        return None
    roles = tuple(r for r in ("producer", "consumer") if isinstance(doc.get(r), dict))
    card = EntryCard(
        entry.name, f"entry-{slug(entry.name.replace(':', '-'))}", roles, {}, {}, [], [], {}
    )
    for key in ("display_name", "description"):
        if isinstance(doc.get(key), str) and (key != "display_name" or visible(doc[key])):
            setattr(card, key, doc[key].strip()[:500])
    if isinstance(doc.get("homepage"), str) and len(doc["homepage"].strip()) < URL_LIMIT:
        card.homepage = doc["homepage"].strip()  # whole or not at all: a cut URL is another
    org = doc.get("organization")
    if isinstance(org, dict) and isinstance(org.get("name"), str) and visible(org["name"]):
        card.organization = org["name"].strip()[:80]
        card.organization_url = org["homepage"] if isinstance(org.get("homepage"), str) else ""
    if isinstance(doc.get("categories"), list):
        card.categories = tuple(sorted({c for c in doc["categories"] if isinstance(c, str) and c}))[
            :10
        ]
    card.logo = _logo(entry, doc.get("logo"), snapshot, logos, files)
    for role in roles:
        body = doc[role]
        for key, target in (
            ("root_doc_URL", card.documentation),
            ("root_doc_url", card.documentation),
            ("sample_URL", card.samples),
            ("sample_url", card.samples),
        ):
            if isinstance(body.get(key), str):
                target.setdefault(role, body[key])
    names = registry.entries  # a mapping: membership in O(1)
    declared_cases = list(declared_use_cases(doc))
    shown = set(declared_cases[:MAX_USE_CASES])  # as the review bounds them (entry/use-cases)
    card.hidden_use_cases = len(declared_cases) - len(shown)
    listed: dict[str, set[str]] = {"producer": set(), "consumer": set()}  # sets: no n² lookups
    over: set[tuple[str, str]] = set()
    pending: dict[tuple[str, str], set[str]] = {}  # (block, uri) -> versions, sorted once
    for declared in declared_facets(doc):
        uri, pinned = _normal(declared.uri, names)
        target_list = card.produced if declared.block == "producer" else card.consumed
        if uri not in listed[declared.block]:
            if len(target_list) >= MAX_FACETS:  # as the schema bounds a list
                over.add((declared.block, uri))
                continue
            listed[declared.block].add(uri)
            target_list.append(uri)
        # produced_facets, consumed_facets or the proposal's facets
        written = declared.pointer.split("/")[2]
        token = declared.pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        details = doc[declared.block].get(written) or {}
        versions = {pinned} if pinned else set()
        if isinstance(details, dict) and isinstance(details.get(token), dict):
            cases = details[token].get("use_cases")
            if isinstance(cases, list):
                card.use_cases.setdefault(uri, set()).update(
                    i for c in cases if isinstance(c, str) and c and (i := case_id(c)) in shown
                )
            spec = details[token].get("spec_versions")
            if isinstance(spec, list):
                versions |= {v for v in spec if isinstance(v, str) and VERSION.match(v)}
        if versions:
            pending.setdefault((declared.block, uri), set()).update(versions)
    for (block, uri), versions in pending.items():  # the newest, as the schema bounds them
        ordered = sorted(versions, key=_key, reverse=True)[:MAX_VERSIONS]
        card.versions.setdefault(block, {})[uri] = tuple(ordered)
    card.hidden_facets = len(over)
    return card


def _logo(
    entry: Entry, name: Any, snapshot: Snapshot, logos: dict[str, bytes], names: Names
) -> str:
    """The site path of the entry's logo, its published bytes (an SVG re-serialised) put into
    ``logos``; "" when it has none or the checks would refuse it (``bot.model.logo``)."""
    if not isinstance(name, str) or not LOGO_NAME.fullmatch(name):
        return ""
    path = f"{entry.folder}/{name}"
    try:
        size = snapshot.size(path)
        data = snapshot.read(path) if size is not None and size <= source_limit(name) else None
    except SnapshotError:
        return ""
    published = published_logo(name, data) if data is not None else ""
    if not isinstance(published, bytes):
        return ""
    target = names.claim(
        f"logos/{slug(entry.name.replace(':', '-'))}.{name.rsplit('.', 1)[-1].lower()}"
    )
    logos[target] = published
    return target


def _naming(snapshot: Snapshot, config: Config) -> Any:
    from bot.model.naming import load_rules

    try:
        if snapshot.files(config.paths.naming.strip("/")):
            return load_rules(snapshot, config.paths.naming)
        return load_rules()
    # a naming folder the checks report on; the site goes without the page
    except Exception:  # noqa: BLE001
        return None
