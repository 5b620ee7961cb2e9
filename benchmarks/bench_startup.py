"""Start-up as a newcomer feels it: whole processes, side by side with check-jsonschema on the same
files.

``registry-bot --help`` against ``check-jsonschema --help``; ``registry-bot check CORPUS --all``
(every check on every entry) against check-jsonschema doing a part of that work on the same files:
the corpus's ``registry.json`` files against the project's ``registry/registry.schema.json`` and
every facet schema against the draft 2020-12 meta-schema. check-jsonschema lives in the benchmark's
own environment (``.venv-bench``, created on first use with pip), never in the project's.
``--baseline CHECKOUT`` adds the same two registry-bot runs from another checkout of the project
(for example the main branch) with this environment's packages, for a before/after figure.
Usage: python benchmarks/bench_startup.py [--repeat 7] [--corpus PATH] [--baseline CHECKOUT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_VENV = ROOT / ".venv-bench"
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared"
)


def check_jsonschema() -> Path:
    """The check-jsonschema executable of the benchmark's own virtualenv (installed on first
    use)."""
    exe = BENCH_VENV / "bin" / "check-jsonschema"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
        subprocess.run(
            [
                str(BENCH_VENV / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "check-jsonschema",
            ],
            check=True,
        )
    return exe


def timed(
    command: list[str], repeat: int, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """Best and median wall time of ``repeat`` runs of ``command`` as a whole process, and its exit
    code."""
    times, code = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        code = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env
        ).returncode
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times), code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "openlineage")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout of the project to measure the same way"
    )
    args = parser.parse_args()
    corpus: Path = args.corpus
    bot = [str(Path(sys.executable).parent / "registry-bot")]
    cjs = [str(check_jsonschema())]
    entries = sorted(str(p) for p in (corpus / "spec" / "registry").rglob("registry.json"))
    facets = sorted(str(p) for p in corpus.glob("spec/**/facets/*.json"))
    runs = [
        ("registry-bot --help", [*bot, "--help"]),
        ("check-jsonschema --help", [*cjs, "--help"]),
        (
            f"registry-bot check --all (corpus: {len(entries)} entries, every check)",
            [*bot, "check", str(corpus), "--all"],
        ),
        (
            f"check-jsonschema: {len(entries)} registry.json against registry.schema.json",
            [*cjs, "--schemafile", str(ROOT / "registry" / "registry.schema.json"), *entries],
        ),
        (
            f"check-jsonschema --check-metaschema: {len(facets)} facet schemas",
            [*cjs, "--check-metaschema", *facets],
        ),
        ("python -c pass (the interpreter alone)", [sys.executable, "-c", "pass"]),
    ]
    print(
        f"{args.repeat} runs each, whole processes; load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    before = {**os.environ, "PYTHONPATH": str(args.baseline)} if args.baseline else None
    if args.baseline:
        runs[1:1] = [
            (
                f"before ({args.baseline}): registry-bot --help",
                [sys.executable, "-m", "bot", "--help"],
            )
        ]
        runs[4:4] = [
            (
                f"before ({args.baseline}): registry-bot check --all",
                [sys.executable, "-m", "bot", "check", str(corpus), "--all"],
            )
        ]
    print("| command | best | median | exit |")
    print("| --- | ---: | ---: | ---: |")
    for label, command in runs:
        best, median, code = timed(
            command, args.repeat, before if label.startswith("before") else None
        )
        print(f"| {label} | {best * 1000:.0f} ms | {median * 1000:.0f} ms | {code} |", flush=True)


if __name__ == "__main__":
    main()
