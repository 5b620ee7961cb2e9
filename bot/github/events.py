"""Which webhook deliveries become review jobs: a pure function of the event name and payload.

Nothing here calls GitHub. Whatever needs GitHub (a commenter's permission, the pull request a
check suite belongs to, the files a pull request touches) is decided later by the worker.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from bot.core.config import CONFIG_PATHS
from bot.github.payloads import problem

RECHECK_COMMAND = "/registry-bot recheck"
WAIVE_COMMAND = "/registry-bot waive"  # proposes a waiver (a reply), never changes anything
# ``converted_to_draft``: GitHub turns a draft's auto-merge off; the summary's Merge section follows
PR_ACTIONS = frozenset(
    {"opened", "synchronize", "reopened", "ready_for_review", "converted_to_draft"}
)
# the pull request actions whose delivery reports nothing but its head, a head no earlier review can
# have seen at another moment (Worker: a duplicate of a reconciliation round's review of that head).
# Not ``synchronize``: a force-push back brings a head reviewed before, since when the base may have
# moved and the App's approval been dismissed, and nothing in the job tells it from a late push
HEAD_ACTIONS = frozenset({"opened"})
REVIEW_ACTIONS = frozenset({"submitted", "edited", "dismissed"})
# a push's action when its commits change what owners and delegation are judged by (a CODEOWNERS
# file, the bot's configuration): the open pull requests are reviewed again (``Worker``)
OWNERS_CHANGED = "owners-changed"
LOGGED_EVENTS = frozenset({"installation", "installation_repositories", "github_app_authorization"})
KNOWN_EVENTS = frozenset(
    {
        "ping",
        "pull_request",
        "pull_request_review",
        "check_suite",
        "check_run",
        "issue_comment",
        "push",
        *LOGGED_EVENTS,
    }
)


@dataclass(frozen=True)
class Job:
    """One review to do. ``number`` is 0 when only ``head_sha`` is known (a check suite of a
    fork)."""

    delivery: str
    event: str
    action: str
    installation: int
    repo: str
    number: int = 0
    head_sha: str = ""
    requester: str = ""  # who asked for a recheck: their permission is checked before reviewing
    rerun: bool = False  # a re-run request: always create a new check run
    # the check run an interrupted attempt started (resumed, never left in progress)
    check_run_id: int = 0
    check_run_sha: str = ""  # the head that check run is for
    deferrals: int = 0  # times the job was put off until GitHub's rate limit reset
    # a comment command that only answers (``/registry-bot waive ...``): no review
    command: str = ""
    not_before: float = 0.0  # a job to run no sooner (epoch seconds): a dashboard redone later

    @property
    def pr_key(self) -> str:
        # one dashboard per repository: the newest push wins, one at a time
        if self.event == "push":
            return f"{self.repo}#dashboard"
        return f"{self.repo}#{self.number}" if self.number else f"{self.repo}@{self.head_sha}"

    def record(self) -> dict[str, object]:
        """The job as the queue stores it under ``job``. A field added since the release before
        (``command``) is written only when set, and ``not_before`` never (the queue keeps it beside
        the job, ``JobQueue``): that release's workers, which reject keys they do not know, still
        read every job during a rolling upgrade (docs/app.md, "Upgrades")."""
        fields = asdict(self)
        del fields["not_before"]
        if not fields["command"]:
            del fields["command"]
        return fields

    @classmethod
    def of(cls, fields: dict[str, Any], not_before: float = 0.0) -> Job:
        """The job a record's ``job`` holds (``record``), with ``not_before`` kept beside it. A
        field this release does not know (written by a newer one) is left out, not refused."""
        known = {f.name for f in dataclasses.fields(cls)}
        kept = {k: v for k, v in fields.items() if k in known}
        return replace(cls(**kept), not_before=float(not_before or kept.get("not_before") or 0.0))

    def to_json(self) -> str:
        return json.dumps(self.record(), sort_keys=True)


@dataclass(frozen=True)
class Decision:
    """What the web endpoint does with a delivery: enqueue ``job``, or answer ``status`` with
    ``reason``."""

    status: int
    reason: str
    job: Job | None = None


def changes_owners(payload: dict[str, Any]) -> bool:
    """Whether a push's commits add, change or remove a CODEOWNERS file or the bot's
    configuration (each commit's ``added``, ``removed`` and ``modified``)."""
    commits = payload.get("commits")
    for commit in commits if isinstance(commits, list) else ():
        for key in ("added", "removed", "modified"):
            paths = commit.get(key) if isinstance(commit, dict) else None
            for path in paths if isinstance(paths, list) else ():
                if isinstance(path, str) and (
                    path.rpartition("/")[2] == "CODEOWNERS" or path in CONFIG_PATHS
                ):
                    return True
    return False


def _pr_from_list(items: Any, repo_id: Any) -> int:
    """The first pull request into this repository (``repo_id``) among a check suite's or run's
    ``pull_requests``; 0 when none is (the worker finds it by the head). GitHub may list there
    pull requests of other repositories with the same head branch (public clients' reports), whose
    numbers are not this repository's."""
    for item in items if isinstance(items, list) else ():
        base = item.get("base") if isinstance(item, dict) else None
        into = base.get("repo") if isinstance(base, dict) else None
        if isinstance(into, dict) and into.get("id") is not None and into.get("id") != repo_id:
            continue
        if isinstance(item, dict):
            return int(item.get("number") or 0)
    return 0


def decide(event: str, delivery: str, payload: dict[str, Any]) -> Decision:
    """Turn a verified delivery into a job, or say why it is ignored (400: why its payload is
    malformed)."""
    if event == "ping":
        return Decision(200, "pong")
    if event not in KNOWN_EVENTS:
        return Decision(202, f"event {event!r} is not handled; ignored")
    wrong = problem(event, payload)  # every field read below has its type from here on
    if wrong is not None:
        return Decision(400, wrong)
    action = str(payload.get("action") or "")
    if event in LOGGED_EVENTS:
        return Decision(200, f"{event}.{action} logged")
    installation = (payload.get("installation") or {}).get("id")
    repo = (payload.get("repository") or {}).get("full_name")
    if not isinstance(installation, int) or not isinstance(repo, str):
        return Decision(202, f"{event}.{action} without an installation or repository; ignored")
    base = Job(delivery=delivery, event=event, action=action, installation=installation, repo=repo)

    if event == "push":  # the default branch moved (a merge): refresh the dashboard issue
        branch = (payload.get("repository") or {}).get("default_branch")
        after = str(payload.get("after") or "")
        if (
            payload.get("ref") != f"refs/heads/{branch}"
            or payload.get("deleted")
            or not after.strip("0")
        ):
            return Decision(202, "push to another branch than the default one; ignored")
        action = OWNERS_CHANGED if changes_owners(payload) else ""
        return Decision(202, "queued", replace(base, action=action, head_sha=after))
    if event == "pull_request":
        pr = payload.get("pull_request") or {}
        changes = payload.get("changes") or {}
        if action in PR_ACTIONS or (action == "edited" and "base" in changes):
            return Decision(
                202,
                "queued",
                replace(
                    base,
                    number=int(pr.get("number") or payload.get("number") or 0),
                    head_sha=str((pr.get("head") or {}).get("sha") or ""),
                ),
            )
        return Decision(202, f"pull_request.{action} needs no review; ignored")
    if event == "pull_request_review":
        pr = payload.get("pull_request") or {}
        if str((payload.get("sender") or {}).get("type") or "") == "Bot":
            return Decision(
                202, f"pull_request_review.{action} by a bot (the App's own reviews) ignored"
            )
        # a review submitted, edited or dismissed can change the verdict
        if action in REVIEW_ACTIONS:
            return Decision(
                202,
                "queued",
                replace(
                    base,
                    number=int(pr.get("number") or 0),
                    head_sha=str((pr.get("head") or {}).get("sha") or ""),
                ),
            )
        return Decision(202, f"pull_request_review.{action} ignored")
    if event in ("check_suite", "check_run"):
        obj = payload.get(event) or {}
        if action == "rerequested" or (event == "check_run" and action == "requested_action"):
            return Decision(
                202,
                "queued",
                replace(
                    base,
                    number=_pr_from_list(
                        obj.get("pull_requests"), (payload.get("repository") or {}).get("id")
                    ),
                    head_sha=str(obj.get("head_sha") or ""),
                    rerun=True,
                ),
            )
        return Decision(202, f"{event}.{action} ignored")
    # issue_comment
    issue = payload.get("issue") or {}
    comment = payload.get("comment") or {}
    body = str(comment.get("body") or "")
    # a pull request's issue links it (an object); a plain issue has no link, or a null one
    if action != "created" or issue.get("pull_request") is None:
        return Decision(202, f"issue_comment.{action} not on a pull request; ignored")
    commenter = str((comment.get("user") or {}).get("login") or "")
    waive = next(
        (
            line.strip()
            for line in body.splitlines()
            if line.strip().startswith(WAIVE_COMMAND + " ")
        ),
        None,
    )
    if waive is not None and str((comment.get("user") or {}).get("type") or "") == "Bot":
        return Decision(202, "waive command from a bot (the App's own replies included) ignored")
    if waive is not None:  # from anyone: the answer is a proposal, never a change
        return Decision(
            202,
            "queued",
            replace(
                base,
                number=int(issue.get("number") or 0),
                requester=commenter,
                command=waive[:2_000],
            ),
        )
    if not any(line.strip().startswith(RECHECK_COMMAND) for line in body.splitlines()):
        return Decision(202, "comment without the recheck command; ignored")
    return Decision(
        202,
        "queued",
        replace(
            base,
            number=int(issue.get("number") or 0),
            requester=str((comment.get("user") or {}).get("login") or ""),
            rerun=True,
        ),
    )
