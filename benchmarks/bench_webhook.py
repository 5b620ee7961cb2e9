"""Webhook acknowledgement under load: gunicorn (real process, SQLite queue) and a client in another
process.

The client is a separate Python process (asyncio, one new TCP connection per delivery, as GitHub
does) sending signed 28 KB ``pull_request.synchronize`` deliveries over loopback, each with its own
``X-GitHub-Delivery``, in two shapes:

- burst: ROUNDS x 200 deliveries, all 200 sent at once (each round waits for the previous one);
- steady: RATE deliveries per second arriving evenly for SECONDS, at most 200 in flight.

Prints p50/p99/max as the client sees them, the time spent inside the app (from the app's own log
line), throughput, errors and the load average. Run: ``python benchmarks/bench_webhook.py``
(``BENCH_WORKERS``/``BENCH_WORKER_CLASS``/``BENCH_THREADS`` to try other gunicorn shapes).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.service.signature import sign  # noqa: E402

# shared/ sits beside the repository (a git worktree may be one level deeper: take the nearest)
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared"
)
PAYLOAD = SHARED / "github-payloads" / "pull_request.synchronize.json"
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "200"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
RATE = float(os.environ.get("BENCH_RATE", "200"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
WORKERS = os.environ.get("BENCH_WORKERS", "")  # empty: what gunicorn.conf.py says
THREADS = os.environ.get("BENCH_THREADS", "")  # gthread only
# e.g. gthread, to compare with the front door
WORKER_CLASS = os.environ.get("BENCH_WORKER_CLASS", "")
SECRET = "bench-secret"
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the client (runs in its own process) ----------------------------------------------------------
def distinct_body() -> bytes:
    """The recorded ``synchronize`` delivery for a (random) head of its own: as GitHub's
    deliveries, no two have the same body (the web accepts a body once, whatever its delivery
    id)."""
    payload = json.loads(PAYLOAD.read_bytes())
    payload["after"] = payload["pull_request"]["head"]["sha"] = os.urandom(20).hex()
    return json.dumps(payload).encode()


def request_bytes(body: bytes, signature: str) -> bytes:
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: {signature}\r\nContent-Length: {len(body)}\r\nConnection: "
        f"close\r\n\r\n"
    )
    return head.encode() + body


async def deliver(port: int, data: bytes) -> tuple[float, int]:
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(data)
        await writer.drain()
        status = int((await reader.readline()).split()[1])
        await reader.read()  # Connection: close: the body ends with the connection
        writer.close()
    except (OSError, IndexError, ValueError):
        return time.perf_counter() - t0, 0
    return time.perf_counter() - t0, status


def signed_requests(count: int) -> list[bytes]:
    """``count`` deliveries, each of a head of its own (the web accepts a body once, whatever its
    delivery id, as GitHub never sends one body twice), signed before the clock starts."""
    bodies = [distinct_body() for _ in range(count)]
    return [request_bytes(body, sign(body, SECRET)) for body in bodies]


async def burst(port: int, requests: list[bytes]) -> list[tuple[float, int]]:
    out: list[tuple[float, int]] = []
    for r in range(ROUNDS):
        batch = requests[r * CONCURRENCY : (r + 1) * CONCURRENCY]
        out.extend(await asyncio.gather(*(deliver(port, data) for data in batch)))
    return out


async def steady(port: int, requests: list[bytes]) -> list[tuple[float, int]]:
    in_flight = asyncio.Semaphore(CONCURRENCY)
    loop = asyncio.get_running_loop()
    start = loop.time()

    async def one(at: float, data: bytes) -> tuple[float, int]:
        await asyncio.sleep(max(0.0, at - (loop.time() - start)))
        async with in_flight:
            return await deliver(port, data)

    return list(await asyncio.gather(*(one(i / RATE, r) for i, r in enumerate(requests))))


def client(port: int, mode: str) -> None:
    requests = signed_requests(ROUNDS * CONCURRENCY if mode == "burst" else int(RATE * SECONDS))
    t0 = time.perf_counter()
    results = asyncio.run((burst if mode == "burst" else steady)(port, requests))
    elapsed = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "elapsed": elapsed,
                "latencies": [r[0] for r in results],
                "statuses": [r[1] for r in results],
            }
        )
    )


# -- the driver ------------------------------------------------------------------------------------
def run_client(port: int, mode: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--client", str(port), mode],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return dict(json.loads(proc.stdout))


def server_ms(log: Path, since: int) -> list[float]:
    lines = log.read_text().splitlines()[since:]
    return sorted(
        float(json.loads(line)["ms"]) for line in lines if line.startswith("{") and '"ms"' in line
    )


def report(
    name: str, result: dict[str, object], inside: list[float], load: tuple[float, float]
) -> bool:
    latencies = sorted(float(x) for x in result["latencies"])  # type: ignore[attr-defined]
    errors = [s for s in result["statuses"] if s != 202]  # type: ignore[attr-defined]
    q = statistics.quantiles(latencies, n=100)
    print(f"{name}: {len(latencies)} deliveries")
    print(
        f"  client: p50 {q[49] * 1000:.1f} ms   p99 {q[98] * 1000:.1f} ms   max "
        f"{latencies[-1] * 1000:.1f} ms   throughput "
        f"{len(latencies) / float(result['elapsed']):.0f}/s   errors {len(errors)}"
    )  # type: ignore[arg-type]
    if len(inside) > 2:
        sq = statistics.quantiles(inside, n=100)
        print(
            f"  inside the app (verify, parse, dedupe, journal, enqueue): p50 {sq[49]:.2f} ms   "
            f"p99 {sq[98]:.2f} ms"
        )
    print(f"  load average before/after: {load[0]:.2f} / {load[1]:.2f}")
    return not errors


def main() -> int:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "GITHUB_APP_ID": "1",
            "GITHUB_APP_PRIVATE_KEY": KEY,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "BOT_QUEUE_URL": str(Path(tmp) / "q.sqlite3"),
        }
        shape = [
            *(["--workers", WORKERS] if WORKERS else []),
            *(["--threads", THREADS] if THREADS else []),
            *(["--worker-class", WORKER_CLASS] if WORKER_CLASS else []),
        ]
        log_path = Path(tmp) / "web.log"
        with log_path.open("ab") as log:
            web = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "-c",
                    str(ROOT / "gunicorn.conf.py"),
                    "--bind",
                    f"127.0.0.1:{port}",
                    *shape,
                    "bot.service.wsgi:create_app()",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=log,
            )
        ok = True
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            namespace: dict[str, object] = {}
            exec(
                compile((ROOT / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"),
                namespace,
            )
            worker_class = WORKER_CLASS or namespace["worker_class"]
            threads = (
                f" x {THREADS or namespace.get('threads', 1)} threads"
                if worker_class == "gthread"
                else ""
            )
            print(
                f"gunicorn {WORKERS or namespace['workers']} {worker_class} worker(s){threads}, "
                f"SQLite queue, {os.cpu_count()} CPUs, client: a second process (asyncio) on "
                f"loopback"
            )
            for mode, name in (
                ("burst", f"burst: {ROUNDS} rounds of {CONCURRENCY} at once"),
                (
                    "steady",
                    f"steady: {RATE:g}/s for {SECONDS:g} s, at most {CONCURRENCY} in flight",
                ),
            ):
                time.sleep(1.0)
                since = len(log_path.read_text().splitlines())
                before = os.getloadavg()[0]
                result = run_client(port, mode)
                time.sleep(0.2)
                ok &= report(name, result, server_ms(log_path, since), (before, os.getloadavg()[0]))
        finally:
            web.terminate()
            web.wait(10)
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--client":
        client(int(sys.argv[2]), sys.argv[3])
        raise SystemExit(0)
    raise SystemExit(main())
