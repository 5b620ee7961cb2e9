"""Defects planted into real commits of the OpenLineage history, each with a control making the same
change correctly: the recall test of the bot (tests/test_mutations.py, benchmarks/mutations.py).

A kind finds its target in the commit's own files by mechanism (the first core facet, in path order,
whose example names its schema correctly), never by name, and edits the JSON text in place (so the
rest of the file keeps its layout). ``plant`` returns ``(defect edits, control edits)``, or ``None``
when the commit has nothing the kind can edit.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.core.snapshot import GitSnapshot
from tests.planting import changed_paths, dump

Edits = dict[str, bytes | None]
FACETS, TESTS, MIRROR, SPEC, CORE_ENTRY = (
    "spec/facets",
    "spec/tests",
    "website/static/spec",
    "spec/OpenLineage.json",
    "spec/registry/core/registry.json",
)
VERSION = re.compile(r"/facets/(\d+)-(\d+)-(\d+)/")


@dataclass(frozen=True)
class Target:
    """A core facet with one facet definition and an example whose ``_schemaURL`` is right."""

    schema_path: str
    schema_text: str
    schema_id: str
    defs_name: str
    key: str
    example_path: str
    example_text: str
    url: str
    published: tuple[str, ...]  # versions of the file in the mirror, oldest first

    @property
    def filename(self) -> str:
        return self.schema_path.rsplit("/", 1)[-1]

    @property
    def version(self) -> tuple[int, int, int]:
        m = VERSION.search(self.schema_id)
        assert m is not None
        return int(m[1]), int(m[2]), int(m[3])


def _text(repo: Path, commit: str, path: str) -> str | None:
    data = _snapshot(str(repo), commit).read(path)
    return None if data is None else data.decode()


@functools.lru_cache(maxsize=32)
def _snapshot(repo: str, commit: str) -> GitSnapshot:
    """One snapshot per commit, reading every blob through one ``git cat-file --batch``."""
    return GitSnapshot(repo, commit)


def files_of(repo: Path, commit: str, prefix: str) -> list[str]:
    return _snapshot(str(repo), commit).files(prefix)


def _parsed(repo: Path, commit: str, path: str) -> tuple[str, Any]:
    """The text of a JSON file and its value (``None`` when it does not parse)."""
    text = _text(repo, commit, path) or ""
    try:
        return text, json.loads(text)
    except ValueError:
        return text, None


def targets(repo: Path, commit: str) -> list[Target]:
    return list(_targets(str(repo), commit))


@functools.lru_cache(maxsize=32)
def _targets(repo_path: str, commit: str) -> tuple[Target, ...]:
    """The facets a defect can be planted in: not touched by the commit itself, published before
    it."""
    repo = Path(repo_path)
    found = []
    mirror = set(files_of(repo, f"{commit}^", MIRROR)) & set(files_of(repo, commit, MIRROR))
    touched = changed_paths(repo, commit)
    for path in files_of(repo, commit, FACETS):
        if not path.endswith(".json") or path.count("/") != 2:
            continue
        folder = f"{TESTS}/{path.rsplit('/', 1)[-1][:-5]}/"
        if path in touched or any(p.startswith(folder) for p in touched):
            continue
        text, schema = _parsed(repo, commit, path)
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict) or len(props) != 1 or not isinstance(schema.get("$id"), str):
            continue
        ((key, prop),) = props.items()
        ref = prop.get("$ref", "") if isinstance(prop, dict) else ""
        if not ref.startswith("#/$defs/") or not VERSION.search(schema["$id"]):
            continue
        name = ref[len("#/$defs/") :]
        filename = path.rsplit("/", 1)[-1]
        published = tuple(
            sorted(
                p.split("/")[-2] for p in mirror if p.endswith(f"/{filename}") and "/facets/" in p
            )
        )
        for example in files_of(repo, commit, f"{TESTS}/{filename[:-5]}"):
            if example.count("/") != 3:
                continue
            etext, value = _parsed(repo, commit, example)
            facet = value.get(key) if isinstance(value, dict) else None
            url = facet.get("_schemaURL") if isinstance(facet, dict) else None
            if (
                url in (schema["$id"], f"{schema['$id']}#/$defs/{name}")
                and json.dumps(url) in etext
            ):
                found.append(
                    Target(path, text, schema["$id"], name, key, example, etext, url, published)
                )
                break
    return tuple(found)


def _swap(text: str, old: str, new: str) -> str:
    """``text`` with the JSON string ``old`` replaced by ``new`` (once)."""
    quoted = json.dumps(old)
    assert quoted in text, old
    return text.replace(quoted, json.dumps(new), 1)


def fmt(version: tuple[int, int, int]) -> str:
    return "-".join(map(str, version))


def new_version(t: Target, text: str, version: tuple[int, int, int]) -> Edits:
    """``text`` as the schema at ``version``, with its copy in the mirror (a correct new
    version)."""
    new_id = t.schema_id.replace(f"/{fmt(t.version)}/", f"/{fmt(version)}/")
    body = _swap(text, t.schema_id, new_id).encode()
    return {t.schema_path: body, f"{MIRROR}/facets/{fmt(version)}/{t.filename}": body}


def add_field(text: str, defs_name: str) -> str | None:
    """The schema text with an optional string field added to the facet's first ``properties``."""
    start = text.find(f'"{defs_name}"')
    at = text.find('"properties": {', start)
    if start < 0 or at < 0:
        return None
    at += len('"properties": {')
    line = text[text.rfind("\n", 0, at) + 1 : at]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return f'{text[:at]}\n{indent}"plantedNote": {{ "type": "string" }},{text[at:]}'


def _required(node: Any) -> set[str]:
    """Every name any ``required`` list of a schema names."""
    out: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("required"), list):
                out.update(x for x in item["required"] if isinstance(x, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def fields(t: Target) -> list[str]:
    """The optional fields of the example's facet that the schema declares once."""
    facet = json.loads(t.example_text)[t.key]
    required = _required(json.loads(t.schema_text))
    return [
        name
        for name in facet
        if name not in required
        and not name.startswith("_")
        and name != t.key
        and t.schema_text.count(f'"{name}": {{') == 1
    ]


def first_field(t: Target) -> str | None:
    return next(iter(fields(t)), None)


def respelled(name: str) -> str:
    if "_" in name:
        head, *rest = name.split("_")
        return head + "".join(p[:1].upper() + p[1:] for p in rest)
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m[1].lower(), name)


def rename_key(text: str, old: str, new: str) -> str:
    return text.replace(f'"{old}"', f'"{new}"')


# --- the kinds ------------------------------------------------------------------------------------

Plant = Callable[[Path, str], "tuple[Edits, Edits] | None"]


def _first(
    repo: Path, commit: str, fits: Callable[[Target], bool] = lambda t: True
) -> Target | None:
    return next((t for t in targets(repo, commit) if fits(t)), None)


def published_edited(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    t = _first(repo, commit, lambda t: fmt(t.version) in t.published)
    if t is None:
        return None
    copy = f"{MIRROR}/facets/{fmt(t.version)}/{t.filename}"
    text = _text(repo, commit, copy) or ""
    changed = add_field(text, t.defs_name)
    new = add_field(t.schema_text, t.defs_name)
    if changed is None or new is None:
        return None
    m, r, a = t.version
    return {copy: changed.encode()}, new_version(t, new, (m, r, a + 1))


def published_deleted(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    t = _first(repo, commit, lambda t: len(t.published) > 1)
    if t is None:
        return None
    new = add_field(t.schema_text, t.defs_name)
    if new is None:
        return None
    m, r, a = t.version
    return {f"{MIRROR}/facets/{t.published[0]}/{t.filename}": None}, new_version(
        t, new, (m, r, a + 1)
    )


def url_kind(wrong: Callable[[Target, list[Target]], str | None]) -> Plant:
    def plant(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
        found = targets(repo, commit)
        for t in found:
            url = wrong(t, found)
            if url is not None:
                right = (
                    f"{t.schema_id}#/$defs/{t.defs_name}" if t.url == t.schema_id else t.schema_id
                )
                return (
                    {t.example_path: _swap(t.example_text, t.url, url).encode()},
                    {t.example_path: _swap(t.example_text, t.url, right).encode()},
                )
        return None

    return plant


def other_facet(t: Target, found: list[Target]) -> str | None:
    return next((o.schema_id for o in found if o.filename != t.filename), None)


def missing_version(t: Target, found: list[Target]) -> str | None:
    m, r, _ = t.version
    absent = fmt((m, r + 1, 0))
    return (
        None if absent in t.published else t.schema_id.replace(f"/{fmt(t.version)}/", f"/{absent}/")
    )


def missing_def(t: Target, found: list[Target]) -> str | None:
    return f"{t.schema_id}#/$defs/Input{t.defs_name}"


def older_version(t: Target, found: list[Target]) -> str | None:
    older = [v for v in t.published if v != fmt(t.version)]
    return t.schema_id.replace(f"/{fmt(t.version)}/", f"/{older[-1]}/") if older else None


def example_duplicate_key(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    t = _first(repo, commit)
    if t is None:
        return None
    line = next(
        (
            x
            for x in t.example_text.splitlines(keepends=True)
            if x.strip().startswith('"_producer": "')
        ),
        None,
    )
    if line is None or not line.rstrip().endswith(","):
        return None
    producer = json.loads(t.example_text)[t.key]["_producer"]
    return (
        {t.example_path: t.example_text.replace(line, line + line, 1).encode()},
        {
            t.example_path: _swap(
                t.example_text, producer, producer.rstrip("/") + "/planted"
            ).encode()
        },
    )


def example_invalid(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    t = _first(repo, commit)
    if t is None:
        return None
    producer = json.loads(t.example_text)[t.key].get("_producer")
    if not isinstance(producer, str):
        return None
    return (
        {t.example_path: t.example_text.replace(json.dumps(producer), "7", 1).encode()},
        {
            t.example_path: _swap(
                t.example_text, producer, producer.rstrip("/") + "/planted"
            ).encode()
        },
    )


def spec_trailing_comma(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    text = _text(repo, commit, SPEC)
    if text is None:
        return None
    body = text.rstrip()
    assert body.endswith("}")
    return (
        {SPEC: (body[:-1].rstrip() + ",\n}\n").encode()},
        {SPEC: (text.rstrip() + "\n\n").encode()},
    )


def _duplicate_first_member(text: str) -> str | None:
    lines = text.splitlines(keepends=True)
    member = next(
        (x for x in lines[1:] if re.match(r'\s*"[^"]+": ("[^"]*"|\d+|true|false),\s*$', x)), None
    )
    return None if member is None else text.replace(member, member + member, 1)


def schema_duplicate_key(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    t = _first(repo, commit)
    if t is None:
        return None
    doubled, new = _duplicate_first_member(t.schema_text), add_field(t.schema_text, t.defs_name)
    if doubled is None or new is None:
        return None
    m, r, a = t.version
    return {t.schema_path: doubled.encode()}, new_version(t, new, (m, r, a + 1))


def registry_duplicate_key(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    text = _text(repo, commit, CORE_ENTRY)
    doubled = _duplicate_first_member(text) if text is not None else None
    if text is None or doubled is None:
        return None
    return {CORE_ENTRY: doubled.encode()}, {CORE_ENTRY: (text.rstrip() + "\n").encode()}


def not_bumped(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    t = _first(repo, commit)
    new = add_field(t.schema_text, t.defs_name) if t is not None else None
    if t is None or new is None:
        return None
    m, r, a = t.version
    return {t.schema_path: new.encode()}, new_version(t, new, (m, r, a + 1))


def drift(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """The schema renames a field its example uses (a MODEL bump, published); the example keeps the
    old name."""
    for t in targets(repo, commit):
        field = first_field(t)
        if field is None:
            continue
        renamed = respelled(field) if respelled(field) != field else f"{field}Value"
        m, _, _ = t.version
        version = (m + 1, 0, 0)
        schema = new_version(t, rename_key(t.schema_text, field, renamed), version)
        examples: Edits = {}
        for path in files_of(repo, commit, f"{TESTS}/{t.filename[:-5]}"):
            text = _text(repo, commit, path) or ""
            # each example follows the rename, and names the new version where it named the current
            # one
            examples[path] = (
                rename_key(text, field, renamed)
                .replace(f"/{fmt(t.version)}/{t.filename}", f"/{fmt(version)}/{t.filename}")
                .encode()
            )
        return schema, {**schema, **examples}
    return None


def event_missing_version(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """A sample event (a top-level file of the core examples) carrying a facet whose _schemaURL
    names a version of its schema that was never published."""
    events = [p for p in files_of(repo, commit, TESTS) if p.count("/") == 2 and p.endswith(".json")]
    _, event = _parsed(repo, commit, events[0]) if events else ("", None)
    if not isinstance(event, dict):
        return None
    for t in targets(repo, commit):
        container = (
            "run"
            if t.filename.endswith("RunFacet.json")
            else "job"
            if t.filename.endswith("JobFacet.json")
            else None
        )
        wrong = missing_version(t, [])
        if container is None or wrong is None or not isinstance(event.get(container), dict):
            continue
        facet = json.loads(t.example_text)[t.key]
        planted = [json.loads(json.dumps(event)) for _ in range(2)]  # the defect, then the control
        for value, url in zip(planted, (wrong, t.schema_id), strict=True):
            value[container].setdefault("facets", {})[t.key] = {**facet, "_schemaURL": url}
        return {events[0]: dump(planted[0])}, {events[0]: dump(planted[1])}
    return None


# --- issue 32: samples that contradict their entry, case twins ------------------------------------

PLACES = {
    "run": ("run", "facets"),
    "job": ("job", "facets"),
    "dataset": ("inputs", "facets"),
    "inputDataset": ("inputs", "inputFacets"),
    "outputDataset": ("outputs", "outputFacets"),
}


def _registry(repo: Path, commit: str) -> Any:
    from bot.core.config import Config
    from bot.model.registry import Registry

    return Registry(_snapshot(str(repo), commit), Config())


def _sample_event(container: str, key: str, facet: dict[str, Any], producer: str) -> dict[str, Any]:
    """A complete RunEvent carrying ``facet`` under ``key`` at its place (a dataset facet on an
    input)."""
    event: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": "2025-07-01T10:00:00.000Z",
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0197c4a2-7f55-7a3e-9d6a-3c2f8a1b2c3d", "facets": {}},
        "job": {"namespace": "planted", "name": "planted.job", "facets": {}},
        "inputs": [{"namespace": "postgres://db.example.com:5432", "name": "shop.public.orders"}],
        "outputs": [],
    }
    first, second = PLACES[container]
    holder = event[first][0] if first in ("inputs", "outputs") else event[first]
    if first == "outputs":
        event["outputs"] = [
            {"namespace": "postgres://db.example.com:5432", "name": "shop.public.totals"}
        ]
        holder = event["outputs"][0]
    holder.setdefault(second, {})[key] = facet
    return event


@dataclass(frozen=True)
class Declared:
    """A facet an entry declares, as its sample event would carry it."""

    path: str  # the new sample file
    container: str
    key: str
    facet: dict[str, Any]
    producer: str
    schema_id: str
    defs_name: str

    def event(self, key: str | None = None, url: str | None = None) -> bytes:
        facet = {**self.facet, "_schemaURL": url} if url is not None else self.facet
        return dump(_sample_event(self.container, key or self.key, facet, self.producer))


def declared_facet(repo: Path, commit: str) -> Declared | None:
    """The first facet (entries in name order) that a non-core entry with a documented producer
    declares."""
    from bot.model.registry import declared_facets
    from bot.model.uris import UriError, resolve

    registry = _registry(repo, commit)
    for _, entry in sorted(registry.entries.items()):
        if entry.is_core:
            continue
        doc = registry.registry_doc(entry)
        producer = (doc or {}).get("producer") if isinstance(doc, dict) else None
        url = next(
            (
                producer.get(k)
                for k in ("root_doc_URL", "root_doc_url")
                if isinstance(producer, dict) and isinstance(producer.get(k), str)
            ),
            None,
        )
        for declared in declared_facets(doc):
            try:
                schema = resolve(declared.uri, registry)
            except UriError:
                continue
            facet = next((f for f in schema.facets if f.container in PLACES), None)
            if facet is None or schema.schema_id is None or url is None:
                continue
            value = {"_producer": url, "_schemaURL": f"{schema.schema_id}#/$defs/{facet.name}"}
            return Declared(
                f"{entry.folder}/samples/planted.json",
                facet.container or "",
                facet.key,
                value,
                url,
                schema.schema_id,
                facet.name,
            )
    return None


def sample_undeclared(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """An entry's new sample event carries a facet key that its registry.json does not declare and
    no schema defines (a misspelling of its own key); the control carries the declared key."""
    d = declared_facet(repo, commit)
    return None if d is None else ({d.path: d.event(key=d.key + "_planted")}, {d.path: d.event()})


def sample_missing_version(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """An entry's new sample event names a version of its declared facet's schema that does not
    exist."""
    d = declared_facet(repo, commit)
    match = VERSION.search(d.schema_id) if d is not None else None
    if d is None or match is None:
        return None
    absent = d.schema_id.replace(match[0], f"/facets/{int(match[1]) + 1}-0-0/")
    return {d.path: d.event(url=f"{absent}#/$defs/{d.defs_name}")}, {d.path: d.event()}


def _new_core_facet(
    repo: Path, commit: str, t: Target, key: str, defs_name: str | None = None
) -> Edits:
    """A new core facet copied from ``t`` (file and example renamed ``Planted...``, its ``$defs``
    name too unless ``defs_name`` says otherwise) under ``key``, published in the mirror and
    declared in core's registry.json: a correct addition but for its key (or ``$defs`` name)."""
    name = f"Planted{t.defs_name}"
    defs = defs_name or name
    schema = json.loads(t.schema_text)
    schema["$id"] = t.schema_id.rsplit("/", 1)[0] + f"/{name}.json"
    schema["properties"] = {key: {"$ref": f"#/$defs/{defs}"}}
    schema["$defs"][defs] = schema["$defs"].pop(t.defs_name)
    text = json.dumps(schema, indent=2) + "\n"
    example = json.loads(t.example_text)
    facet = example.pop(t.key)
    facet["_schemaURL"] = f"{schema['$id']}#/$defs/{defs}"
    edits: Edits = {
        f"{FACETS}/{name}.json": text.encode(),
        f"{TESTS}/{name}/1.json": dump({key: facet}),
        f"{MIRROR}/facets/{fmt(t.version)}/{name}.json": text.encode(),
    }
    core = _text(repo, commit, CORE_ENTRY)
    if core is not None:
        registry = json.loads(core)
        listed = registry.get("producer", {}).get("produced_facets")
        if isinstance(listed, list):
            listed.append(f"ol:core:{name}.json")
            edits[CORE_ENTRY] = dump(registry)
    return edits


def case_twin(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """A new core facet keyed like an existing one but for case (``SCHEMA`` beside ``schema``); the
    control keys it ``planted`` + the key."""
    t = _first(
        repo, commit, lambda t: t.key.upper() != t.key and "$defs" in json.loads(t.schema_text)
    )
    if t is None:
        return None
    control = "planted" + t.key[:1].upper() + t.key[1:]
    return _new_core_facet(repo, commit, t, t.key.upper()), _new_core_facet(
        repo, commit, t, control
    )


def _described(t: Target) -> str | None:
    """The schema text with the facet's first description changed (no change of what validates)."""
    start = t.schema_text.find(f'"{t.defs_name}"')
    at = t.schema_text.find('"description": "', start)
    if start < 0 or at < 0:
        return None
    at += len('"description": "')
    return f"{t.schema_text[:at]}Planted: {t.schema_text[at:]}"


def over_bump(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """A description-only change published as a new MODEL; the control publishes it as an
    ADDITION."""
    t = _first(repo, commit, lambda t: _described(t) is not None)
    new = _described(t) if t is not None else None
    if t is None or new is None:
        return None
    m, r, a = t.version
    return new_version(t, new, (m + 1, 0, 0)), new_version(t, new, (m, r, a + 1))


def codeowners_lone_backslash(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
    """A line that is a lone ``\\`` (and the trailing space it seems to escape) in the first
    non-core entry's CODEOWNERS (written for it, naming the owners the root CODEOWNERS routes it to,
    when it has none); the control is the file without that line."""
    from bot.model.codeowners import RootOwners

    registry = _registry(repo, commit)
    root = RootOwners.of(_snapshot(str(repo), commit))
    for _, entry in sorted(registry.entries.items()):
        owners = root.owners_of(entry.registry_json)
        if entry.is_core or not entry.has_folder or not owners:
            continue
        text = _text(repo, commit, entry.codeowners) or f"* {' '.join(owners)}\n"
        return {entry.codeowners: f"{text}\\ \n".encode()}, {entry.codeowners: text.encode()}
    return None


# --- issue 32: naming files that contradict themselves --------------------------------------------

NAMING = "spec/naming"
BUNDLED_NAMING = Path(__file__).resolve().parent.parent / "naming"


def _naming_folder() -> dict[str, bytes]:
    """The project's naming files (Naming.md included) as they would sit in the registry; the base
    schema they follow stays the bundled one (a change to it is a steering-file change that needs
    its own approval)."""
    return {
        f"{NAMING}/{p.relative_to(BUNDLED_NAMING).as_posix()}": p.read_bytes()
        for p in sorted(BUNDLED_NAMING.rglob("*"))
        if p.is_file() and p.name != "NamingBase.json"
    }


def naming_kind(edit: Callable[[dict[str, Any]], bool]) -> Plant:
    """The naming folder added to the commit with ``edit`` applied to its first dataset file (path
    order) that ``edit`` can change; the control adds the folder as it is."""

    def plant(repo: Path, commit: str) -> tuple[Edits, Edits] | None:
        folder = _naming_folder()
        for path, data in folder.items():
            if not path.startswith(f"{NAMING}/datasets/") or not path.endswith(".json"):
                continue
            value = json.loads(data)
            if edit(value):
                return {**folder, path: dump(value)}, dict(folder)
        return None

    return plant


def _scheme_differs(value: dict[str, Any]) -> bool:
    """A scheme other than the one the namespace templates start with (``postgresql`` for
    ``postgres://``)."""
    scheme = value.get("scheme")
    forms = value.get("forms") or [{}]
    if not isinstance(scheme, str) or not str(forms[0].get("namespace", "")).startswith(
        f"{scheme}:"
    ):
        return False
    value["scheme"] = scheme + "ql"
    return True


def _datasource_names_a_name_component(value: dict[str, Any]) -> bool:
    """datasourceHierarchy gains a component that only the name template uses (the first of
    them)."""
    hierarchy, forms = value.get("datasourceHierarchy"), value.get("forms") or [{}]
    slots = re.findall(r"\{(\w+)\}", str(forms[0].get("name", "")))
    namespace = re.findall(r"\{(\w+)\}", str(forms[0].get("namespace", "")))
    extra = next((s for s in slots if s not in namespace), None)
    if not isinstance(hierarchy, list) or not hierarchy or extra is None:
        return False
    hierarchy.append(extra)
    return True


@functools.cache
def _naming_components() -> tuple[tuple[str, Any], ...]:
    """Every component the project's dataset naming files declare, with its declaration (path
    order)."""
    out: list[tuple[str, Any]] = []
    for path, data in _naming_folder().items():
        if path.startswith(f"{NAMING}/datasets/") and path.endswith(".json"):
            components = json.loads(data).get("components")
            out += components.items() if isinstance(components, dict) else []
    return tuple(out)


def _datasource_names_an_unused_component(value: dict[str, Any]) -> bool:
    """datasourceHierarchy gains a component that no template of the file uses: the first one
    another naming file declares that this file's templates lack, copied into its ``components``
    (declared, so only the hierarchy contradicts the templates)."""
    hierarchy, components = value.get("datasourceHierarchy"), value.get("components")
    used = set(re.findall(r"\{(\w+)\}", json.dumps(value.get("forms"))))
    if not isinstance(hierarchy, list) or not hierarchy or not isinstance(components, dict):
        return False
    found = next(
        ((n, d) for n, d in _naming_components() if n not in used and n not in components), None
    )
    if found is None:
        return False
    components[found[0]] = found[1]
    hierarchy.append(found[0])
    return True


def _naming_reversed(value: dict[str, Any]) -> bool:
    """namingHierarchy listed innermost first."""
    hierarchy = value.get("namingHierarchy")
    if (
        not isinstance(hierarchy, list)
        or len(hierarchy) < 2
        or " or " in " ".join(map(str, hierarchy))
    ):
        return False
    value["namingHierarchy"] = hierarchy[::-1]
    return True


@dataclass(frozen=True)
class Kind:
    name: str
    rule: str  # the rule that must block the defect
    plant: Plant
    new: bool  # a kind the checks missed before issue 18
    issue: int = 18  # the issue that named it
    blocks: bool = True  # False: a notice the change gets, which does not fail it


KINDS: tuple[Kind, ...] = (
    Kind("published copy edited", "versions/published-modified", published_edited, True),
    Kind("published copy deleted", "versions/published-modified", published_deleted, True),
    Kind("_schemaURL of another facet", "examples/schema-url", url_kind(other_facet), True),
    Kind("_schemaURL of a missing version", "examples/schema-url", url_kind(missing_version), True),
    Kind("_schemaURL of a missing $defs", "examples/schema-url", url_kind(missing_def), True),
    Kind(
        "_schemaURL of an older version", "examples/stale-schema-url", url_kind(older_version), True
    ),
    Kind(
        "sample event _schemaURL of a missing version",
        "examples/schema-url",
        event_missing_version,
        True,
    ),
    Kind("example with a duplicate key", "examples/unreadable", example_duplicate_key, True),
    Kind("OpenLineage.json with a trailing comma", "spec/unreadable", spec_trailing_comma, True),
    Kind("schema with a duplicate key", "facets/unreadable", schema_duplicate_key, True),
    Kind("registry.json with a duplicate key", "entry/unreadable", registry_duplicate_key, True),
    Kind(
        "field renamed in the schema, not in its example", "examples/undeclared-field", drift, True
    ),
    Kind("schema changed without a version bump", "versions/not-bumped", not_bumped, False),
    Kind("example that does not validate", "examples/invalid", example_invalid, False),
    Kind(
        "sample event with a facet its entry does not declare",
        "samples/undeclared-facet",
        sample_undeclared,
        True,
        32,
    ),
    Kind(
        "sample event _schemaURL of a version its entry's facet lacks",
        "samples/schema-url",
        sample_missing_version,
        True,
        32,
    ),
    Kind("facet key differing only in case", "keys/case-twin", case_twin, True, 32),
    Kind(
        "CODEOWNERS line that is a lone backslash",
        "owners/invalid-pattern",
        codeowners_lone_backslash,
        True,
        32,
    ),
    Kind(
        "MODEL bump for a description-only change",
        "versions/over-bump",
        over_bump,
        True,
        32,
        blocks=False,
    ),
    Kind(
        "naming scheme other than its namespace template's",
        "naming/scheme-mismatch",
        naming_kind(_scheme_differs),
        True,
        32,
    ),
    Kind(
        "datasourceHierarchy naming a component of the name",
        "naming/hierarchy-mismatch",
        naming_kind(_datasource_names_a_name_component),
        True,
        32,
    ),
    Kind(
        "datasourceHierarchy naming a component no template uses",
        "naming/hierarchy-mismatch",
        naming_kind(_datasource_names_an_unused_component),
        True,
        32,
    ),
    Kind(
        "namingHierarchy opposite to the templates",
        "naming/hierarchy-mismatch",
        naming_kind(_naming_reversed),
        True,
        32,
    ),
)

Result = dict[str, Any]
