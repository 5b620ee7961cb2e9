"""The App's own infrastructure fails under real processes (issue 31, "Done when"): a real
``redis-server``, real workers (``python -m bot.service.worker``), each a host of its own in its own
network namespace (``tests/hosts.py``), gunicorn where deliveries matter, the stand-in fleet serving
several pull requests over two installations; Redis, the stand-in and gunicorn listen on the bridge
between the hosts. Each scenario ends with
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

from bot.service.queue import REDIS_RETRIES, REDIS_TIMEOUT
from tests.conftest import PAYLOADS, ROOT
from tests.hosts import Hosts, free_port, hosts, outage_lines, repo
from tests.standin.fleet import Fleet
from tests.test_e2e import wait_for

__all__ = ["hosts", "repo"]  # the fixtures this module uses
pytestmark = pytest.mark.e2e
SECRET = "infrastructure-secret"


def _everything_concludes(hosts: Hosts, repos: dict[str, int], timeout: float = 240) -> None:
    wait_for(
        lambda: all(hosts.concluded(r) for r in repos), timeout, "every pull request to conclude"
    )
    time.sleep(REDIS_TIMEOUT * 2)  # a duplicate run, conclusion or summary would show now


def test_three_sigstop_stalls_of_redis_mid_review(hosts: Hosts) -> None:
    _, repos = hosts.two_installations(8, latency=0.1)
    with hosts.running():
        hosts.reviews_under_way(repos)
        assert hosts.redis.process is not None
        for _ in range(3):  # each stall outlasts the workers' timeouts: their calls fail mid-review
            hosts.redis.process.send_signal(signal.SIGSTOP)
            time.sleep(REDIS_TIMEOUT * (1 + REDIS_RETRIES) + 2)
            hosts.redis.process.send_signal(signal.SIGCONT)
            time.sleep(2)
        _everything_concludes(hosts, repos)
    hosts.assert_concluded_once_with_the_verdict(repos)
    seen = [outage_lines(hosts.log(f"worker-{n}")) for n in range(2)]
    assert any(started for started, _, _ in seen), hosts.tails()
    for started, ended, tracebacks in seen:
        # a string, not a tuple: pytest shows a string message whole
        assert started <= 3 and ended == started and tracebacks == 0, f"{seen}\n{hosts.tails()}"


def test_redis_restarted_without_persistence_mid_review_is_reconciled_with_github(
    hosts: Hosts,
) -> None:
    _, repos = hosts.two_installations(8, latency=0.1)
    hosts.redis.persistence = False
    with hosts.running():
        hosts.redis.start()
        hosts.accept(repos)  # answered 202 before the workers started
        hosts.workers(2, hosts.env(BOT_RECONCILE_EVERY="3"))
        wait_for(
            lambda: sum(bool(hosts.runs(r)) for r in repos) >= 2,
            60,
            "reviews under way",
        )
        # everything in Redis is lost: the journal, huey's queue and schedule, leases
        hosts.redis.stop()
        time.sleep(REDIS_TIMEOUT)
        hosts.redis.start()
        _everything_concludes(hosts, repos)
    hosts.assert_concluded_once_with_the_verdict(repos)
    logs = "".join(hosts.log(f"worker-{n}").read_text(errors="replace") for n in range(2))
    assert "reconcile: " in logs and "review enqueued" in logs, hosts.tails()


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


def test_a_web_restart_while_github_delivers_loses_no_delivery(hosts: Hosts) -> None:
    fleet, repos = hosts.two_installations(8, latency=0.05)
    bind = f"{hosts.lab.host}:{free_port(hosts.lab.host)}"
    web_url = f"http://{bind}"
    env = hosts.env(GITHUB_WEBHOOK_SECRET=SECRET, BOT_RECONCILE_EVERY="3")
    hooks = next(iter(fleet.states.values()))
    hooks.hook.update(url=f"{web_url}/webhook", secret=SECRET)
    sent: list[dict[str, object]] = []
    with hosts.running():
        hosts.redis.start()
        web = _start_web(env, bind, hosts.log("web"))
        hosts.local.append(web)
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
        hosts.local.append(_start_web(env, bind, hosts.log("web")))
        wait_for(lambda: _ready(web_url), 30, "gunicorn again")
        for name in names[6:]:
            sent.append(
                hooks.deliver(str(uuid.uuid4()), "pull_request", _payload(fleet, name, repos[name]))
            )
        assert [a["status_code"] for a in sent] == [202] * 3 + [0] * 3 + [202] * 2, sent
        # the workers' first reconciliation round asks GitHub to redeliver the three; its pull
        # request scan finds their pull requests too: each is still reviewed once
        hosts.workers(2, env)
        _everything_concludes(hosts, repos)
    hosts.assert_concluded_once_with_the_verdict(repos)
    missed = {str(a["guid"]) for a in sent if a["status_code"] == 0}
    redelivered = [d for d in hooks.deliveries if d["redelivery"]]
    assert {str(d["guid"]) for d in redelivered if d["status_code"] == 202} == missed, (
        hooks.deliveries
    )


@pytest.mark.parametrize("skew", [300, -300])
def test_hosts_300_s_off_githubs_clock_review_every_pull_request(hosts: Hosts, skew: int) -> None:
    fleet, repos = hosts.two_installations(6, latency=0.05)
    for state in fleet.states.values():
        state.clock = lambda: time.time() + skew  # GitHub's time; the hosts' is ``skew`` behind it
    with hosts.running():
        hosts.redis.start()
        hosts.workers(2)
        hosts.accept(repos)
        _everything_concludes(hosts, repos, timeout=180)
    hosts.assert_concluded_once_with_the_verdict(repos)
    for n in range(2):
        text = hosts.log(f"worker-{n}").read_text(errors="replace")
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
