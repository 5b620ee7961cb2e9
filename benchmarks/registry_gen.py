"""Generate a synthetic registry: N entries x F facets x E examples, valid under every rule."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

# shared/ beside the repository, or beside a worktree's parent
_ROOT = Path(__file__).resolve().parent.parent
CORPUS = (
    next((p / "shared" for p in _ROOT.parents if (p / "shared").is_dir()), _ROOT.parent / "shared")
    / "corpus"
    / "openlineage"
)
REFERENCE = Path(__file__).resolve().parent.parent / "registry" / "reference"
BASES = ("RunFacet", "JobFacet", "DatasetFacet", "InputDatasetFacet", "OutputDatasetFacet")


def _facet(name: str, key: str, base: str, i: int) -> dict[str, object]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://openlineage.io/spec/facets/1-0-0/{name}.json",
        "$defs": {
            name: {
                "allOf": [
                    {"$ref": f"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/{base}"},
                    {
                        "type": "object",
                        "properties": {
                            "identifier": {"type": "string", "pattern": "^[a-z][a-z0-9_-]*$"},
                            "count": {"type": "integer", "minimum": 0},
                            "ratio": {"type": "number"},
                            "labels": {"type": "array", "items": {"type": "string"}},
                            "details": {
                                "type": "object",
                                "properties": {
                                    "owner": {"type": "string"},
                                    "level": {"enum": ["low", "mid", "high"]},
                                },
                            },
                        },
                        "required": ["identifier"],
                    },
                ],
                "type": "object",
            }
        },
        "type": "object",
        "properties": {key: {"$ref": f"#/$defs/{name}"}},
    }


def generate(target: Path, entries: int, facets: int = 5, examples: int = 3) -> Path:
    """Write a repository tree with ``entries`` participants and return its path."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(REFERENCE, target)  # core, OpenLineage.json and the mirror it needs
    mirror = target / "website/static/spec/facets/1-0-0"
    for n in range(entries):
        name = f"vendor{n:04d}"
        pascal = name.capitalize()
        entry = target / "spec/registry" / name
        (entry / "facets/examples").mkdir(parents=True)
        (entry / "CODEOWNERS").write_text(f"* @{name}-team\n", encoding="utf-8")
        uris = []
        for f in range(facets):
            base = BASES[f % len(BASES)]
            facet_name, key = f"{pascal}Thing{f}{base}", f"{name}_thing{f}"
            schema = _facet(facet_name, key, base, f)
            text = json.dumps(schema, indent=2) + "\n"
            (entry / "facets" / f"{facet_name}.json").write_text(text, encoding="utf-8")
            (mirror / f"{facet_name}.json").write_text(text, encoding="utf-8")
            uris.append(f"ol:{name}:{facet_name}.json")
            folder = entry / "facets/examples" / facet_name
            folder.mkdir()
            for e in range(examples):
                example = {
                    key: {
                        "_producer": f"https://{name}.example.com/ol",
                        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-0/{facet_name}.json",
                        "identifier": f"id_{e}",
                        "count": e,
                        "ratio": e / 3,
                        "labels": ["a", "b"],
                        "details": {"owner": "team", "level": "mid"},
                    }
                }
                (folder / f"{e + 1}.json").write_text(
                    json.dumps(example, indent=2) + "\n", encoding="utf-8"
                )
        registry = {
            "producer": {
                "root_doc_URL": f"https://{name}.example.com/docs",
                "produced_facets": uris,
            }
        }
        (entry / "registry.json").write_text(
            json.dumps(registry, indent=2) + "\n", encoding="utf-8"
        )
    return target


def run_in_child(script: str, tree: str, repeat: int) -> dict[str, float]:
    """Run ``script --child TREE --repeat N`` in a fresh process (its own peak memory); its JSON
    result."""
    out = subprocess.run(
        [sys.executable, script, "--child", tree, "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


Row = dict[str, float]


def scaling(
    script: str,
    measure: Callable[[str, int], Row],
    corpus_line: Callable[[Row], str],
    header: str,
    row_line: Callable[[int, Row], str],
) -> list[tuple[int, Row]]:
    """The driver of a scaling benchmark (``--sizes``, ``--repeat``): the real corpus, then a
    generated registry per size, each measured by ``measure`` in a fresh process and printed as it
    comes; the rows. In that child (``--child TREE``) it prints the measurement as JSON and returns
    no rows."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,300,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.repeat)))
        return []
    print(corpus_line(run_in_child(script, str(CORPUS), args.repeat)))
    print(header)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in (int(s) for s in args.sizes.split(",")):
            row = run_in_child(script, str(generate(Path(scratch) / f"r{size}", size)), args.repeat)
            rows.append((size, row))
            print(row_line(size, row))
    return rows
