"""A GitHub that says no, end to end: gunicorn, the worker (real checks) and the stand-in as
processes, on the protection docs/owners.md documents (the bot's check required, no approving review
required, an App's approval not counting). Each refusal - the merge the manifest does not grant
(403), a restricted dismissal (403), a secondary rate limit on content creation (403 with
retry-after), a red check that is not required ("unstable") - leaves the published verdict as it
was, and the pull request still merges once the owners approve and what the bot named is granted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.delegation_repo import DATAPROC_OWNER, build
from tests.gitrepo import git
from tests.test_e2e import Service, http, wait_for
from tests.test_e2e_delegation import AUTO_MERGE, BOT, bot_approvals, owner_approves, start

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("refusals") / "repo").path


def post(svc: Service, path: str, body: dict[str, Any]) -> Any:
    status, answer = http(
        "POST",
        f"{svc.github}{path}",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    assert status == 200, answer
    return answer


def concluded(state: dict[str, Any], head: str) -> list[tuple[str | None, str]]:
    return [
        (r["conclusion"], r["title"])
        for r in state["check_runs"]
        if r["head_sha"] == head and r["status"] == "completed"
    ]


def summary(state: dict[str, Any]) -> str:
    return str(
        next(c["body"] for c in state["issue_comments"] if "registry-bot:summary" in c["body"])
    )


def reviewed(svc: Service, head: str, runs: int) -> dict[str, Any]:
    """The state once ``runs`` check runs on ``head`` are concluded and the summary names the last
    review."""

    def done() -> dict[str, Any] | None:
        s = svc.state()
        comment = next(
            (c["body"] for c in s["issue_comments"] if "registry-bot:summary" in c["body"]), ""
        )
        return s if len(concluded(s, head)) >= runs and head[:12] in comment else None

    return wait_for(done, 90, f"{runs} concluded review(s) of {head[:12]}")  # type: ignore[no-any-return]


def test_the_merge_app_yml_does_not_grant_leaves_the_verdict_then_merges_once_granted(
    repo: Path, tmp_path: Path
) -> None:
    svc = start(repo, tmp_path, grants=())  # app.yml as it is: contents: read
    try:
        head = git(repo, "rev-parse", "pr")
        assert svc.deliver("opened", head) == 202
        svc.summary_for(head, timeout=60)
        owner_approves(svc, head)
        state = wait_for(
            lambda: s if "GitHub refused" in summary(s := svc.state()) else None, 60, "the refusal"
        )
        # nothing overwrote the verdict
        assert [c for c, _ in concluded(state, head)] == ["failure", "success"]
        assert all(title != "The bot hit an internal error" for _, title in concluded(state, head))
        assert "merge the pull request (403" in summary(state) and "**Contents: write**" in summary(
            state
        )
        assert any(r["status"] == 403 and r["path"].endswith("/merge") for r in state["requests"])
        assert state["merged"] is None and [r["state"] for r in bot_approvals(state)] == [
            "APPROVED"
        ]
        assert {
            r["api_version"] for r in state["requests"] if not r["path"].startswith("/app")
        } == {"2022-11-28"}

        # what the summary asked for
        post(svc, "/_standin/settings", {"grant": dict([AUTO_MERGE[1].split("=")])})
        owner_approves(svc, head)  # any new event reviews again
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 60, "the merge")
        assert state["merged"] == {"sha": head, "method": "SQUASH", "by": BOT}
        assert all(c != "failure" for c, _ in concluded(state, head)[1:])
    finally:
        svc.close()


def test_a_restricted_dismissal_leaves_the_verdict_and_is_named(repo: Path, tmp_path: Path) -> None:
    # ci never reports
    svc = start(repo, tmp_path, "--restrict-dismissals", "--required-check", "ci")
    try:
        head = git(repo, "rev-parse", "pr")
        assert svc.deliver("opened", head) == 202
        state = svc.summary_for(head, timeout=60)
        assert [r["state"] for r in state["reviews"] if r["user"] == BOT] == ["CHANGES_REQUESTED"]
        new = svc.push("pr2")
        assert svc.deliver("synchronize", new) == 202
        svc.approve(DATAPROC_OWNER)
        state = reviewed(svc, new, 1)
        assert [c for c, _ in concluded(state, new)] == ["success"]
        assert "dismiss a review (403" in summary(state)
        assert "Allow specified actors to dismiss pull request reviews" in summary(state)
        assert next(r["state"] for r in state["reviews"] if r["user"] == BOT) == "CHANGES_REQUESTED"
    finally:
        svc.close()


def test_a_secondary_rate_limit_on_content_creation_is_waited_out(
    repo: Path, tmp_path: Path
) -> None:
    svc = start(repo, tmp_path, "--content-limit", "2/4")
    try:
        head = git(repo, "rev-parse", "pr")
        assert svc.deliver("opened", head) == 202
        # check run, review, comment: the third waits for the window
        state = svc.summary_for(head, timeout=90)
        assert state["content_limit_refused"] >= 1
        assert [c for c, _ in concluded(state, head)] == ["failure"]
        assert [r["state"] for r in state["reviews"] if r["user"] == BOT] == ["CHANGES_REQUESTED"]
        owner_approves(svc, head)
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 90, "the merge")
        assert [c for c, _ in concluded(state, head)] == ["failure", "success"]
    finally:
        svc.close()


def test_a_red_check_that_is_not_required_is_unstable_and_the_bot_merges(
    repo: Path, tmp_path: Path
) -> None:
    svc = start(repo, tmp_path)
    try:
        head = git(repo, "rev-parse", "pr")
        post(svc, "/_standin/check-runs", {"name": "lint", "conclusion": "failure"})
        assert svc.deliver("opened", head) == 202
        svc.summary_for(head, timeout=60)
        owner_approves(svc, head)
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 60, "the merge")
        # "unstable status": merged
        assert state["merged"] == {"sha": head, "method": "SQUASH", "by": BOT}
        assert [c for c, _ in concluded(state, head) if c != "failure"] == ["success"]
    finally:
        svc.close()
