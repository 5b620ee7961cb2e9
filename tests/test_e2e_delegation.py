"""Delegated ownership end to end: gunicorn, the worker (real checks) and the stand-in GitHub as
processes.

The stand-in protects ``main`` as docs/owners.md sets it up: the bot's check is required and no
approving review is (an App's approval does not count toward one, as on GitHub), so the owners'
approval gates the merge through the check, which stays red until they approve; the App holds
``contents: write`` on top of app.yml for ``delegation.auto_merge``. The entry's owner has no write
access: the bot approves for them, and auto-merge or the App's merge does the rest, with no
maintainer action (``tests/delegation_repo.py``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.service.signature import sign
from tests import conformance
from tests.conftest import PAYLOADS
from tests.delegation_repo import AUTHOR, DATAPROC_OWNER, build
from tests.gitrepo import git
from tests.test_e2e import INSTALLATION, NUMBER, REPO, SECRET, Service, http, wait_for

pytestmark = pytest.mark.e2e
WORKER = ("--no-regression",)
BOT = "registry-bot[bot]"
CHECK = "OpenLineage registry"
DOCUMENTED = ("--protect", "--required-approvals", "0", "--required-check", CHECK)  # docs/owners.md
# docs/app.md: what delegation.auto_merge needs beyond app.yml
AUTO_MERGE = ("--grant", "contents=write")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("delegation") / "repo").path


def start(repo: Path, tmp: Path, *standin: str, grants: tuple[str, ...] = AUTO_MERGE) -> Service:
    svc = Service(
        tmp, worker_args=WORKER, standin_args=("--author", AUTHOR, *DOCUMENTED, *grants, *standin)
    )
    try:
        svc.start(repo)
    except BaseException:
        svc.close()
        raise
    return svc


def deliver_review(svc: Service, action: str, head_sha: str, user: str, state: str) -> None:
    payload = json.loads((PAYLOADS / "pull_request_review.submitted.json").read_bytes())
    payload.update(action=action, installation=INSTALLATION)
    payload["repository"]["full_name"] = REPO
    payload["pull_request"]["number"] = NUMBER
    payload["pull_request"]["head"]["sha"] = head_sha
    # as GitHub's: each review its own id and time (a body is accepted once, whatever its delivery)
    payload["review"].update(
        state=state,
        commit_id=head_sha,
        id=uuid.uuid4().int % 10**9,
        submitted_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    payload["review"]["user"]["login"] = payload["sender"]["login"] = user
    conformance.note_payload(svc.record, "pull_request_review", payload)
    body = json.dumps(payload).encode()
    status, _ = http(
        "POST",
        f"{svc.web}/webhook",
        body,
        {
            "X-GitHub-Event": "pull_request_review",
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body, SECRET),
            "Content-Type": "application/json",
        },
    )
    assert status == 202


def owner_approves(svc: Service, head: str) -> int:
    """The entry's owner approves ``head`` on GitHub, which delivers
    ``pull_request_review.submitted``."""
    before = {r["id"] for r in svc.state()["reviews"]}
    svc.approve(DATAPROC_OWNER)
    # the bot's own review of the push may land meanwhile: it is posted after its check run
    # concludes
    [review] = [
        r for r in svc.state()["reviews"] if r["id"] not in before and r["user"] == DATAPROC_OWNER
    ]
    deliver_review(svc, "submitted", head, DATAPROC_OWNER, "approved")
    return int(review["id"])


def bot_approvals(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in state["reviews"] if r["user"] == BOT and r["event"] == "APPROVE"]


def approved(svc: Service, head: str) -> dict[str, Any]:
    """The state once the bot approved ``head`` and enabled auto-merge (its next request)."""

    def found() -> dict[str, Any] | None:
        state = svc.state()
        mine = any(
            r["commit_id"] == head and r["state"] == "APPROVED" for r in bot_approvals(state)
        )
        return state if mine and state["auto_merge"] else None

    return wait_for(found, 60, f"the bot's approval of {head[:12]} and auto-merge")  # type: ignore[no-any-return]


@pytest.fixture
def protected(repo: Path, tmp_path: Path) -> Iterator[Service]:
    svc = start(repo, tmp_path)
    yield svc
    svc.close()


def test_an_owner_without_write_access_approves_and_the_pull_request_merges(
    protected: Service, repo: Path
) -> None:
    head = git(repo, "rev-parse", "pr")
    assert protected.deliver("opened", head) == 202
    state = protected.summary_for(head, timeout=60)
    # the owner has not approved yet
    assert protected.completed_run(head)["conclusion"] == "failure"
    assert not bot_approvals(state) and state["merged"] is None
    assert "Not merging yet" in state["issue_comments"][0]["body"]

    owner_approves(protected, head)
    state = wait_for(lambda: (s := protected.state())["merged"] and s, 60, "the merge")
    [approval] = bot_approvals(state)
    assert approval["commit_id"] == head and approval["state"] == "APPROVED"
    assert f"`{DATAPROC_OWNER}`" in approval["body"] and head in approval["body"]
    # nothing else was pending, so GitHub refused auto-merge ("clean status") and the bot merged the
    # approved sha
    assert state["merged"] == {"sha": head, "method": "SQUASH", "by": BOT}
    assert state["pull_request"]["state"] == "closed"
    runs = [r for r in state["check_runs"] if r["head_sha"] == head and r["status"] == "completed"]
    assert runs[-1]["conclusion"] == "success"


def test_a_push_withdraws_the_approval_until_the_owner_approves_again_and_a_dismissal_withdraws_it(
    repo: Path, tmp_path: Path
) -> None:
    # a CI that never reports: auto-merge waits
    svc = start(repo, tmp_path, "--required-check", "ci")
    try:
        head = git(repo, "rev-parse", "pr")
        assert svc.deliver("opened", head) == 202
        svc.summary_for(head, timeout=60)
        owner_approves(svc, head)
        state = approved(svc, head)
        assert state["auto_merge"] == "SQUASH" and state["merged"] is None
        assert any("'ci'" in b for b in state["merge_blockers"])
        merge = wait_for(
            lambda: next(
                (
                    c["body"]
                    for c in svc.state()["issue_comments"]
                    if "Auto-merge is enabled" in c["body"]
                ),
                None,
            ),
            60,
            "the Merge section",
        )
        # GraphQL read
        assert "a required check that has not reported yet is not visible to the bot" in merge

        new = svc.push("pr2")  # the author pushes: GitHub disables auto-merge (no write access)
        assert svc.deliver("synchronize", new) == 202
        state = svc.summary_for(new, timeout=60)
        [old] = bot_approvals(state)
        assert (
            old["commit_id"] == head
            and old["state"] == "DISMISSED"
            and "new head" in old["dismissal_message"]
        )
        assert state["auto_merge"] is None
        # the owner's approval of the old head counts
        assert svc.completed_run(new)["conclusion"] == "success"
        # for the bot
        assert "approvals of an older commit do not count" in state["issue_comments"][0]["body"]

        review_id = owner_approves(svc, new)
        state = approved(svc, new)
        assert state["auto_merge"] == "SQUASH"

        http(
            "POST",
            f"{svc.github}/_standin/dismissals",
            json.dumps({"review_id": review_id}).encode(),
            {"Content-Type": "application/json"},
        )
        deliver_review(svc, "dismissed", new, DATAPROC_OWNER, "dismissed")

        # the approval is dismissed first, then the check concludes
        def withdrawn() -> dict[str, Any] | None:
            s = svc.state()
            runs = [r for r in s["check_runs"] if r["head_sha"] == new]
            concluded = runs[-1]["status"] == "completed"
            return (
                s
                if concluded and all(r["state"] == "DISMISSED" for r in bot_approvals(s))
                else None
            )

        state = wait_for(withdrawn, 60, "the bot's approval and the check withdrawn")
        last = [r for r in bot_approvals(state) if r["commit_id"] == new][-1]
        assert last["dismissal_message"].startswith("Withdrawn")
        runs = [r for r in state["check_runs"] if r["head_sha"] == new]
        # the owner's latest review is dismissed: the check fails too
        assert runs[-1]["conclusion"] == "failure"
        assert state["merged"] is None
    finally:
        svc.close()


def test_a_writers_push_turns_off_the_auto_merge_the_app_enabled_for_the_older_head(
    repo: Path, tmp_path: Path
) -> None:
    """Without "dismiss stale approvals" (docs/owners.md allows it) and with a writer's push, GitHub
    leaves auto-merge on (``expectedHeadOid`` is checked only when it is enabled): the App turns it
    off (GraphQL ``disablePullRequestAutoMerge``) before the new head's check passes."""
    svc = start(repo, tmp_path, "--required-check", "ci", "--permission", f"{AUTHOR}=write")
    try:
        head = git(repo, "rev-parse", "pr")
        assert svc.deliver("opened", head) == 202
        svc.summary_for(head, timeout=60)
        owner_approves(svc, head)
        assert approved(svc, head)["auto_merge"] == "SQUASH"

        new = svc.push("pr2")  # the author, a writer: auto-merge stays on at GitHub
        assert svc.state()["auto_merge"] == "SQUASH"
        assert svc.deliver("synchronize", new) == 202
        state = svc.summary_for(new, timeout=60)
        [old] = bot_approvals(state)
        assert old["commit_id"] == head and old["state"] == "DISMISSED"
        assert state["auto_merge"] is None and state["merged"] is None
        # the owner's approval of the old head passes the check; no one approved this head
        assert svc.completed_run(new)["conclusion"] == "success"
    finally:
        svc.close()


def test_a_change_to_the_bots_configuration_is_never_approved_on_the_owners_behalf(
    repo: Path, tmp_path: Path
) -> None:
    # the entry edit plus .github/registry-bot.yml
    svc = start(repo, tmp_path, "--pr-head", "config")
    try:
        head = git(repo, "rev-parse", "config")
        assert svc.deliver("opened", head) == 202
        svc.summary_for(head, timeout=60)
        owner_approves(svc, head)

        def reviewed_twice() -> dict[str, Any] | None:
            s = svc.state()
            done = [
                r for r in s["check_runs"] if r["head_sha"] == head and r["status"] == "completed"
            ]
            return (
                s
                if len(done) == 2 and "registry-bot:summary" in s["issue_comments"][0]["body"]
                else None
            )

        state = wait_for(reviewed_twice, 60, "the review after the owner's approval")
        assert not bot_approvals(state) and state["merged"] is None and state["auto_merge"] is None
        assert (
            "the bot's configuration (`.github/registry-bot.yml`)"
            in state["check_runs"][-1]["summary"]
        )
    finally:
        svc.close()
