"""The dashboard issue: created once, then edited in place on every push to the default branch.

As Renovate's Dependency Dashboard, the App keeps one issue per repository, found by the marker line
of its body among the issues the App opened (open or closed): a second issue is never created. Its
body is the registry dashboard (``bot.outputs.dashboard``) of the pushed commit, each finding linked
to its file and line, and per entry the open pull requests whose summary comment says they wait on
its owners.
"""

from __future__ import annotations

import datetime
import functools
import logging
from collections.abc import Iterable

from bot.core.quoting import file_url
from bot.github.api import GitHubAPI, GitHubError
from bot.github.lazy_snapshot import TreeSnapshot, raise_read_failure
from bot.github.pipeline import EXTRA_PATHS, config_at
from bot.github.publish import SUMMARY_MARKER, waiting_of
from bot.github.refusals import FIXES, ISSUES_OFF, is_refusal
from bot.outputs.dashboard import build
from bot.outputs.render.dashboard import MARKER, TITLE, render_markdown
from bot.review.compose import ReviewRequest, run_review
from bot.review.engine import Check

log = logging.getLogger(__name__)

MAX_PULL_REQUESTS = 100  # open pull requests read for "waiting on its owners" (one request each)
# times a push's job follows the default branch to a newer head before leaving it to a newer job
MAX_FOLLOW = 2


def source_url(repo: str, sha: str) -> str:
    """Where the files of ``repo`` at commit ``sha`` are browsed on GitHub (``file_url``'s base)."""
    return f"https://github.com/{repo}/blob/{sha}"


def waiting(gh: GitHubAPI, repo: str) -> tuple[dict[str, list[str]], str]:
    """Entry -> the open pull requests whose latest review by the App waits on that entry's owners
    (the hidden line of its summary comment), and, when there were more open pull requests than
    ``MAX_PULL_REQUESTS`` to read, a note saying which were read."""
    me = gh.bot_login()
    out: dict[str, list[str]] = {}
    numbers = sorted(number for number, *_ in gh.list_open_pull_requests(repo))  # every page
    note = (
        f"Pull requests waiting on their owners: only the {MAX_PULL_REQUESTS} lowest-numbered of "
        f"the {len(numbers):,} open pull requests were read; the other "
        f"{len(numbers) - MAX_PULL_REQUESTS:,} are not listed here."
        if len(numbers) > MAX_PULL_REQUESTS
        else ""
    )
    for number in numbers[:MAX_PULL_REQUESTS]:
        summaries = [
            c
            for c in gh.list_issue_comments(repo, number)
            if c.user == me and SUMMARY_MARKER in c.body
        ]
        for entry in waiting_of(summaries[-1].body) if summaries else ():
            out.setdefault(entry, []).append(f"#{number}")
    return out, note


def body_for(
    gh: GitHubAPI, repo: str, sha: str, today: datetime.date, checks: Iterable[Check] | None = None
) -> str:
    """The dashboard of ``repo`` at commit ``sha`` as the issue's Markdown."""
    config, config_findings = config_at(gh, repo, sha, sha[:12])
    tree = TreeSnapshot(
        gh.read_tree(repo, sha, (*config.watched(), *EXTRA_PATHS)), label=f"commit {sha[:12]}"
    )
    report = run_review(
        ReviewRequest(
            head=tree,
            config=config,
            config_findings=tuple(config_findings),
            today=today,
            checks=tuple(checks) if checks is not None else None,
        )
    )
    raise_read_failure(tree)  # a check that missed a file: no dashboard (the job is retried)
    pending, note = waiting(gh, repo)
    board = build(report, tree, config, today, pending=pending, revision=sha)
    raise_read_failure(tree)
    return render_markdown(
        board, link=functools.partial(file_url, source_url(repo, sha)), notes=[note] if note else []
    )


def refresh(
    gh: GitHubAPI, repo: str, sha: str, today: datetime.date, checks: Iterable[Check] | None = None
) -> str:
    """Edit the App's dashboard issue (the oldest one with the marker), or create it when there is
    none, with the dashboard of the default branch's head. A push delivered (or retried) after a
    newer one finds the branch moved and describes its head instead (the newer push's job may have
    failed for good or been dropped: the issue would stay on an old commit until the next merge),
    at most ``MAX_FOLLOW`` times; it never writes an older commit's dashboard."""
    for _ in range(1 + MAX_FOLLOW):
        body = body_for(gh, repo, sha, today, checks)
        head = gh.default_branch_head(repo)
        if head == sha:
            break
        sha = head
    else:  # the branch moved on every read: the job of the newest push describes it
        return "dashboard-stale"
    try:
        return _write(gh, repo, body)
    except GitHubError as exc:
        if not is_refusal(exc):
            raise  # GitHub failing: the job runs again
        # GitHub's "no" (410: the repository's Issues are off; 403: no Issues: write): a retry
        # changes nothing, so the job ends here, said in the log with what to change
        log.warning(
            "the dashboard issue of %s was refused (%d: %s): %s",
            repo,
            exc.status,
            exc,
            FIXES["issues off"] if ISSUES_OFF.search(str(exc)) else FIXES["dashboard"],
        )
        return "dashboard-refused"


def _write(gh: GitHubAPI, repo: str, body: str) -> str:
    """Edit the App's dashboard issue (the oldest with the marker), or open it."""
    mine = sorted(
        (i for i in gh.list_issues(repo, gh.bot_login()) if MARKER in i.body),
        key=lambda i: i.number,
    )
    if not mine:
        gh.create_issue(repo, TITLE, body)
        return "dashboard-created"
    if mine[0].body != body:
        gh.edit_issue(repo, mine[0].number, body)
    return "dashboard-updated"
