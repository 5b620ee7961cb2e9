"""Locating values in a JSON file near the 10 MB limit: the walk along the asked pointer against
the scan that recorded every value (``tests.test_jsondoc_locate.Reference``, the code before).

The file is the hostile example of ``tests/test_hostile.py``: the valid acme example with a member
``extra`` holding ITEMS small objects (360,000: 8.9 MB). Every measurement runs in a fresh process
(its peak resident memory, VmHWM, is its own), old and new interleaved in pairs, with the load
average after each pair; bytecode is written as users have it (PYTHONDONTWRITEBYTECODE unset).

- locate: parse, then locate ten pointers (deep in the array, members after it, keys, one that
  names nothing): wall and CPU time of the locating, peak MB after parsing and at the end;
- review (``--baseline CHECKOUT``, another copy of the project, e.g. ``git archive REV | tar -x -C
  DIR``): a strict review of the corpus with the acme entry and that example, by this checkout and
  by the baseline: wall and CPU seconds, peak MB.

Run: ``python benchmarks/bench_jsondoc_locate.py [--pairs 3] [--items 360000] [--baseline DIR]``

Measured (2 cores, load 1.1-1.4, 3 pairs, baseline bb5da51): locate 6.0-6.6 s and 492 MB peak ->
0.30-0.38 s and 133 MB (the parse alone peaks at 133 MB); review 9.8-10.2 s and 501 MB -> 0.97-1.16
s and 140 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if os.environ.get("BENCH_LOCATE_CODE"):  # the child of a review pair: that checkout's ``bot``
    sys.path.insert(0, os.environ["BENCH_LOCATE_CODE"])
sys.path.insert(1, str(ROOT))

POINTERS = [
    "/acme_widget/extra/359999/s",
    "/acme_widget/extra/180000/k",
    "/acme_widget/extra/5",
    "/acme_widget/extra/359998",
    "/acme_widget/after",
    "/acme_widget/extra/400000",
    "/acme_widget/settings/labels/1",
]
KEYS = ["/acme_widget/extra", "/acme_widget/after", "/acme_widget/extra/7/s"]


def example(items: int) -> str:
    from tests import registry_cases as rc

    value = json.loads(json.dumps(rc.EXAMPLE_JSON))
    value["acme_widget"]["extra"] = [{"k": i, "s": "x"} for i in range(items)]
    value["acme_widget"]["after"] = 1
    return json.dumps(value)


def peak_mb() -> float:
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    return int(next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1]) / 1024


def child_locate(mode: str, items: int) -> dict[str, Any]:
    from bot.core.jsondoc import JsonDoc
    from tests.test_jsondoc_locate import Reference

    doc = JsonDoc.parse(example(items))
    parsed = peak_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    where: Any = Reference(doc.text) if mode == "old" else doc
    found = [where.locate(p) for p in POINTERS] + [where.locate_key(p) for p in KEYS]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "wall": wall,
        "cpu": cpu,
        "parsed": parsed,
        "peak": peak_mb(),
        "found": str(found),
    }


def child_review(tree: str) -> dict[str, Any]:
    from bot.core.snapshot import DirSnapshot
    from bot.review.engine import ReviewContext, review

    wall, cpu = time.perf_counter(), time.process_time()
    report = review(head=DirSnapshot(Path(tree)), context=ReviewContext(strict=True))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    import bot

    found = {"findings": len(report.findings), "code": bot.__file__}
    return {"wall": wall, "cpu": cpu, "peak": peak_mb(), **found}


def run_child(args: list[str], code: Path | None = None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if code is not None:
        env["BENCH_LOCATE_CODE"] = str(code.resolve())
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, env=env
    )
    if done.returncode:
        sys.exit(done.stderr[-3000:])
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def build_tree(root: Path, items: int) -> int:
    from tests import registry_cases as rc

    shutil.copytree(shared_corpus() / "openlineage", root)
    for path, content in rc.good_files().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content, encoding="utf-8")
    text = example(items)
    (root / rc.EXAMPLE).write_text(text, encoding="utf-8")
    return len(text)


def shared_corpus() -> Path:
    return next(p / "shared/corpus" for p in ROOT.parents if (p / "shared/corpus").is_dir())


def pairs(label: str, runs: dict[str, list[str]], codes: dict[str, Path | None], n: int) -> None:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in runs}
    for name in runs:  # warm-up, not counted: bytecode written, files cached
        run_child(runs[name], codes[name])
    for i in range(n):
        for name in runs:
            rows[name].append(run_child(runs[name], codes[name]))
        line = "  ".join(
            f"{name} {r['wall']:.2f} s wall {r['cpu']:.2f} s cpu {r['peak']:.0f} MB"
            for name, r in ((name, rows[name][-1]) for name in runs)
        )
        print(
            f"{label} pair {i + 1}: {line}  load {' / '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
    if label == "review":
        codes_used = ", ".join(f"{name} {rows[name][0]['code']}" for name in runs)
        print(f"review: bot from {codes_used}")
    if label == "locate":
        old, new = rows["old"][0], rows["new"][0]
        assert old["found"] == new["found"], "old and new located differently"
        print(f"locate: peak after parsing {new['parsed']:.0f} MB (both)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--items", type=int, default=360_000)
    parser.add_argument("--baseline", type=Path, help="another checkout of the project")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        out = child_locate(rest[0], int(rest[1])) if kind == "locate" else child_review(rest[0])
        print(json.dumps(out))
        return 0
    print(f"{os.cpu_count()} cores, {args.items:,} items")
    items = str(args.items)
    runs = {"old": ["locate", "old", items], "new": ["locate", "new", items]}
    pairs("locate", runs, {"old": None, "new": None}, args.pairs)
    if args.baseline is not None:
        with tempfile.TemporaryDirectory() as scratch:
            tree = Path(scratch) / "openlineage"
            size = build_tree(tree, args.items)
            print(f"review: example of {size:,} bytes")
            runs = {"old": ["review", str(tree)], "new": ["review", str(tree)]}
            pairs("review", runs, {"old": args.baseline, "new": ROOT}, args.pairs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
