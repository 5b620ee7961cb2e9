"""``registry-bot action``: the review step of the GitHub Action (action.yml), run as a runner runs
it.

One review of the checkout, written three ways: SARIF for code scanning (``--sarif``), Markdown
appended to the job summary (``GITHUB_STEP_SUMMARY``) and text on stdout. On a pull request event
(``GITHUB_EVENT_PATH``) the approvals and the approvers' owning teams are read from GitHub with
``GITHUB_TOKEN`` (``bot.github.action``); a team the token cannot see, or an event without a pull
request, is "approval not checked" and left to GitHub's own CODEOWNERS review. Reviews GitHub does
not send (failing after the retries, or refusing the token) make a review that cannot finish
(``bot/incomplete-review``, exit 1), its SARIF and summary written all the same.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError, verdict, writable_output
from bot.cli.commands import _inputs

HELP = (
    "review a pull request as the GitHub Action does: approvals and teams read with GITHUB_TOKEN, "
    "SARIF, the job summary"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="the checkout (with the base commit fetched)")
    parser.add_argument(
        "--base", default="", help="the revision the change starts from; empty: every entry (--all)"
    )
    parser.add_argument("--head", default="HEAD", help="the revision to review (default: HEAD)")
    parser.add_argument(
        "--author", default="", help="the pull request's author (default: the event's)"
    )
    parser.add_argument(
        "--sarif", required=True, metavar="FILE", help="where the SARIF report is written"
    )


def _event() -> dict[str, Any]:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"GITHUB_EVENT_PATH {path}: cannot read the event payload ({exc})"
        ) from None
    return event if isinstance(event, dict) else {}


def run(args: argparse.Namespace) -> int:
    from bot.core.changes import ChangeSet
    from bot.core.findings import Finding
    from bot.core.snapshot import GitError
    from bot.github.action import (
        TOKEN_ADVICE,
        Approvals,
        TokenReader,
        pull_request_number,
        read_approvals,
        reviews_unread,
    )
    from bot.github.api import GitHubError
    from bot.outputs.render import render
    from bot.review.compose import ReviewRequest, approval_not_checked, run_review, sections

    writable_output(args.sarif, "--sarif")
    event = _event()
    number = pull_request_number(event)
    pr_user = (event.get("pull_request") or {}).get("user") or {}
    author = _inputs.login(args.author, "--author", bot=True) or _inputs.login(
        str(pr_user.get("login") or ""), "the event's author", bot=True
    )
    repo_name = os.environ.get("GITHUB_REPOSITORY", "")
    try:
        if not args.base:
            head = _inputs.revision(_inputs.git_repository(args.repo), args.head, "--head")
            request = ReviewRequest(head=head, author=author or None).configured()
            _inputs.registry_folder([head], str(args.repo), request.settings)
            approvals = Approvals()  # a whole tree has no change to approve
            report = run_review(request)
        else:
            repo = _inputs.git_repository(args.repo)
            with (
                _inputs.revision(repo, args.base, "--base") as base,
                _inputs.revision(repo, args.head, "--head") as hd,
            ):
                request = ReviewRequest(head=hd, base=base, author=author or None).configured()
                _inputs.registry_folder(
                    [base, hd], f"{repo} at {args.base} and at {args.head}", request.settings
                )
                changes = ChangeSet.from_git(repo, base.commit, hd.commit)
                failed: list[Finding] = []
                if number is None or not repo_name:
                    approvals = Approvals(
                        unchecked=(
                            "no pull request in the event (GITHUB_EVENT_PATH, "
                            "GITHUB_REPOSITORY): approvals were not read",
                        )
                    )
                else:
                    reader = TokenReader(
                        os.environ.get("GITHUB_TOKEN", ""),
                        os.environ.get("GITHUB_API_URL") or "https://api.github.com",
                    )
                    try:
                        approvals = read_approvals(
                            reader,
                            repo_name,
                            number,
                            author or "",
                            (base, hd, changes, request.settings),
                        )
                    except GitHubError as exc:  # failing, refused, a cut: none counted
                        approvals, failed = Approvals(), [reviews_unread(exc)]
                request = dataclasses.replace(
                    request, changes=changes, approvers=approvals.approvers
                )
                teams = approvals.teams.section("the token", TOKEN_ADVICE)
                report = run_review(
                    request,
                    [
                        approval_not_checked(approvals.unchecked, approvals.hidden_teams()),
                        sections(*([teams] if teams else []), findings=failed),
                    ],
                )
    except GitError as exc:
        raise UsageError(exc.reason) from None
    Path(args.sarif).write_text(render(report, "sarif"), encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as out:
            out.write(render(report, "markdown"))
    code = verdict(EXIT_ERRORS if report.has_errors else EXIT_OK)
    sys.stdout.write(render(report, "text"))
    return code
