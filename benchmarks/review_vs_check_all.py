"""The review of each of the N newest real commits beside ``check --all`` of the real registry, in
pairs.

    python benchmarks/review_vs_check_all.py --commits 30 [--baseline CHECKOUT]

The commits come from the real history (``corpus/openlineage-history``, cloned bare into a temporary
folder). Each round runs, one after the other: ``registry-bot check CLONE --base C^ --head C`` (the
whole review of one commit as its pull request, a process as a user or the hook starts it), then
``registry-bot check CORPUS --all`` (every check on every entry of today's registry); with
``--baseline`` the same review from another checkout; ``--repeat`` times each, the least CPU kept
(the noise of a shared machine only adds). CPU is user + system of the process and its children
(git), from ``RUSAGE_CHILDREN``; a review's ratio is to the ``check --all`` of its own round. The
issue's bar: the slowest review <= 1.0x ``check --all``.

CPU time on a shared machine varies by a third from run to run of the same work, more than most
changes move it. ``--instructions K`` then counts, for the K reviews with the highest ratio, the
instructions each executes (``valgrind --tool=callgrind``, git's processes included, user space
only: the same count whatever else the machine does) against those of ``check --all`` (and of the
baseline's review).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared"
)
BUNDLE = SHARED / "corpus" / "openlineage-history" / "openlineage-spec-history.bundle"
sys.path.insert(0, str(ROOT))

# one whole process, timed as check_vs_cjs times it
from benchmarks.check_vs_cjs import run  # noqa: E402


def newest_commits(clone: Path, count: int) -> list[str]:
    """The ``count`` newest commits with a parent (the history is linear: merged pull requests)."""
    out = subprocess.run(
        ["git", "-C", str(clone), "log", "--format=%H %P", f"-n{count + 1}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return [line.split()[0] for line in out if len(line.split()) == 2][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each per round; the least CPU is kept"
    )
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "openlineage")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout of the project, run in the same rounds"
    )
    parser.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="K",
        help="count the instructions of the K reviews with the highest CPU ratio (callgrind)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="review-vs-all-"))
    try:
        clone = work / "history.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(clone)], check=True)
        commits = newest_commits(clone, args.commits)

        def review(sha: str) -> list[str]:
            # the text report, as the pre-commit hook and a person get it ("Published site" too)
            return [
                sys.executable, "-m", "bot", "check", str(clone), "--base", f"{sha}^", "--head",
                sha,
            ]  # fmt: skip

        check_all = [sys.executable, "-m", "bot", "check", str(args.corpus), "--all"]
        # warm-up, not counted: bytecode written, files cached
        run(review(commits[0]), ROOT)
        run(check_all, ROOT)
        if args.baseline:
            run(review(commits[0]), args.baseline)
        rows: list[tuple[str, float, float, float | None]] = []  # sha, review, check --all, base
        loads = []
        for sha in commits:
            cpus: list[float] = []
            alls: list[float] = []
            olds: list[float] = []
            for _ in range(args.repeat):  # interleaved; the least of each, as timeit does
                _, cpu, code = run(review(sha), ROOT)
                if code not in (0, 1):  # 1: the review found errors
                    raise SystemExit(f"the review of {sha[:7]} exited {code}")
                _, all_cpu, code = run(check_all, ROOT)
                if code not in (0, 1):
                    raise SystemExit(f"check --all exited {code}")
                cpus.append(cpu)
                alls.append(all_cpu)
                if args.baseline:
                    olds.append(run(review(sha), args.baseline)[1])
            rows.append((sha, min(cpus), min(alls), min(olds) if olds else None))
            loads.append(os.getloadavg()[0])
        ratios = [(cpu / all_cpu, sha) for sha, cpu, all_cpu, _ in rows]
        print(
            f"{len(rows)} commits, {os.cpu_count()} cores, load average "
            f"{min(loads):.1f}-{max(loads):.1f}"
        )
        print(
            f"review CPU: median {statistics.median(r[1] for r in rows) * 1000:.0f} ms, max "
            f"{max(r[1] for r in rows) * 1000:.0f} ms; check --all CPU: median "
            f"{statistics.median(r[2] for r in rows) * 1000:.0f} ms"
        )
        worst, worst_sha = max(ratios)
        print(
            f"review / check --all of the same round: median "
            f"{statistics.median(r for r, _ in ratios):.2f}x, slowest {worst:.2f}x "
            f"({worst_sha[:7]}); the three slowest: "
            + ", ".join(f"{r:.2f}x ({s[:7]})" for r, s in sorted(ratios)[-3:])
        )
        if args.baseline:
            gains = [old / cpu for _, cpu, _, old in rows if old]
            print(
                f"baseline review / this review per commit: median "
                f"{statistics.median(gains):.2f}x; the baseline's slowest review "
                f"{max(old for *_, old in rows if old) * 1000:.0f} ms"
            )
        if args.instructions:
            all_ir = instructions(check_all, ROOT)
            print(f"instructions (callgrind): check --all {all_ir / 1e9:.3f} G")
            for _, sha in sorted(ratios)[-args.instructions :]:
                ir = instructions(review(sha), ROOT)
                line = f"  review {sha[:7]}: {ir / 1e9:.3f} G, {ir / all_ir:.2f}x check --all"
                if args.baseline:
                    old = instructions(review(sha), args.baseline)
                    line += f"; the baseline's {old / 1e9:.3f} G ({old / all_ir:.2f}x)"
                print(line, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def instructions(command: list[str], cwd: Path) -> int:
    """Instructions one whole process and its children execute, user space (callgrind's Ir)."""
    env: dict[str, Any] = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    callgrind = ["valgrind", "--tool=callgrind", "--trace-children=yes"]
    done = subprocess.run(
        [*callgrind, "--callgrind-out-file=/dev/null", *command],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    counts = [int(line.split()[-1]) for line in done.stderr.splitlines() if "Collected :" in line]
    if not counts:
        raise SystemExit(f"callgrind counted nothing for {command}: {done.stderr[-500:]}")
    return sum(counts)


if __name__ == "__main__":
    main()
