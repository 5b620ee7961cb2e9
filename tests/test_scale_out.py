"""Three worker "hosts" on one Redis, one of them killed with -9 mid-review (issue 21's "done
when").

Each worker runs in its own network and UTS namespace with its own host name and address
(``tests/hosts.py`` over ``tests/netns.py``), as separate machines would; Redis and the stand-in
GitHub listen on the bridge between them. The stand-in serves 30 repositories with one pull request
each, spread over 5 installations, at 100 ms per request, and logs every write of each installation
with its gap to the previous one. While the workers review them, the test kills one with SIGKILL as
soon as it holds a pull request whose check run is in progress. Then:

- every check run concludes exactly once, none is left in progress, and each pull request has one;
- the dead worker's pull request concludes within 60 s of the kill (the lease expires, another
  worker's sweep re-enqueues the job, which resumes the same check run);
- no two writes of an installation are less than 1 s apart, across all the workers;
- no annotation is sent twice.

Before leases and shared pacing, liveness was judged by host name and PID (the dead host's pull
request stayed "in progress" for the 900 s TTL) and each process paced its own writes only.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.hosts import Hosts, hosts, repo
from tests.standin.fleet import Fleet
from tests.test_e2e import wait_for

__all__ = ["hosts", "repo"]  # the fixtures this module uses
pytestmark = pytest.mark.e2e
WORKERS = 3
PULL_REQUESTS = 30
INSTALLATIONS = 5
WRITE_PAUSE = 1.0


def test_three_workers_one_killed_mid_review(hosts: Hosts) -> None:
    repos = {
        f"registry{n % INSTALLATIONS}/repo-{n:02d}": n % INSTALLATIONS + 1
        for n in range(PULL_REQUESTS)
    }
    fleet = hosts.github(
        Fleet(str(hosts.repo), "main", "pr", repos, latency=0.1, write_pause=WRITE_PAUSE)
    )
    hosts.redis.persistence = False
    with hosts.running():
        hosts.redis.start()
        queue = hosts.queue()
        client = redis.Redis.from_url(hosts.redis.url)
        hosts.workers(WORKERS, write_pause=WRITE_PAUSE)
        started = time.monotonic()
        hosts.accept(repos, queue)

        victim, pr_key = wait_for(
            lambda: _held_in_progress(client, queue.huey.storage.name, fleet),
            60,
            "a review in progress",
        )
        client.close()
        hosts.lab.kill(victim)
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
    survivors = "".join(
        hosts.log(host).read_text(errors="replace")
        for host in hosts.lab.processes
        if host != victim
    )
    # one of them took the dead one's job over
    assert "review failed" not in survivors and "lease" in survivors

    hosts.assert_concluded_once_with_the_verdict(repos)
    for pacing in fleet.pacing.values():
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
