"""Slow clients and hostile floods against the webhook front door: gunicorn (real process) on
loopback.

Two scenarios, each against a fresh gunicorn started with the repository's ``gunicorn.conf.py``:

- slow: SLOW connections (half dribbling their headers, half their body, 1 byte a second, each
  reopened as soon as the server drops it, as a slowloris does) stay open while HONEST signed
  ``pull_request`` deliveries arrive, one every 0.25 s, each on a new connection; a delivery counts
  as accepted when it gets its 202 within GitHub's 10 s.
- flood: FLOOD unsigned POSTs with random ``X-GitHub-Event`` names (16 keep-alive connections), then
  the size of ``/metrics`` and the resident memory of the gunicorn workers.

Run: ``python benchmarks/bench_slow_clients.py`` (``BENCH_WORKER_CLASS``, ``BENCH_WORKERS``,
``BENCH_THREADS`` try other gunicorn shapes; ``BENCH_SLOW``, ``BENCH_HONEST``, ``BENCH_FLOOD`` the
sizes). ``tests/test_front_door.py`` runs the same scenarios, smaller, in ``make test``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# (the same service settings)
from benchmarks.bench_webhook import KEY, SECRET, distinct_body, free_port  # noqa: E402
from bot.service.signature import sign  # noqa: E402

GITHUB_TIMEOUT = 10.0  # GitHub gives up on a delivery after 10 s and does not redeliver it


# -- the server ------------------------------------------------------------------------------------
@dataclass
class Gunicorn:
    """A gunicorn process on a free loopback port; ``args`` go after the repository's config
    file."""

    tmp: Path
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # added to the environment
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.tmp / "web.log"

    def start(self) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "GITHUB_APP_ID": "1",
            "GITHUB_APP_PRIVATE_KEY": KEY,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "BOT_QUEUE_URL": str(self.tmp / "queue.sqlite3"),
            **self.env,
        }
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "-c",
                    str(ROOT / "gunicorn.conf.py"),
                    "--bind",
                    f"127.0.0.1:{self.port}",
                    *self.args,
                    "bot.service.wsgi:create_app()",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + 30
        while self.get("/healthz")[0] != 200:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn did not start: {self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
            self.proc = None

    def workers(self) -> list[int]:
        assert self.proc is not None
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []

    def worker_rss_mb(self) -> list[float]:
        """Resident memory of each gunicorn worker, in MB."""
        out = []
        for pid in self.workers():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out.append(int(line.split()[1]) / 1024)
        return out

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                sock.sendall(
                    f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
                )
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        except OSError:
            return 0, b""
        raw = b"".join(chunks)
        head, _, body = raw.partition(b"\r\n\r\n")
        try:
            return int(head.split(b" ", 2)[1]), body
        except (IndexError, ValueError):
            return 0, b""


@contextmanager
def gunicorn(tmp: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Gunicorn]:
    server = Gunicorn(tmp, tuple(args), env or {})
    server.start()
    try:
        yield server
    finally:
        server.stop()


# -- the clients -----------------------------------------------------------------------------------
def signed_delivery(
    body: bytes, event: str = "pull_request", secret: str = SECRET, keep_alive: bool = False
) -> bytes:
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: {event}\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: {sign(body, secret)}\r\nContent-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response with a Content-Length (what gunicorn sends for the app's answers)."""
    status = int((await reader.readline()).split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def deliver(port: int, data: bytes, timeout: float = GITHUB_TIMEOUT) -> tuple[float, int]:
    """(seconds, status) of one delivery on its own connection, as GitHub sends it; status 0 when it
    failed or took longer than ``timeout``."""
    t0 = time.perf_counter()

    async def one() -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(data)
            await writer.drain()
            return (await read_response(reader))[0]
        finally:
            writer.close()

    try:
        status = await asyncio.wait_for(one(), timeout)
    except (OSError, TimeoutError, IndexError, ValueError, asyncio.IncompleteReadError):
        status = 0
    return time.perf_counter() - t0, status


@dataclass
class SlowStats:
    connections: int = 0  # connections opened (a dropped one is reopened at once)
    dropped: int = 0  # connections the server closed before the client finished sending
    # status the server answered a dropped one with
    answers: dict[int, int] = field(default_factory=dict)


async def slow_client(
    port: int, mode: str, stop: asyncio.Event, stats: SlowStats, rate: float = 1.0
) -> None:
    """Keep one connection open that sends ``rate`` bytes a second: of its headers
    (``mode="headers"``) or, after complete headers announcing 28 KB, of its body (``"body"``).
    Reopened when dropped."""
    body = b"{" + b" " * 28_000 + b"}"
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        stats.connections += 1
        # completes when the server closes (or answers)
        closed = asyncio.ensure_future(reader.read())
        try:
            if mode == "body":
                writer.write(head)
            data = head if mode == "headers" else body
            for i in range(len(data)):
                writer.write(data[i : i + 1])
                await writer.drain()
                done = await asyncio.wait(
                    [closed, asyncio.ensure_future(stop.wait())],
                    timeout=1 / rate,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if closed in done[0]:
                    stats.dropped += 1
                    answer = closed.result().split(b" ", 2)
                    status = int(answer[1]) if len(answer) > 1 and answer[1].isdigit() else 0
                    stats.answers[status] = stats.answers.get(status, 0) + 1
                    break
                if stop.is_set():
                    break
        except OSError:
            stats.dropped += 1
        finally:
            closed.cancel()
            writer.close()


async def slow_scenario(
    port: int, slow: int, honest: int, warmup: float = 2.0, spacing: float = 0.25
) -> dict[str, object]:
    """``slow`` slow connections open, then ``honest`` signed deliveries ``spacing`` s apart."""
    stop = asyncio.Event()
    stats = SlowStats()
    slow_tasks = [
        asyncio.ensure_future(slow_client(port, ("headers", "body")[i % 2], stop, stats))
        for i in range(slow)
    ]
    await asyncio.sleep(warmup)

    async def at(n: int) -> tuple[float, int]:
        await asyncio.sleep(n * spacing)
        return await deliver(port, signed_delivery(distinct_body()))

    results = await asyncio.gather(*(at(n) for n in range(honest)))
    stop.set()
    await asyncio.gather(*slow_tasks, return_exceptions=True)
    latencies = sorted(seconds for seconds, status in results if status == 202)
    return {
        "slow": slow,
        "honest": honest,
        "accepted": len(latencies),
        "statuses": sorted(status for _, status in results),
        "p50": statistics.median(latencies) if latencies else None,
        "max": latencies[-1] if latencies else None,
        "slow_connections": stats.connections,
        "slow_dropped": stats.dropped,
        "slow_answers": stats.answers,
    }


def random_event() -> str:
    return "".join(random.choices(string.ascii_lowercase + "_", k=random.randint(8, 40)))


async def flood(
    port: int, count: int, connections: int = 16, seconds: float = 60.0
) -> dict[str, object]:
    """``count`` unsigned POSTs with random event names over keep-alive connections (stops after
    ``seconds``)."""
    sent = 0
    statuses: dict[int, int] = {}
    deadline = time.monotonic() + seconds

    async def connection() -> None:
        nonlocal sent
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while sent < count and time.monotonic() < deadline:
                sent += 1
                body = b'{"zen": "hostile"}'
                writer.write(
                    (
                        f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                        f"application/json\r\nX-GitHub-Event: "
                        f"{random_event()}\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\nContent-Length: "
                        f"{len(body)}\r\n\r\n"
                    ).encode()
                    + body
                )
                status, _ = await read_response(reader)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(connections)))
    return {"sent": sent, "statuses": statuses, "seconds": time.perf_counter() - t0}


# -- the driver ------------------------------------------------------------------------------------
def shape_args() -> list[str]:
    args = []
    for env, flag in (
        ("BENCH_WORKER_CLASS", "--worker-class"),
        ("BENCH_WORKERS", "--workers"),
        ("BENCH_THREADS", "--threads"),
    ):
        if os.environ.get(env):
            args += [flag, os.environ[env]]
    return args


def main() -> int:
    slow = int(os.environ.get("BENCH_SLOW", "50"))
    honest = int(os.environ.get("BENCH_HONEST", "40"))
    count = int(os.environ.get("BENCH_FLOOD", "20000"))
    args = shape_args()
    namespace: dict[str, object] = {}
    exec(compile((ROOT / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), namespace)
    threads = f" x {namespace['threads']} threads" if namespace["worker_class"] == "gthread" else ""
    print(
        f"gunicorn.conf.py: {namespace['workers']} {namespace['worker_class']} worker(s){threads}"
        f"{', overridden by ' + ' '.join(args) if args else ''}; {os.cpu_count()} CPUs, loopback"
    )
    ok = True
    with tempfile.TemporaryDirectory() as tmp, gunicorn(Path(tmp), *args) as web:
        result = asyncio.run(slow_scenario(web.port, slow, honest))
        p50, worst = result["p50"], result["max"]
        print(
            f"slow: {slow} slow connections (1 byte/s, reopened when dropped; "
            f"{result['slow_connections']} opened, {result['slow_dropped']} dropped by the server, "
            f"answers {result['slow_answers']})"
        )
        print(
            f"  honest deliveries answered 202 within {GITHUB_TIMEOUT:g} s: "
            f"{result['accepted']}/{honest}   "
            + (
                f"p50 {float(p50) * 1000:.0f} ms   max {float(worst) * 1000:.0f} ms"
                if p50 is not None
                else ""
            )
        )  # type: ignore[arg-type]
        ok &= result["accepted"] == honest
    with tempfile.TemporaryDirectory() as tmp, gunicorn(Path(tmp), *args) as web:
        size_before = len(web.get("/metrics")[1])
        rss_before = web.worker_rss_mb()
        outcome = asyncio.run(flood(web.port, count))
        size_after = len(web.get("/metrics")[1])
        rss_after = web.worker_rss_mb()
        print(
            f"flood: {outcome['sent']} unsigned POSTs with random event "
            f"names in {float(outcome['seconds']):.1f} s "  # type: ignore[arg-type]
            f"(statuses {outcome['statuses']})"
        )
        print(
            f"  /metrics {size_before / 1024:.1f} KB -> {size_after / 1024:.1f} KB; worker RSS "
            f"{' '.join(f'{m:.0f}' for m in rss_before)} MB -> "
            f"{' '.join(f'{m:.0f}' for m in rss_after)} MB"
        )
        ok &= size_after < 16 * 1024
    print(json.dumps({"ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
