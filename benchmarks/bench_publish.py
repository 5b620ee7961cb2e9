"""Benchmark ``registry-bot publish``: the real corpus, and generated registries of growing size.

Each size runs in a fresh process (peak memory is that size's alone); time is the build after imports,
best of the repeats, split into reading the model (``build_site``) and writing every file (``write_site``),
into the temporary folder (on this machine the same disk as the repository, not a tmpfs); ``cpu s`` is the
process's CPU time (all threads, user and system), the fairer figure on a machine others load.
Usage: python benchmarks/bench_publish.py [--sizes 100,300,1000] [--repeat 3]
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET_S = 10.0  # at 1,000 entries


def measure(tree: str, repeat: int) -> dict[str, float]:
    """Run inside the child: import, then build the site of ``tree`` ``repeat`` times."""
    from bot.core.config import load_config
    from bot.core.snapshot import DirSnapshot
    from bot.outputs.site import build_site
    from bot.outputs.site.build import write_site

    best_model = best_write = best_cpu = float("inf")
    files = pages = 0
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(repeat):
            start, cpu = time.perf_counter(), time.process_time()
            snapshot = DirSnapshot(tree)
            site = build_site(snapshot, load_config(snapshot)[0])
            built = time.perf_counter()
            files = write_site(site, Path(scratch) / "out")
            done = time.perf_counter()
            best_model, best_write = min(best_model, built - start), min(best_write, done - built)
            best_cpu = min(best_cpu, time.process_time() - cpu)  # all threads, user and system
            pages = len(site.facets)
    return {"model_s": best_model, "write_s": best_write, "total_s": best_model + best_write, "cpu_s": best_cpu,
            "files": files,
            "facet_pages": pages, "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    from benchmarks.registry_gen import scaling

    rows = scaling(
        __file__, measure,
        lambda corpus: (f"real corpus: {corpus['total_s']:.2f} s ({corpus['facet_pages']:.0f} facet pages, "
                        f"{corpus['files']:.0f} files), peak RSS {corpus['max_rss_mb']:.0f} MB"),
        f"{'entries':>8} {'pages':>6} {'files':>6} {'model s':>8} {'write s':>8} {'total s':>8} {'cpu s':>6} "
        f"{'ms/entry':>9} {'peak MB':>8}",
        lambda size, row: (f"{size:>8} {row['facet_pages']:>6.0f} {row['files']:>6.0f} {row['model_s']:>8.2f} "
                           f"{row['write_s']:>8.2f} {row['total_s']:>8.2f} {row['cpu_s']:>6.2f} "
                           f"{row['total_s'] / size * 1000:>9.2f} "
                           f"{row['max_rss_mb']:>8.0f}"))
    if not rows:
        return
    (small, first), (large, last) = rows[0], rows[-1]
    growth = (last["total_s"] / first["total_s"]) / (large / small)
    print(f"growth {small} -> {large} entries: x{last['total_s'] / first['total_s']:.1f} for x{large / small:.0f} "
          f"entries ({growth:.2f} of linear)")
    if large >= 1000 and last["total_s"] > TARGET_S:
        sys.exit(f"{large} entries took {last['total_s']:.1f} s, over the {TARGET_S:.0f} s target")


if __name__ == "__main__":
    main()
