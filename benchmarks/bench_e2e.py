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
    """``/repos/o/r/git/blobs/x`` -> ``git/blobs``, ``/repos/o/r/pulls/7/files`` -> ``pulls/files``."""
    parts = path.split("/")
    if parts[1:2] != ["repos"]:
        return parts[1]
    return "/".join(parts[4:5] + [p for p in parts[5:7] if not p.isdigit() and len(p) < 40][:1])


def wait_for_worker(log: Path, timeout: float = 30.0) -> None:
    """Until the worker's consumer runs (a deployed worker is up long before a delivery comes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and "consumer started" in log.read_text():
            return
        time.sleep(0.05)
    raise SystemExit("the worker did not start")


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
            wait_for_worker(tmp / "worker.log")
            timings: list[float] = []
            requests: list[list[str]] = []
            writes: list[int] = []
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
                made = service.state()["requests"][seen:]
                requests.append([r["path"] for r in made])
                writes.append(sum(r["method"] != "GET" for r in made))
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
    print(f"  first (the worker's first job: imports, App token) {timings[0]:.2f} s   then median "
          f"{statistics.median(timings[1:]):.2f} s   max {max(timings[1:]):.2f} s")
    print(f"  GitHub requests per review: median {statistics.median(per_review):.0f} (last run: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + f"), of which writes {writes[-1]}")
    blobs = collections.Counter(p for p in requests[-1] if "/git/blobs/" in p)
    print(f"  blobs: {len(blobs)} distinct, {sum(blobs.values()) - len(blobs)} fetched again")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
