"""Benchmark ``registry-bot publish``: the real corpus, and generated registries of growing size.

Each size runs in a fresh process (peak memory is that size's alone); time is the build after
imports, best of the repeats, split into reading the model (``build_site``) and writing every file
(``write_site``), into the temporary folder (on this machine the same disk as the repository, not a
tmpfs); ``cpu s`` is the process's CPU time (all threads, user and system), the fairer figure on a
machine others load. Usage: python benchmarks/bench_publish.py [--sizes 100,300,1000] [--repeat 3]

Pairs: ``--pairs 7 --baseline CHECKOUT [--entries 1000]`` generates one registry, then per round
builds it with this checkout and with ``CHECKOUT`` (another copy of the project, e.g. ``git archive
REV | tar -x -C DIR``), each in a fresh process writing into a new folder; it prints wall, user and
system time of the build, the load average per round and the per-pair ratios (this / baseline) with
their median.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
if os.environ.get("BENCH_PUBLISH_CODE"):  # the child of a pair: the other checkout's ``bot``
    sys.path.insert(0, os.environ["BENCH_PUBLISH_CODE"])
TARGET_S = 5.0  # at 1,000 entries (issue 35)


def measure(tree: str, repeat: int) -> dict[str, float]:
    """Run inside the child: import, then build the site of ``tree`` ``repeat`` times."""
    from bot.core.config import load_config
    from bot.core.snapshot import DirSnapshot
    from bot.outputs.site import build_site
    from bot.outputs.site.build import write_site

    def build(out: Path) -> dict[str, float]:
        start, cpu = time.perf_counter(), _cpu()
        snapshot = DirSnapshot(tree)
        site = build_site(snapshot, load_config(snapshot)[0])
        built = time.perf_counter()
        files = write_site(site, out)
        done = time.perf_counter()
        user, system = (after - before for after, before in zip(_cpu(), cpu, strict=True))
        return {
            "model_s": built - start,
            "write_s": done - built,
            "total_s": done - start,
            "cpu_s": user + system,
            "user_s": user,
            "sys_s": system,
            "files": files,
            "facet_pages": len(site.facets),
        }

    with contextlib.ExitStack() as stack:
        # a pair's outputs stay until the end: see ``pairs``
        keep = os.environ.get("BENCH_PUBLISH_OUT")
        scratch = (
            tempfile.mkdtemp(dir=keep)
            if keep
            else stack.enter_context(tempfile.TemporaryDirectory())
        )
        runs = [build(Path(scratch) / f"out{n}") for n in range(repeat)]  # new folders: publishing
        # into the first output: publishing again, nothing changed
        again = build(Path(scratch) / "out0")
    best = {key: min(run[key] for run in runs) for key in runs[0]}
    best.update({f"again_{key}": again[key] for key in ("total_s", "user_s", "sys_s")})
    return {**best, "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _cpu() -> tuple[float, float]:
    """(user, system) seconds of this process and its finished children (a process pool's
    workers)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + kids.ru_utime, own.ru_stime + kids.ru_stime


def pairs() -> None:
    """``--pairs N --baseline CHECKOUT``: this checkout and another, one after the other, N
    rounds."""
    from benchmarks.registry_gen import generate

    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, required=True)
    parser.add_argument(
        "--baseline", type=Path, required=True, help="another checkout of the project"
    )
    parser.add_argument("--entries", type=int, default=1000)
    args = parser.parse_args()
    # users have bytecode
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def child(code: Path, tree: Path) -> dict[str, float]:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(tree), "--repeat", "1"],
            check=False,
            capture_output=True,
            text=True,
            env={**env, "BENCH_PUBLISH_CODE": str(code.resolve())},
        )
        if out.returncode:
            sys.exit(f"the build with {code} failed:\n{out.stderr}")
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    runs = {"this": ROOT, "baseline": args.baseline}
    with tempfile.TemporaryDirectory() as scratch:
        # Every output stays until the end: deleting 15,000 files just before the next build writes
        # its own would charge that build for the deletion (ext4 without a journal scans past
        # recently deleted inodes).
        env["BENCH_PUBLISH_OUT"] = scratch
        tree = generate(Path(scratch) / "registry", args.entries)
        # warm-up, not counted: bytecode written, the registry's files cached
        for code in runs.values():
            child(code, tree)
        rows: dict[str, list[dict[str, float]]] = {label: [] for label in runs}
        loads = []
        for _ in range(args.pairs):
            for label, code in runs.items():
                rows[label].append(child(code, tree))
            loads.append(os.getloadavg()[0])
        # before the outputs are deleted (slow on a disk that discards)
        _report(args.entries, rows, loads)


def _report(entries: int, rows: dict[str, list[dict[str, float]]], loads: list[float]) -> None:
    print(
        f"{entries} entries, {len(loads)} rounds, {os.cpu_count()} cores, load average "
        f"{min(loads):.1f}-{max(loads):.1f} (per round: {', '.join(f'{x:.1f}' for x in loads)})"
    )
    for label, values in rows.items():
        walls = ", ".join(f"{v['total_s']:.2f}" for v in values)
        print(
            f"{label}: {values[0]['files']:.0f} files; median wall "
            f"{_median(values, 'total_s'):.2f} s (model {_median(values, 'model_s'):.2f}, write "
            f"{_median(values, 'write_s'):.2f}), user {_median(values, 'user_s'):.2f} s, system "
            f"{_median(values, 'sys_s'):.2f} s; walls {walls}; publishing again into its output: "
            f"wall {_median(values, 'again_total_s'):.2f} s, user "
            f"{_median(values, 'again_user_s'):.2f} s, system {_median(values, 'again_sys_s'):.2f} "
            f"s"
        )
    for key, what in (
        ("total_s", "wall"),
        ("cpu_s", "CPU"),
        ("sys_s", "system"),
        ("again_total_s", "wall again"),
    ):
        ratios = [
            a[key] / b[key] for a, b in zip(rows["this"], rows["baseline"], strict=True) if b[key]
        ]
        print(
            f"this / baseline ({what}) per pair: {', '.join(f'{r:.2f}' for r in ratios)}; "
            f"median {statistics.median(ratios):.2f}x"
        )
    sys.stdout.flush()


def _median(values: list[dict[str, float]], key: str) -> float:
    return statistics.median(v[key] for v in values)


def main() -> None:
    from benchmarks.registry_gen import scaling

    if "--pairs" in sys.argv:
        pairs()
        return

    rows = scaling(
        __file__,
        measure,
        lambda corpus: (
            f"real corpus: {corpus['total_s']:.2f} s ({corpus['facet_pages']:.0f} facet pages, "
            f"{corpus['files']:.0f} files), peak RSS {corpus['max_rss_mb']:.0f} MB"
        ),
        f"{'entries':>8} {'pages':>6} {'files':>6} {'model s':>8} {'write s':>8} {'total s':>8} "
        f"{'cpu s':>6} {'ms/entry':>9} {'peak MB':>8}",
        lambda size, row: (
            f"{size:>8} {row['facet_pages']:>6.0f} {row['files']:>6.0f} {row['model_s']:>8.2f} "
            f"{row['write_s']:>8.2f} {row['total_s']:>8.2f} {row['cpu_s']:>6.2f} "
            f"{row['total_s'] / size * 1000:>9.2f} "
            f"{row['max_rss_mb']:>8.0f}"
        ),
    )
    if not rows:
        return
    (small, first), (large, last) = rows[0], rows[-1]
    growth = (last["total_s"] / first["total_s"]) / (large / small)
    print(
        f"growth {small} -> {large} entries: x{last['total_s'] / first['total_s']:.1f} for "
        f"x{large / small:.0f} entries ({growth:.2f} of linear)"
    )
    if large >= 1000 and last["total_s"] > TARGET_S:
        sys.exit(f"{large} entries took {last['total_s']:.1f} s, over the {TARGET_S:.0f} s target")


if __name__ == "__main__":
    main()
