"""``registry-bot check``: review a change of a local repository, or a whole tree."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import (
    EXIT_ERRORS,
    EXIT_OK,
    UsageError,
    add_color_argument,
    use_color,
    verdict,
    writable_output,
)
from bot.cli.commands import _inputs

if TYPE_CHECKING:
    from bot.core.snapshot import Snapshot
    from bot.review.compose import Stage

# bot.outputs.render.FORMATS, without importing the renderers for --help
FORMATS = ("text", "json", "sarif", "markdown")

HELP = "review a change (--base/--head) or every entry (--all) of a local repository"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="a git repository (bare is fine) or, with --all, any folder")
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--base", help="the revision the change starts from (a branch, tag or sha)")
    scope.add_argument("--all", action="store_true", help="review every entry of the tree")
    parser.add_argument("--head", default="HEAD", help="the revision to review (default: HEAD)")
    tree = parser.add_mutually_exclusive_group()
    tree.add_argument(
        "--worktree",
        action="store_true",
        help="with --base: review the working tree as it is (untracked files included) instead of "
        "--head",
    )
    tree.add_argument(
        "--staged",
        action="store_true",
        help="with --base: review what the index holds, what `git commit` would record (the "
        "pre-commit hook's view: untracked files and unstaged edits are not part of it)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail on pre-existing errors too; with --all, the adoption gaps are errors",
    )
    parser.add_argument("--author", help="GitHub login of the change's author (owner checks)")
    parser.add_argument(
        "--approved-by",
        default="",
        metavar="LOGIN[,org/team...]",
        help="who approved the change: GitHub logins and the org/team slugs of their teams, "
        "comma-separated (owner checks)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="write the report to this file instead of stdout"
    )
    add_color_argument(parser)


def run(args: argparse.Namespace) -> int:
    from bot.core.changes import ChangeSet
    from bot.core.snapshot import DirSnapshot, GitError
    from bot.outputs.render import render
    from bot.review.compose import ReviewRequest, run_review

    writable_output(args.output)
    if args.all and (args.worktree or args.staged):
        raise UsageError(
            f"{'--worktree' if args.worktree else '--staged'} goes with --base, not --all"
        )
    repo = _inputs.folder(args.repo)
    who = {
        "author": _inputs.login(args.author, "--author", bot=True),
        "approvers": _inputs.logins(args.approved_by, "--approved-by"),
        "strict": args.strict,
    }
    try:
        if args.all:
            if args.head != "HEAD" or _is_bare(repo):
                head: Snapshot = _inputs.revision(
                    _inputs.git_repository(args.repo), args.head, "--head"
                )
            else:
                head = DirSnapshot(repo)
            request = ReviewRequest(head=head, **who).configured()
            _inputs.registry_folder([head], str(repo), request.settings)
            report = run_review(request)
        elif args.worktree:
            from bot.core.worktree import worktree_changes

            repo = _inputs.git_repository(args.repo)
            tree = DirSnapshot(repo)
            with _inputs.revision(repo, args.base, "--base") as base:
                request = ReviewRequest(head=tree, base=base, **who).configured()
                _inputs.registry_folder(
                    [base, tree], f"{repo} at {args.base} and its working tree", request.settings
                )
                request = dataclasses.replace(
                    request, changes=worktree_changes(repo, args.base, base, tree)
                )
                report = run_review(request)
        else:
            repo = _inputs.git_repository(args.repo)
            head_rev, head_name = args.head, args.head
            if args.staged:
                head_rev, head_name = _inputs.staged(repo, args.base), "the staged files"
            with (
                _inputs.revision(repo, args.base, "--base") as base,
                _inputs.revision(repo, head_rev, "--head") as head_git,
            ):
                request = ReviewRequest(head=head_git, base=base, **who).configured()
                _inputs.registry_folder(
                    [base, head_git], f"{repo} at {args.base} and at {head_name}", request.settings
                )
                request = dataclasses.replace(
                    request, changes=ChangeSet.from_git(repo, base.commit, head_git.commit)
                )
                report = run_review(request, _stages(args.format))
    except GitError as exc:
        raise UsageError(exc.reason) from None
    except OSError as exc:  # a folder of the tree that cannot be listed
        raise UsageError(f"cannot read {exc.filename or repo}: {exc.strerror or exc}") from None
    stream = sys.stdout if args.output is None else None
    color = args.format == "text" and stream is not None and use_color(args.color, stream)
    text = render(report, args.format, color=color)
    code = verdict(EXIT_ERRORS if report.has_errors else EXIT_OK)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return code


def _stages(output: str) -> list[Stage]:
    """The "Published site" section as the App's check run shows it, for the formats a person
    reads; the others never showed it, and do not import the site model either."""
    if output not in ("text", "markdown"):
        return []
    from bot.outputs.site.preview import site_preview

    return [site_preview]


def _is_bare(repo: Path) -> bool:
    return (
        (repo / "HEAD").is_file() and (repo / "objects").is_dir() and not (repo / ".git").exists()
    )
