"""Run the stand-in GitHub server as a process: ``python -m tests.standin --repo PATH --port 0``.

The first stdout line is the port it listens on (127.0.0.1), so a parent process can read it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.cli.commands.app import DEFAULT_MANIFEST
from bot.github.app_permissions import manifest_permissions
from bot.github.local import LocalGitHub
from bot.github.local_merge import BranchProtection
from tests.standin.server import (
    ADMIN,
    ContentLimit,
    Pacing,
    StandInState,
    generate_private_key_pem,
    serve,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.standin", description=__doc__)
    parser.add_argument(
        "--repo", required=True, help="the local git repository behind the stand-in"
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed first)")
    parser.add_argument("--pr-base", default="main", help="base branch or sha of the pull request")
    parser.add_argument("--pr-head", default="pr", help="head branch or sha of the pull request")
    parser.add_argument("--pr-number", type=int, default=1)
    parser.add_argument("--repo-name", default="owner/repo", help="owner/name the stand-in serves")
    parser.add_argument("--author", default="contributor", help="login of the PR author")
    parser.add_argument(
        "--permission",
        action="append",
        default=[],
        metavar="LOGIN=LEVEL",
        help="a user's permission (admin, maintain, write, triage, read, none); repeatable",
    )
    parser.add_argument(
        "--team-member",
        action="append",
        default=[],
        metavar="ORG/TEAM=LOGIN[,LOGIN...]",
        help="active members of a team (answered at /orgs/ORG/teams/TEAM/memberships/LOGIN); "
        "repeatable",
    )
    parser.add_argument("--app-id", type=int, default=1)
    parser.add_argument("--app-slug", default="registry-bot")
    parser.add_argument("--installation-id", type=int, default=1)
    parser.add_argument(
        "--app-key",
        type=Path,
        help="the App's private key (PEM); created there if missing; default: a fresh key, "
        "served at GET /_standin/app",
    )
    parser.add_argument(
        "--token-ttl", type=float, default=3600.0, help="installation token lifetime, seconds"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="added to every API request (real GitHub: about 0.05-0.3)",
    )
    parser.add_argument(
        "--write-pause",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="flag writes sooner than this after the previous one (GitHub asks for 1); 0: only "
        "concurrent writes are flagged",
    )
    parser.add_argument(
        "--protect",
        action="store_true",
        help="protect the base branch: one approval by someone with write access and the "
        "--required-check runs passing, before a merge",
    )
    parser.add_argument(
        "--dismiss-stale",
        action="store_true",
        help="with --protect: a push dismisses the approvals (branch protection's option)",
    )
    parser.add_argument(
        "--required-check",
        action="append",
        default=[],
        metavar="NAME",
        help="a check run the protected branch requires (repeatable)",
    )
    parser.add_argument(
        "--required-approvals",
        type=int,
        default=1,
        metavar="N",
        help="with --protect: approving reviews by writers required (an App's do not count)",
    )
    parser.add_argument(
        "--no-auto-merge",
        action="store_true",
        help='the repository\'s "Allow auto-merge" off, as GitHub leaves it until an administrator '
        "turns it on (enablePullRequestAutoMerge is refused)",
    )
    parser.add_argument(
        "--restrict-dismissals",
        action="store_true",
        help="with --protect: only admins and the --dismissal-actor logins may dismiss reviews",
    )
    parser.add_argument(
        "--dismissal-actor",
        action="append",
        default=[],
        metavar="LOGIN",
        help="with --restrict-dismissals: a login (an App: slug[bot]) allowed to dismiss",
    )
    parser.add_argument(
        "--app-manifest",
        type=Path,
        default=DEFAULT_MANIFEST,
        help="the App manifest whose default_permissions the installation is granted (default: the "
        "project's app.yml); a call it does not grant is answered 403 as on GitHub",
    )
    parser.add_argument(
        "--grant",
        action="append",
        default=[],
        metavar="PERMISSION=LEVEL",
        help="grant the installation more than the manifest (contents=write for auto-merge)",
    )
    parser.add_argument(
        "--content-limit",
        default="",
        metavar="N/SECONDS[/STATUS]",
        help="GitHub's secondary rate limit on content creation: at most N content-creating "
        "requests per SECONDS (GitHub: 80/60 and 500/3600), refused with STATUS (403, or 429: "
        "GitHub answers either); default: none",
    )
    args = parser.parse_args(argv)

    actors = tuple(args.dismissal_actor) if args.restrict_dismissals else None
    actors = tuple(args.dismissal_actor) if args.restrict_dismissals else None
    protection = (
        BranchProtection(
            required_checks=tuple(args.required_check),
            dismiss_stale_reviews=args.dismiss_stale,
            required_approvals=args.required_approvals,
            dismissal_actors=actors,
        )
        if args.protect
        else None
    )
    granted = {
        **manifest_permissions(args.app_manifest),
        **dict(item.split("=", 1) for item in args.grant),
    }
    permissions = {ADMIN: "admin", **dict(item.split("=", 1) for item in args.permission)}
    teams: dict[str, list[str]] = {}
    for item in args.team_member:
        team, _, logins = item.partition("=")
        teams.setdefault(team, []).extend(x for x in logins.split(",") if x)
    key = None
    if args.app_key is not None:
        if not args.app_key.exists():
            args.app_key.write_text(generate_private_key_pem(), encoding="utf-8")
            args.app_key.chmod(0o600)
        key = args.app_key.read_text(encoding="utf-8")
    local = LocalGitHub(
        args.repo,
        args.pr_base,
        args.pr_head,
        repo=args.repo_name,
        number=args.pr_number,
        author=args.author,
        bot=f"{args.app_slug}[bot]",
        permissions=permissions,
        team_members=teams,
        protection=protection,
        app_permissions=granted,
    )
    local.allow_auto_merge = not args.no_auto_merge
    state = StandInState(
        local,
        key or generate_private_key_pem(),
        app_id=args.app_id,
        slug=args.app_slug,
        installation_id=args.installation_id,
        token_ttl=args.token_ttl,
        latency=args.latency,
        pacing=Pacing(args.write_pause),
        content_limit=content_limit(args.content_limit),
    )
    server = serve(state, args.port)
    print(server.server_port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        local.close()
    return 0


def content_limit(spec: str) -> ContentLimit | None:
    if not spec:
        return None
    count, _, rest = spec.partition("/")
    seconds, _, status = rest.partition("/")
    return ContentLimit(int(count), float(seconds or 60), int(status or 403))


if __name__ == "__main__":
    sys.exit(main())
