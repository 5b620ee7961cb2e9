"""The App's own infrastructure fails under real processes (issue 31, "Done when"): a real
``redis-server``, real workers (``python -m bot.service.worker``), gunicorn where deliveries matter,
the stand-in fleet serving several pull requests over two installations. Each scenario ends with
every pull request concluded exactly once with the review's verdict, counted from the stand-in's
log, and 0 pacing violations:

- three Redis stalls of the process itself (``SIGSTOP`` ... ``SIGCONT``, longer than the workers'
  timeouts; ``tests/test_redis_outage.py`` stalls it with ``DEBUG SLEEP`` and restarts it with its
  append-only file);
- Redis restarted without persistence mid-review: the queue's journal, schedule, leases and
  registrations are gone; the workers' reconciliation with GitHub finds what still needs a verdict;
- the web restarted while GitHub delivers: the deliveries that found nobody are redelivered through
  the App's webhook deliveries API and taken once;
- the hosts' clocks 300 s ahead of or behind GitHub's: the App JWT is corrected from GitHub's
  ``Date``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bot.service.queue import REDIS_RETRIES, REDIS_TIMEOUT, JobQueue, make_huey
from tests.conftest import PAYLOADS, ROOT
from tests.standin.fleet import Fleet
from tests.test_e2e import free_port, wait_for
from tests.test_redis_outage import (
    RedisServer,
    _accept,
    _assert_concluded_once_with_the_verdict,
    _concluded,
    _env,
    _fleet,
    _outage_lines,
    _spawn,
    _stop,
    _tails,
)
from tests.test_scale_out import repo

__all__ = ["repo"]  # the fixture this module uses
pytestmark = pytest.mark.e2e
SECRET = "infrastructure-secret"


def _workers(tmp_path: Path, env: dict[str, str], count: int = 2) -> list[subprocess.Popen[bytes]]:
    workers = [_spawn(env, tmp_path / f"worker-{n}.log") for n in range(count)]
    for n in range(count):
        log = tmp_path / f"worker-{n}.log"
        wait_for(lambda log=log: b"consumer started" in log.read_bytes(), 60, log.name)
    return workers


def _everything_concludes(fleet: Fleet, repos: dict[str, int], timeout: float = 240) -> None:
    wait_for(
        lambda: all(_concluded(fleet, r) for r in repos), timeout, "every pull request to conclude"
    )
    time.sleep(REDIS_TIMEOUT * 2)  # a duplicate run, conclusion or summary would show now


def test_three_sigstop_stalls_of_redis_mid_review(tmp_path: Path, repo: Path) -> None:
    fleet, repos, key = _fleet(tmp_path, repo, 8, latency=0.1)
    server = RedisServer(tmp_path).start()
    queue = JobQueue(make_huey(server.url))
    workers: list[subprocess.Popen[bytes]] = []
    try:
        workers = _workers(tmp_path, _env(fleet, key, server.url))
        _accept(queue, fleet, repos)
        wait_for(
            lambda: any(fleet.states[r].local.check_runs for r in repos), 60, "a review to start"
        )
        assert server.process is not None
        for _ in range(3):  # each stall outlasts the workers' timeouts: their calls fail mid-review
            server.process.send_signal(signal.SIGSTOP)
            time.sleep(REDIS_TIMEOUT * (1 + REDIS_RETRIES) + 2)
            server.process.send_signal(signal.SIGCONT)
            time.sleep(2)
        _everything_concludes(fleet, repos)
    except AssertionError as exc:
        raise AssertionError(f"{exc}{_tails(tmp_path)}") from exc
    finally:
        _stop(workers)
        fleet.stop()
        queue.close()
        server.stop()
    _assert_concluded_once_with_the_verdict(fleet, repos)
    seen = [_outage_lines(tmp_path / f"worker-{n}.log") for n in range(2)]
    assert any(started for started, _, _ in seen), _tails(tmp_path)
    for started, ended, tracebacks in seen:
        assert started <= 3 and ended == started and tracebacks == 0, (seen, _tails(tmp_path))


def test_redis_restarted_without_persistence_mid_review_is_reconciled_with_github(
    tmp_path: Path, repo: Path
) -> None:
    fleet, repos, key = _fleet(tmp_path, repo, 8, latency=0.1)
    server = RedisServer(tmp_path, persistence=False).start()
    queue = JobQueue(make_huey(server.url))
    workers: list[subprocess.Popen[bytes]] = []
    try:
        _accept(queue, fleet, repos)  # answered 202 before the workers started
        queue.close()
        env = {**_env(fleet, key, server.url), "BOT_RECONCILE_EVERY": "3"}
        workers = _workers(tmp_path, env)
        wait_for(
            lambda: sum(bool(fleet.states[r].local.check_runs) for r in repos) >= 2,
            60,
            "reviews under way",
        )
        server.stop()  # everything in Redis is lost: the journal, huey's queue and schedule, leases
        time.sleep(REDIS_TIMEOUT)
        server.start()
        _everything_concludes(fleet, repos)
    except AssertionError as exc:
        raise AssertionError(f"{exc}{_tails(tmp_path)}") from exc
    finally:
        _stop(workers)
        fleet.stop()
        server.stop()
    _assert_concluded_once_with_the_verdict(fleet, repos)
    logs = "".join((tmp_path / f"worker-{n}.log").read_text(errors="replace") for n in range(2))
    assert "reconcile: " in logs and "review enqueued" in logs, _tails(tmp_path)


def _payload(fleet: Fleet, name: str, installation: int) -> bytes:
    payload = json.loads((PAYLOADS / "pull_request.opened.json").read_bytes())
    payload["repository"]["full_name"] = name
    payload["repository"]["name"] = name.split("/")[1]
    payload["repository"]["owner"]["login"] = name.split("/")[0]
    payload["number"] = payload["pull_request"]["number"] = fleet.number(name)
    payload["pull_request"]["head"]["sha"] = fleet.head_sha(name)
    payload["installation"] = {"id": installation}
    return json.dumps(payload).encode()


def _start_web(env: dict[str, str], bind: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "gunicorn.conf.py"),
                "--bind",
                bind,
                "--workers",
                "1",
                "bot.service.wsgi:create_app()",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )


def _ready(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_a_web_restart_while_github_delivers_loses_no_delivery(tmp_path: Path, repo: Path) -> None:
    fleet, repos, key = _fleet(tmp_path, repo, 8, latency=0.05)
    server = RedisServer(tmp_path).start()
    bind = f"127.0.0.1:{free_port()}"
    web_url = f"http://{bind}"
    env = {
        **_env(fleet, key, server.url),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "BOT_RECONCILE_EVERY": "3",
    }
    hooks = next(iter(fleet.states.values()))
    hooks.hook.update(url=f"{web_url}/webhook", secret=SECRET)
    web = _start_web(env, bind, tmp_path / "web.log")
    workers: list[subprocess.Popen[bytes]] = []
    sent: list[dict[str, object]] = []
    try:
        wait_for(lambda: _ready(web_url), 30, "gunicorn")
        names = sorted(repos)
        for name in names[:3]:
            sent.append(
                hooks.deliver(str(uuid.uuid4()), "pull_request", _payload(fleet, name, repos[name]))
            )
        web.terminate()  # a deploy: the web goes away while GitHub goes on delivering
        web.wait(timeout=30)
        for name in names[3:6]:
            sent.append(
                hooks.deliver(str(uuid.uuid4()), "pull_request", _payload(fleet, name, repos[name]))
            )
        web = _start_web(env, bind, tmp_path / "web.log")
        wait_for(lambda: _ready(web_url), 30, "gunicorn again")
        for name in names[6:]:
            sent.append(
                hooks.deliver(str(uuid.uuid4()), "pull_request", _payload(fleet, name, repos[name]))
            )
        assert [a["status_code"] for a in sent] == [202] * 3 + [0] * 3 + [202] * 2, sent
        # the workers' first reconciliation round asks GitHub to redeliver the three; its pull
        # request scan finds their pull requests too: each is still reviewed once
        workers = _workers(tmp_path, env)
        _everything_concludes(fleet, repos)
    except AssertionError as exc:
        raise AssertionError(f"{exc}{_tails(tmp_path)}") from exc
    finally:
        _stop([*workers, web])
        fleet.stop()
        server.stop()
    _assert_concluded_once_with_the_verdict(fleet, repos)
    missed = {str(a["guid"]) for a in sent if a["status_code"] == 0}
    redelivered = [d for d in hooks.deliveries if d["redelivery"]]
    assert {str(d["guid"]) for d in redelivered if d["status_code"] == 202} == missed, (
        hooks.deliveries
    )


@pytest.mark.parametrize("skew", [300, -300])
def test_hosts_300_s_off_githubs_clock_review_every_pull_request(
    tmp_path: Path, repo: Path, skew: int
) -> None:
    fleet, repos, key = _fleet(tmp_path, repo, 6, latency=0.05)
    for state in fleet.states.values():
        state.clock = lambda: time.time() + skew  # GitHub's time; the hosts' is ``skew`` behind it
    server = RedisServer(tmp_path).start()
    queue = JobQueue(make_huey(server.url))
    workers: list[subprocess.Popen[bytes]] = []
    try:
        workers = _workers(tmp_path, _env(fleet, key, server.url))
        _accept(queue, fleet, repos)
        _everything_concludes(fleet, repos, timeout=180)
    except AssertionError as exc:
        raise AssertionError(f"{exc}{_tails(tmp_path)}") from exc
    finally:
        _stop(workers)
        fleet.stop()
        queue.close()
        server.stop()
    _assert_concluded_once_with_the_verdict(fleet, repos)
    for n in range(2):
        text = (tmp_path / f"worker-{n}.log").read_text(errors="replace")
        named = [int(m) for m in re.findall(r"this host's clock is ([+-]\d+) s off GitHub's", text)]
        # the host is -skew off GitHub
        assert named and all(abs(m + skew) <= 2 for m in named), text[-3000:]
        assert "did not" not in text  # the correction cured it
    refused = [
        r
        for r in next(iter(fleet.states.values())).requests
        if r["path"].endswith("/access_tokens") and r["status"] == 401
    ]
    # one refusal per worker process (per installation at most)
    assert 1 <= len(refused) <= 2 * 2, refused
