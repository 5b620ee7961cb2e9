"""GitHub's write pacing with several worker processes: each process's own pacer versus the Redis
one.

Three "processes" (each its own ``AppClientFactory``, so nothing in memory is shared, as between
worker processes) of two threads each write to one installation of the stand-in GitHub
(``tests/standin/fleet.py``, ``BENCH_LATENCY`` seconds per request, default 0.1) through the real
client: each thread reads a pull request, then creates a comment, ``BENCH_WRITES`` times (default
5). The stand-in logs every write with its gap to the previous one and flags a write arriving less
than 1 s after the previous one ended, or while another is in flight. ``local``: each process paces
its own writes (``WritePacer``, what two workers on one Redis did before); ``redis``: every process
shares ``RedisPacer`` (a ``redis-server`` is started here). Run: ``python
benchmarks/bench_pacing.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bot.github.client import AppClientFactory  # noqa: E402
from bot.github.pacing import RedisPacer  # noqa: E402
from tests.gitrepo import Repo  # noqa: E402
from tests.standin.fleet import Fleet  # noqa: E402

PROCESSES, THREADS = 3, 2
WRITES = int(os.environ.get("BENCH_WRITES", "5"))
LATENCY = float(os.environ.get("BENCH_LATENCY", "0.1"))
REPO = "registry/repo"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(mode: str, repo: Path, redis_url: str) -> dict[str, float]:
    fleet = Fleet(str(repo), "main", "pr", {REPO: 1}, latency=LATENCY, write_pause=1.0).start()
    url = f"http://127.0.0.1:{fleet.port}"
    client = redis.Redis.from_url(redis_url)
    prefix = f"bench-{time.monotonic_ns()}"
    factories = [
        AppClientFactory(
            1,
            fleet.private_key_pem,
            url,
            slug="registry-bot",
            seconds_between_writes=1.0,
            pacers=(lambda inst: RedisPacer(client, inst, 1.0, prefix=prefix))
            if mode == "redis"
            else None,
        )
        for _ in range(PROCESSES)
    ]

    def work(factory: AppClientFactory) -> None:
        gh = factory.for_installation(1)
        for n in range(WRITES):
            gh.get_pull_request(REPO, fleet.number(REPO))
            gh.create_issue_comment(REPO, fleet.number(REPO), f"comment {n}")

    threads = [threading.Thread(target=work, args=(f,)) for f in factories for _ in range(THREADS)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    pacing = fleet.pacing[1]
    gaps = [w["gap"] for w in pacing.writes if w["gap"] is not None]
    fleet.stop()
    client.close()
    return {
        "writes": len(pacing.writes),
        "violations": len(pacing.violations),
        "concurrent": sum(1 for w in pacing.writes if w["concurrent"]),
        "min_gap": min(gaps, default=0.0),
        "seconds": elapsed,
    }


def main() -> int:
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo.from_folder(ROOT / "registry", Path(tmp) / "repo")
        repo.change({"x.json": "{}\n"})
        port = free_port()
        server = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                tmp,
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.5)
            print(
                f"{PROCESSES} processes x {THREADS} threads, {WRITES} writes each, "
                f"{LATENCY * 1000:.0f} ms per request"
            )
            print(
                "| pacer | writes | < 1 s after the previous | concurrent | smallest gap (not "
                "concurrent) | seconds |"
            )
            print("| --- | --- | --- | --- | --- | --- |")
            for mode in ("local", "redis"):
                r = run(mode, repo.path, f"redis://127.0.0.1:{port}/0")
                print(
                    f"| {mode} | {r['writes']:.0f} | {r['violations']:.0f} | {r['concurrent']:.0f} "
                    f"| {r['min_gap']:.3f} s | {r['seconds']:.1f} |"
                )
        finally:
            server.terminate()
            server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
