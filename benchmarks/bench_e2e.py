"""Delivery to completed check run for the end-to-end pull request (no Spark regression), at
GitHub's latency.

Starts the stand-in GitHub, gunicorn and the worker as real processes (as ``tests/test_e2e.py``
does). The stand-in answers each request ``BENCH_LATENCY`` seconds late (default 0.1: real GitHub
takes 0.05-0.3) and flags writes that break GitHub's pacing; the worker paces its writes
``BENCH_WRITE_PAUSE`` seconds apart (default 1, GitHub's advice). The first delivery opens the pull
request (the worker's first job: imports, App token); each of the next ``BENCH_RUNS`` pushes a new
head (the entry broken another way) and delivers ``synchronize``, so every review is a fresh one
that publishes everything (check run, review, summary). Each is timed to its completed check run and
to its summary comment, with the GitHub requests it made (from the stand-in's request log).
``BENCH_CHECKS=real`` (default) runs the bot's own checks, ``fake`` the test check of
``tests/fakes.py``. Run: ``python benchmarks/bench_e2e.py``.

Then the approval latency of delegated ownership (``BENCH_APPROVALS`` rounds, default 5; 0 skips
it): on the repository of ``tests/delegation_repo.py`` (an entry owned by a login without write
access, ``main`` protected, a required ``ci`` check that never reports so nothing merges), each
round pushes a new head, lets the bot review it, has the owner approve it, and times the
``pull_request_review`` delivery to the bot's APPROVE review of that head (GitHub delivers the
webhook as the owner approves).
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import CORPUS  # noqa: E402
from tests.gitrepo import Repo, git  # noqa: E402
from tests.test_e2e import Service  # noqa: E402
from tests.test_pipeline import ENTRY, broken_entry  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "8"))
CHECKS = os.environ.get("BENCH_CHECKS", "real")
LATENCY = float(os.environ.get("BENCH_LATENCY", "0.1"))
WRITE_PAUSE = float(os.environ.get("BENCH_WRITE_PAUSE", "1.0"))
APPROVALS = int(os.environ.get("BENCH_APPROVALS", "5"))


class BenchService(Service):
    """The end-to-end service at GitHub's latency; its worker paces writes and runs the bot's checks
    (``BENCH_CHECKS=real``) or the test check."""

    def start_worker(self) -> None:
        checks = (
            ("--checks", "tests.fakes:FAKE_CHECKS", "--no-regression") if CHECKS != "real" else ()
        )
        self._spawn(
            "worker",
            [
                sys.executable,
                "-m",
                "bot.service.worker",
                *checks,
                "--write-pause",
                str(WRITE_PAUSE),
                "--poll",
                "0.05",
            ],
        )


def kind(path: str) -> str:
    """``/repos/o/r/git/blobs/x`` -> ``git/blobs``, ``/repos/o/r/pulls/7/files`` ->
    ``pulls/files``."""
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


def review(service: Service, action: str, head: str) -> dict[str, Any]:
    """Deliver ``action`` for ``head``; time its completed check run and its summary comment."""
    state = service.state()
    pacing = state["pacing"]
    seen, writes_seen, flagged = (
        len(state["requests"]),
        len(pacing["writes"]),
        len(pacing["violations"]),
    )
    t0 = time.perf_counter()
    assert service.deliver(action, head) == 202
    completed = published = None
    deadline = time.monotonic() + 120
    while published is None and time.monotonic() < deadline:
        state = service.state()
        if completed is None and any(
            r["head_sha"] == head and r["status"] == "completed" for r in state["check_runs"]
        ):
            completed = time.perf_counter() - t0
        if any(
            head[:12] in c["body"] and "registry-bot:summary" in c["body"]
            for c in state["issue_comments"]
        ):
            published = time.perf_counter() - t0
        time.sleep(0.02)
    if completed is None or published is None:
        raise SystemExit(f"the review of {head[:12]} did not finish")
    # the summary's answer, nothing after it, and GitHub's pause since this review's last write, so
    # that the next delivery does not wait for this one's pacing (pushes come seconds apart, not at
    # once)
    time.sleep(max(2 * LATENCY + 0.2, WRITE_PAUSE))
    state = service.state()
    return {
        "completed": completed,
        "published": published,
        "paths": [r["path"] for r in state["requests"][seen:]],
        "writes": len(state["pacing"]["writes"]) - writes_seen,
        "violations": state["pacing"]["violations"][flagged:],
    }


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    load = [os.getloadavg()[0]]
    try:
        repo = Repo.from_folder(CORPUS, tmp / "repo")
        repo.change({ENTRY: broken_entry()}, "add a facet")
        heads = []
        for i in range(RUNS):  # each run reviews a new head: the entry broken another way
            repo.write(ENTRY, broken_entry(f"Missing{i}.json"))
            repo.commit(f"push {i}", branch=f"push{i}")
            heads.append(git(repo.path, "rev-parse", f"push{i}"))
        service = BenchService(
            tmp, standin_args=("--latency", str(LATENCY), "--write-pause", str(WRITE_PAUSE))
        )
        try:
            service.start(repo.path)
            wait_for_worker(tmp / "worker.log")
            first = review(service, "opened", git(repo.path, "rev-parse", "pr"))
            runs = []
            for head in heads:
                service.push(head)
                runs.append(review(service, "synchronize", head))
        finally:
            service.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load.append(os.getloadavg()[0])
    report(first, runs, load)
    if APPROVALS:
        approval_latency()
    return 0


def approval_latency() -> None:
    from tests.delegation_repo import AUTHOR, DATAPROC, DATAPROC_OWNER, build
    from tests.test_e2e_delegation import BOT, deliver_review

    tmp = Path(tempfile.mkdtemp(prefix="bench-approval-"))
    load = [os.getloadavg()[0]]
    times: list[float] = []
    before: list[list[str]] = []  # each round's requests up to the bot's approval
    try:
        repo = build(CORPUS, tmp / "repo")
        heads = []
        git(repo.path, "checkout", "-q", "pr")
        for i in range(APPROVALS):
            repo.edit_json(
                f"{DATAPROC}/registry.json",
                lambda data, i=i: data["producer"].update(  # type: ignore[index]
                    root_doc_URL=f"https://example.com/dataproc/{i}"
                ),
            )
            heads.append(repo.commit(f"round {i}", branch="pr"))
        service = BenchService(
            tmp,
            standin_args=(
                "--latency",
                str(LATENCY),
                "--write-pause",
                str(WRITE_PAUSE),
                "--author",
                AUTHOR,
                "--protect",
                "--required-check",
                "ci",
            ),
        )
        try:
            service.start(repo.path)
            wait_for_worker(tmp / "worker.log")
            for i, head in enumerate(heads):
                service.push(head)
                review(service, "opened" if i == 0 else "synchronize", head)
                service.approve(DATAPROC_OWNER)
                seen = len(service.state()["requests"])
                t0 = time.perf_counter()
                deliver_review(service, "submitted", head, DATAPROC_OWNER, "approved")
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    if any(
                        r["user"] == BOT and r["event"] == "APPROVE" and r["commit_id"] == head
                        for r in service.state()["reviews"]
                    ):
                        times.append(time.perf_counter() - t0)
                        requests = service.state()["requests"][seen:]
                        approve = next(
                            i
                            for i, r in enumerate(requests)
                            if r["method"] == "POST" and r["path"].endswith("/reviews")
                        )
                        before.append(
                            [f"{r['method']} {kind(r['path'])}" for r in requests[: approve + 1]]
                        )
                        break
                    time.sleep(0.02)
                else:
                    raise SystemExit(f"the bot did not approve {head[:12]}")
                # the rest of that review (review, summary)
                time.sleep(max(2 * LATENCY + 0.2, WRITE_PAUSE))
        finally:
            service.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load.append(os.getloadavg()[0])
    print(
        f"owner's approval -> the bot's approval (delegated ownership), {len(times)} rounds, "
        f"{LATENCY * 1000:.0f} ms per GitHub request, writes {WRITE_PAUSE:g} s apart, load average "
        f"{load[0]:.2f} -> {load[1]:.2f}: median {statistics.median(times):.2f} s, max "
        f"{max(times):.2f} s"
    )
    last = before[-1]
    print(f"  the bot's approval is its request {len(last)} of the review: {', '.join(last)}")


def report(first: dict[str, Any], runs: list[dict[str, Any]], load: list[float]) -> None:
    def median(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(
        f"delivery -> completed check run: corpus PR changing one registry entry, "
        f"{'the bot checks' if CHECKS == 'real' else 'the test check (tests.fakes:FAKE_CHECKS)'}, "
        f"{LATENCY * 1000:.0f} ms per GitHub request, writes {WRITE_PAUSE:g} s apart, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f} -> {load[1]:.2f}"
    )
    for label, run in (("opened (the worker's first job: imports, App token)", first),):
        # the App's token and GET /app, once per process
        once = [p for p in run["paths"] if p.startswith("/app")]
        print(
            f"  {label}: check run completed {run['completed']:.2f} s, everything published "
            f"{run['published']:.2f} s, {len(run['paths']) - len(once)} requests ({run['writes']} "
            f"writes) and {len(once)} once per worker process (the App's token, GET /app)"
        )
    print(
        f"  {len(runs)} pushes (synchronize): check run completed median {median('completed'):.2f} "
        f"s, max {max(r['completed'] for r in runs):.2f} s; everything published median "
        f"{median('published'):.2f} s"
    )
    last = runs[-1]
    kinds = collections.Counter(kind(p) for p in last["paths"])
    print(
        f"  GitHub requests per review: median "
        f"{statistics.median(len(r['paths']) for r in runs):.0f} (last: "
        + ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        + f"), of which writes {last['writes']}"
    )
    broken = first["violations"] + [v for r in runs for v in r["violations"]]
    print(f"  writes breaking GitHub's pacing: {len(broken)}")
    for v in broken[:5]:
        when = (
            "during another write"
            if v["concurrent"]
            else f"{v['gap']:.2f} s after the previous one"
        )
        print(f"    {v['method']} {v['path']} {when}")


if __name__ == "__main__":
    raise SystemExit(main())
