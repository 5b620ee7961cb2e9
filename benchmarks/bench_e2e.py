"""Delivery to completed check run for the end-to-end pull request (no Spark regression).

Starts the stand-in GitHub, gunicorn and the worker as real processes (as ``tests/test_e2e.py`` does),
sends RUNS signed ``pull_request.opened`` deliveries one after another and times each until its check
run is completed with the summary posted. Run: ``python benchmarks/bench_e2e.py``.
"""

from __future__ import annotations

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


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    try:
        repo = Repo.from_folder(CORPUS, tmp / "repo")
        repo.change({ENTRY: broken_entry()}, "add a facet")
        head = git(repo.path, "rev-parse", "pr")
        service = Service(tmp)
        try:
            service.start(repo.path)
            timings = []
            for _ in range(RUNS):
                before = len([r for r in service.state()["check_runs"] if r["status"] == "completed"])
                t0 = time.perf_counter()
                assert service.deliver("opened", head) == 202
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    state = service.state()
                    if len([r for r in state["check_runs"] if r["status"] == "completed"]) > before:
                        break
                    time.sleep(0.02)
                timings.append(time.perf_counter() - t0)
        finally:
            service.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"delivery -> completed check run: {RUNS} runs, corpus PR changing one registry entry, "
          f"worker with the test checks (--checks tests.fakes:FAKE_CHECKS), writes unpaced, {os.cpu_count()} CPUs")
    print(f"  median {statistics.median(timings):.2f} s   max {max(timings):.2f} s   first {timings[0]:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
