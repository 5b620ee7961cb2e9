"""End to end over real HTTP: gunicorn and the worker as real processes, GitHub replaced by the
stand-in.

The worker runs the fake check of ``tests/fakes.py`` (``--checks``, no regression) so that lines are
known exactly; ``tests/test_e2e_real.py`` runs the same service with the real checks.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.service.signature import sign
from tests import conformance
from tests.conftest import PAYLOADS, ROOT
from tests.gitrepo import Repo, git
from tests.test_pipeline import ENTRY, broken_entry

pytestmark = pytest.mark.e2e
REPO = "OpenLineage/OpenLineage"
NUMBER = 7
SECRET = "e2e-secret"
# as GitHub's payloads carry it
INSTALLATION = {"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http(
    method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


FAKE_WORKER = (
    "--checks",
    "tests.fakes:FAKE_CHECKS",
    "--no-regression",
    "--lease-ttl",
    "4",
    "--sweep-every",
    "1",
)


class Service:
    """The stand-in, gunicorn and the worker, started from one git repository; stopped in
    ``close()``.

    ``worker_args`` and ``standin_args`` are added to the worker's and the stand-in's command lines.
    """

    start_timeout = 20.0  # seconds for the web to answer /readyz

    def __init__(
        self,
        tmp: Path,
        worker_args: tuple[str, ...] = FAKE_WORKER,
        standin_args: tuple[str, ...] = (),
        write_pause: float = 0.0,
    ) -> None:
        self.tmp = tmp
        self.worker_args = worker_args
        self.write_pause = write_pause
        self.standin_args = standin_args
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        self.queue_file = tmp / "queue.sqlite3"
        # every request the stand-in got (tests/conformance.py)
        self.record = tmp / "standin-requests.jsonl"
        self.head = "0" * 40  # the head of the last delivery (a synchronize's ``before``)

    def start(self, repo: Path) -> None:
        self.repo = repo
        self.env["STANDIN_RECORD"] = str(self.record)
        standin = self._spawn(
            "standin",
            [
                sys.executable,
                "-m",
                "tests.standin",
                "--repo",
                str(repo),
                "--port",
                "0",
                "--pr-base",
                "main",
                "--pr-head",
                "pr",
                "--pr-number",
                str(NUMBER),
                "--repo-name",
                REPO,
                "--app-key",
                str(self.tmp / "app.pem"),
                *self.standin_args,
            ],
            stdout=subprocess.PIPE,
        )
        self.github = f"http://127.0.0.1:{self._first_line(standin)}"
        self.env.update(
            GITHUB_APP_ID="1",
            GITHUB_APP_PRIVATE_KEY_PATH=str(self.tmp / "app.pem"),
            GITHUB_WEBHOOK_SECRET=f"old,{SECRET}",
            GITHUB_API_URL=self.github,
            BOT_QUEUE_URL=str(self.queue_file),
            # each test says which deliveries arrive (test_reconcile: none)
            BOT_RECONCILE_EVERY="0",
        )
        self.web = f"http://127.0.0.1:{free_port()}"
        self.start_web()
        wait_for(lambda: self._get(f"{self.web}/readyz") == 200, self.start_timeout, "gunicorn")
        self.start_worker()

    def start_web(self) -> None:
        self._spawn(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "gunicorn.conf.py"),
                "--bind",
                self.web.removeprefix("http://"),
                "--workers",
                "1",
                "bot.service.wsgi:create_app()",
            ],
        )

    def _spawn(
        self, name: str, args: list[str], stdout: int | None = None
    ) -> subprocess.Popen[bytes]:
        with (self.tmp / f"{name}.log").open("ab") as log:
            proc = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=stdout or log, stderr=log)
        self.procs[name] = proc
        return proc

    @staticmethod
    def _first_line(proc: subprocess.Popen[bytes]) -> int:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout=20):
                raise AssertionError("the stand-in did not print its port")
        return int(proc.stdout.readline())

    @staticmethod
    def _get(url: str) -> int:
        try:
            return http("GET", url)[0]
        except OSError:
            return 0

    def start_worker(self) -> None:
        self._spawn(
            "worker",
            [
                sys.executable,
                "-m",
                "bot.service.worker",
                *self.worker_args,
                "--write-pause",
                str(self.write_pause),
                "--poll",
                "0.05",
            ],
        )

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def close(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
            if proc.stdout:
                proc.stdout.close()
        self.procs.clear()
        drift = conformance.check_end_to_end(conformance.read(self.record))
        assert not drift, (
            "requests, answers or payloads GitHub's descriptions do not allow:\n" + "\n".join(drift)
        )

    # -- GitHub side ------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return http("GET", f"{self.github}/_standin/state")[1]

    def push(self, head: str) -> str:
        return str(
            http(
                "POST",
                f"{self.github}/_standin/push",
                json.dumps({"head": head}).encode(),
                {"Content-Type": "application/json"},
            )[1]["head_sha"]
        )

    def approve(self, user: str) -> None:
        """``user`` submits an approving review of the current head."""
        status, _ = http(
            "POST",
            f"{self.github}/_standin/reviews",
            json.dumps({"user": user}).encode(),
            {"Content-Type": "application/json"},
        )
        assert status == 200

    def faults(self, faults: list[dict[str, Any]]) -> None:
        http(
            "POST",
            f"{self.github}/_standin/faults",
            json.dumps(faults).encode(),
            {"Content-Type": "application/json"},
        )

    def deliver(self, action: str, head_sha: str) -> int:
        name = (
            "pull_request.synchronize.json"
            if action == "synchronize"
            else "pull_request.opened.json"
        )
        payload = json.loads((PAYLOADS / name).read_bytes())
        payload["repository"]["full_name"] = REPO
        payload["number"] = payload["pull_request"]["number"] = NUMBER
        payload["pull_request"]["head"]["sha"] = head_sha
        payload["installation"] = INSTALLATION
        # as GitHub's: the push a synchronize reports, and when the pull request changed (two
        # deliveries never have the same body; the web refuses a body it accepted already)
        if action == "synchronize":
            payload["before"], payload["after"] = self.head, head_sha
        self.head = head_sha
        payload["pull_request"]["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        conformance.note_payload(self.record, "pull_request", payload)
        body = json.dumps(payload).encode()
        status, _ = http(
            "POST",
            f"{self.web}/webhook",
            body,
            {
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": str(uuid.uuid4()),
                "X-Hub-Signature-256": sign(body, SECRET),
                "Content-Type": "application/json",
            },
        )
        return status

    def completed_run(self, head_sha: str, timeout: float = 30.0) -> dict[str, Any]:
        def done() -> dict[str, Any] | None:
            runs = [r for r in self.state()["check_runs"] if r["head_sha"] == head_sha]
            finished = [
                r
                for r in runs
                if r["status"] == "completed"
                # not a verdict: nothing / superseded
                and r["conclusion"] not in ("neutral", "cancelled")
            ]
            return finished[-1] if finished else None

        return wait_for(done, timeout, f"a completed check run on {head_sha[:12]}")  # type: ignore[no-any-return]

    def summary_for(self, head_sha: str, timeout: float = 30.0) -> dict[str, Any]:
        """The state once the summary comment names ``head_sha`` (the last thing a review
        publishes)."""

        def posted() -> dict[str, Any] | None:
            state = self.state()
            return (
                state
                if any(
                    head_sha[:12] in c["body"] and "registry-bot:summary" in c["body"]
                    for c in state["issue_comments"]
                )
                else None
            )

        return wait_for(posted, timeout, f"the summary of {head_sha[:12]}")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    repo = Repo.from_folder(corpus, tmp_path_factory.mktemp("e2e") / "repo")
    repo.change({ENTRY: broken_entry()}, "add a facet")
    repo.write(ENTRY, broken_entry("GcpDataprocRunFacet.json"))
    repo.commit("fix the facet", branch="fix")
    return repo.path


@pytest.fixture
def service(git_repo: Path, tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path)
    try:
        svc.start(git_repo)
        yield svc
    finally:
        svc.close()


def test_opened_then_fixed_pull_request(service: Service, git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "pr")
    assert service.deliver("opened", head) == 202
    run = service.completed_run(head)
    assert run["name"] == "OpenLineage registry" and run["conclusion"] == "failure"
    assert [(a["path"], a["start_line"]) for a in run["annotations"]] == [(ENTRY, 6)]
    state = service.summary_for(head)
    [review] = state["reviews"]
    assert review["state"] == "CHANGES_REQUESTED"
    assert [(c["path"], c["line"]) for c in review["comments"]] == [(ENTRY, 6)]
    [summary] = state["issue_comments"]
    assert "registry-bot:summary" in summary["body"] and "failed" in summary["body"]

    fixed = service.push("fix")
    assert service.deliver("synchronize", fixed) == 202
    assert service.completed_run(fixed)["conclusion"] == "success"
    state = service.summary_for(fixed)
    assert state["reviews"][0]["state"] == "DISMISSED"
    summaries = [c for c in state["issue_comments"] if "registry-bot:summary" in c["body"]]
    assert [c["id"] for c in summaries] == [summary["id"]] and "passed" in summaries[0]["body"]
    assert all(r["status"] == "completed" for r in state["check_runs"])


def test_a_typical_review_makes_at_most_15_requests_and_one_write_a_second(
    git_repo: Path, tmp_path: Path
) -> None:
    """The pull request of these tests reviewed by the bot's own checks, as
    ``benchmarks/bench_e2e.py`` times it, opened and then pushed to: the GitHub requests of each
    review counted at the stand-in, so that they cannot creep back up (not timed). The push's review
    asks nothing the first one learnt for good: the base's tree, the owner team that GitHub would
    not show (asked again only after ``TEAM_REFUSAL_TTL``)."""
    svc = Service(tmp_path, worker_args=(), standin_args=("--write-pause", "1"), write_pause=1.0)
    try:
        svc.start(git_repo)
        head = git(git_repo, "rev-parse", "pr")
        assert svc.deliver("opened", head) == 202
        svc.summary_for(head, timeout=60)
        time.sleep(0.5)  # the summary's answer, and anything after it
        first = svc.state()
        fixed = svc.push("fix")
        assert svc.deliver("synchronize", fixed) == 202
        svc.summary_for(fixed, timeout=60)
        time.sleep(0.5)
        state = svc.state()
    finally:
        svc.close()
    made = [
        f"{r['method']} {r['path']}" for r in first["requests"] if not r["path"].startswith("/app")
    ]
    # the App's token and GET /app come once per process, not per review
    assert len(made) <= 15, made
    assert not [r for r in made if "/git/blobs/" in r or "/contents/" in r]  # files come by GraphQL
    writes = [f"{w['method']} {w['path'].split('/')[-1]}" for w in first["pacing"]["writes"]]
    assert writes == [
        "POST check-runs",
        f"PATCH {first['check_runs'][0]['id']}",
        "POST reviews",
        "POST comments",
    ]
    pushed = [f"{r['method']} {r['path']}" for r in state["requests"][len(first["requests"]) :]]
    assert len(pushed) <= 15, pushed
    assert [r for r in made if "/orgs/" in r] and not [r for r in pushed if "/orgs/" in r]
    assert len([r for r in pushed if "/git/trees/" in r]) == 1  # the head's; the base's is known
    writes = [
        f"{w['method']} {w['path'].split('/')[-1]}"
        for w in state["pacing"]["writes"][len(writes) :]
    ]
    summary = next(c["id"] for c in state["issue_comments"] if "registry-bot:summary" in c["body"])
    assert writes == [
        "POST check-runs",
        f"PATCH {state['check_runs'][-1]['id']}",
        "PUT dismissals",
        "POST reviews",
        f"PATCH {summary}",
    ]  # the verdict first, then the review and the summary
    assert state["pacing"]["violations"] == []  # one at a time, a second apart


def test_worker_killed_mid_review_still_concludes(service: Service, git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "pr")
    # hold the worker inside the review: the tree request waits on a rate limit reset
    service.faults([{"path": "/repos/*/git/trees/*", "status": 403, "reset_in": 20, "count": 1}])
    assert service.deliver("opened", head) == 202
    wait_for(
        lambda: any(r["status"] == "in_progress" for r in service.state()["check_runs"]),
        20,
        "review start",
    )
    service.kill("worker")
    http("DELETE", f"{service.github}/_standin/faults")
    service.start_worker()
    run = service.completed_run(head)
    assert run["conclusion"] == "failure" and [a["start_line"] for a in run["annotations"]] == [6]
    # nothing left in progress
    assert all(r["status"] == "completed" for r in service.state()["check_runs"])


def test_server_errors_and_rate_limits_are_survived(service: Service, git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "pr")
    service.faults(
        [
            {"path": "/repos/*/pulls/*/files", "status": 500, "count": 2},
            {"path": "/repos/*/check-runs/*", "status": 429, "retry_after": 1, "count": 1},
            {"path": "/repos/*/issues/*/comments", "status": 502, "count": 1},
            # the batch of files, not the config
            {"path": "/graphql", "status": 502, "count": 1, "skip": 1},
        ]
    )
    assert service.deliver("opened", head) == 202
    run = service.completed_run(head)
    assert run["conclusion"] == "failure"
    state = service.summary_for(head)
    assert {h["path"] for h in state["fault_hits"]} >= {
        "/graphql",
        f"/repos/{REPO}/issues/{NUMBER}/comments",
    }
    assert len([c for c in state["issue_comments"] if "summary" in c["body"]]) == 1


def test_two_quick_pushes_publish_only_the_newest_head(service: Service, git_repo: Path) -> None:
    old = git(git_repo, "rev-parse", "pr")
    assert service.deliver("opened", old) == 202
    new = service.push("fix")
    assert service.deliver("synchronize", new) == 202
    assert service.completed_run(new)["conclusion"] == "success"
    time.sleep(1.0)  # let a stale job for the old head finish, if one was still running
    state = service.summary_for(new)
    assert all(r["commit_id"] == new for r in state["reviews"] if r["state"] != "DISMISSED")
    assert not [
        r for r in state["reviews"] if r["commit_id"] == old and r["state"] == "CHANGES_REQUESTED"
    ]
    old_runs = [r for r in state["check_runs"] if r["head_sha"] == old]
    assert all(r["status"] == "completed" and r["conclusion"] == "cancelled" for r in old_runs)
    assert all(old[:12] not in c["body"] for c in state["issue_comments"])
