"""The App's infrastructure as separate machines, for the end-to-end tests of its workers.

``Hosts`` is one test's set-up and teardown: a bridge of this machine (``tests/netns.py``) where a
real ``redis-server`` and the stand-in GitHub (``tests/standin/fleet.py``) listen, and every worker
(``python -m bot.service.worker``, of this tree or of another release's) a host of its own, in its
own network and UTS namespace with its own host name and address, reaching Redis and GitHub over
the bridge as separate machines would. ``running()`` wraps a scenario: an assertion failing inside
it carries the tail of each worker's log, and on the way out every worker, web process, queue
client, the stand-in and Redis are stopped, in that order, so what the stand-in logged is final
when the test reads it. The ``hosts`` fixture removes the bridge.

The checks every scenario ends with are here too: each pull request concluded exactly once with the
review's verdict, counted from the stand-in's log, and 0 pacing violations.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.github.events import Job
from bot.service.queue import JobQueue, make_huey
from tests.conftest import ROOT
from tests.gitrepo import Repo
from tests.netns import Lab
from tests.standin.fleet import Fleet
from tests.test_e2e import wait_for
from tests.test_pipeline import ENTRY

MISSING = ("MissingOne.json", "MissingTwo.json", "MissingThree.json")  # one annotation each
WRITE_PAUSE = 0.5
INTERNAL_ERROR = "The bot hit an internal error"


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """The corpus with one entry producing a real facet and the ``MISSING`` ones."""
    made = Repo.from_folder(corpus, tmp_path_factory.mktemp("scale") / "repo")
    facets = [
        "ol:gcp:dataproc:GcpDataprocRunFacet.json",
        *(f"ol:gcp:dataproc:{m}" for m in MISSING),
    ]
    made.change(
        {
            ENTRY: json.dumps(
                {
                    "producer": {
                        "root_doc_URL": "https://cloud.google.com/dataproc/docs",
                        "produced_facets": facets,
                    }
                },
                indent=2,
            )
            + "\n"
        },
        "add facets",
    )
    return made.path


class RedisServer:
    """A redis-server on a fixed port of ``host`` (with its append-only file unless
    ``persistence`` is off: a restart then starts empty), that a test stops and starts."""

    def __init__(self, folder: Path, host: str, persistence: bool = True) -> None:
        self.persistence = persistence
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (`make system-deps`)")
        self.binary = binary
        self.folder = folder
        self.host = host
        self.port = free_port(host)
        self.url = f"redis://{host}:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                self.host,
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
                "--protected-mode",
                "no",
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


def worker_argv(module: str = "bot.service.worker", write_pause: float = WRITE_PAUSE) -> list[str]:
    """A worker of ``module`` with the fake checks, a short lease and frequent sweeps."""
    argv = [sys.executable, "-m", module, "--checks", "tests.fakes:FAKE_CHECKS", "--no-regression"]
    argv += ["--threads", "2", "--write-pause", str(write_pause), "--poll", "0.05"]
    argv += ["--lease-ttl", "8", "--sweep-every", "2", "--sweep-age", "3"]
    return argv


class Hosts:
    """One test's machines: Redis and the stand-in on the bridge, each worker a host of its own."""

    def __init__(self, lab: Lab, folder: Path, repo: Path) -> None:
        self.lab = lab
        self.repo = repo
        self.folder = folder
        self.key = folder / "app.pem"
        self.redis = RedisServer(folder, lab.host)
        self._fleet: Fleet | None = None
        self.local: list[subprocess.Popen[bytes]] = []  # processes on this machine (gunicorn)
        self._queues: list[JobQueue] = []
        self._stopped = False

    @property
    def fleet(self) -> Fleet:
        """The stand-in GitHub."""
        assert self._fleet is not None, "github() first"
        return self._fleet

    def github(self, fleet: Fleet) -> Fleet:
        """Serve ``fleet`` on the bridge; the App's key file is written for the workers."""
        self._fleet = fleet.start(self.lab.host)
        self.key.write_text(fleet.private_key_pem)
        return fleet

    def env(self, **extra: str) -> dict[str, str]:
        """The workers' environment: the stand-in and Redis at their bridge addresses."""
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.update(
            PYTHONPATH=str(ROOT),
            PYTHONUNBUFFERED="1",
            GITHUB_APP_ID="1",
            GITHUB_APP_PRIVATE_KEY_PATH=str(self.key),
            GITHUB_API_URL=f"http://{self.lab.host}:{self.fleet.port}",
            BOT_QUEUE_URL=self.redis.url,
            BOT_RECONCILE_EVERY="0",
        )
        env.update(extra)
        return env

    def two_installations(self, count: int, latency: float) -> tuple[Fleet, dict[str, int]]:
        """The stand-in serving ``count`` pull requests over two installations, on the bridge."""
        repos = {f"org{n % 2}/repo-{n}": n % 2 + 1 for n in range(count)}
        fleet = Fleet(str(self.repo), "main", "pr", repos, latency=latency, write_pause=WRITE_PAUSE)
        return self.github(fleet), repos

    def reviews_under_way(self, repos: dict[str, int], workers: int = 2) -> None:
        """Redis, ``workers`` workers, every pull request journalled; back once one is reviewed."""
        self.redis.start()
        self.workers(workers)
        self.accept(repos)
        wait_for(lambda: any(self.runs(r) for r in repos), 60, "a review to start")

    def accept(self, repos: dict[str, int] | list[str], queue: JobQueue | None = None) -> None:
        """Journal an ``opened`` delivery for each pull request (installation 1 for a bare list)."""
        queue = queue or self.queue()
        named = repos if isinstance(repos, dict) else dict.fromkeys(repos, 1)
        for name, installation in named.items():
            assert queue.accept(
                Job(
                    f"d-{name}",
                    "pull_request",
                    "opened",
                    installation,
                    name,
                    self.fleet.number(name),
                    self.fleet.head_sha(name),
                )
            )

    def runs(self, name: str) -> list[Any]:
        """The pull request's check runs, as the stand-in holds them."""
        return list(self.fleet.states[name].local.check_runs)

    def concluded(self, name: str) -> bool:
        """The pull request's check runs are all completed and it has its summary comment."""
        runs = self.runs(name)
        summarised = any(
            "registry-bot:summary" in c.body for c in self.fleet.states[name].local.issue_comments
        )
        return bool(runs) and all(r.status == "completed" for r in runs) and summarised

    def assert_concluded_once_with_the_verdict(self, repos: Iterable[str]) -> None:
        """From the stand-in's log: one check run per pull request, concluded once with the
        review's verdict (never the internal error), one annotation per missing facet, one summary;
        0 pacing violations in any installation."""
        fleet = self.fleet
        for name in repos:
            runs = self.runs(name)
            assert len(runs) == 1, (name, [(r.status, r.conclusion) for r in runs])
            run = runs[0]
            conclusions = [r for r in run.requests if r["conclusion"] is not None]
            assert run.status == "completed" and len(conclusions) == 1, (name, run.requests)
            assert run.conclusion == "failure", (name, run.requests)
            assert INTERNAL_ERROR not in json.dumps(run.requests), (name, run.requests)
            notes = [(a["path"], a["start_line"], a["message"]) for a in run.annotations]
            assert len(notes) == len(set(notes)) == len(MISSING), (name, notes)
            summaries = [
                c
                for c in fleet.states[name].local.issue_comments
                if "registry-bot:summary" in c.body
            ]
            assert len(summaries) == 1, name
        for installation, pacing in fleet.pacing.items():
            assert pacing.violations == [], (installation, pacing.violations)

    def queue(self) -> JobQueue:
        """A client of the workers' queue (closed when the scenario ends)."""
        made = JobQueue(make_huey(self.redis.url))
        self._queues.append(made)
        return made

    def worker(
        self,
        name: str,
        env: dict[str, str] | None = None,
        module: str = "bot.service.worker",
        tree: Path | None = None,
        write_pause: float = WRITE_PAUSE,
    ) -> subprocess.Popen[bytes]:
        """Host ``name`` running a worker of ``module``, from this checkout or from another
        release's ``tree``; its log is ``<name>.log``."""
        env = self.env() if env is None else env
        if tree is not None:
            env = {**env, "PYTHONPATH": str(tree)}
        return self.lab.spawn(name, worker_argv(module, write_pause), env, self.log(name), cwd=tree)

    def workers(
        self, count: int = 2, env: dict[str, str] | None = None, write_pause: float = WRITE_PAUSE
    ) -> None:
        """Hosts ``worker-0`` … with a worker each, once every consumer has started."""
        for n in range(count):
            self.worker(f"worker-{n}", env, write_pause=write_pause)
        for n in range(count):
            self.started(f"worker-{n}")

    def started(self, name: str, timeout: float = 60) -> None:
        log = self.log(name)
        wait_for(lambda: b"consumer started" in log.read_bytes(), timeout, log.name)

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def stop(self, name: str) -> None:
        """Stop one host's worker as a deploy does (SIGTERM, SIGKILL after 15 s)."""
        self.lab.stop([name])

    def tails(self) -> str:
        """Each worker log's tail, after its tracebacks and logged exceptions (which the tail may
        not reach)."""

        def errors(text: str) -> str:
            return "".join(
                line + "\n"
                for line in text.splitlines()
                if '"exception"' in line or "Traceback" in line
            )

        return "".join(
            f"\n--- {log.name}\n{errors(text)[-6000:]}...\n{text[-4000:]}"
            for log in sorted(self.folder.glob("worker-*.log"))
            for text in [log.read_text(errors="replace")]
        )

    @contextlib.contextmanager
    def running(self) -> Iterator[Hosts]:
        """The scenario: a failed assertion gains the workers' log tails; everything stops after."""
        try:
            yield self
        except AssertionError as exc:
            raise AssertionError(f"{exc}{self.tails()}") from exc
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers and web processes, close the queue clients, stop the stand-in (which
        checks what it was sent) and Redis. Once."""
        if self._stopped:
            return
        self._stopped = True
        try:
            for process in self.local:
                if process.poll() is None:
                    process.terminate()
            self.lab.stop()
            for process in self.local:
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            for queue in self._queues:
                queue.close()
            if self._fleet is not None:
                self._fleet.stop()
        finally:
            self.redis.stop()


@pytest.fixture
def hosts(tmp_path: Path, repo: Path) -> Iterator[Hosts]:
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("unshare") is None:
        pytest.fail(
            "this test makes network namespaces: it runs as root with iproute2 (`make system-deps`)"
        )
    lab = Lab().start()
    made = Hosts(lab, tmp_path, repo)
    try:
        yield made
    finally:
        try:
            made.close()
        finally:
            lab.close()


def outage_lines(log: Path) -> tuple[int, int, int]:
    """(outages started, outages ended, tracebacks) in a worker's JSON log.

    Only ``bot.outage``'s own lines count as an outage's start and end: the warnings of the writes
    and jobs that wait out the outage say "the queue's store is unreachable" too."""
    started = ended = tracebacks = 0
    for line in log.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            tracebacks += "Traceback" in line
            continue
        tracebacks += "exception" in record
        if record.get("logger") != "bot.outage":
            continue
        message = str(record.get("message", ""))
        started += "is unreachable" in message
        ended += "is back" in message
    return started, ended, tracebacks
