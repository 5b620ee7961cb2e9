"""Three worker "hosts" on one Redis, one of them killed with -9 mid-review (issue 21's "done
when").

Each worker runs in its own network and UTS namespace with its own host name and address
(``tests/netns.py``), as separate machines would; Redis and the stand-in GitHub listen on the bridge
between them. The stand-in serves 30 repositories with one pull request each, spread over 5
installations, at 100 ms per request, and logs every write of each installation with its gap to the
previous one. While the workers review them, the test kills one with SIGKILL as soon as it holds a
pull request whose check run is in progress. Then:

- every check run concludes exactly once, none is left in progress, and each pull request has one;
- the dead worker's pull request concludes within 60 s of the kill (the lease expires, another
  worker's sweep re-enqueues the job, which resumes the same check run);
- no two writes of an installation are less than 1 s apart, across all the workers;
- no annotation is sent twice.

Before leases and shared pacing, liveness was judged by host name and PID (the dead host's pull
request stayed "in progress" for the 900 s TTL) and each process paced its own writes only.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

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

pytestmark = pytest.mark.e2e
WORKERS = 3
PULL_REQUESTS = 30
INSTALLATIONS = 5
MISSING = ("MissingOne.json", "MissingTwo.json", "MissingThree.json")  # one annotation each
LEASE_TTL = 8.0
WRITE_PAUSE = 1.0


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
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


@pytest.fixture
def lab() -> Iterator[Lab]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.fail(
            "this test makes network namespaces: it runs as root with iproute2 (`make system-deps`)"
        )
    made = Lab().start()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def redis_on_lab(lab: Lab, tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (`make system-deps`)")
    port = free_port(lab.host)
    server = subprocess.Popen(
        [
            binary,
            "--bind",
            lab.host,
            "--port",
            str(port),
            "--dir",
            str(tmp_path),
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _connects(lab.host, port), 10, "redis-server")
        yield f"redis://{lab.host}:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _connects(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=0.5).close()
    except OSError:
        return False
    return True


def test_three_workers_one_killed_mid_review(
    lab: Lab, redis_on_lab: str, repo: Path, tmp_path: Path
) -> None:
    repos = {
        f"registry{n % INSTALLATIONS}/repo-{n:02d}": n % INSTALLATIONS + 1
        for n in range(PULL_REQUESTS)
    }
    fleet = Fleet(str(repo), "main", "pr", repos, latency=0.1, write_pause=WRITE_PAUSE).start(
        lab.host
    )
    key = tmp_path / "app.pem"
    key.write_text(fleet.private_key_pem)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        GITHUB_APP_ID="1",
        GITHUB_APP_PRIVATE_KEY_PATH=str(key),
        GITHUB_API_URL=f"http://{lab.host}:{fleet.port}",
        BOT_QUEUE_URL=redis_on_lab,
        BOT_RECONCILE_EVERY="0",
    )
    name = "registry-bot"  # the workers' queue (this Redis is the test's own)
    queue = JobQueue(make_huey(redis_on_lab, name=name))
    client = redis.Redis.from_url(redis_on_lab)
    try:
        for n in range(WORKERS):
            lab.spawn(
                f"worker-{n}",
                [
                    sys.executable,
                    "-m",
                    "bot.service.worker",
                    "--checks",
                    "tests.fakes:FAKE_CHECKS",
                    "--no-regression",
                    "--threads",
                    "2",
                    "--write-pause",
                    str(WRITE_PAUSE),
                    "--poll",
                    "0.05",
                    "--lease-ttl",
                    str(LEASE_TTL),
                    "--sweep-every",
                    "2",
                    "--sweep-age",
                    "3",
                ],
                env,
                tmp_path / f"worker-{n}.log",
            )
        for log in (tmp_path / f"worker-{n}.log" for n in range(WORKERS)):
            wait_for(lambda log=log: b"consumer started" in log.read_bytes(), 60, f"{log.name}")
        started = time.monotonic()
        for repo_name, installation in repos.items():
            assert queue.accept(
                Job(
                    f"d-{repo_name}",
                    "pull_request",
                    "opened",
                    installation,
                    repo_name,
                    fleet.number(repo_name),
                    fleet.head_sha(repo_name),
                )
            )

        victim, pr_key = wait_for(
            lambda: _held_in_progress(client, queue.huey.storage.name, fleet),
            60,
            "a review in progress",
        )
        lab.kill(victim)
        killed = time.monotonic()
        repo_name = pr_key.split("#")[0]
        wait_for(
            lambda: _concluded(fleet, repo_name), 60, f"the dead worker's {pr_key} to conclude"
        )
        takeover = time.monotonic() - killed
        wait_for(
            lambda: all(_concluded(fleet, r) for r in repos), 180, "every pull request to conclude"
        )
        elapsed = time.monotonic() - started
        wait_for(lambda: all(_summarised(fleet, r) for r in repos), 60, "every summary comment")
    except AssertionError as exc:
        tails = "".join(
            f"\n--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
            for log in sorted(tmp_path.glob("worker-*.log"))
        )
        raise AssertionError(f"{exc}{tails}") from exc
    finally:
        fleet.stop()
        queue.close()
        client.close()
    survivors = "".join(
        (tmp_path / f"{host}.log").read_text(errors="replace")
        for host in lab.processes
        if host != victim
    )
    # one of them took the dead one's job over
    assert "review failed" not in survivors and "lease" in survivors

    for repo_name in repos:
        runs = fleet.states[repo_name].local.check_runs
        assert len(runs) == 1, (repo_name, [(r.status, r.conclusion) for r in runs])
        run = runs[0]
        conclusions = [r for r in run.requests if r["conclusion"] is not None]
        assert run.status == "completed" and len(conclusions) == 1, (repo_name, run.requests)
        notes = [(a["path"], a["start_line"], a["message"]) for a in run.annotations]
        assert len(notes) == len(set(notes)) == len(MISSING), (repo_name, notes)
        comments = [
            c
            for c in fleet.states[repo_name].local.issue_comments
            if "registry-bot:summary" in c.body
        ]
        assert len(comments) == 1
    for installation, pacing in fleet.pacing.items():
        assert pacing.violations == [], (installation, pacing.violations)
        # check run, conclusion, review, summary
        assert len(pacing.writes) >= 4 * PULL_REQUESTS // INSTALLATIONS
    assert takeover < 60
    print(
        f"\n30 reviews by 3 workers, one killed: {elapsed:.1f} s; the dead worker's pull request "
        f"concluded {takeover:.1f} s after the kill"
    )


def _held_in_progress(client: redis.Redis, name: str, fleet: Fleet) -> tuple[str, str] | None:
    """(host, pr key) of a worker holding a lease on a pull request whose check run is in
    progress."""
    for raw in client.scan_iter(f"registry-bot:{name}:lease:*"):
        key = raw.decode()
        if ":fence:" in key:
            continue
        held = client.get(raw)
        if held is None:
            continue
        host = held.decode().split(" ", 1)[1].split(":")[0]
        pr_key = key.split(":lease:", 1)[1]
        runs = fleet.states[pr_key.split("#")[0]].local.check_runs
        if runs and runs[-1].status == "in_progress":
            return host, pr_key
    return None


def _concluded(fleet: Fleet, repo: str) -> bool:
    runs = fleet.states[repo].local.check_runs
    return bool(runs) and all(r.status == "completed" for r in runs)


def _summarised(fleet: Fleet, repo: str) -> bool:
    return any("registry-bot:summary" in c.body for c in fleet.states[repo].local.issue_comments)
