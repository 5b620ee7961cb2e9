"""Webhook acknowledgement under load: gunicorn (real process, SQLite queue) and a client in another process.

Sends ROUNDS x CONCURRENCY signed ``pull_request.synchronize`` deliveries, CONCURRENCY at once, over
loopback, and prints p50, p99 and throughput. Run: ``python benchmarks/bench_webhook.py``.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.app.signature import sign  # noqa: E402

PAYLOAD = ROOT.parent / "shared" / "github-payloads" / "pull_request.synchronize.json"
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "200"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECRET = "bench-secret"
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(port: int, body: bytes, out: list[float], errors: list[str], start: threading.Event) -> None:
    headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": str(uuid.uuid4()),
               "X-Hub-Signature-256": sign(body, SECRET), "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start.wait(10)
    t0 = time.perf_counter()
    try:
        conn.request("POST", "/webhook", body, headers)
        response = conn.getresponse()
        response.read()
        if response.status != 202:
            errors.append(str(response.status))
        out.append(time.perf_counter() - t0)
    except OSError as exc:
        errors.append(repr(exc))
    finally:
        conn.close()


def main() -> int:
    body = PAYLOAD.read_bytes()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": KEY,
               "GITHUB_WEBHOOK_SECRET": SECRET, "BOT_QUEUE_URL": str(Path(tmp) / "q.sqlite3")}
        with (Path(tmp) / "web.log").open("ab") as log:
            web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py"),
                                    "--bind", f"127.0.0.1:{port}", "bot.web:create_app()"],
                                   cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            latencies: list[float] = []
            errors: list[str] = []
            t0 = time.perf_counter()
            for _ in range(ROUNDS):
                start = threading.Event()
                threads = [threading.Thread(target=post, args=(port, body, latencies, errors, start))
                           for _ in range(CONCURRENCY)]
                for t in threads:
                    t.start()
                start.set()
                for t in threads:
                    t.join(30)
            elapsed = time.perf_counter() - t0
        finally:
            web.terminate()
            web.wait(10)
        server_ms = sorted(float(json.loads(line)["ms"]) for line in (Path(tmp) / "web.log").read_text().splitlines()
                           if line.startswith("{") and '"ms"' in line)
    latencies.sort()
    q = statistics.quantiles(latencies, n=100)
    print(f"webhook ack: {len(latencies)} deliveries, {CONCURRENCY} concurrent, {ROUNDS} rounds, "
          f"gunicorn 2 gthread workers x 8 threads, SQLite queue, {os.cpu_count()} CPUs")
    print(f"  p50 {q[49] * 1000:.1f} ms   p99 {q[98] * 1000:.1f} ms   max {latencies[-1] * 1000:.1f} ms")
    if len(server_ms) > 2:
        sq = statistics.quantiles(server_ms, n=100)
        print(f"  inside the app (verify, parse, dedupe, journal, enqueue): p50 {sq[49]:.1f} ms   p99 {sq[98]:.1f} ms")
    print(f"  throughput {len(latencies) / elapsed:.0f} deliveries/s   errors {len(errors)} {sorted(set(errors))[:3]}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
