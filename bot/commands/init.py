"""``registry-bot init NAME``: draft a new registry entry from sample events.

Writes ``spec/registry/<name>/`` (``gcp:composer`` -> ``gcp/composer``): a CODEOWNERS naming the ``--owner``s,
a ``registry.json`` declaring the entry's facets, and for each facet of the sample events whose key carries
the entry's prefix (``gcp_composer...``) a schema skeleton (``$id``, ``$defs`` name and file name agreeing,
extending the base facet of the place the facet sits in the event, properties typed from the sample) with
the sample as its first example. The draft passes ``registry-bot check``; descriptions are for the owner
to write.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from bot.cli import EXIT_OK, UsageError

HELP = "draft a new registry entry (CODEOWNERS, registry.json, facet schemas and examples) from sample events"
DEFAULT_SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
FACET_ID = "https://openlineage.io/spec/facets/1-0-0/{file}"
# where a facet sits in an event -> the base facet it extends
PLACES = (("run", "facets", "RunFacet"), ("job", "facets", "JobFacet"), ("inputs", "facets", "DatasetFacet"),
          ("outputs", "facets", "DatasetFacet"), ("inputs", "inputFacets", "InputDatasetFacet"),
          ("outputs", "outputFacets", "OutputDatasetFacet"))
BASE_FIELDS = ("_producer", "_schemaURL", "_deleted")
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*(:[a-z0-9][a-z0-9-]*)*")
_OWNER = re.compile(r"@[A-Za-z0-9][A-Za-z0-9-]*(/[A-Za-z0-9._-]+)?|[^@\s]+@[^@\s]+")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the name to register (lower case; ':' nests, as in gcp:composer)")
    parser.add_argument("events", nargs="+", metavar="EVENT", help="sample OpenLineage events (JSON files)")
    parser.add_argument("--owner", action="append", required=True, metavar="@LOGIN|@ORG/TEAM",
                        help="an owner of the entry (repeatable): the entry's CODEOWNERS names them")
    parser.add_argument("--repo", default=".", help="the registry repository to write into (default: .)")
    parser.add_argument("--doc-url", default="", help="the entry's documentation URL (registry.json root_doc_URL)")


def infer(value: Any) -> dict[str, Any]:
    """A JSON Schema skeleton typed from one sample value."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: infer(v) for k, v in value.items() if k not in BASE_FIELDS},
                "additionalProperties": True}
    if isinstance(value, list):
        return {"type": "array", **({"items": infer(value[0])} if value else {})}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    return {}


def sample_facets(events: list[Any], prefix: str) -> dict[tuple[str, str], Any]:
    """(key, base) -> the first sample value of each facet whose key carries ``prefix``."""
    found: dict[tuple[str, str], Any] = {}
    for event in events:
        for place, field, base in PLACES:
            holders = event.get(place) if isinstance(event, dict) else None
            for holder in holders if isinstance(holders, list) else [holders]:
                facets = holder.get(field) if isinstance(holder, dict) else None
                for key, value in (facets or {}).items() if isinstance(facets, dict) else ():
                    if (key == prefix or key.startswith(prefix + "_")) and isinstance(value, dict):
                        found.setdefault((key, base), value)
    return found


def draft(name: str, owners: list[str], events: list[Any], spec_url: str, doc_url: str,
          registry: str = "spec/registry") -> dict[str, str]:
    """The files of the entry: path -> text."""
    from bot.registry import pascal

    prefix = re.sub(r"[:-]", "_", name)
    folder = f"{registry}/{name.replace(':', '/')}"
    files = {f"{folder}/CODEOWNERS": f"# Owners of the {name} registry entry: they approve changes to it.\n"
                                     f"* {' '.join(owners)}\n"}
    uris = []
    for (key, base), value in sorted(sample_facets(events, prefix).items()):
        stem = pascal(name) + pascal(key[len(prefix):]) + base
        file = f"{stem}.json"
        schema_id = FACET_ID.format(file=file)
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": schema_id,
                  "$defs": {stem: {"allOf": [{"$ref": f"{spec_url}#/$defs/{base}"}, infer(value)], "type": "object"}},
                  "type": "object", "properties": {key: {"$ref": f"#/$defs/{stem}"}}}
        example = {key: {**value, "_producer": value.get("_producer") or "https://example.com/producer",
                         "_schemaURL": f"{schema_id}#/$defs/{stem}"}}
        files[f"{folder}/facets/{file}"] = _json(schema)
        files[f"{folder}/facets/examples/{stem}/1.json"] = _json(example)
        uris.append(f"ol:{name}:{file}")
    producer: dict[str, Any] = {"root_doc_URL": doc_url or f"https://example.com/{prefix}/openlineage",
                                "produced_facets": uris}
    files[f"{folder}/registry.json"] = _json({"producer": producer})
    return files


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def run(args: argparse.Namespace) -> int:
    from bot.config import load_config
    from bot.snapshot import DirSnapshot

    if not _NAME.fullmatch(args.name):
        raise UsageError(f"{args.name!r} is not a registry name: lower case letters, digits and '-', ':' nesting")
    bad = [o for o in args.owner if not _OWNER.fullmatch(o)]
    if bad:
        raise UsageError(f"owners are @login, @org/team or an e-mail address, not {', '.join(bad)}")
    events = []
    for path in args.events:
        try:
            events.append(json.loads(Path(path).read_bytes()))
        except (OSError, ValueError, RecursionError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
    repo = Path(args.repo)
    config, _ = load_config(DirSnapshot(repo)) if repo.is_dir() else (None, [])
    registry = config.paths.registry if config else "spec/registry"
    spec_path = repo / (config.paths.spec if config else "spec/OpenLineage.json")
    try:
        spec_url = str(json.loads(spec_path.read_bytes()).get("$id") or DEFAULT_SPEC)
    except (OSError, ValueError, AttributeError):
        spec_url = DEFAULT_SPEC
    files = draft(args.name, args.owner, events, spec_url, args.doc_url, registry)
    folder = repo / registry / args.name.replace(":", "/")
    if folder.exists():
        raise UsageError(f"{folder} exists: init drafts a new entry only")
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    facets = sum(1 for p in files if p.endswith(".json") and "/facets/" in p and "/examples/" not in p)
    print(f"{args.name}: {facets} facet(s) drafted; write their descriptions, commit, then run "
          f"`registry-bot check {args.repo} --base main` (a new name is approved by the registry's maintainers)")
    return EXIT_OK
