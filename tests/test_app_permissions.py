"""The App's permissions: app.yml asks for exactly what the default features need, every
``GitHubAPI`` call has GitHub's permission in the table, ``app register --auto-merge`` adds what
merging needs, and ``LocalGitHub`` answers an ungranted call 403 as GitHub does."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from bot.cli.commands.app import DEFAULT_MANIFEST, load_manifest, permission_lines
from bot.github.api import GitHubAPI, GitHubError
from bot.github.app_permissions import NEEDS, REFUSED, check, manifest_permissions, needed_for


def test_app_yml_asks_for_exactly_what_the_review_and_team_owners_need() -> None:
    assert manifest_permissions(DEFAULT_MANIFEST) == needed_for(("review", "teams"))
    # merging is opt-in (--auto-merge)
    assert manifest_permissions(DEFAULT_MANIFEST)["contents"] == "read"


def test_every_call_of_the_protocol_has_its_permission() -> None:
    calls = {
        name
        for name, _ in inspect.getmembers(GitHubAPI, inspect.isfunction)
        if not name.startswith("_")
    }
    assert calls - {"bot_login", "rate_limit_remaining"} == set(NEEDS)


def test_the_default_features_cover_every_call_but_merging() -> None:
    granted = manifest_permissions(DEFAULT_MANIFEST)
    refused = set()
    for method in NEEDS:
        try:
            check(granted, method)
        except GitHubError as exc:
            assert exc.status == 403 and str(exc).startswith(REFUSED)
            refused.add(method)
    # commit statuses are asked for (the Merge section reads a required one); merging is a feature
    assert refused == {"merge_pull_request"}
    check({**granted, **needed_for(("auto-merge",))}, "merge_pull_request")


def test_register_with_auto_merge_asks_for_contents_write_and_names_the_feature(
    tmp_path: Path,
) -> None:
    plain = load_manifest(DEFAULT_MANIFEST, "https://x/webhook", "http://127.0.0.1/callback")
    merging = load_manifest(
        DEFAULT_MANIFEST, "https://x/webhook", "http://127.0.0.1/callback", features=("auto-merge",)
    )
    assert plain["default_permissions"]["contents"] == "read"
    assert merging["default_permissions"] == {**plain["default_permissions"], "contents": "write"}
    lines = permission_lines(merging["default_permissions"])
    assert "  contents: write (review, auto-merge)" in lines and "  members: read (teams)" in lines


@pytest.mark.parametrize("method", ["create_issue_comment", "edit_issue_comment"])
def test_comments_need_issues_or_pull_requests_write(method: str) -> None:
    check({"issues": "write"}, method)
    check({"pull_requests": "write"}, method)
    with pytest.raises(GitHubError, match="issues: write or pull_requests: write"):
        check({"issues": "read", "pull_requests": "read"}, method)
