"""``registry-bot check``: review a change of a local repository, or a whole tree."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError, add_color_argument, use_color, writable_output
from bot.commands import _inputs

if TYPE_CHECKING:
    from bot.changes import ChangeSet
    from bot.engine import ReviewContext
    from bot.findings import Report
    from bot.snapshot import Snapshot

FORMATS = ("text", "json", "sarif", "markdown")  # bot.render.FORMATS, without importing the renderers for --help

HELP = "review a change (--base/--head) or every entry (--all) of a local repository"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="a git repository (bare is fine) or, with --all, any folder")
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--base", help="the revision the change starts from (a branch, tag or sha)")
    scope.add_argument("--all", action="store_true", help="review every entry of the tree")
    parser.add_argument("--head", default="HEAD", help="the revision to review (default: HEAD)")
    parser.add_argument("--worktree", action="store_true",
                        help="with --base: review the working tree as it is (what a commit would hold, as the "
                             "pre-commit hook sees it) instead of --head")
    parser.add_argument("--strict", action="store_true",
                        help="fail on pre-existing errors too; with --all, the adoption gaps are errors")
    parser.add_argument("--author", help="GitHub login of the change's author (owner checks)")
    parser.add_argument("--approved-by", default="", metavar="LOGIN[,org/team...]",
                        help="who approved the change: GitHub logins and the org/team slugs of their teams, "
                             "comma-separated (owner checks)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to this file instead of stdout")
    add_color_argument(parser)


def run(args: argparse.Namespace) -> int:
    from bot.changes import ChangeSet
    from bot.engine import ReviewContext, review
    from bot.render import render
    from bot.snapshot import DirSnapshot, GitError

    writable_output(args.output)
    repo = _inputs.folder(args.repo)
    context = ReviewContext(
        author=_inputs.login(args.author, "--author"),
        approvers=_inputs.logins(args.approved_by, "--approved-by"),
        strict=args.strict,
    )
    try:
        if args.all:
            if args.head != "HEAD" or _is_bare(repo):
                head: Snapshot = _inputs.revision(_inputs.git_repository(args.repo), args.head, "--head")
            else:
                head = DirSnapshot(repo)
            _inputs.registry_folder([head], str(repo))
            report = review(head=head, base=None, changes=None, context=context)
        elif args.worktree:
            report = _worktree_review(_inputs.git_repository(args.repo), args.base, context)
        else:
            repo = _inputs.git_repository(args.repo)
            with _inputs.revision(repo, args.base, "--base") as base, \
                    _inputs.revision(repo, args.head, "--head") as head_git:
                _inputs.registry_folder([base, head_git], f"{repo} at {args.base} and at {args.head}")
                changes = ChangeSet.from_git(repo, base.commit, head_git.commit)
                report = review(head=head_git, base=base, changes=changes, context=context)
                if args.format in ("text", "markdown"):  # as the App's check run shows it
                    report = _with_site_preview(report, base, head_git, changes)
    except GitError as exc:
        raise UsageError(exc.reason) from None
    except OSError as exc:  # a folder of the tree that cannot be listed
        raise UsageError(f"cannot read {exc.filename or repo}: {exc.strerror or exc}") from None
    stream = sys.stdout if args.output is None else None
    color = args.format == "text" and stream is not None and use_color(args.color, stream)
    text = render(report, args.format, color=color)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_ERRORS if report.has_errors else EXIT_OK


def _worktree_review(repo: Path, rev: str, context: ReviewContext) -> Report:
    """The working tree of ``repo`` reviewed as a change from ``rev``: what a commit introduces."""
    from bot.engine import review
    from bot.snapshot import DirSnapshot
    from bot.worktree import worktree_changes

    head = DirSnapshot(repo)
    with _inputs.revision(repo, rev, "--base") as base:
        _inputs.registry_folder([base, head], f"{repo} at {rev} and its working tree")
        return review(head=head, base=base, changes=worktree_changes(repo, rev, base, head), context=context)


def _with_site_preview(report: Report, base: Snapshot, head: Snapshot, changes: ChangeSet) -> Report:
    """The report plus the "Published site" section (``bot.site.preview``); a preview that cannot be built
    is left out, as on the App, and never changes the verdict."""
    from bot.config import load_config
    from bot.site.preview import preview

    try:
        section = preview(base, head, load_config(base)[0], changes)
    except Exception:  # noqa: BLE001 - the preview is an aside of the review, never its failure
        return report
    return report.with_sections(section) if section else report


def _is_bare(repo: Path) -> bool:
    return (repo / "HEAD").is_file() and (repo / "objects").is_dir() and not (repo / ".git").exists()
