"""A GitHub that says no, end to end: gunicorn, the worker (real checks) and the stand-in as
processes, on the protection docs/owners.md documents (the bot's check required, no approving review
required, an App's approval not counting). Each refusal - the merge the manifest does not grant
(403), a restricted dismissal (403), an App's approval not counting toward a required approving
review, a secondary rate limit on content creation (403 with retry-after), a red check that is not
required ("unstable") - leaves the published verdict as it was (never the bot's internal error),
and the pull request still merges once the owners approve, on the documented setup (what the bot
named granted, the approving review no longer required)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.delegation_repo import DATAPROC_OWNER, build
from tests.gitrepo import git
from tests.test_e2e import NUMBER, Service, http, wait_for
from tests.test_e2e_delegation import (
    AUTO_MERGE,
    BOT,
    CHECK,
    bot_approvals,
    owner_approves,
    start,
)

pytestmark = pytest.mark.e2e
INTERNAL = "The bot hit an internal error"


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


def first_review(svc: Service, repo: Path, timeout: float = 60) -> tuple[str, dict[str, Any]]:
    """The pull request (head ``pr``) is opened: its head and the state once the bot's first review
    of it is published."""
    head = git(repo, "rev-parse", "pr")
    assert svc.deliver("opened", head) == 202
    return head, svc.summary_for(head, timeout=timeout)


def concluded(state: dict[str, Any], head: str) -> list[tuple[str | None, str]]:
    """The bot's concluded check runs on ``head``, oldest first: (conclusion, title)."""
    return [
        (r["conclusion"], r["title"])
        for r in state["check_runs"]
        if r["head_sha"] == head and r["name"] == CHECK and r["status"] == "completed"
    ]


def verdicts(state: dict[str, Any], head: str) -> list[str | None]:
    """The conclusions of the bot's check runs on ``head``, none of them the bot's internal error
    (which concludes ``failure`` too)."""
    runs = concluded(state, head)
    assert all(title != INTERNAL for _, title in runs), runs
    return [c for c, _ in runs]


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
        head, _ = first_review(svc, repo)
        owner_approves(svc, head)
        state = wait_for(
            lambda: s if "GitHub refused" in summary(s := svc.state()) else None, 60, "the refusal"
        )
        # nothing overwrote the verdict
        assert verdicts(state, head) == ["failure", "success"]
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
        assert "failure" not in verdicts(state, head)[1:]
    finally:
        svc.close()


def test_a_restricted_dismissal_leaves_the_verdict_and_is_named_and_the_pull_request_merges(
    repo: Path, tmp_path: Path
) -> None:
    # ci reports only when this test posts its run
    svc = start(repo, tmp_path, "--restrict-dismissals", "--required-check", "ci")
    try:
        head, state = first_review(svc, repo)
        assert [r["state"] for r in state["reviews"] if r["user"] == BOT] == ["CHANGES_REQUESTED"]
        new = svc.push("pr2")
        assert svc.deliver("synchronize", new) == 202
        svc.approve(DATAPROC_OWNER)
        state = reviewed(svc, new, 1)
        assert verdicts(state, new) == ["success"]
        assert "dismiss a review (403" in summary(state)
        assert "Allow specified actors to dismiss pull request reviews" in summary(state)
        assert next(r["state"] for r in state["reviews"] if r["user"] == BOT) == "CHANGES_REQUESTED"

        # the bot's approval of the new head is its latest review: its old change request, which
        # it could not dismiss, does not block; auto-merge waits for the CI alone
        assert [r["state"] for r in bot_approvals(state)] == ["APPROVED"]
        assert state["auto_merge"] == "SQUASH"
        assert state["merge_blockers"] == ["required check 'ci' is expected"]
        post(svc, "/_standin/check-runs", {"name": "ci", "conclusion": "success"})
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 60, "the merge")
        assert state["merged"] == {"sha": new, "method": "SQUASH", "by": "auto-merge"}
        assert set(verdicts(state, new)) == {"success"}
        stale = next(r for r in state["reviews"] if r["user"] == BOT)
        assert (stale["state"], stale["commit_id"]) == ("CHANGES_REQUESTED", head)
    finally:
        svc.close()


def test_an_apps_approval_does_not_count_so_the_verdict_stands_and_the_documented_setup_merges(
    repo: Path, tmp_path: Path
) -> None:
    # a repository that still requires one approving review: the App's does not give it
    svc = start(repo, tmp_path, "--required-approvals", "1")
    try:
        head, _ = first_review(svc, repo)
        owner_approves(svc, head)

        def acted() -> dict[str, Any] | None:
            s = svc.state()
            mine = [r for r in bot_approvals(s) if r["commit_id"] == head]
            return s if mine and (s["auto_merge"] or s["merged"]) else None

        state = wait_for(acted, 60, f"the bot's approval of {head[:12]} and its merge step")
        assert [r["state"] for r in bot_approvals(state)] == ["APPROVED"]
        # the bot's approval is there and counted 0: auto-merge waits
        assert state["merged"] is None and state["auto_merge"] == "SQUASH"
        assert state["merge_blockers"] == [
            "1 approving review(s) by reviewers with write access required, 0 given"
        ]
        assert verdicts(state, head) == ["failure", "success"]

        wait_for(lambda: "Auto-merge is enabled" in summary(svc.state()), 60, "the Merge section")

        # docs/owners.md: no approving review required, the bot's check is the gate
        post(svc, "/_standin/settings", {"protection": {"required_approvals": 0}})
        seen = len(svc.state()["requests"])
        owner_approves(svc, head)
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 60, "the merge")
        assert state["merged"] == {"sha": head, "method": "SQUASH", "by": "auto-merge"}

        # the bot reads the merged pull request for the owner's review and leaves the verdict
        def read_again() -> dict[str, Any] | None:
            s = svc.state()
            pull = f"/pulls/{NUMBER}"
            new = s["requests"][seen:]
            return (
                s if any(r["method"] == "GET" and r["path"].endswith(pull) for r in new) else None
            )

        state = wait_for(read_again, 60, "the bot's read of the merged pull request")
        assert verdicts(state, head) == ["failure", "success"]
    finally:
        svc.close()


def test_a_secondary_rate_limit_on_content_creation_is_waited_out_and_it_merges(
    repo: Path, tmp_path: Path
) -> None:
    # a window wide enough that the review's three creations fall in it on a loaded machine too
    # (at 2/4, a CI-like run at load 9 spread them over more than 4 s and nothing was refused)
    svc = start(repo, tmp_path, "--content-limit", "2/20")
    try:
        # check run, review, comment: the third waits for the window
        head, state = first_review(svc, repo, timeout=90)
        assert state["content_limit_refused"] >= 1
        assert verdicts(state, head) == ["failure"]
        assert [r["state"] for r in state["reviews"] if r["user"] == BOT] == ["CHANGES_REQUESTED"]
        owner_approves(svc, head)
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 90, "the merge")
        assert state["merged"] == {"sha": head, "method": "SQUASH", "by": BOT}
        assert verdicts(state, head) == ["failure", "success"]
    finally:
        svc.close()


def test_a_red_check_that_is_not_required_is_unstable_and_the_bot_merges(
    repo: Path, tmp_path: Path
) -> None:
    svc = start(repo, tmp_path)
    try:
        post(svc, "/_standin/check-runs", {"name": "lint", "conclusion": "failure"})
        head, _ = first_review(svc, repo)
        owner_approves(svc, head)
        state = wait_for(lambda: (s := svc.state())["merged"] and s, 60, "the merge")
        # "unstable status": merged
        assert state["merged"] == {"sha": head, "method": "SQUASH", "by": BOT}
        assert verdicts(state, head) == ["failure", "success"]  # lint's run is not the bot's
    finally:
        svc.close()
