"""The sweep's cost as the history grows: ``JobQueue.recover()`` with 10k, 100k and 300k finished
jobs.

Every worker runs ``recover()`` every ``--sweep-every`` seconds (10). It used to read the whole
journal, a ``done`` entry per delivery ever received (0.33-0.47 s at 10,000 entries, 7-12 s at
300,000 on Redis): now a finished job leaves a done mark outside the journal
(``bot.service.done_marks``) and the sweep reads the open jobs only. The history is written with the
queue's own scripts and statements (the accept and the done mark of each delivery, pipelined on
Redis, one transaction on SQLite), then 100 open jobs are accepted, and ``recover()`` is timed
(median of ``BENCH_RUNS``, default 5), on Redis (a ``redis-server`` is started here) and on SQLite.
Prints the load average beside each figure. Run: ``python benchmarks/bench_history.py``
(``BENCH_SIZES=10000,100000`` to choose the sizes).
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
import redis  # noqa: E402

from bot.github.events import Job  # noqa: E402
from bot.service.done_marks import RedisDoneMarks  # noqa: E402
from bot.service.queue import JobQueue, make_huey  # noqa: E402

SIZES = [int(n) for n in os.environ.get("BENCH_SIZES", "10000,100000,300000").split(",")]
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
OPEN = 100
BATCH = 5000


def job(n: int) -> Job:
    return Job(f"delivery-{n}", "pull_request", "synchronize", 1, f"org/repo-{n % 50}", n, "a" * 40)


def record(j: Job, now: float) -> bytes:
    return orjson.dumps({"job": j, "at": now})


def fill_redis(queue: JobQueue, start: int, stop: int) -> None:
    marks = queue._done
    assert isinstance(marks, RedisDoneMarks)
    storage = queue.huey.storage
    now = time.time()
    for first in range(start, stop, BATCH):
        pipe = storage.conn.pipeline(transaction=False)
        for n in range(first, min(stop, first + BATCH)):
            j = job(n)
            marks._accept(
                keys=[storage.result_key, marks.key(j.delivery)],
                args=[f"job:{j.delivery}", record(j, now)],
                client=pipe,
            )
            pipe.hset(storage.result_key, f"latest:{j.pr_key}", j.delivery)
            marks._mark(
                keys=[storage.result_key, marks.key(j.delivery)],
                args=[
                    f"job:{j.delivery}",
                    f"latest:{j.pr_key}",
                    j.delivery,
                    f"{now:.0f}",
                    int(marks.ttl),
                ],
                client=pipe,
            )
        pipe.execute()


def fill_sqlite(queue: JobQueue, start: int, stop: int) -> None:
    storage = queue.huey.storage
    now = f"{time.time():.0f}".encode()
    with storage.db(commit=True) as curs:  # the rows ``SqliteDoneMarks.mark`` leaves
        curs.executemany(
            "insert or replace into kv (queue, key, value) values (?, ?, ?)",
            ((storage.name, f"done:{job(n).delivery}", now) for n in range(start, stop)),
        )


def timed_recover(queue: JobQueue) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        queue.recover()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(name: str, url: str, fill: object) -> None:
    queue = JobQueue(make_huey(url, name="bench-history"))
    try:
        done = 0
        for n in range(OPEN):
            queue.accept(job(10_000_000 + n))
        for size in SIZES:
            started = time.perf_counter()
            fill(queue, done, size)  # type: ignore[operator]
            filled = time.perf_counter() - started
            done = size
            if not (
                queue.is_done(job(0).delivery)
                and queue.is_done(job(size - 1).delivery)
                and len(queue._done.open_jobs()) == OPEN
            ):
                raise SystemExit(f"{name}: the history was not written as the queue writes it")
            seconds = timed_recover(queue)
            if queue.pending() != OPEN:
                raise SystemExit(f"{name}: recover() re-enqueued a job it should have left")
            load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
            print(
                f"{name:6} {size:>7,} done + {OPEN} open: recover() {seconds * 1000:7.1f} ms "
                f"(history written in {filled:.0f} s; load average {load})",
                flush=True,
            )
    finally:
        queue.close()


def main() -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (`make system-deps`)")
    with tempfile.TemporaryDirectory() as folder:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--dir",
                folder,
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    redis.Redis.from_url(url).ping()
                    break
                except redis.exceptions.ConnectionError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            measure("redis", url, fill_redis)
        finally:
            server.terminate()
            server.wait(timeout=10)
        measure("sqlite", str(Path(folder) / "queue.sqlite3"), fill_sqlite)


if __name__ == "__main__":
    main()
