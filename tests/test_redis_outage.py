"""The queue's Redis stalls, stops and restarts under real worker processes (issue 31, item 1).

A real ``redis-server`` with its append-only file, two real workers (``python -m
bot.service.worker``) and the stand-in GitHub serving several pull requests over two installations.
Redis is stalled with ``DEBUG SLEEP`` (longer than the workers' ``REDIS_TIMEOUT``: their calls time
out mid-review) or stopped and started again. Then every pull request has one check run, concluded
once with the review's verdict (never "internal error"), and a summary comment; no two writes of an
installation are less than the pause apart; each worker logs an outage in a few lines, not a
traceback per poll.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.github.events import Job
from bot.service.queue import REDIS_RETRIES, REDIS_TIMEOUT, JobQueue, make_huey
from tests.conftest import ROOT
from tests.standin.fleet import Fleet
from tests.test_e2e import wait_for

# (the fixture; its missing facets: 1 annotation each)
from tests.test_scale_out import MISSING, repo  # noqa: F401

pytestmark = pytest.mark.e2e
WRITE_PAUSE = 0.5
INTERNAL_ERROR = "The bot hit an internal error"


class RedisServer:
    """A redis-server on a fixed loopback port with its append-only file, that a test stops and
    starts."""

    def __init__(self, folder: Path, persistence: bool = True) -> None:
        self.persistence = persistence  # its append-only file; without it a restart starts empty
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (`make system-deps`)")
        self.binary = binary
        self.folder = folder
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "yes" if self.persistence else "no",
                "--appendfsync",
                "always",
                "--enable-debug-command",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._answers, 10, "redis-server")
        return self

    def _answers(self) -> bool:
        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=1).ping())
        except redis.exceptions.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def _env(fleet: Fleet, key: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        GITHUB_APP_ID="1",
        GITHUB_APP_PRIVATE_KEY_PATH=str(key),
        GITHUB_API_URL=f"http://127.0.0.1:{fleet.port}",
        BOT_QUEUE_URL=url,
        BOT_RECONCILE_EVERY="0",
    )
    return env


def _spawn(
    env: dict[str, str], log: Path, module: str = "bot.service.worker", tree: Path | None = None
) -> subprocess.Popen[bytes]:
    """A worker of ``module``, from the checkout or from another release's ``tree``."""
    argv = [sys.executable, "-m", module, "--checks", "tests.fakes:FAKE_CHECKS", "--no-regression"]
    argv += ["--threads", "2", "--write-pause", str(WRITE_PAUSE), "--poll", "0.05"]
    argv += ["--lease-ttl", "8", "--sweep-every", "2", "--sweep-age", "3"]
    if tree is not None:
        env = {**env, "PYTHONPATH": str(tree)}
    with log.open("wb") as out:
        return subprocess.Popen(argv, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _concluded(fleet: Fleet, name: str) -> bool:
    runs = fleet.states[name].local.check_runs
    summarised = any(
        "registry-bot:summary" in c.body for c in fleet.states[name].local.issue_comments
    )
    return bool(runs) and all(r.status == "completed" for r in runs) and summarised


def _assert_concluded_once_with_the_verdict(fleet: Fleet, repos: dict[str, int]) -> None:
    for name in repos:
        runs = fleet.states[name].local.check_runs
        assert len(runs) == 1, (name, [(r.status, r.conclusion) for r in runs])
        run = runs[0]
        conclusions = [r for r in run.requests if r["conclusion"] is not None]
        assert run.status == "completed" and len(conclusions) == 1, (name, run.requests)
        assert run.conclusion == "failure" and INTERNAL_ERROR not in json.dumps(run.requests), (
            name,
            run.requests,
        )
        notes = [(a["path"], a["start_line"], a["message"]) for a in run.annotations]
        assert len(notes) == len(set(notes)) == len(MISSING), (name, notes)
        summaries = [
            c for c in fleet.states[name].local.issue_comments if "registry-bot:summary" in c.body
        ]
        assert len(summaries) == 1, name
    for installation, pacing in fleet.pacing.items():
        assert pacing.violations == [], (installation, pacing.violations)


def _outage_lines(log: Path) -> tuple[int, int, int]:
    """(outages started, outages ended, tracebacks) in a worker's JSON log."""
    started = ended = tracebacks = 0
    for line in log.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            tracebacks += "Traceback" in line
            continue
        message = str(record.get("message", ""))
        started += "is unreachable" in message
        ended += "is back" in message
        tracebacks += "exception" in record
    return started, ended, tracebacks


def _accept(queue: JobQueue, fleet: Fleet, repos: dict[str, int]) -> None:
    for name, installation in repos.items():
        assert queue.accept(
            Job(
                f"d-{name}",
                "pull_request",
                "opened",
                installation,
                name,
                fleet.number(name),
                fleet.head_sha(name),
            )
        )


def _fleet(
    tmp_path: Path, folder: Path, count: int, latency: float
) -> tuple[Fleet, dict[str, int], Path]:
    """The stand-in GitHub serving ``count`` pull requests over two installations, and the App's key
    file."""
    repos = {f"org{n % 2}/repo-{n}": n % 2 + 1 for n in range(count)}
    fleet = Fleet(
        str(folder), "main", "pr", repos, latency=latency, write_pause=WRITE_PAUSE
    ).start()
    key = tmp_path / "app.pem"
    key.write_text(fleet.private_key_pem)
    return fleet, repos, key


def _tails(folder: Path) -> str:
    """Each worker log's tail, after its tracebacks and logged exceptions (which the tail may not
    reach)."""

    def errors(text: str) -> str:
        return "".join(
            line + "\n"
            for line in text.splitlines()
            if '"exception"' in line or "Traceback" in line
        )

    return "".join(
        f"\n--- {log.name}\n{errors(text)[-6000:]}...\n{text[-4000:]}"
        for log in sorted(folder.glob("worker-*.log"))
        for text in [log.read_text(errors="replace")]
    )


def test_three_redis_stalls_mid_review_defer_the_jobs_and_every_pull_request_concludes_once(
    tmp_path: Path,
    repo: Path,  # noqa: F811
    redis_server: RedisServer,
) -> None:
    fleet, repos, key = _fleet(tmp_path, repo, 8, latency=0.1)
    redis_server.start()
    queue = JobQueue(make_huey(redis_server.url))
    workers: list[subprocess.Popen[bytes]] = []
    try:
        env = _env(fleet, key, redis_server.url)
        workers = [_spawn(env, tmp_path / f"worker-{n}.log") for n in range(2)]
        for n in range(2):
            log = tmp_path / f"worker-{n}.log"
            wait_for(lambda log=log: b"consumer started" in log.read_bytes(), 60, log.name)
        _accept(queue, fleet, repos)
        wait_for(
            lambda: any(fleet.states[r].local.check_runs for r in repos), 60, "a review to start"
        )
        stall_for = REDIS_TIMEOUT * (1 + REDIS_RETRIES) + 2
        admin = redis.Redis.from_url(redis_server.url, socket_timeout=stall_for + 10)
        for _ in range(3):  # each stall outlasts the workers' timeouts: their calls fail mid-review
            stall = threading.Thread(
                target=admin.execute_command, args=("DEBUG", "SLEEP", stall_for)
            )
            stall.start()
            stall.join()
            time.sleep(2)
        admin.close()
        wait_for(
            lambda: all(_concluded(fleet, r) for r in repos), 240, "every pull request to conclude"
        )
        time.sleep(REDIS_TIMEOUT * 4)  # a duplicate would show now
        # an outage ends at the first success a grace period after its last failure (late timeouts
        # included)
        logs = [tmp_path / f"worker-{n}.log" for n in range(2)]
        with contextlib.suppress(AssertionError):  # the assertion below says what is missing
            wait_for(
                lambda: all(_outage_lines(log)[1] >= _outage_lines(log)[0] for log in logs),
                60,
                "the end of each outage in the logs",
            )
    except AssertionError as exc:
        raise AssertionError(f"{exc}{_tails(tmp_path)}") from exc
    finally:
        _stop(workers)
        fleet.stop()
        queue.close()
    _assert_concluded_once_with_the_verdict(fleet, repos)
    seen = [_outage_lines(tmp_path / f"worker-{n}.log") for n in range(2)]
    assert any(started for started, _, _ in seen), _tails(tmp_path)
    for started, ended, tracebacks in seen:
        assert started <= 3 and ended == started and tracebacks == 0, (seen, _tails(tmp_path))


def test_a_worker_waits_for_a_redis_that_is_down_and_reviews_once_it_is_back_with_its_data(
    tmp_path: Path,
    repo: Path,  # noqa: F811
    redis_server: RedisServer,
) -> None:
    fleet, repos, key = _fleet(tmp_path, repo, 4, latency=0.05)
    workers: list[subprocess.Popen[bytes]] = []
    queue: JobQueue | None = None
    try:
        env = _env(fleet, key, redis_server.url)
        workers = [_spawn(env, tmp_path / "worker-0.log")]  # Redis is not running yet
        log = tmp_path / "worker-0.log"
        wait_for(
            lambda: b"is unreachable" in log.read_bytes(), 60, "the worker to notice Redis is down"
        )
        time.sleep(3)
        assert workers[0].poll() is None, _tails(tmp_path)  # it waits, it does not exit
        redis_server.start()
        wait_for(lambda: b"consumer started" in log.read_bytes(), 60, "the consumer to start")
        queue = JobQueue(make_huey(redis_server.url))
        _accept(queue, fleet, repos)
        queue.close()
        wait_for(
            lambda: any(fleet.states[r].local.check_runs for r in repos), 60, "a review to start"
        )
        redis_server.stop()  # mid-review; its append-only file keeps the journal
        time.sleep(REDIS_TIMEOUT)
        redis_server.start()
        wait_for(
            lambda: all(_concluded(fleet, r) for r in repos), 240, "every pull request to conclude"
        )
        time.sleep(REDIS_TIMEOUT * 4)  # the outage's end is logged once no call failed for a while
    except AssertionError as exc:
        raise AssertionError(f"{exc}{_tails(tmp_path)}") from exc
    finally:
        _stop(workers)
        fleet.stop()
    _assert_concluded_once_with_the_verdict(fleet, repos)
    started, ended, tracebacks = _outage_lines(tmp_path / "worker-0.log")
    assert 1 <= started <= 2 and ended == started and tracebacks == 0, _tails(tmp_path)
