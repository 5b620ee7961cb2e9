"""kill -9 of the web process: every delivery answered 202 is still in the queue and gets processed.

gunicorn (master and workers) is killed with SIGKILL right after the last 202, with no chance to
flush anything; a new gunicorn starts on the same SQLite queue, then the worker side of the queue
processes what it finds. SQLite runs in WAL mode with ``synchronous=NORMAL``: a commit is in the
WAL file (the kernel's page cache) before the 202 is sent, which a killed process cannot undo.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.events import Job
from bot.service.queue import JobQueue
from bot.service.signature import sign
from tests import conformance
from tests.conftest import PAYLOADS, ROOT

pytestmark = pytest.mark.e2e
SECRET = "durability-secret"
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"
DELIVERIES = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Web:
    """gunicorn with 2 workers over one SQLite queue file."""

    def __init__(self, tmp: Path) -> None:
        self.queue_file = tmp / "queue.sqlite3"
        self.log = tmp / "web.log"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "GITHUB_APP_ID": "1",
            "GITHUB_APP_PRIVATE_KEY": KEY,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "BOT_QUEUE_URL": str(self.queue_file),
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
                    "--workers",
                    "2",
                    "bot.service.wsgi:create_app()",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + 20
        while self.get("/readyz")[0] != 200:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"gunicorn did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)
        while len(self.workers()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)

    def workers(self) -> list[int]:
        assert self.proc is not None
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []

    def kill9(self) -> list[int]:
        """SIGKILL the master and every worker at once; returns the pids killed."""
        assert self.proc is not None
        pids = [self.proc.pid, *self.workers()]
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None
        return pids

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:  # gunicorn's graceful stop; a loaded machine may take longer: then it is killed
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def get(self, path: str) -> tuple[int, object]:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.port}{path}", timeout=5
            ) as response:
                return response.status, json.loads(response.read())
        except OSError:
            return 0, None

    def deliver(self, number: int, delivery: str) -> int:
        payload = json.loads((PAYLOADS / "pull_request.synchronize.json").read_bytes())
        payload["number"] = payload["pull_request"]["number"] = number
        assert conformance.payload_problems("pull_request", payload) == []
        body = json.dumps(payload).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/webhook",
            data=body,
            method="POST",
            headers={
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": delivery,
                "X-Hub-Signature-256": sign(body, SECRET),
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Web]:
    server = Web(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_deliveries_acknowledged_before_a_kill_9_are_all_processed(web: Web) -> None:
    # one pull request each
    deliveries = {str(uuid.uuid4()): number for number in range(1, DELIVERIES + 1)}
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        statuses = dict(
            zip(deliveries, pool.map(web.deliver, deliveries.values(), deliveries), strict=True)
        )
    accepted = {d for d, status in statuses.items() if status == 202}
    assert len(accepted) == DELIVERIES, statuses

    killed = web.kill9()  # right after the last 202: nothing gets a chance to flush or close
    # SIGKILL is delivered asynchronously; orphans are reaped by init
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in killed) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(killed) == 3 and not any(alive(pid) for pid in killed)

    web.start()  # a new gunicorn on the same queue file
    status, body = web.get("/readyz")
    assert status == 200 and isinstance(body, dict) and body["pending"] == DELIVERIES
    redelivered = next(iter(accepted))
    assert web.deliver(deliveries[redelivered], redelivered) == 200  # the journal still dedupes it

    worker = JobQueue.from_url(str(web.queue_file))  # the worker's side: what its consumer does
    reviewed: list[Job] = []
    worker.set_handler(reviewed.append)
    # every journalled job is still queued: nothing was lost in between
    assert worker.recover() == 0
    while (task := worker.huey.dequeue()) is not None:
        worker.huey.execute(task)
    worker.close()
    assert {j.delivery for j in reviewed} == accepted
    assert sorted(j.number for j in reviewed) == list(range(1, DELIVERIES + 1))
