"""Issue 19's resource attacks, measured: a compile bomb and a review of slow naming matches.

- compile: how long ``bot.core.regex_size`` takes to refuse ``((((a{64}){64}){64}){64})`` and what
  ``regex`` would have allocated for a smaller bomb (``((a{64}){64}){64}``, compiled in a child
  process);
- budget: ``registry-bot check`` (a real process) on the corpus's ``spec/`` and the bundled naming
  files, with FILES files of EXAMPLES examples each whose component pattern is ``/(a|aa)+`` (a slow
  match every time), with ``review.time_budget_seconds: BUDGET`` on the base branch: wall time, peak
  resident memory and the reason it gives. Before the budget, such a review ran for 24 minutes.

Run: ``python benchmarks/bench_hostile_budget.py`` (``BENCH_FILES``, ``BENCH_EXAMPLES``,
``BENCH_BUDGET``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.core.regex_size import check_size, units  # noqa: E402
from bot.model.naming import bundled_folder  # noqa: E402

SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared"
)
BOMB = "((((a{64}){64}){64}){64})"
SMALLER = "((a{64}){64}){64}"
# the child's own peak (VmHWM): ru_maxrss would start at this process's, which survives exec
COMPILE_CHILD = (
    "import regex, sys; regex.compile(sys.argv[1]); "
    "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))"
)
# ``python -m bot`` that says its own peak last, on stderr, however it exits
CHECK_CHILD = (
    "import runpy, sys\n"
    "sys.argv[0] = 'bot'\n"
    "try:\n"
    "    runpy.run_module('bot', run_name='__main__', alter_sys=True)\n"
    "finally:\n"
    "    sys.stdout.flush()\n"
    "    status = open('/proc/self/status').read().splitlines()\n"
    "    print('VmHWM', next(l.split()[1] for l in status if l.startswith('VmHWM:')), "
    "file=sys.stderr)"
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@e", *args],
        check=True,
        capture_output=True,
    )


def compile_numbers() -> None:
    start = time.perf_counter()
    for _ in range(1000):
        with contextlib.suppress(ValueError):
            check_size(BOMB)
    refused = (time.perf_counter() - start) / 1000
    base = subprocess.run(
        [sys.executable, "-c", COMPILE_CHILD, "a"], capture_output=True, text=True, check=True
    )
    bomb = subprocess.run(
        [sys.executable, "-c", COMPILE_CHILD, SMALLER], capture_output=True, text=True, check=True
    )
    grown = (int(bomb.stdout) - int(base.stdout)) / 1024
    print(f"{BOMB}: {units(BOMB):,} units, refused in {refused * 1e6:.0f} us")
    print(f"{SMALLER}: {units(SMALLER):,} units; regex.compile would add {grown:.0f} MB")


def budget_numbers(files: int, examples: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(SHARED / "corpus/openlineage/spec", repo / "spec")
        shutil.copytree(bundled_folder(), repo / "spec/naming")
        (repo / ".github").mkdir()
        (repo / ".github/registry-bot.yml").write_text(
            f"review:\n  time_budget_seconds: {seconds:g}\n"
        )
        git(repo.parent, "init", "-q", "-b", "main", str(repo))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        git(repo, "checkout", "-q", "-b", "pr")
        source = json.loads(
            (repo / "spec/naming/datasets/abfss/abfss.json").read_text(encoding="utf-8")
        )
        for i in range(files):
            doc = json.loads(json.dumps(source))
            doc["id"] = f"slow{i}"
            doc["components"]["path"]["pattern"] = "/(a|aa)+"
            first = doc["examples"]["valid"][0]
            doc["examples"]["valid"] = [
                {**first, "name": "/" + "a" * 60 + f"!{j}"} for j in range(examples)
            ]
            (repo / f"spec/naming/datasets/slow{i}.json").write_text(
                json.dumps(doc, indent=2) + "\n"
            )
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "slow")
        start = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                CHECK_CHILD,
                "check",
                str(repo),
                "--base",
                "main",
                "--head",
                "pr",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        took = time.monotonic() - start
        peak = int(done.stderr.rsplit("VmHWM", 1)[-1].split()[0]) / 1024
        if not done.stdout.strip():
            raise SystemExit(done.stderr[-2000:])
        report = json.loads(done.stdout)
        reason = next(
            (f["message"] for f in report["findings"] if f["rule"] == "bot/incomplete-review"), None
        )
        print(
            f"{files} naming files x {examples} slow examples, budget {seconds:g} s: exit "
            f"{done.returncode} in {took:.1f} s, peak {peak:.0f} MB, {len(report['findings'])} "
            f"findings; reason: {reason}"
        )


def main() -> int:
    compile_numbers()
    budget_numbers(
        int(os.environ.get("BENCH_FILES", "10")),
        int(os.environ.get("BENCH_EXAMPLES", "40")),
        float(os.environ.get("BENCH_BUDGET", "30")),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
