"""Benchmark ``registry-bot check --all``: the real corpus, and generated registries of growing
size.

Each measurement runs in a fresh process so that peak memory (max RSS) belongs to that size alone.
Time is the review after start-up (imports excluded), best of the repeats.
Usage: python benchmarks/bench_engine.py [--sizes 100,300,1000] [--repeat 3]
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(tree: str, repeat: int) -> dict[str, float]:
    """Run inside the child: import, then review ``tree`` ``repeat`` times."""
    t0 = time.perf_counter()
    import bot.review.checks  # noqa: F401 - import cost is reported separately
    from bot.core.snapshot import DirSnapshot
    from bot.model.schemas import SchemaStore
    from bot.review.engine import review

    imported = time.perf_counter() - t0
    compiled = 0
    original = SchemaStore.validator

    def counting(self: SchemaStore, schema: object) -> object:
        nonlocal compiled
        compiled += 1
        return original(self, schema)  # type: ignore[arg-type]

    SchemaStore.validator = counting  # type: ignore[assignment,method-assign]
    best = float("inf")
    report = None
    for _ in range(repeat):
        compiled = 0
        start = time.perf_counter()
        report = review(head=DirSnapshot(tree))
        best = min(best, time.perf_counter() - start)
    assert report is not None
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "import_s": imported,
        "review_s": best,
        "max_rss_mb": peak_mb,
        "errors": sum(1 for f in report.findings if f.severity.value == "error"),
        "findings": len(report.findings),
        "validators_compiled": compiled,
    }


def main() -> None:
    from benchmarks.registry_gen import scaling

    rows = scaling(
        __file__,
        measure,
        lambda corpus: (
            f"real corpus --all: review {corpus['review_s'] * 1000:.0f} ms after start-up "
            f"(imports {corpus['import_s'] * 1000:.0f} ms), peak RSS {corpus['max_rss_mb']:.0f} "
            f"MB, {corpus['findings']:.0f} findings, {corpus['errors']:.0f} errors"
        ),
        f"{'entries':>8} {'facets':>7} {'examples':>9} {'review s':>9} {'ms/entry':>9} "
        f"{'peak MB':>8} {'compiled':>9}",
        lambda size, r: (
            f"{size:>8} {size * 5:>7} {size * 15:>9} {r['review_s']:>9.2f} "
            f"{r['review_s'] / size * 1000:>9.2f} {r['max_rss_mb']:>8.0f} "
            f"{r['validators_compiled']:>9.0f}  ({r['errors']:.0f} errors)"
        ),
    )
    if len(rows) > 1:
        (n0, r0), (n1, r1) = rows[0], rows[-1]
        print(
            f"growth: {n1 / n0:.0f}x entries -> {r1['review_s'] / r0['review_s']:.1f}x time "
            f"(linear would be {n1 / n0:.0f}x)"
        )


if __name__ == "__main__":
    main()
