"""A mixed fleet of this release and the one before on one Redis (issue 31, item 3; docs/app.md,
Upgrades).

The previous release is the real code: ``PREVIOUS`` (the last release before the queue's state
carried a schema version) is extracted with ``git archive`` into a temporary folder and its worker
runs from there, beside this tree's workers, over one real ``redis-server`` and the stand-in fleet;
each worker is a host of its own in its own network namespace (``tests/hosts.py``).
As designed:

- a worker of this release refuses to start (exit 3, one line saying why) while the old worker holds
  a lease (it ignores this release's pause and writes finished jobs the old way);
- with the old worker idle, this release's worker joins and both review (same lease and pacing
  keys); the finished jobs the old one writes the old way are still read as done, and the new worker
  says an older worker writes to the queue;
- the documented upgrade (stop the old workers, start the new) finishes the rest;

and every pull request ends with one check run, concluded once with the review's verdict, with 0
pacing violations over the whole run.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.hosts import WRITE_PAUSE, Hosts, hosts, repo
from tests.standin.fleet import Fleet
from tests.standin.server import Fault
from tests.test_e2e import wait_for

__all__ = ["hosts", "repo"]  # the fixtures this module uses
pytestmark = pytest.mark.e2e
# the release before schema versions (main before issue 31's queue changes landed)
PREVIOUS = "66e9ff9"


def previous_release(folder: Path) -> Path:
    """The previous release's tree (``bot`` and ``tests``), extracted from this clone's history."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", PREVIOUS, "bot", "tests"],
        capture_output=True,
        check=False,
    )
    assert archive.returncode == 0, (
        f"the previous release {PREVIOUS} is not in this clone: {archive.stderr!r}"
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        # extraction filters came with Python 3.11.4 (Debian 12's python3 is 3.11.2); the archive
        # is this clone's own history
        if hasattr(tarfile, "data_filter"):
            tar.extractall(folder, filter="data")
        else:
            tar.extractall(folder)
    assert not (folder / "bot" / "app" / "schema.py").exists()  # it really is from before versions
    return folder


# the previous release's worker module, under its own layout (joined, so that no layout rewrites it)
PREVIOUS_WORKER = ".".join(("bot", "app", "worker"))


def _messages(log: Path) -> list[str]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            out.append(str(json.loads(line).get("message", "")))
        except ValueError:
            continue
    return out


def test_a_mixed_fleet_with_the_previous_release_refuses_or_coexists_and_concludes_every_pull_request_once(  # noqa: E501
    hosts: Hosts, tmp_path: Path
) -> None:
    old_tree = previous_release(tmp_path / "previous")
    repos = {f"org/repo-{n}": 1 for n in range(8)}
    names = sorted(repos)
    fleet = hosts.github(
        Fleet(str(hosts.repo), "main", "pr", repos, latency=0.05, write_pause=WRITE_PAUSE)
    )
    first = fleet.states[names[0]]
    old_log, refused_log = hosts.log("worker-old"), hosts.log("worker-refused")
    with hosts.running():
        hosts.redis.start()
        queue = hosts.queue()
        hosts.worker("worker-old", module=PREVIOUS_WORKER, tree=old_tree)
        hosts.started("worker-old")
        # 1. The old worker reviews, one review held mid-way (it holds that pull request's lease):
        # refused.
        first.add_faults([Fault("/repos/*/*/git/trees/*", method="GET", hold=20)])
        hosts.accept(names[:3], queue)
        wait_for(lambda: first.fault_hits, 60, "the old worker's review to be under way")
        refused = hosts.worker("worker-refused")
        assert refused.wait(timeout=60) == 3, hosts.tails()
        said = [m for m in _messages(refused_log) if "does not start" in m]
        assert len(said) == 1 and "before schema versions hold leases" in said[0], hosts.tails()
        wait_for(
            lambda: all(hosts.concluded(r) for r in names[:3]), 120, "the old worker's reviews"
        )

        # 2. The old worker idle: a worker of this release joins; both review the next pull
        # requests.
        new_log = hosts.log("worker-new")
        hosts.worker("worker-new")
        hosts.started("worker-new")
        hosts.accept(names[3:6], queue)
        wait_for(
            lambda: all(hosts.concluded(r) for r in names[3:6]), 180, "the mixed fleet's reviews"
        )
        time.sleep(5)  # two sweeps: a finished job the old worker wrote the old way is seen
        old_did = sum(m == "job done: failure" for m in _messages(old_log))
        older = [
            m
            for m in _messages(new_log)
            if "a worker of an older release writes to this queue" in m
        ]
        assert (old_did > 3) == bool(older), (old_did, older, hosts.tails())

        # 3. The documented upgrade: stop the old worker, run this release's (here a second one
        # joins).
        hosts.stop("worker-old")
        second_log = hosts.log("worker-new2")
        hosts.worker("worker-new2")
        hosts.started("worker-new2")
        hosts.accept(names[6:], queue)
        wait_for(
            lambda: all(hosts.concluded(r) for r in names), 180, "every pull request to conclude"
        )
        time.sleep(5)  # a duplicate would show now
        assert not [m for m in _messages(second_log) if "does not start" in m]
        for log in (old_log, new_log, second_log):  # every job is one that every release can run
            assert "not found in TaskRegistry" not in log.read_text(errors="replace"), log.name
        hosts.lab.stop()  # the queue's state is read below, with Redis still up
        for name in names:
            assert queue.is_done(f"d-{name}"), name
    hosts.assert_concluded_once_with_the_verdict(repos)
