"""``registry-bot check --all`` of the real registry beside ONE check-jsonschema run on one schema,
in pairs.

    python benchmarks/check_vs_cjs.py --cjs /tmp/venv/bin/check-jsonschema --pairs 7 \\
        [--baseline CHECKOUT]

Each round runs, one after the other: ``registry-bot check CORPUS --all`` (every check on every
entry), check-jsonschema checking one facet schema of the corpus against its meta-schema, and
(``--baseline``) the same ``check --all`` from another checkout. Wall and CPU (user + system of the
process, from ``RUSAGE_CHILDREN``) per run; the ratios are per pair, then their median.
check-jsonschema lives in its own virtualenv (``--cjs``; ``bench_startup.py`` creates
``.venv-bench`` with it), never in the project's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared"
)


def run(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of one whole process."""
    # users have bytecode
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=cwd, env=env
    ).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cjs", type=Path, default=ROOT / ".venv-bench" / "bin" / "check-jsonschema"
    )
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "openlineage")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout of the project, run in the same rounds"
    )
    args = parser.parse_args()
    schema = sorted(args.corpus.glob("spec/facets/*.json"))[0]
    runs = {
        "registry-bot check --all": (
            [sys.executable, "-m", "bot", "check", str(args.corpus), "--all"],
            ROOT,
        ),
        "check-jsonschema, one schema": ([str(args.cjs), "--check-metaschema", str(schema)], ROOT),
    }
    if args.baseline:
        runs["baseline check --all"] = (
            [sys.executable, "-m", "bot", "check", str(args.corpus), "--all"],
            args.baseline,
        )
    for command, cwd in runs.values():  # warm-up, not counted: bytecode written, files cached
        run(command, cwd)
    results: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
    loads = []
    for _ in range(args.pairs):
        for label, (command, cwd) in runs.items():
            wall, cpu, code = run(command, cwd)
            if code != 0:
                raise SystemExit(f"{label} exited {code}")
            results[label].append((wall, cpu))
        loads.append(os.getloadavg()[0])
    print(
        f"{args.pairs} rounds, {os.cpu_count()} cores, load average "
        f"{min(loads):.1f}-{max(loads):.1f} (per round: "
        f"{', '.join(f'{load:.1f}' for load in loads)})"
    )
    for label, values in results.items():
        print(
            f"{label}: median wall {statistics.median(w for w, _ in values) * 1000:.0f} ms, "
            f"CPU {statistics.median(c for _, c in values) * 1000:.0f} ms"
        )
    bot, cjs = results["registry-bot check --all"], results["check-jsonschema, one schema"]
    for what, i in (("wall", 0), ("CPU", 1)):
        pairs = [b[i] / c[i] for b, c in zip(bot, cjs, strict=True)]
        print(
            f"check --all / check-jsonschema ({what}) per pair: "
            f"{', '.join(f'{p:.2f}' for p in pairs)}; median {statistics.median(pairs):.2f}x"
        )
        if args.baseline:
            old = [b[i] / c[i] for b, c in zip(results["baseline check --all"], cjs, strict=True)]
            print(
                f"  baseline check --all / check-jsonschema ({what}) per pair: "
                f"{', '.join(f'{p:.2f}' for p in old)}; median {statistics.median(old):.2f}x"
            )
            new_old = [
                b[i] / o[i] for b, o in zip(bot, results["baseline check --all"], strict=True)
            ]
            print(
                f"  check --all / baseline check --all ({what}) per pair: "
                f"{', '.join(f'{p:.2f}' for p in new_old)}; median "
                f"{statistics.median(new_old):.2f}x"
            )


if __name__ == "__main__":
    main()
