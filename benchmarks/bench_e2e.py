"""Delivery to completed check run for the end-to-end pull request (no Spark regression).

Starts the stand-in GitHub, gunicorn and the worker as real processes (as ``tests/test_e2e.py`` does),
sends RUNS signed ``pull_request.opened`` deliveries one after another and times each until its check
run is completed, with the GitHub requests each review made (from the stand-in's request log).
``BENCH_CHECKS=real`` (default) runs the bot's own checks, ``fake`` the test check of ``tests/fakes.py``.
Run: ``python benchmarks/bench_e2e.py``.
"""

from __future__ import annotations

import collections
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import CORPUS  # noqa: E402
from tests.gitrepo import Repo, git  # noqa: E402
from tests.test_e2e import Service  # noqa: E402
from tests.test_pipeline import ENTRY, broken_entry  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "10"))
CHECKS = os.environ.get("BENCH_CHECKS", "real")


class RealChecksService(Service):
    """The end-to-end service, its worker running ``bot.checks.CHECKS`` instead of the test check."""

    def start_worker(self) -> None:
        self._spawn("worker", [sys.executable, "-m", "bot.app.worker", "--write-pause", "0", "--poll", "0.05"])


def kind(path: str) -> str:
    parts = path.split("/")
    if "git" in parts:
        return f"git/{parts[parts.index('git') + 1]}"
    if "check-runs" in parts:
        return "check-runs"
    return parts[5] if len(parts) > 5 and parts[1] == "repos" else parts[1]


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    load = [os.getloadavg()[0]]
    try:
        repo = Repo.from_folder(CORPUS, tmp / "repo")
        repo.change({ENTRY: broken_entry()}, "add a facet")
        head = git(repo.path, "rev-parse", "pr")
        service = (RealChecksService if CHECKS == "real" else Service)(tmp)
        try:
            service.start(repo.path)
            timings: list[float] = []
            requests: list[list[str]] = []
            for _ in range(RUNS):
                state = service.state()
                before = len([r for r in state["check_runs"] if r["status"] == "completed"])
                seen = len(state["requests"])
                t0 = time.perf_counter()
                assert service.deliver("opened", head) == 202
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    state = service.state()
                    if len([r for r in state["check_runs"] if r["status"] == "completed"]) > before:
                        break
                    time.sleep(0.02)
                timings.append(time.perf_counter() - t0)
                time.sleep(0.5)  # let the review and summary of this run be published before the next
                requests.append([r["path"] for r in service.state()["requests"][seen:]])
        finally:
            service.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load.append(os.getloadavg()[0])
    per_review = [len(r) for r in requests]
    kinds = collections.Counter(kind(p) for p in requests[-1])
    print(f"delivery -> completed check run: {RUNS} runs, corpus PR changing one registry entry, "
          f"{'the bot checks' if CHECKS == 'real' else 'the test check (tests.fakes:FAKE_CHECKS)'}, "
          f"writes unpaced, {os.cpu_count()} CPUs, load average {load[0]:.2f} -> {load[1]:.2f}")
    print(f"  median {statistics.median(timings):.2f} s   max {max(timings):.2f} s   first {timings[0]:.2f} s")
    print(f"  GitHub requests per review: median {statistics.median(per_review):.0f} (last run: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
