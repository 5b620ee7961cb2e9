"""End to end over real HTTP: 10 merges to the default branch, each a signed ``push`` delivery to
gunicorn, and the worker keeps one dashboard issue at the stand-in, edited in place; every request
checked against GitHub's REST description (``Service.close``)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from bot.outputs.render.dashboard import MARKER
from bot.service.signature import sign
from tests.gitrepo import Repo, git
from tests.test_e2e import INSTALLATION, REPO, SECRET, Service, http, wait_for

pytestmark = pytest.mark.e2e


def deliver_push(service: Service, sha: str) -> int:
    payload = {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": sha,
        "deleted": False,
        "installation": INSTALLATION,
        "repository": {"full_name": REPO, "default_branch": "main"},
    }
    body = json.dumps(payload).encode()
    status, _ = http(
        "POST",
        f"{service.web}/webhook",
        body,
        {
            "X-GitHub-Event": "push",
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body, SECRET),
            "Content-Type": "application/json",
        },
    )
    return status


def test_ten_merges_edit_one_dashboard_issue_in_place(tmp_path: Path, corpus: Path) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    git(repo.path, "branch", "pr")
    service = Service(tmp_path, worker_args=("--no-regression", "--sweep-every", "1"))
    try:
        service.start(repo.path)
        for i in range(10):
            repo.write(f"docs/merged-{i}.md", f"merge {i}\n")
            sha = repo.commit(f"merge {i}", branch="main")
            assert deliver_push(service, sha) == 202

            def refreshed(sha: str = sha) -> list[dict[str, object]] | None:
                issues = service.state()["issues"]
                return issues if issues and sha[:12] in str(issues[0]["body"]) else None

            issues = wait_for(refreshed, 60, f"the dashboard of merge {i}")
            assert len(issues) == 1
        [issue] = service.state()["issues"]
        assert str(issue["body"]).startswith(MARKER) and len(issue["history"]) == 9  # type: ignore[arg-type]
        assert service.state()["check_runs"] == []
    finally:
        service.close()
