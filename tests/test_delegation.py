"""Delegated approval through the worker's whole pipeline over ``LocalGitHub`` (what the stand-in
serves): two entries wait for both owners; root files, core facets, CODEOWNERS and the bot's
configuration are never approved on anyone's behalf; ``replay`` shows the bot's review; review
events re-queue a review."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.cli.commands.replay import _Single
from bot.core.config import ConfigError, parse_config
from bot.github.api import ChangedFile, CheckRunInfo, GitHubError, RateLimited, ReviewInfo
from bot.github.app_permissions import needed_for
from bot.github.delegation import changed_reviewers
from bot.github.events import Job, decide
from bot.github.local import LocalGitHub
from bot.github.local_merge import BranchProtection
from bot.github.publish import CHECK_NAME
from bot.service import reconcile
from bot.service.queue import JobDeferred
from bot.service.worker import Worker
from tests import conformance
from tests.conftest import PAYLOADS
from tests.delegation_repo import (
    AUTHOR,
    DATAPROC,
    DATAPROC_OWNER,
    ICEBERG,
    ICEBERG_OWNER,
    build,
)
from tests.gitrepo import git

BOT = "registry-bot[bot]"
REPO = "OpenLineage/OpenLineage"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("delegation") / "repo").path


def pull(repo: Path, head: str, author: str = AUTHOR) -> LocalGitHub:
    return LocalGitHub(
        repo,
        "main",
        head,
        repo=REPO,
        number=7,
        author=author,
        protection=BranchProtection(required_approvals=0, required_checks=(CHECK_NAME,)),
    )


@pytest.fixture
def local(repo: Path, request: pytest.FixtureRequest) -> Iterator[LocalGitHub]:
    gh = pull(repo, request.param)
    yield gh
    gh.close()


def review(gh: LocalGitHub) -> str:
    return Worker(_Single(gh)).handle(Job("d", "pull_request_review", "submitted", 1, REPO, 7))


def bot_approvals(gh: LocalGitHub) -> list[str]:
    return [r.state for r in gh.reviews if r.user == BOT and r.event == "APPROVE"]


def summary(gh: LocalGitHub) -> str:
    return next(c.body for c in gh.issue_comments if "registry-bot:summary" in c.body)


@pytest.mark.parametrize("local", ["two"], indirect=True)
def test_a_change_to_two_entries_waits_for_the_owners_of_both(local: LocalGitHub) -> None:
    local.add_review(DATAPROC_OWNER)
    assert review(local) == "failure"
    assert bot_approvals(local) == [] and local.merged is None
    assert f"`@{ICEBERG_OWNER}`" in summary(local) and "an owner of `iceberg` approves" in summary(
        local
    )
    local.add_review(ICEBERG_OWNER)
    assert review(local) == "success"
    assert bot_approvals(local) == ["APPROVED"]
    body = next(r.body for r in local.reviews if r.user == BOT and r.event == "APPROVE")
    assert "`gcp:dataproc`" in body and "`iceberg`" in body and f"`{ICEBERG_OWNER}`" in body
    assert local.merged is not None and local.merged["sha"] == local.resolve("two")


@pytest.mark.parametrize(
    ("local", "why"),
    [
        ("facets", "spec/facets/DocumentationJobFacet.json"),
        ("rootco", "a CODEOWNERS file (`CODEOWNERS`)"),
        ("config", "the bot's configuration (`.github/registry-bot.yml`)"),
        ("entryco", "a CODEOWNERS file (`spec/registry/gcp/dataproc/CODEOWNERS`)"),
    ],
    indirect=["local"],
)
def test_root_files_core_facets_codeowners_and_the_bot_config_are_never_approved(
    local: LocalGitHub, why: str
) -> None:
    local.add_review(DATAPROC_OWNER)
    review(local)
    assert bot_approvals(local) == [] and local.merged is None
    text = summary(local)
    assert "does not approve this change on the owners' behalf" in text and why in text


@pytest.mark.parametrize(
    "broken",
    [
        "delegation:\n  approve: false\n  merge_method: fast\n",  # a value it cannot use
        "delegation:\n  approve: false\n# " + "x" * 300_000 + "\n",  # over the size it reads
        "delegation:\n  approve: false\n# " + "x" * 11_000_000 + "\n",  # over what GitHub serves
    ],
    ids=["a value", "over 256 KiB", "over 10 MB"],
)
def test_a_configuration_the_bot_cannot_use_approves_nothing(
    repo: Path, tmp_path: Path, broken: str
) -> None:
    """The checks run on the defaults, but the defaults' delegation (approve for every entry) is
    not what the repository asked for: the App acts on no configuration it could not read."""
    copy = tmp_path / "repo"
    git(tmp_path, "clone", "-q", "--no-local", str(repo), str(copy))
    git(copy, "checkout", "-q", "-B", "main", "origin/main")
    (copy / ".github/registry-bot.yml").write_text(broken)
    git(copy, "commit", "-q", "-am", "a configuration the bot cannot use")
    git(copy, "checkout", "-q", "-b", "fix", "main")
    git(copy, "cherry-pick", "origin/pr")
    gh = pull(copy, "fix")
    try:
        gh.add_review(DATAPROC_OWNER)
        assert review(gh) == "success"  # config/invalid is the base's, never the change's
        assert bot_approvals(gh) == [] and gh.merged is None
        text = summary(gh)
        assert "configuration cannot be used (config/invalid)" in text
        assert "approves nothing until the configuration is fixed" in text
    finally:
        gh.close()


def test_an_owner_authoring_their_own_change_needs_no_other_approval(repo: Path) -> None:
    gh = pull(repo, "pr", author=DATAPROC_OWNER)
    try:
        assert review(gh) == "success"
        assert bot_approvals(gh) == ["APPROVED"] and gh.merged is not None
    finally:
        gh.close()


def test_a_new_blocking_finding_withdraws_the_approval(repo: Path, tmp_path: Path) -> None:
    gh = pull(repo, "pr")
    try:
        # no merge meanwhile
        gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
        gh.add_review(DATAPROC_OWNER)
        assert review(gh) == "success" and bot_approvals(gh) == ["APPROVED"]
        git(repo, "checkout", "-q", "-B", "broken", "pr")
        path = repo / "spec/registry/gcp/dataproc/registry.json"
        data = json.loads(path.read_text())
        data["producer"]["produced_facets"].append("ol:gcp:dataproc:Missing.json")
        path.write_text(json.dumps(data, indent=2) + "\n")
        git(repo, "commit", "-qam", "a facet that does not exist")
        git(repo, "checkout", "-q", "main")
        gh.push("broken")
        gh.add_review(DATAPROC_OWNER)
        assert review(gh) == "failure"
        assert bot_approvals(gh) == ["DISMISSED"] and gh.merged is None
        assert "the review finds nothing blocking" in summary(gh)
    finally:
        gh.close()


def test_replay_shows_the_bots_approval(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = json.loads((PAYLOADS / "pull_request.opened.json").read_bytes())
    payload["repository"]["full_name"] = REPO
    payload["pull_request"]["base"]["ref"], payload["pull_request"]["head"]["ref"] = "main", "pr"
    payload["pull_request"]["user"]["login"] = AUTHOR
    # still one GitHub could send
    assert conformance.payload_problems("pull_request", payload) == []
    delivery = tmp_path / "delivery.json"
    delivery.write_text(json.dumps(payload))
    assert (
        main(["replay", str(delivery), "--repo", str(repo), "--approved-by", DATAPROC_OWNER]) == 0
    )
    out = capsys.readouterr().out
    sha = git(repo, "rev-parse", "pr")[:12]
    assert (
        f"by {BOT} on {sha}: APPROVED" in out and "Approved on behalf of the entries' owners" in out
    )
    # no owner approval: no bot approval
    assert main(["replay", str(delivery), "--repo", str(repo)]) == 1
    assert f"by {BOT} on {sha}: APPROVED" not in capsys.readouterr().out


@pytest.mark.parametrize("action", ["submitted", "edited", "dismissed"])
def test_every_review_event_that_can_change_the_verdict_queues_a_review(action: str) -> None:
    payload = json.loads((PAYLOADS / "pull_request_review.submitted.json").read_bytes())
    payload["action"] = action
    if action == "edited":
        payload["changes"] = {"body": {"from": ""}}
    if action == "dismissed":
        payload["review"]["state"] = "dismissed"
    # as GitHub sends that action
    assert conformance.payload_problems("pull_request_review", payload) == []
    assert decide("pull_request_review", "d", payload).job is not None
    payload["sender"]["type"] = "Bot"  # the App's own reviews and dismissals
    assert decide("pull_request_review", "d", payload).job is None


def test_delegation_configuration() -> None:
    config = parse_config("delegation:\n  entries: ['gcp:*']\n  merge_method: MERGE\n", "x.yml")
    assert config.delegation.covers("gcp:dataproc") and not config.delegation.covers("iceberg")
    assert not parse_config("delegation:\n  approve: false\n", "x.yml").delegation.covers("iceberg")
    with pytest.raises(ConfigError, match="merge_method"):
        parse_config("delegation:\n  merge_method: fast\n", "x.yml")


def test_auto_merge_waits_for_the_last_requirement_and_a_push_by_a_non_writer_disables_it(
    repo: Path,
) -> None:
    gh = pull(repo, "pr")
    try:
        gh.protection = BranchProtection(required_checks=("ci",))  # one approving review required
        gh.permissions["maintainer"] = "write"
        gh.add_review(DATAPROC_OWNER)  # no write access: does not count
        # an App's: does not count
        gh.create_review(REPO, 7, gh.resolve("pr"), "APPROVE", "for the owners")
        assert gh.merge_blockers() == [
            "1 approving review(s) by reviewers with write access required, 0 given",
            "required check 'ci' is expected",
        ]
        gh.add_review("maintainer")
        assert gh.merge_blockers() == ["required check 'ci' is expected"]
        gh.enable_auto_merge(REPO, 7, gh.node_id, gh.resolve("pr"), "SQUASH")
        run = gh.create_check_run(REPO, gh.resolve("pr"), "ci", "in_progress")
        assert gh.merged is None and gh.auto_merge == "SQUASH"
        # the author has no write access: GitHub disables auto-merge; stale approvals go
        gh.push("pr2")
        assert gh.auto_merge is None and {r.state for r in gh.reviews} == {"DISMISSED"}
        gh.push("pr")
        gh.add_review("maintainer")
        gh.enable_auto_merge(REPO, 7, gh.node_id, gh.resolve("pr"), "MERGE")
        with pytest.raises(Exception, match="expected head"):
            gh.enable_auto_merge(REPO, 7, gh.node_id, gh.resolve("pr2"), "MERGE")
        gh.update_check_run(REPO, run, conclusion="success")
        assert gh.merged == {"sha": gh.resolve("pr"), "method": "MERGE", "by": "auto-merge"}
        assert gh.get_pull_request(REPO, 7).state == "closed"
    finally:
        gh.close()


def test_an_owner_who_changes_their_mind_withdraws_the_bots_approval(repo: Path) -> None:
    gh = pull(repo, "pr")
    try:
        # no merge meanwhile
        gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
        gh.add_review(DATAPROC_OWNER)
        assert review(gh) == "success" and bot_approvals(gh) == ["APPROVED"]
        # a redelivery: approved once
        assert review(gh) == "success" and bot_approvals(gh) == ["APPROVED"]
        gh.add_review(DATAPROC_OWNER, "REQUEST_CHANGES", "not yet")
        assert review(gh) == "failure"
        [withdrawn] = [r for r in gh.reviews if r.user == BOT and r.event == "APPROVE"]
        assert withdrawn.state == "DISMISSED" and withdrawn.dismissal_message is not None
        assert withdrawn.dismissal_message.startswith(
            "Withdrawn: an owner of `gcp:dataproc` approves this commit"
        )
    finally:
        gh.close()


def request_changes(gh: LocalGitHub, approval: int) -> str:
    gh.add_review(DATAPROC_OWNER, "REQUEST_CHANGES", "no, wait")
    return "submitted"


def dismiss_the_approval(gh: LocalGitHub, approval: int) -> str:
    gh.permissions["maintainer"] = "write"
    gh.dismiss_as("maintainer", approval, "not reviewed by the right person")
    return "dismissed"


@pytest.mark.parametrize("withdraw", [request_changes, dismiss_the_approval])
def test_an_approval_withdrawn_after_a_reconciled_review_is_acted_on(
    repo: Path, withdraw: Callable[[LocalGitHub, int], str]
) -> None:
    """Audit: the owner's approval delivery was missed, a reconciliation round reviewed the head
    (success, approved, auto-merge on); the review delivery that withdraws the owner's approval was
    skipped as ``already-concluded`` (the round had concluded that head) and GitHub merged."""
    gh = pull(repo, "pr")
    gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
    try:
        done: set[str] = set()
        worker = Worker(_Single(gh), done=lambda d: d in done)
        head = gh.resolve("pr")
        approval = gh.add_review(DATAPROC_OWNER)  # its delivery was missed
        owed = reconcile.delivery_of(REPO, 7, head)
        assert worker.handle(Job(owed, "pull_request", reconcile.ACTION, 1, REPO, 7, head)) == (
            "success"
        )
        done.add(owed)
        assert gh.auto_merge is not None and bot_approvals(gh) == ["APPROVED"]
        # the delivery that opened the pull request is the round's duplicate: skipped
        opened = Job("d-opened", "pull_request", "opened", 1, REPO, 7, head)
        assert worker.handle(opened) == "already-concluded"
        action = withdraw(gh, approval)
        delivery = Job("d-review", "pull_request_review", action, 1, REPO, 7, head)
        assert worker.handle(delivery) == "failure"
        gh.add_check_run("ci", conclusion="success")
        assert gh.merged is None and gh.auto_merge is None
        assert bot_approvals(gh) == ["DISMISSED"]
    finally:
        gh.close()


def test_a_merge_is_refused_while_something_blocks_or_for_another_head(repo: Path) -> None:
    from bot.github.api import GitHubError

    gh = pull(repo, "pr")
    try:
        with pytest.raises(
            GitHubError, match="required check 'OpenLineage registry' is expected"
        ) as blocked:
            gh.merge_pull_request(REPO, 7, gh.resolve("pr"), "squash")
        assert blocked.value.status == 405
        with pytest.raises(GitHubError, match="Head branch was modified") as moved:
            gh.merge_pull_request(REPO, 7, gh.resolve("pr2"), "squash")
        assert moved.value.status == 409 and gh.merged is None
    finally:
        gh.close()


def check_lists(section: str) -> dict[str, list[str]]:
    """Each list of a Markdown section under its title line (the line before the list)."""
    lists: dict[str, list[str]] = {}
    title = ""
    for line in section.splitlines():
        if line.startswith("- "):
            lists.setdefault(title, []).append(line[2:])
        elif line.strip():
            title = line
    return lists


def test_the_merge_section_names_the_required_checks_that_hold_the_merge_back(repo: Path) -> None:
    gh = pull(repo, "pr")
    try:
        gh.protection = BranchProtection(
            required_approvals=0, required_checks=(CHECK_NAME, "ci", "build", "never-started")
        )
        head = gh.resolve("pr")
        gh.create_check_run(REPO, head, "ci", "completed", conclusion="failure")
        gh.create_check_run(REPO, head, "build", "in_progress")
        gh.create_check_run(REPO, head, "lint", "completed", conclusion="timed_out")
        gh.create_check_run(REPO, head, "spell", "completed", conclusion="success")
        gh.add_review(DATAPROC_OWNER)
        assert (
            review(gh) == "success"
            and bot_approvals(gh) == ["APPROVED"]
            and gh.auto_merge == "SQUASH"
        )
        merge = summary(gh).split("Merge", 1)[1]
        assert check_lists(merge) == {
            "Required checks failing (they block the merge):": ["`ci`: `failure`"],
            "Required checks not finished yet:": ["`build`: `in_progress`"],
            "Checks that have not passed but are not required:": ["`lint`: `timed_out`"],
        }
        # not reported yet: only branch protection (admin) names it
        assert "never-started" not in merge
    finally:
        gh.close()


def test_the_bots_required_checks_query_runs_on_the_stand_ins_graphql_schema(repo: Path) -> None:
    from bot.github.required_checks import QUERY, CheckState, parse
    from tests.standin.graphql_api import execute

    gh = pull(repo, "pr")
    try:
        gh.protection = BranchProtection(required_approvals=0, required_checks=("ci",))
        head = gh.resolve("pr")
        gh.create_check_run(REPO, head, "ci", "queued")
        # the newest run counts
        gh.create_check_run(REPO, head, "ci", "completed", conclusion="cancelled")
        gh.create_check_run(REPO, head, "lint", "completed", conclusion="neutral")

        def ask(number: int) -> list[CheckState]:
            variables = {
                "owner": "OpenLineage",
                "name": "OpenLineage",
                "head": head,
                "number": number,
            }
            return parse(
                execute({"query": QUERY, "variables": variables}, REPO, str(repo), checks=gh)
            )

        assert (
            ask(7)
            == gh.check_states(REPO, 7, head)
            == [
                CheckState("ci", "cancelled", True, "failing"),
                CheckState("lint", "neutral", False, "passed"),
            ]
        )
        # required for pull request 7, not for another
        assert [s.required for s in ask(8)] == [False, False]
        assert (
            parse(
                execute(
                    {
                        "query": QUERY,
                        "variables": {
                            "owner": "OpenLineage",
                            "name": "OpenLineage",
                            "head": gh.resolve("main"),
                            "number": 7,
                        },
                    },
                    REPO,
                    str(repo),
                    checks=gh,
                )
            )
            == []
        )  # nothing reported: a null rollup
    finally:
        gh.close()


@pytest.mark.parametrize("oldest_first", [False, True])
def test_without_graphql_the_merge_section_lists_the_newest_run_of_each_check_that_has_not_passed(
    repo: Path, oldest_first: bool
) -> None:
    """A re-run adds a run of the same name on the head; the newest one (GitHub's ids grow) is the
    one that counts, whatever order GitHub lists them in (it documents none). Finding: the
    fallback took the list for newest first, so listed oldest first it reported the old run."""

    class NoGraphQL(LocalGitHub):
        def check_states(self, repo: str, number: int, head_sha: str) -> None:
            """GraphQL refused: the bot lists check runs instead."""

        def list_check_runs(self, repo: str, head_sha: str, name: str) -> list[CheckRunInfo]:
            listed = super().list_check_runs(repo, head_sha, name)
            return listed[::-1] if oldest_first else listed

    gh = NoGraphQL(
        repo,
        "main",
        "pr",
        repo=REPO,
        number=7,
        author=AUTHOR,
        protection=BranchProtection(
            required_approvals=0, required_checks=(CHECK_NAME, "ci", "build")
        ),
    )
    try:
        head = gh.resolve("pr")
        gh.create_check_run(REPO, head, "ci", "completed", conclusion="failure")
        gh.create_check_run(REPO, head, "ci", "completed", conclusion="success")  # re-run: passed
        gh.create_check_run(REPO, head, "build", "completed", conclusion="success")
        # re-run: failed
        gh.create_check_run(REPO, head, "build", "completed", conclusion="failure")
        gh.add_review(DATAPROC_OWNER)
        assert review(gh) == "success" and gh.auto_merge == "SQUASH"
        assert check_lists(summary(gh).split("Merge", 1)[1]) == {
            "Check runs on this commit that have not passed:": ["`build`: `failure`"]
        }
    finally:
        gh.close()


def test_an_owner_adding_what_the_bot_cannot_read_to_their_own_entry_is_not_approved(
    repo: Path,
) -> None:
    """Issue 28: a symlink or a submodule is a changed path no check read: it blocks, and nobody is
    approved for."""
    git(repo, "checkout", "-q", "-B", "unread", "pr")
    (repo / DATAPROC / "link.json").symlink_to("registry.json")
    git(repo, "add", "-A")
    git(
        repo,
        "update-index",
        "--add",
        "--cacheinfo",
        f"160000,{git(repo, 'rev-parse', 'main')},{DATAPROC}/sub",
    )
    git(repo, "commit", "-q", "-m", "not files")
    git(repo, "checkout", "-q", "main")
    gh = pull(repo, "unread", author=DATAPROC_OWNER)
    try:
        assert review(gh) == "failure"
        assert bot_approvals(gh) == [] and gh.merged is None
        text = summary(gh)
        assert (
            f"could not read `{DATAPROC}/link.json`" in text
            and f"could not read `{DATAPROC}/sub`" in text
        )
        assert "bot/unread-path" in text
    finally:
        gh.close()


# -- the App's auto-merge is turned off whenever it does not approve the head ----------------------
def writer_pull(repo: Path, author: str) -> LocalGitHub:
    """The pull request ``pr`` by a writer, on a protection without "dismiss stale approvals" (docs/
    owners.md allows it) and with a "ci" check that keeps auto-merge waiting."""
    return LocalGitHub(
        repo,
        "main",
        "pr",
        repo=REPO,
        number=7,
        author=author,
        permissions={author: "write"},
        protection=BranchProtection(
            required_approvals=0, required_checks=(CHECK_NAME, "ci"), dismiss_stale_reviews=False
        ),
    )


def test_a_push_to_a_head_with_nothing_to_review_withdraws_the_approval_and_auto_merge(
    repo: Path,
) -> None:
    git(repo, "checkout", "-q", "-B", "rootonly", "main")
    (repo / "NOTES.md").write_text("a root file the App never approves for the owners\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "root file only")
    git(repo, "checkout", "-q", "main")
    local = writer_pull(repo, DATAPROC_OWNER)
    try:
        worker = Worker(_Single(local))
        assert worker.handle(Job("d1", "pull_request", "opened", 1, REPO, 7)) == "success"
        assert local.auto_merge is not None  # waiting for "ci"
        local.push("rootonly", pusher=DATAPROC_OWNER)
        outcome = worker.handle(Job("d2", "pull_request", "synchronize", 1, REPO, 7))
        local.add_check_run("ci", conclusion="success")
        assert bot_approvals(local) == ["DISMISSED"]
        assert local.merged is None
        # the verdict is the one of a change with nothing to review, and nothing was refused
        assert outcome == "neutral" and local.auto_merge is None
        assert "disable_auto_merge" in local.methods_written()
        assert "GitHub refused" not in (local.runs_for("rootonly")[-1].text or "")
    finally:
        local.close()


def test_auto_merge_enabled_for_an_approved_head_does_not_merge_a_later_unapproved_head(
    repo: Path,
) -> None:
    local = writer_pull(repo, AUTHOR)
    try:
        worker = Worker(_Single(local))
        local.add_review(DATAPROC_OWNER)  # of H1
        assert worker.handle(Job("d1", "pull_request_review", "submitted", 1, REPO, 7)) == "success"
        assert local.auto_merge is not None
        local.push("pr2", pusher=AUTHOR)
        # without "dismiss stale approvals" the owners' approval of H1 still passes the check
        outcome = worker.handle(Job("d2", "pull_request", "synchronize", 1, REPO, 7))
        local.add_check_run("ci", conclusion="success")
        assert local.merged is None
        assert outcome == "success" and local.auto_merge is None
        assert bot_approvals(local) == ["DISMISSED"]
        # the owners approve the new head: the App approves it and enables auto-merge again
        local.add_review(DATAPROC_OWNER)
        assert worker.handle(Job("d3", "pull_request_review", "submitted", 1, REPO, 7)) == "success"
        assert bot_approvals(local) == ["DISMISSED", "APPROVED"]
        assert local.merged == {"sha": local.resolve("pr2"), "method": "SQUASH", "by": BOT}
    finally:
        local.close()


def test_a_refused_disable_fails_the_check_so_the_apps_auto_merge_merges_nothing(
    repo: Path,
) -> None:
    """Finding: GitHub refusing to turn off the App's auto-merge left the new head's check passing
    (the owners' approval of the old head still counted), and the App's auto-merge merged a head no
    owner approved through it."""
    from bot.github.api import GitHubError

    local = writer_pull(repo, AUTHOR)
    try:
        worker = Worker(_Single(local))
        local.add_review(DATAPROC_OWNER)
        assert worker.handle(Job("d1", "pull_request_review", "submitted", 1, REPO, 7)) == "success"
        local.push("pr2", pusher=AUTHOR)
        local.fail(
            "disable_auto_merge", GitHubError("Resource not accessible by integration", status=403)
        )
        # the owners' approval of pr1 still counts for pr2 (no "dismiss stale approvals"), but
        # the App's auto-merge, still on, must not merge a head they did not approve through it
        assert worker.handle(Job("d2", "pull_request", "synchronize", 1, REPO, 7)) == "failure"
        [run] = [r for r in local.runs_for("pr2") if r.name == CHECK_NAME]
        assert run.conclusion == "failure" and "so this check fails" in run.summary
        refused = "GitHub refused to let the bot turn off the auto-merge it enabled (403"
        assert refused in run.summary + run.text and refused in summary(local)
        # the approval of the old head is still withdrawn; the auto-merge stays, as GitHub said
        assert bot_approvals(local) == ["DISMISSED"] and local.auto_merge is not None
        assert not local.merged
    finally:
        local.close()


class Journal:
    """The queue's journal of a job's check run (``Worker.note_check_run``): a retried job resumes
    the run its earlier attempt opened."""

    def __init__(self) -> None:
        self.runs: dict[str, tuple[str, int]] = {}

    def note(self, job: Job, sha: str, check_id: int) -> None:
        self.runs[job.delivery] = (sha, check_id)

    def retried(self, job: Job) -> Job:
        sha, check_id = self.runs[job.delivery]
        return dataclasses.replace(job, check_run_sha=sha, check_run_id=check_id)


def rate_limit(method: str) -> RateLimited:
    return RateLimited(f"POST /graphql ({method}): 429 API rate limit", 429, reset_at=0.0)


def test_a_rate_limited_disable_runs_the_job_again_and_turns_auto_merge_off(repo: Path) -> None:
    """GitHub rate-limits turning off the App's auto-merge (a GraphQL ``RATE_LIMITED``): the job is
    deferred with the run unconcluded (nothing merges meanwhile) and its retry turns it off; was:
    "refused", the verdict concluded and the auto-merge left on a head no owner approved."""
    local = writer_pull(repo, AUTHOR)
    journal = Journal()
    try:
        worker = Worker(_Single(local), note_check_run=journal.note)
        local.add_review(DATAPROC_OWNER)
        assert worker.handle(Job("d1", "pull_request_review", "submitted", 1, REPO, 7)) == "success"
        local.push("pr2", pusher=AUTHOR)
        local.fail("disable_auto_merge", rate_limit("disable"))
        job = Job("d2", "pull_request", "synchronize", 1, REPO, 7)
        with pytest.raises(JobDeferred):
            worker.handle(job)
        local.add_check_run("ci", conclusion="success")
        assert local.merged is None and local.auto_merge is not None
        assert worker.handle(journal.retried(job)) == "success"
        [run] = [r for r in local.runs_for("pr2") if r.name == CHECK_NAME]
        assert run.conclusion == "success" and "GitHub refused" not in run.summary + run.text
        assert local.auto_merge is None and local.merged is None
    finally:
        local.close()


def test_a_rate_limited_enable_runs_the_job_again_without_concluding_twice(repo: Path) -> None:
    """The rate limit comes after the check run concluded: the retry leaves the run as it is and
    enables auto-merge; was: "auto-merge refused" in the summary, never tried again."""
    local = writer_pull(repo, AUTHOR)
    journal = Journal()
    try:
        worker = Worker(_Single(local), note_check_run=journal.note)
        local.add_review(DATAPROC_OWNER)
        local.fail("enable_auto_merge", rate_limit("enable"))
        job = Job("d1", "pull_request_review", "submitted", 1, REPO, 7)
        with pytest.raises(JobDeferred):
            worker.handle(job)
        assert local.auto_merge is None
        assert worker.handle(journal.retried(job)) == "success"
        [run] = [r for r in local.runs_for("pr") if r.name == CHECK_NAME]
        assert len([r for r in run.requests if r["conclusion"] is not None]) == 1
        assert local.auto_merge is not None and bot_approvals(local) == ["APPROVED"]
        assert "refused" not in summary(local)
    finally:
        local.close()


def test_a_persons_auto_merge_is_left_alone(repo: Path) -> None:
    local = writer_pull(repo, AUTHOR)
    try:
        local.enable_auto_merge_as(AUTHOR, "MERGE")
        assert Worker(_Single(local)).handle(Job("d", "pull_request", "opened", 1, REPO, 7)) in (
            "success",
            "failure",
        )
        assert "disable_auto_merge" not in local.methods_written()
        assert local.auto_merge == "MERGE" and local.auto_merge_by == AUTHOR
    finally:
        local.close()


def test_a_review_that_fails_still_withdraws_the_approval_and_auto_merge(repo: Path) -> None:
    local = writer_pull(repo, AUTHOR)
    try:
        worker = Worker(_Single(local))
        local.add_review(DATAPROC_OWNER)
        assert worker.handle(Job("d1", "pull_request_review", "submitted", 1, REPO, 7)) == "success"
        local.push("pr2", pusher=AUTHOR)
        local.fail("list_pull_request_files", RuntimeError("boom"))
        assert worker.handle(Job("d2", "pull_request", "synchronize", 1, REPO, 7)) == "error"
        [run] = [r for r in local.runs_for("pr2") if r.name == CHECK_NAME]
        assert run.conclusion == "failure"
        assert bot_approvals(local) == ["DISMISSED"] and local.auto_merge is None
        local.add_check_run("ci", conclusion="success")
        assert local.merged is None
    finally:
        local.close()


class PushDuringListing:
    """``LocalGitHub`` whose author pushes ``other`` while GitHub lists the files and pushes
    ``back`` before the head is read again (only the first listing, unless ``every``)."""

    def __init__(self, inner: LocalGitHub, other: str, back: str, every: bool = False) -> None:
        self.inner, self.other, self.back, self.every = inner, other, back, every
        self.done = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def list_pull_request_files(self, repo: str, number: int) -> tuple[list[ChangedFile], bool]:
        if self.done and not self.every:
            return self.inner.list_pull_request_files(repo, number)
        self.done = True
        self.inner.push(self.other)
        try:
            return self.inner.list_pull_request_files(repo, number)
        finally:
            self.inner.push(self.back)


def handle(gh: object) -> str:
    job = Job("d", "pull_request", "synchronize", 1, REPO, 7)
    return Worker(_Single(gh)).handle(job)  # type: ignore[arg-type]


def test_an_approval_is_for_the_change_listed_at_the_reviewed_head(repo: Path) -> None:
    # the head edits the entry and the root CODEOWNERS; GitHub lists the files while the author has
    # pushed the entry's edit alone, which the App would approve
    local = pull(repo, "rootco", author=DATAPROC_OWNER)
    h1 = local.resolve("rootco")
    gh = PushDuringListing(local, "pr", "rootco")
    try:
        # the listing disagrees with the pinned trees: listed again, of the head this time
        assert handle(gh) == "failure"
        assert local.calls.count("list_pull_request_files") == 2
        run = local.runs_for(h1)[-1]
        assert run.conclusion != "success"
        approvals = [r for r in local.reviews if r.user == BOT and r.event == "APPROVE"]
        assert approvals == [] and local.merged is None
    finally:
        local.close()


def test_a_listing_of_another_head_every_time_judges_nothing(repo: Path) -> None:
    local = pull(repo, "rootco", author=DATAPROC_OWNER)
    h1 = local.resolve("rootco")
    try:
        assert handle(PushDuringListing(local, "pr", "rootco", every=True)) == "superseded"
        run = local.runs_for(h1)[-1]
        assert run.conclusion == "cancelled"
        assert "another commit" in run.summary and "`CODEOWNERS`" in run.summary
        assert bot_approvals(local) == [] and local.merged is None
    finally:
        local.close()


class WrongBlob:
    """GitHub's listing naming, for ``path``, a blob the reviewed head does not have."""

    def __init__(self, inner: LocalGitHub, path: str) -> None:
        self.inner, self.path = inner, path

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def list_pull_request_files(self, repo: str, number: int) -> tuple[list[ChangedFile], bool]:
        files, truncated = self.inner.list_pull_request_files(repo, number)
        return [
            dataclasses.replace(f, sha="1" * 40) if f.path == self.path else f for f in files
        ], truncated


def test_a_listed_blob_the_reviewed_head_does_not_have_is_caught(repo: Path) -> None:
    local = pull(repo, "pr", author=DATAPROC_OWNER)
    try:
        assert handle(WrongBlob(local, f"{DATAPROC}/registry.json")) == "superseded"
        run = local.runs_for(local.resolve("pr"))[-1]
        assert run.conclusion == "cancelled"
        assert f"`{DATAPROC}/registry.json`" in run.summary
        assert bot_approvals(local) == [] and local.merged is None
    finally:
        local.close()


def test_a_base_branch_moved_on_since_the_merge_base_is_no_mismatch(repo: Path) -> None:
    # the base branch changed a watched entry, the root CODEOWNERS and a root file after ``pr``
    # branched off: the pinned base tree and the head differ there, and GitHub lists none of it
    git(repo, "checkout", "-q", "-B", "moved", "main")
    path = repo / ICEBERG / "registry.json"
    data = json.loads(path.read_text())
    data["producer"]["root_doc_URL"] += "#moved"
    path.write_text(json.dumps(data, indent=2) + "\n")
    (repo / "CODEOWNERS").write_text((repo / "CODEOWNERS").read_text() + "# moved\n")
    (repo / "NOTES.md").write_text("notes\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the base branch moves on")
    git(repo, "checkout", "-q", "main")
    gh = LocalGitHub(
        repo,
        "moved",
        "pr",
        repo=REPO,
        number=7,
        author=DATAPROC_OWNER,
        protection=BranchProtection(required_approvals=0, required_checks=(CHECK_NAME,)),
    )
    try:
        assert review(gh) == "success"
        assert gh.calls.count("list_pull_request_files") == 1 and "merge_base" in gh.calls
        assert bot_approvals(gh) == ["APPROVED"] and gh.merged is not None
    finally:
        gh.close()


def test_an_approval_on_a_base_that_did_not_move_reads_no_merge_base(repo: Path) -> None:
    # the base tip's whole tree (cached from one review to the next) confirms the listing: the
    # merge base is asked only where that tree and the head differ on an unlisted path
    local = pull(repo, "pr", author=DATAPROC_OWNER)
    try:
        assert handle(local) == "success"
        assert bot_approvals(local) == ["APPROVED"] and local.merged is not None
        assert local.calls.count("read_tree") >= 2 and "merge_base" not in local.calls
    finally:
        local.close()


def test_a_root_file_the_listing_leaves_out_is_found_before_approving(repo: Path) -> None:
    # outside the folders the review reads: only the whole trees, read before approving, show it
    git(repo, "checkout", "-q", "-B", "notes", "pr")
    (repo / "NOTES.md").write_text("notes\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a root file")
    git(repo, "checkout", "-q", "main")
    local = pull(repo, "notes", author=DATAPROC_OWNER)
    try:
        handle(PushDuringListing(local, "pr", "notes", every=True))
        assert bot_approvals(local) == [] and local.merged is None
        assert "leaves out `NOTES.md`" in summary(local)
    finally:
        local.close()


class ReviewsChangeDuringReview:
    """``LocalGitHub`` where ``change`` happens to the reviews just after the review read them."""

    def __init__(self, inner: LocalGitHub, change: Callable[[LocalGitHub], object]) -> None:
        self.inner, self.change, self.done = inner, change, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def list_reviews(self, repo: str, number: int) -> list[ReviewInfo]:
        try:
            return self.inner.list_reviews(repo, number)
        finally:
            if not self.done:
                self.done = True
                self.change(self.inner)


def dismiss_owner(gh: LocalGitHub) -> None:
    [owner] = [r.id for r in gh.reviews if r.user == DATAPROC_OWNER]
    gh.dismiss_as("maintainer", owner, "approved too early")


@pytest.mark.parametrize(
    "change",
    [
        lambda gh: gh.add_review(DATAPROC_OWNER, "REQUEST_CHANGES", "wait, this is wrong"),
        dismiss_owner,
    ],
    ids=["changes-requested", "dismissed"],
)
def test_an_approval_withdrawn_during_the_review_is_neither_acted_on_nor_passed(
    repo: Path, change: Callable[[LocalGitHub], object]
) -> None:
    # the owner approves, the review starts, and the approval is withdrawn before the App acts:
    # it acted on the reviews it read before (approved for the owner, merged at once)
    local = pull(repo, "pr")
    local.permissions["maintainer"] = "admin"
    try:
        local.add_review(DATAPROC_OWNER)
        assert handle(ReviewsChangeDuringReview(local, change)) == "superseded"
        assert local.calls.count("list_reviews") == 2  # read again before acting
        [run] = local.runs_for(local.resolve("pr"))
        assert run.conclusion == "cancelled" and "reviews changed" in run.title
        assert f"`@{DATAPROC_OWNER}` changed their review" in run.summary
        assert bot_approvals(local) == [] and local.merged is None
        # the withdrawal's own delivery reviews the head again, on the reviews as they are
        assert review(local) == "failure"
        assert bot_approvals(local) == [] and local.merged is None
    finally:
        local.close()


def test_a_comment_during_the_review_changes_nothing_the_approval_rests_on(repo: Path) -> None:
    local = pull(repo, "pr")
    try:
        local.add_review(DATAPROC_OWNER)
        comment = ReviewsChangeDuringReview(local, lambda gh: gh.add_review("x", "COMMENT", "hm"))
        assert handle(comment) == "success"
        assert bot_approvals(local) == ["APPROVED"] and local.merged is not None
    finally:
        local.close()


def test_the_reviews_are_read_again_only_when_the_app_is_about_to_approve(repo: Path) -> None:
    local = pull(repo, "pr")
    try:
        assert review(local) == "failure"  # no owner approved: nothing to act on
        assert local.calls.count("list_reviews") == 1
    finally:
        local.close()


def test_only_a_reviewers_latest_deciding_review_and_its_commit_count_as_a_change() -> None:
    def r(i: int, user: str, state: str, commit: str = "a") -> ReviewInfo:
        return ReviewInfo(i, user, state, commit)

    before = [r(1, "owner", "APPROVED"), r(2, BOT, "APPROVED")]
    assert changed_reviewers(before, [*before, r(3, "owner", "COMMENTED")], BOT) == ()
    assert changed_reviewers(before, [*before, r(3, "owner", "APPROVED")], BOT) == ()
    assert changed_reviewers(before, [before[0], r(2, BOT, "DISMISSED")], BOT) == ()
    assert changed_reviewers(before, [r(1, "owner", "DISMISSED"), before[1]], BOT) == ("owner",)
    assert changed_reviewers(before, [*before, r(3, "owner", "APPROVED", "b")], BOT) == ("owner",)
    assert changed_reviewers(before, [*before, r(3, "ann", "APPROVED")], BOT) == ("ann",)


def test_a_retry_after_the_verdict_acts_only_on_the_verdict_its_check_run_shows(
    repo: Path,
) -> None:
    """The summary fails (a 502) after the check run concluded "waiting for the owners"; the owner
    approves before the retry. The retry's review passes: it is concluded on a new run (the newest
    run is the one GitHub shows), then approved and summarised; was: the approval and a passing
    summary beside a check run that still failed."""
    local = writer_pull(repo, AUTHOR)
    journal = Journal()
    try:
        worker = Worker(_Single(local), note_check_run=journal.note)
        local.fail("create_issue_comment", GitHubError("POST comment: 502 Bad Gateway", 502))
        job = Job("d1", "pull_request", "opened", 1, REPO, 7)
        with pytest.raises(GitHubError):
            worker.handle(job)
        [first] = [r.conclusion for r in local.runs_for("pr") if r.name == CHECK_NAME]
        assert first == "failure" and bot_approvals(local) == []
        local.add_review(DATAPROC_OWNER)
        assert worker.handle(journal.retried(job)) == "success"
        runs = [r for r in local.runs_for("pr") if r.name == CHECK_NAME]
        assert [r.conclusion for r in runs] == ["failure", "success"]
        assert bot_approvals(local) == ["APPROVED"] and "passed" in summary(local)
        # a third attempt resumes the newest run (journalled), which stands for its verdict
        assert worker.handle(journal.retried(job)) == "success"
        assert len([r for r in local.runs_for("pr") if r.name == CHECK_NAME]) == 2
    finally:
        local.close()


def test_without_graphql_the_merge_section_lists_a_red_commit_status_too(repo: Path) -> None:
    """A required check may be a commit status (the legacy Statuses API), not a check run: the
    fallback reads the combined status as well, so a red status is listed (before: only check
    runs were listed, and a red required status went unseen); statuses the App may not read are
    said so, never left out."""

    class NoGraphQL(LocalGitHub):
        def check_states(self, repo: str, number: int, head_sha: str) -> None:
            """GraphQL refused: the bot lists check runs and commit statuses instead."""

    def merge(permissions: dict[str, str] | None) -> str:
        gh = NoGraphQL(
            repo,
            "main",
            "pr",
            repo=REPO,
            number=7,
            author=AUTHOR,
            protection=BranchProtection(
                required_approvals=0, required_checks=(CHECK_NAME, "ci/jenkins")
            ),
            app_permissions=permissions,
        )
        try:
            gh.add_status("ci/jenkins", "pending")
            gh.add_status("ci/jenkins", "failure")  # its latest state
            gh.add_status("docs/preview", "success")
            gh.add_review(DATAPROC_OWNER)
            assert review(gh) == "success" and gh.auto_merge == "SQUASH"
            return summary(gh).split("Merge", 1)[1]
        finally:
            gh.close()

    section = merge(None)
    assert check_lists(section) == {
        "Commit statuses on this commit that have not passed:": ["`ci/jenkins`: `failure`"]
    }, section
    narrower = {k: v for k, v in needed_for(("review", "teams")).items() if k != "statuses"}
    without = merge({**narrower, "contents": "write"})
    assert "The commit statuses on this commit could not be read (GitHub answered 403)" in without
    assert "Commit statuses: read" in without


def test_removing_a_registered_name_is_never_approved_for_the_owners(
    repo: Path, tmp_path: Path
) -> None:
    """Deleting an entry frees its name, which the registry's maintainers approve (as a new name):
    the App does not approve it on the owners' behalf, and says why."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "-b", "remove", "origin/main")
    git(clone, "rm", "-q", "-r", "spec/registry/gcp/composer")
    git(clone, "commit", "-q", "-m", "remove gcp:composer")
    gh = pull(clone, "remove", author="OpenLineage-committer")
    try:
        review(gh)
        assert bot_approvals(gh) == []
        assert "removes the registered name `gcp:composer`" in summary(gh)
    finally:
        gh.close()


def test_an_owner_the_base_branch_removed_since_the_pull_requests_base_is_not_acted_on(
    tmp_path: Path, corpus: Path
) -> None:
    """Finding: GitHub leaves a pull request's ``base.sha`` where the base branch was at its last
    push (merges to the base branch do not move it), and the App judged the owners by the
    CODEOWNERS there: after ``main`` gave gcp:dataproc a new owner, the owner it removed still
    approved, and the App approved on the entry's behalf and merged. Now, before it approves, the
    App reads the CODEOWNERS files it judged by at the base branch as it is (one request) and acts
    on nothing when they differ; the approval it gave before is withdrawn."""
    built = build(corpus, tmp_path / "repo")
    gh = pull(built.path, "pr")
    try:
        gh.pin_base()  # GitHub's base.sha: main as it was at the pull request's last push
        # no merge meanwhile
        gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
        gh.add_review(DATAPROC_OWNER)
        assert review(gh) == "success" and bot_approvals(gh) == ["APPROVED"]
        git(built.path, "checkout", "-q", "main")
        built.write(f"{DATAPROC}/CODEOWNERS", "* @new-dataproc-owner\n")
        built.commit("gcp:dataproc has a new owner", branch="main")
        assert gh.get_pull_request(REPO, 7).base_sha == gh.base_pin  # GitHub's does not move
        assert review(gh) == "success"  # the check judges by the pull request's base
        assert bot_approvals(gh) == ["DISMISSED"] and gh.merged is None
        assert f"changed `{DATAPROC}/CODEOWNERS` since the pull request's base" in summary(gh)
        gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME,))
        assert review(gh) == "success" and gh.merged is None  # still nothing acted on
    finally:
        gh.close()


def test_a_push_that_changes_the_owners_withdraws_the_approvals_they_gave(
    tmp_path: Path, corpus: Path
) -> None:
    """Finding: the App's approval, given on the owners the base branch named then, stayed after a
    merge to the base branch removed that owner (no event reaches the pull request: its base does
    not move), and GitHub would merge it once the last required check passed. Now a push whose
    commits change a CODEOWNERS file or the bot's configuration reviews every open pull request
    again, and the approval is withdrawn (``owners_moved``); a push changing neither does not."""
    import time

    from bot.github.events import decide
    from tests.test_conclude import Bot, Clock

    built = build(corpus, tmp_path / "repo")
    gh = pull(built.path, "pr")
    gh.pin_base()  # GitHub's base.sha: main as it was at the pull request's last push
    gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
    bot = Bot(tmp_path, gh, Clock(float(int(time.time()))))

    def pushed(delivery: str, path: str, text: str) -> None:
        """A merge to ``main`` changing ``path``, delivered as GitHub sends its push."""
        git(built.path, "checkout", "-q", "main")
        built.write(path, text)
        sha = built.commit(f"{path} changed", branch="main")
        payload = {
            "ref": "refs/heads/main",
            "before": "0" * 40,
            "after": sha,
            "installation": {"id": 1},
            "repository": {"full_name": REPO, "default_branch": "main"},
            "commits": [{"id": sha, "added": [], "removed": [], "modified": [path]}],
        }
        job = decide("push", delivery, payload).job
        assert job is not None and bot.queue.accept(job)
        while bot.run_queued():
            pass

    try:
        gh.add_review(DATAPROC_OWNER)
        review = Job("r-1", "pull_request_review", "submitted", 1, REPO, 7)
        assert bot.queue.accept(review) and bot.run_queued() == 1
        assert bot_approvals(gh) == ["APPROVED"]
        pushed("p-1", "docs/merged.md", "a merge that changes no owner\n")
        assert bot_approvals(gh) == ["APPROVED"] and not bot.queue.is_done("p-1.pr7")
        pushed("p-2", f"{DATAPROC}/CODEOWNERS", "* @new-dataproc-owner\n")
        assert bot.queue.is_done("p-2.pr7")
        assert bot_approvals(gh) == ["DISMISSED"] and gh.merged is None
    finally:
        bot.queue.close()
        gh.close()


def close_it(gh: LocalGitHub) -> None:
    gh.close_pull_request()


def merge_it(gh: LocalGitHub) -> None:
    gh.permissions["maintainer"] = "admin"
    with gh._lock:
        gh._merge("MERGE", "maintainer")


@pytest.mark.parametrize("change", [close_it, merge_it], ids=["closed", "merged-by-a-maintainer"])
def test_a_pull_request_closed_during_the_review_is_neither_approved_nor_merged_nor_passed(
    repo: Path, change: Callable[[LocalGitHub], object]
) -> None:
    # the owner approved; the pull request is closed (or merged by someone else) while the review
    # runs: the App concluded success on it, approved it for the owners and tried to enable
    # auto-merge on a closed pull request, and its summary said "a maintainer merges" it
    local = pull(repo, "pr")
    try:
        local.add_review(DATAPROC_OWNER)
        before = local.merged
        assert handle(ReviewsChangeDuringReview(local, change)) == "closed"
        [run] = local.runs_for(local.resolve("pr"))
        assert run.status == "completed" and run.conclusion == "cancelled"
        assert run.title == "The pull request was closed"
        assert bot_approvals(local) == []
        assert "enable_auto_merge" not in local.methods_written()
        assert "merge_pull_request" not in local.methods_written()
        assert not [c for c in local.issue_comments if "registry-bot:summary" in c.body]
        assert local.merged == before if change is close_it else local.merged["by"] == "maintainer"
    finally:
        local.close()


def test_a_base_branch_changed_during_the_review_is_reviewed_against_the_new_base(
    repo: Path,
) -> None:
    # the entry's owner approved a change into main; while the review runs, the base becomes a
    # branch whose CODEOWNERS names another owner: the App approved and merged the change into it
    # on main's owners' word
    git(repo, "checkout", "-q", "-B", "lifecycle-release", "main")
    (repo / DATAPROC / "CODEOWNERS").write_text(f"* @{ICEBERG_OWNER}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "another owner on the release branch")
    git(repo, "checkout", "-q", "main")
    local = pull(repo, "pr")
    try:
        local.add_review(DATAPROC_OWNER)
        retarget = ReviewsChangeDuringReview(local, lambda gh: gh.retarget("lifecycle-release"))
        assert handle(retarget) == "superseded"
        [run] = local.runs_for(local.resolve("pr"))
        assert run.conclusion == "cancelled"
        assert run.title == "Superseded: the base branch changed"
        assert "`main` to `lifecycle-release`" in (run.summary or "")
        assert bot_approvals(local) == [] and local.merged is None
        # the ``edited`` delivery (changes.base) reviews it against the new base's owners
        payload = json.loads((PAYLOADS / "pull_request.edited.json").read_text())
        payload["changes"] = {"base": {"ref": {"from": "main"}}}
        payload["installation"] = {"id": 1}  # the recorded delivery is a repository webhook's
        edited = decide("pull_request", "d-edit", payload).job
        assert edited is not None
        job = dataclasses.replace(edited, repo=REPO, number=7, installation=1)
        assert Worker(_Single(local)).handle(job) == "failure"
        assert bot_approvals(local) == [] and local.merged is None
    finally:
        local.close()


def test_a_draft_is_approved_for_its_owners_but_merged_only_once_marked_ready(repo: Path) -> None:
    # GitHub merges no draft (405 "Pull Request is still a draft") nor enables auto-merge on one:
    # the App asked it to anyway and its summary said "a maintainer merges this pull request"
    local = pull(repo, "pr")
    try:
        local.draft = True
        local.add_review(DATAPROC_OWNER)
        assert review(local) == "success"
        assert bot_approvals(local) == ["APPROVED"] and local.merged is None
        assert "enable_auto_merge" not in local.methods_written()
        assert "merge_pull_request" not in local.methods_written()
        assert "Not merging: this pull request is a draft" in summary(local)
        # ``ready_for_review`` reviews it again: now it merges
        local.mark_ready()
        payload = json.loads((PAYLOADS / "pull_request.ready_for_review.json").read_text())
        payload["installation"] = {"id": 1}
        ready = decide("pull_request", "d-ready", payload).job
        assert ready is not None
        job = dataclasses.replace(ready, repo=REPO, number=7)
        assert Worker(_Single(local)).handle(job) == "success"
        assert local.merged is not None and local.merged["sha"] == local.resolve("pr")
    finally:
        local.close()


def test_converting_to_draft_turns_auto_merge_off_and_queues_a_review(repo: Path) -> None:
    local = writer_pull(repo, DATAPROC_OWNER)
    try:
        worker = Worker(_Single(local))
        assert worker.handle(Job("d1", "pull_request", "opened", 1, REPO, 7)) == "success"
        assert local.auto_merge is not None  # waiting for "ci"
        local.convert_to_draft()  # GitHub turns auto-merge off on a draft
        assert local.auto_merge is None
        with pytest.raises(GitHubError, match="still a draft"):
            local.merge_pull_request(REPO, 7, local.resolve("pr"), "SQUASH")
        payload = json.loads((PAYLOADS / "pull_request.ready_for_review.json").read_text())
        payload["action"] = "converted_to_draft"
        payload["pull_request"]["draft"] = True
        payload["installation"] = {"id": 1}
        converted = decide("pull_request", "d-draft", payload).job
        assert converted is not None  # the summary's Merge section follows
        job = dataclasses.replace(converted, repo=REPO, number=7)
        assert worker.handle(job) == "success"
        assert "Not merging: this pull request is a draft" in summary(local)
        local.add_check_run("ci", conclusion="success")
        assert local.merged is None and local.auto_merge is None
    finally:
        local.close()


def test_a_pull_request_converted_to_a_draft_during_the_review_is_not_merged(repo: Path) -> None:
    # the App acted on the pull request as read before the review: not a draft then, so it asked
    # GitHub to merge it, which GitHub refuses on a draft
    local = pull(repo, "pr")
    try:
        local.add_review(DATAPROC_OWNER)
        assert handle(ReviewsChangeDuringReview(local, lambda gh: gh.convert_to_draft())) == (
            "success"
        )
        assert bot_approvals(local) == ["APPROVED"] and local.merged is None
        assert "enable_auto_merge" not in local.methods_written()
        assert "merge_pull_request" not in local.methods_written()
        assert "Not merging: this pull request is a draft" in summary(local)
    finally:
        local.close()
