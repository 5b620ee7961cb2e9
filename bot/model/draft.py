"""A new registry entry drafted from sample events, as a maintainer would write it (``registry-bot
init``).

Pure: events and the repository's existing facet schemas in, the entry's files (path -> text) and
notes out. Each facet of the events whose key carries the entry's prefix becomes a schema (typed
from every sample of it, or the schema the repository already has for that key, adapted) with a real
sample as its example: test-suite matchers and placeholders (``{{ any(result) }}``,
``${json-unit.any-string}``) never become example values. Every facet left out is named with the
reason. Inputs are bounded (facets, samples, nesting) so that no event file can make a draft take
unbounded time or memory.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.core.jsonformat import format_json
from bot.model.naming.events import document_kind
from bot.model.naming.placeholders import count_placeholders as placeholders
from bot.model.naming.placeholders import is_placeholder
from bot.model.registry import pascal

FACET_ID = "https://openlineage.io/spec/facets/1-0-0/{file}"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
# where a facet sits in an event -> the base facet it extends
PLACES = (
    ("run", "facets", "RunFacet"),
    ("job", "facets", "JobFacet"),
    ("inputs", "facets", "DatasetFacet"),
    ("outputs", "facets", "DatasetFacet"),
    ("inputs", "inputFacets", "InputDatasetFacet"),
    ("outputs", "outputFacets", "OutputDatasetFacet"),
    ("dataset", "facets", "DatasetFacet"),
)
BASE_FIELDS = ("_producer", "_schemaURL", "_deleted")
EVENT_KINDS = ("RunEvent", "JobEvent", "DatasetEvent")
# A registry name: lower-case ASCII words joined by '-', nested with ':'. Nothing else reaches a
# path.
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*(:[a-z0-9]+(-[a-z0-9]+)*){0,3}")
# A facet key that may become part of a file name: ASCII letters, digits and '_' (no '.', '/', '|',
# '@', bidi).
FACET_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")
HTTP_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?")
MAX_FACETS = 100  # distinct facets of one entry: beyond that the input is not one producer's sample
MAX_SAMPLES = 200  # samples per facet that its schema is typed from
MAX_DEPTH = 24  # nesting of a facet value that is typed (deeper values are left untyped)
MAX_PROPERTIES = 500  # properties of one object that are typed
MAX_SKIPPED_NAMES = 20  # skipped facet keys named one by one; the rest are counted


class DraftError(Exception):
    """The events give nothing to draft, or more than a draft can hold."""


@dataclass
class Sampled:
    """The facets of the events that carry the prefix, with every sample; what was left out and
    why."""

    samples: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    # why -> facet keys (with counts)
    skipped: dict[str, Counter[str]] = field(default_factory=dict)
    producers: Counter[str] = field(default_factory=Counter)
    events: int = 0

    def skip(self, key: str, why: str) -> None:
        self.skipped.setdefault(why, Counter())[key] += 1


def collect(documents: Iterable[Any], prefix: str) -> Sampled:
    """Every facet keyed ``prefix`` or ``prefix_...`` of the events among ``documents``."""
    found = Sampled()
    for doc in documents:
        if document_kind(doc) not in EVENT_KINDS:
            continue
        found.events += 1
        producer = doc.get("producer")
        if isinstance(producer, str) and HTTP_URL.fullmatch(producer):
            found.producers[producer] += 1
        for key, base, value in _facets(doc):
            if not (key == prefix or key.startswith(prefix + "_")):
                found.skip(key, f"not keyed {prefix}_...: a core facet or another producer's")
            elif not FACET_KEY.fullmatch(key):
                found.skip(key, "not a facet key (ASCII letters, digits and '_', at most 100)")
            elif not isinstance(value, dict):
                found.skip(key, "not a JSON object")
            else:
                samples = found.samples.get((key, base))
                if samples is None:
                    if len(found.samples) >= MAX_FACETS:
                        raise DraftError(
                            f"more than {MAX_FACETS} facets keyed {prefix}_...: not one entry's "
                            "sample events"
                        )
                    samples = found.samples[(key, base)] = []
                if len(samples) < MAX_SAMPLES:
                    samples.append(value)
                real = value.get("_producer")
                if isinstance(real, str) and HTTP_URL.fullmatch(real):
                    found.producers[real] += 1
    return found


def _facets(event: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    for place, where, base in PLACES:
        holders = event.get(place)
        for holder in holders if isinstance(holders, list) else [holders]:
            facets = holder.get(where) if isinstance(holder, dict) else None
            if isinstance(facets, dict):
                for key, value in facets.items():
                    yield key, base, value


# -- types from samples ----------------------------------------------------------------------------
def infer(value: Any, depth: int = 0) -> dict[str, Any]:
    """A JSON Schema typed from one sample value; a placeholder or a value nested too deep says
    nothing."""
    if depth > MAX_DEPTH or is_placeholder(value):
        return {}
    if isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if not (depth == 0 and k in BASE_FIELDS)][
            :MAX_PROPERTIES
        ]
        return {
            "type": "object",
            "properties": {k: infer(v, depth + 1) for k, v in items},
            "additionalProperties": True,
        }
    if isinstance(value, list):
        merged: dict[str, Any] = {}
        for item in value[:MAX_SAMPLES]:
            merged = merge(merged, infer(item, depth + 1))
        return {"type": "array", **({"items": merged} if merged else {})}
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    return {"type": "string"}


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The narrowest schema this drafter writes that both ``a`` and ``b`` accept (``{}``: unknown,
    any)."""
    if not a or not b:
        return a or b
    types = sorted(_types(a) | _types(b))
    if "integer" in types and "number" in types:
        types.remove("integer")
    out: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if "object" in types:
        props_a, props_b = a.get("properties", {}), b.get("properties", {})
        keys = [*props_a, *(k for k in props_b if k not in props_a)][:MAX_PROPERTIES]
        out["properties"] = {
            k: merge(props_a.get(k, {}), props_b.get(k, {}))
            if k in props_a and k in props_b
            else props_a.get(k) or props_b.get(k) or {}
            for k in keys
        }
        out["additionalProperties"] = True
    if "array" in types and ("items" in a or "items" in b):
        out["items"] = merge(a.get("items", {}), b.get("items", {}))
    return out


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()


def without_placeholders(value: Any, depth: int = 0) -> Any:
    """``value`` with every placeholder (and every member or item holding only one) removed."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {
            k: without_placeholders(v, depth + 1) for k, v in value.items() if not is_placeholder(v)
        }
    if isinstance(value, list):
        return [without_placeholders(v, depth + 1) for v in value if not is_placeholder(v)]
    return value


def best_sample(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The sample an owner would show: fewest placeholders, then most fields, then the first."""
    ranked = sorted(enumerate(samples), key=lambda s: (placeholders(s[1]), -len(s[1]), s[0]))
    return ranked[0][1]


# -- schemas the repository already has ------------------------------------------------------------
@dataclass(frozen=True)
class Existing:
    """A facet schema found in the repository for a key (an integration's own schema file)."""

    path: str
    schema: dict[str, Any]
    definition: str  # the $defs name its top-level property refers to


def existing_schemas(files: Iterable[tuple[str, Any]], keys: set[str]) -> dict[str, Existing]:
    """For each of ``keys``, the first schema among ``files`` (path, parsed JSON) whose top-level
    ``properties`` maps that key to a local ``$defs`` definition."""
    found: dict[str, Existing] = {}
    for path, schema in files:
        props = schema.get("properties") if isinstance(schema, dict) else None
        defs = schema.get("$defs") if isinstance(schema, dict) else None
        if not isinstance(props, dict) or not isinstance(defs, dict):
            continue
        for key in keys & set(props) - set(found):
            ref = props[key].get("$ref") if isinstance(props[key], dict) else None
            name = (
                ref.removeprefix("#/$defs/")
                if isinstance(ref, str) and ref.startswith("#/$defs/")
                else None
            )
            if name and isinstance(defs.get(name), dict):
                found[key] = Existing(path, schema, name)
    return found


def adapt(existing: Existing, stem: str, base_ref: str, inferred: dict[str, Any]) -> dict[str, Any]:
    """The existing schema's definitions under this entry's names: its facet definition renamed
    ``stem``, extending ``base_ref``; properties the samples have and it lacks added, typed from the
    samples."""
    defs = copy.deepcopy(existing.schema["$defs"])
    definition = defs.pop(existing.definition)
    defs = {stem: definition, **defs}
    renamed: dict[str, Any] = _renamed(defs, f"#/$defs/{existing.definition}", f"#/$defs/{stem}")
    facet = renamed[stem]
    parts = facet.get("allOf") if isinstance(facet.get("allOf"), list) else None
    if parts is None:
        facet = renamed[stem] = {"allOf": [{"$ref": base_ref}, facet], "type": "object"}
        parts = facet["allOf"]
    for part in parts:
        if (
            isinstance(part, dict)
            and isinstance(part.get("$ref"), str)
            and "OpenLineage.json#" in part["$ref"]
        ):
            part["$ref"] = base_ref
    own = next(
        (p for p in parts if isinstance(p, dict) and isinstance(p.get("properties"), dict)), None
    )
    if own is not None:
        for name, typed in inferred.get("properties", {}).items():
            have = own["properties"].setdefault(name, typed)
            if (
                have is not typed
                and isinstance(have, dict)
                and _types(have)
                and _types(typed) - _types(have)
            ):
                # a sample the schema refused: the samples decide
                wider = sorted(_types(have) | _types(typed))
                have["type"] = wider[0] if len(wider) == 1 else wider
    return renamed


def _renamed(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {
            k: new if k == "$ref" and v == old else _renamed(v, old, new) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return value


# -- the entry -------------------------------------------------------------------------------------
@dataclass
class Draft:
    files: dict[str, str]  # repository path -> text, in prettier's layout
    # what a maintainer should know: reused schemas, removed placeholders, skipped facets
    notes: list[str]
    facets: int


def prefix_of(name: str) -> str:
    return re.sub(r"[:-]", "_", name)


def draft(
    name: str,
    owners: list[str],
    sampled: Sampled,
    spec_url: str,
    producer: str,
    doc_url: str,
    existing: dict[str, Existing],
    registry: str = "spec/registry",
) -> Draft:
    """The files of the entry ``name``."""
    prefix = prefix_of(name)
    folder = f"{registry}/{name.replace(':', '/')}"
    files = {
        f"{folder}/CODEOWNERS": f"# Owners of the {name} registry entry: they approve changes to "
        f"it.\n* {' '.join(owners)}\n"
    }
    notes: list[str] = []
    uris = []
    stems = _stems(name, prefix, sampled.samples)
    for (key, base), samples in sorted(sampled.samples.items()):
        stem = stems[(key, base)]
        file = f"{stem}.json"
        schema_id = FACET_ID.format(file=file)
        base_ref = f"{spec_url}#/$defs/{base}"
        inferred: dict[str, Any] = {}
        for sample in samples:
            inferred = merge(inferred, infer(sample))
        found = existing.get(key)
        if found is not None:
            defs = adapt(found, stem, base_ref, inferred)
            notes.append(
                f"{key}: the schema of {found.path} reused (under this entry's $id and base facet)"
            )
        else:
            defs = {
                stem: {
                    "allOf": [{"$ref": base_ref}, inferred or {"type": "object"}],
                    "type": "object",
                }
            }
        schema = {
            "$schema": DRAFT_2020_12,
            "$id": schema_id,
            "$defs": defs,
            "type": "object",
            "properties": {key: {"$ref": f"#/$defs/{stem}"}},
        }
        chosen = best_sample(samples)
        removed = placeholders(chosen)
        value = without_placeholders({k: v for k, v in chosen.items() if k not in BASE_FIELDS})
        if removed:
            notes.append(
                f"{key}: {removed} test-suite placeholder(s) left out of the example (no sample "
                f"had "
                "real values there)"
            )
        example = {
            key: {"_producer": producer, "_schemaURL": f"{schema_id}#/$defs/{stem}", **value}
        }
        files[f"{folder}/facets/{file}"] = _json(schema)
        files[f"{folder}/facets/examples/{stem}/1.json"] = _json(example)
        uris.append(f"ol:{name}:{file}")
    for why, keys in sampled.skipped.items():
        named = [k for k, _ in keys.most_common(MAX_SKIPPED_NAMES)]
        more = f" and {len(keys) - len(named)} more" if len(keys) > len(named) else ""
        notes.append(f"skipped {len(keys)} facet(s), {why}: {', '.join(named)}{more}")
    files[f"{folder}/registry.json"] = _json(
        {"producer": {"root_doc_URL": doc_url, "produced_facets": uris}}
    )
    return Draft(files, notes, len(uris))


def _stems(name: str, prefix: str, facets: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The file name stem of each facet (key, base facet): ``gcp_composer_env`` on a run ->
    ``GcpComposerEnvRunFacet``. Two facets whose stems are the same, also in another case (a
    case-insensitive file system, the published URLs), are an error naming both keys: one file
    would replace the other and the entry would declare it twice."""
    stems: dict[tuple[str, str], str] = {}
    taken: dict[str, tuple[str, str]] = {}
    for key, base in sorted(facets):
        stem = pascal(name) + pascal(key[len(prefix) :]) + base
        other = taken.setdefault(stem.lower(), (key, base))
        if other != (key, base):
            first, second = (
                (repr(other[0]), repr(key))
                if other[1] == base
                else (f"{other[0]!r} ({other[1]})", f"{key!r} ({base})")
            )
            raise DraftError(
                f"facet keys {first} and {second} would both be drafted as {stems[other]}.json: "
                f"file names must differ, also in case; leave one of them out of the events and "
                f"write its schema by hand"
            )
        stems[(key, base)] = stem
    return stems


def _json(value: Any) -> str:
    return format_json(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
