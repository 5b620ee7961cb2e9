"""``registry-bot replay``: run the App's whole pipeline for a recorded delivery against a local git
repository.

Like Probot's ``receive``: the delivery goes through the same event routing and worker code as in
production, but GitHub is ``LocalGitHub`` over ``--repo``, and what would be posted is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError, verdict

# every delivery has one
WEBHOOK_KEYS = ("action", "zen", "pull_request", "check_suite", "check_run")
HELP = "run the GitHub App pipeline for a recorded webhook delivery against a local git repository"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "delivery", help="the delivery's JSON body, or {name, id, payload} as Probot records it"
    )
    parser.add_argument(
        "--repo", required=True, help="a local git repository standing in for the GitHub one"
    )
    parser.add_argument(
        "--event",
        help="the X-GitHub-Event name (default: the recording's 'name', else pull_request)",
    )
    parser.add_argument(
        "--base", help="base branch or sha (default: the payload's base ref, else main)"
    )
    parser.add_argument(
        "--head", help="head branch or sha (default: the payload's head ref, else HEAD)"
    )
    parser.add_argument(
        "--checks",
        metavar="MODULE:NAME",
        help="run these checks instead of bot.review.checks.CHECKS",
    )
    parser.add_argument(
        "--approved-by", default="", metavar="LOGIN[,LOGIN...]", help="users who approved"
    )
    parser.add_argument(
        "--team-member",
        action="append",
        default=[],
        metavar="ORG/TEAM=LOGIN[,LOGIN...]",
        help="active members of a team, for team owners in CODEOWNERS (repeatable); other teams "
        "count as not visible, so their membership is reported as unverified",
    )


def _load(path: str) -> tuple[str | None, str, dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} does not hold a JSON object")
    name, delivery, payload = (
        (data.get("name"), str(data.get("id") or "replay"), data["payload"])
        if isinstance(data.get("payload"), dict)
        else (None, "replay", data)
    )
    if not any(key in payload for key in WEBHOOK_KEYS):
        raise UsageError(
            f"{path} is not a webhook delivery (none of {', '.join(WEBHOOK_KEYS)} in its payload)"
        )
    return name, delivery, payload


def _event_of(payload: dict[str, Any]) -> str:
    """The event a recording without its name most likely is, by its payload's own fields."""
    for key, event in (
        ("zen", "ping"),
        ("check_suite", "check_suite"),
        ("check_run", "check_run"),
        ("comment", "issue_comment"),
    ):
        if key in payload:
            return event
    return "pull_request"


def _checks(spec: str) -> Any:
    """``--checks MODULE:NAME`` loaded, or a usage error naming what is missing."""
    from bot.service.worker import load_checks

    try:
        checks = load_checks(spec)
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        raise UsageError(f"--checks {spec}: cannot load it ({exc})") from None
    if not checks or not all(callable(c) for c in checks):
        raise UsageError(f"--checks {spec}: not a tuple of checks")
    return checks


def _ref(local_repo: Path, wanted: str | None, fallback: str) -> str:
    from bot.core.snapshot import GitError, run_git

    for ref in (wanted, fallback):
        if not ref:
            continue
        try:
            run_git(
                local_repo,
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                f"{ref}^{{commit}}",
            )
        except GitError:
            continue
        return ref
    raise UsageError(f"neither {wanted!r} nor {fallback!r} is a revision of {local_repo}")


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bot.cli.commands import _inputs
    from bot.github.events import decide
    from bot.github.local import LocalGitHub
    from bot.service.worker import Worker

    reviewers = sorted(_inputs.logins(args.approved_by, "--approved-by"))
    repo_path = _inputs.git_repository(args.repo)
    checks = _checks(args.checks) if args.checks else None
    name, delivery, payload = _load(args.delivery)
    pr = payload.get("pull_request") or {}
    base = _ref(repo_path, args.base or (pr.get("base") or {}).get("ref"), "main")
    head = _ref(repo_path, args.head or (pr.get("head") or {}).get("ref"), "HEAD")
    with _inputs.revision(repo_path, head, "--head") as at_head:
        _inputs.registry_folder([at_head], f"{repo_path} at {head}")
    event = args.event or name or _event_of(payload)
    decision = decide(
        event, delivery, {**payload, "installation": payload.get("installation") or {"id": 1}}
    )
    if decision.job is None:
        print(f"{event}: {decision.reason} (nothing would be posted)")
        return EXIT_OK
    job = decision.job
    local = LocalGitHub(
        repo_path,
        base,
        head,
        repo=job.repo,
        number=job.number or 1,
        author=str((pr.get("user") or {}).get("login") or "contributor"),
        permissions={job.requester: "write"} if job.requester else None,
        team_members=_teams(args.team_member),
    )
    try:
        for login in reviewers:
            local.add_review(login, "APPROVE")
        job = replace(job, number=job.number or 1, head_sha="")
        outcome = Worker(_Single(local), checks=checks).handle(job)
        verdict(EXIT_ERRORS if outcome == "failure" else EXIT_OK)
        sys.stdout.write(local.render())
    finally:
        local.close()
    print(f"\noutcome: {outcome}")
    return EXIT_ERRORS if outcome == "failure" else EXIT_OK


def _teams(items: list[str]) -> dict[str, list[str]]:
    teams: dict[str, list[str]] = {}
    for item in items:
        team, sep, logins = item.partition("=")
        if not sep or team.count("/") != 1:
            raise UsageError(f"--team-member wants ORG/TEAM=LOGIN[,LOGIN...], not {item!r}")
        teams.setdefault(team, []).extend(x.strip() for x in logins.split(",") if x.strip())
    return teams


class _Single:
    """A ``GitHubClientFactory`` that always gives the one local repository."""

    def __init__(self, local: Any) -> None:
        self.local = local

    def for_installation(self, installation_id: int) -> Any:
        return self.local
