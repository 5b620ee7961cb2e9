"""``registry-bot check``: review a change of a local repository, or a whole tree."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError
from bot.render import FORMATS, render

HELP = "review a change (--base/--head) or every entry (--all) of a local repository"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="a git repository (bare is fine) or, with --all, any folder")
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--base", help="the revision the change starts from (a branch, tag or sha)")
    scope.add_argument("--all", action="store_true", help="review every entry of the tree")
    parser.add_argument("--head", default="HEAD", help="the revision to review (default: HEAD)")
    parser.add_argument("--strict", action="store_true",
                        help="fail on pre-existing errors too; with --all, the adoption gaps are errors")
    parser.add_argument("--author", help="GitHub login of the change's author (owner checks)")
    parser.add_argument("--approved-by", default="", metavar="LOGIN[,LOGIN...]",
                        help="GitHub logins that approved the change (owner checks)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--output", "-o", help="write the report to this file instead of stdout")


def run(args: argparse.Namespace) -> int:
    from bot.changes import ChangeSet
    from bot.engine import ReviewContext, review
    from bot.snapshot import DirSnapshot, GitError, GitSnapshot, Snapshot

    repo = Path(args.repo)
    if not repo.exists():
        raise UsageError(f"{repo} does not exist")
    context = ReviewContext(
        author=args.author,
        approvers=frozenset(x.strip() for x in args.approved_by.split(",") if x.strip()),
        strict=args.strict,
    )
    try:
        if args.all:
            head: Snapshot = (GitSnapshot(repo, args.head) if args.head != "HEAD" or _is_bare(repo)
                              else DirSnapshot(repo))
            report = review(head=head, base=None, changes=None, context=context)
        else:
            with GitSnapshot(repo, args.base) as base, GitSnapshot(repo, args.head) as head_git:
                changes = ChangeSet.from_git(repo, base.commit, head_git.commit)
                report = review(head=head_git, base=base, changes=changes, context=context)
    except GitError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # a folder of the tree that cannot be listed
        raise UsageError(f"cannot read {exc.filename or repo}: {exc.strerror or exc}") from None
    text = render(report, args.format, color=args.format == "text" and args.output is None and sys.stdout.isatty())
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_ERRORS if report.has_errors else EXIT_OK


def _is_bare(repo: Path) -> bool:
    return (repo / "HEAD").is_file() and (repo / "objects").is_dir() and not (repo / ".git").exists()
