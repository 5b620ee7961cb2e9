"""A GitHub that says no, over ``LocalGitHub`` through the worker's whole pipeline: every refusal
(the App's missing permission for the merge, a dismissal restriction, a refused review and comment)
leaves the concluded verdict as it was, is said once with what to grant, and the pull request still
merges once the grant is given on the documented protection (docs/owners.md: the bot's check
required, an App's approval not counting)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.commands.app import DEFAULT_MANIFEST
from bot.cli.commands.replay import _Single
from bot.github.api import GitHubError
from bot.github.app_permissions import manifest_permissions
from bot.github.events import Job
from bot.github.local import LocalGitHub
from bot.github.local_merge import BranchProtection
from bot.github.publish import CHECK_NAME
from bot.service.worker import Worker
from tests.delegation_repo import AUTHOR, DATAPROC_OWNER, build

BOT = "registry-bot[bot]"
REPO = "OpenLineage/OpenLineage"
DOCUMENTED = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME,))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("refusals") / "repo").path


@pytest.fixture
def gh(repo: Path) -> Iterator[LocalGitHub]:
    local = LocalGitHub(
        repo,
        "main",
        "pr",
        repo=REPO,
        number=7,
        author=AUTHOR,
        protection=DOCUMENTED,
        app_permissions=manifest_permissions(DEFAULT_MANIFEST),
    )
    yield local
    local.close()


def review(gh: LocalGitHub) -> str:
    return Worker(_Single(gh)).handle(Job("d", "pull_request_review", "submitted", 1, REPO, 7))


def runs(gh: LocalGitHub) -> list[tuple[str, str | None, str]]:
    return [(r.status, r.conclusion, r.title) for r in gh.check_runs]


def summaries(gh: LocalGitHub) -> list[str]:
    return [c.body for c in gh.issue_comments if "registry-bot:summary" in c.body]


def test_the_manifest_grants_no_merge_so_the_verdict_stands_and_the_grant_is_named_then_it_merges(
    gh: LocalGitHub,
) -> None:
    assert gh.app_permissions is not None and gh.app_permissions["contents"] == "read"
    gh.add_review(DATAPROC_OWNER)
    assert review(gh) == "success"
    assert [(s, c) for s, c, _ in runs(gh)] == [("completed", "success")]  # never "internal error"
    assert gh.merged is None and gh.auto_merge is None
    [body] = summaries(gh)
    assert (
        "GitHub refused to let the bot merge the pull request (403" in body
        and "**Contents: write**" in body
    )
    assert any(r.user == BOT and r.state == "APPROVED" for r in gh.reviews)

    assert review(gh) == "success"  # a redelivery: the same one summary, the refusal said once
    [again] = summaries(gh)
    assert again.count("GitHub refused to let the bot") == 1

    # what the Merge section asked for
    gh.app_permissions = {**gh.app_permissions, "contents": "write"}
    assert review(gh) == "success"
    assert gh.merged == {"sha": gh.resolve("pr"), "method": "SQUASH", "by": BOT}
    assert all(c == "success" for _, c, _ in runs(gh))


def test_a_refused_dismissal_leaves_the_verdict_and_names_the_dismissal_restriction(
    gh: LocalGitHub,
) -> None:
    gh.protection = BranchProtection(
        required_approvals=0, required_checks=(CHECK_NAME, "ci"), dismissal_actors=()
    )
    assert review(gh) == "failure"  # the owner has not approved: the bot requests changes
    assert [r.state for r in gh.reviews if r.user == BOT] == ["CHANGES_REQUESTED"]
    gh.push("pr2")
    gh.add_review(DATAPROC_OWNER)
    # the bot's old change request could not be dismissed: the verdict stands
    assert review(gh) == "success"
    assert runs(gh)[-1][:2] == ("completed", "success")
    assert next(r.state for r in gh.reviews if r.user == BOT) == "CHANGES_REQUESTED"
    [body] = summaries(gh)
    assert "GitHub refused to let the bot dismiss a review (403" in body
    assert "Allow specified actors to dismiss pull request reviews" in body

    # the App's approval is withdrawn: refused too
    gh.add_review(DATAPROC_OWNER, "REQUEST_CHANGES", "not yet")
    assert review(gh) == "failure"
    assert runs(gh)[-1][:2] == ("completed", "failure") and "internal error" not in runs(gh)[-1][2]
    approval = next(r for r in gh.reviews if r.user == BOT and r.state == "APPROVED")
    assert approval.dismissal_message is None
    # refused before the verdict: said in the check run
    assert "dismiss a review" in gh.check_runs[-1].summary


def test_a_refused_review_and_comment_are_said_in_the_concluded_check_runs_text(
    gh: LocalGitHub,
) -> None:
    assert gh.app_permissions is not None
    gh.app_permissions = {**gh.app_permissions, "pull_requests": "read", "issues": "read"}
    assert review(gh) == "failure"
    [run] = gh.check_runs
    assert (run.status, run.conclusion) == (
        "completed",
        "failure",
    ) and run.title != "The bot hit an internal error"
    assert "post its review (403" in run.text and "post the summary comment (403" in run.text
    assert "**Issues: write**" in run.text
    assert not gh.reviews and not gh.issue_comments


def test_a_summary_comment_refused_as_gone_is_a_refusal_not_an_error(gh: LocalGitHub) -> None:
    """GitHub answers 410 Gone to an issue comment where issues are turned off ("Create an issue
    comment": 201, 403, 404, 410, 422): a "no", said beside the verdict; was: the job's outcome
    "error"."""
    gh.fail("create_issue_comment", GitHubError("Gone: Issues are disabled for this repo", 410))
    assert review(gh) == "failure"
    [run] = gh.check_runs
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert "post the summary comment: the repository's Issues are turned off (410" in run.text
    assert "turns on Issues" in run.text  # the setting, not "see GitHub's answer"


def test_only_checks_that_are_not_required_red_unstable_so_the_bot_merges(gh: LocalGitHub) -> None:
    assert gh.app_permissions is not None
    gh.app_permissions = {**gh.app_permissions, "contents": "write"}
    gh.create_check_run(REPO, gh.resolve("pr"), "lint", "completed", conclusion="failure")
    gh.add_review(DATAPROC_OWNER)
    assert gh.mergeable_state() == "blocked"  # the bot's required check has not reported
    assert review(gh) == "success"
    # "unstable status": merged
    assert gh.merged == {"sha": gh.resolve("pr"), "method": "SQUASH", "by": BOT}


def test_auto_merge_not_allowed_in_the_repository_is_named_with_the_setting_and_the_verdict_stands(
    gh: LocalGitHub,
) -> None:
    """GitHub leaves "Allow auto-merge" off until an administrator turns it on; its "no" to
    ``enablePullRequestAutoMerge`` names the setting to turn on, the verdict stays."""
    assert gh.app_permissions is not None
    gh.app_permissions = {**gh.app_permissions, "contents": "write"}
    gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
    gh.allow_auto_merge = False
    gh.add_review(DATAPROC_OWNER)
    assert review(gh) == "success"
    assert [(s, c) for s, c, _ in runs(gh)] == [("completed", "success")]
    assert gh.merged is None and gh.auto_merge is None
    [body] = summaries(gh)
    assert "GitHub refused to let the bot enable auto-merge (422" in body
    assert '"Allow auto-merge"' in body

    gh.allow_auto_merge = True  # what the Merge section asked for
    assert review(gh) == "success"
    assert gh.auto_merge == "SQUASH" and gh.auto_merge_by == BOT


def test_a_merge_method_the_repository_does_not_allow_is_named_with_its_setting_the_verdict_stands(
    gh: LocalGitHub,
) -> None:
    """GitHub answers 405 "Squash merges are not allowed on this repository." to a merge with a
    method the repository's settings turn off (and GraphQL's auto-merge the same words): a setting
    to name in the Merge section, never a retry; the verdict stays (before: "see GitHub's answer",
    nothing named; the model merged with any method)."""
    assert gh.app_permissions is not None
    gh.app_permissions = {**gh.app_permissions, "contents": "write"}
    gh.merge_methods = frozenset({"MERGE"})
    gh.add_review(DATAPROC_OWNER)
    assert review(gh) == "success"  # the pull request can merge now: the merge is refused
    assert [(s, c) for s, c, _ in runs(gh)] == [("completed", "success")]
    assert gh.merged is None
    assert gh.methods_written().count("merge_pull_request") == 1
    [body] = summaries(gh)
    merge = body.split("Merge", 1)[1]
    assert (
        "merge with the configured merge method (405: Squash merges are not allowed on this "
        "repository.)" in merge
    )
    assert '"Allow squash merging"' in merge and "`delegation.merge_method`" in merge

    # auto-merge (a required check still red): GitHub's GraphQL refuses the method too
    gh.protection = BranchProtection(required_approvals=0, required_checks=(CHECK_NAME, "ci"))
    assert review(gh) == "success"
    assert gh.auto_merge is None and all(c == "success" for _, c, _ in runs(gh))
    [body] = summaries(gh)
    merge = body.split("Merge", 1)[1]
    assert "merge with the configured merge method (422: " in merge
    assert "Squash merges are not allowed on this repository.)" in merge
    assert '"Allow squash merging"' in merge

    gh.merge_methods = frozenset({"MERGE", "SQUASH"})  # what the Merge section asked for
    assert review(gh) == "success"
    assert gh.auto_merge == "SQUASH" and gh.auto_merge_by == BOT


def test_a_locked_conversation_is_named_once_in_the_check_run_and_the_verdict_stands(
    gh: LocalGitHub,
) -> None:
    """On a locked conversation GitHub refuses the App's comment (403 "Unable to create comment
    because issue is locked.") and its reviews (422): the verdict concludes as it is, and the lock
    is said once in the check run's text with what to do (before: the model accepted both; the
    App's line for a 403 comment asked for Issues: write, which would not help)."""
    assert gh.app_permissions is not None
    gh.app_permissions = {**gh.app_permissions, "contents": "write"}
    gh.add_review(DATAPROC_OWNER)
    gh.locked = True
    assert review(gh) == "success"
    [run] = gh.check_runs
    assert (run.status, run.conclusion) == ("completed", "success")
    assert run.text.count("its conversation is locked") == 1, run.text
    assert "Unlock conversation" in run.text and "Issues: write" not in run.text
    assert not gh.reviews[1:] and not gh.issue_comments and gh.merged is None

    gh.locked = False  # what the check run asked for
    assert review(gh) == "success"
    assert len(summaries(gh)) == 1 and gh.merged is not None
