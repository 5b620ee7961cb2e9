"""Benchmark the format rule and ``registry-bot fix``: the real corpus and one generated large file.

Usage: python benchmarks/bench_fixes.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = next(
    (p / "shared" / "corpus" / "openlineage" for p in ROOT.parents if (p / "shared").is_dir()), None
)


def best(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from bot.cli.commands.fix import _changes  # noqa: F401 - import cost outside the timing
    from bot.core.jsonformat import format_json
    from bot.core.snapshot import DirSnapshot
    from bot.review.checks import format as format_check
    from bot.review.engine import default_checks, review
    from bot.review.fixes import fix_until_done

    assert CORPUS is not None and CORPUS.is_dir(), "the shared corpus is missing"
    texts = [p.read_text(encoding="utf-8") for p in sorted((CORPUS / "spec").rglob("*.json"))]
    size = sum(len(t) for t in texts)
    layout = best(args.repeat, lambda: [format_json(t) for t in texts])
    tree = DirSnapshot(CORPUS)
    only_format = best(
        args.repeat, lambda: review(head=DirSnapshot(CORPUS), checks=[format_check.check])
    )
    others = tuple(c for c in default_checks() if c is not format_check.check)
    without = best(args.repeat, lambda: review(head=DirSnapshot(CORPUS), checks=others))
    everything = best(args.repeat, lambda: review(head=DirSnapshot(CORPUS)))
    fix_all = best(args.repeat, lambda: fix_until_done(tree, lambda t: review(head=t).findings))
    big = json.dumps(
        {"items": [{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(50_000)]}, indent=2
    )
    careless = big.replace("\n  ", "\n    ")
    big_time = best(max(1, args.repeat // 2), lambda: format_json(careless))
    print(
        json.dumps(
            {
                "corpus_json_files": len(texts),
                "corpus_json_bytes": size,
                "layout_of_every_corpus_file_ms": round(layout * 1000, 1),
                "review_only_format_rule_ms": round(only_format * 1000, 1),
                "review_without_format_rule_ms": round(without * 1000, 1),
                "review_all_checks_ms": round(everything * 1000, 1),
                "fix_until_done_corpus_ms": round(fix_all * 1000, 1),
                "format_json_MB_per_s": round(len(careless) / big_time / 1e6, 2),
                "big_file_MB": round(len(careless) / 1e6, 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
