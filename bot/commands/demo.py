"""``registry-bot demo``: review a bundled sample pull request, with no GitHub account and no cluster."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bot.cli import EXIT_ERRORS, EXIT_OK
from bot.render import FORMATS, render

HELP = "review a bundled sample pull request against the bundled reference registry and print the verdict"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--keep", metavar="DIR", help="build the sample repository here and keep it")
    parser.add_argument("--exit-code", action="store_true",
                        help="exit 1 when the review finds errors (default: 0 once the review ran)")


def run(args: argparse.Namespace) -> int:
    from bot.changes import ChangeSet
    from bot.engine import ReviewContext, review
    from bot.sample import build_sample_repo
    from bot.snapshot import GitSnapshot

    with tempfile.TemporaryDirectory(prefix="registry-bot-demo-") as scratch:
        target = Path(args.keep) if args.keep else Path(scratch) / "registry"
        sample = build_sample_repo(target)
        print(f"Sample repository: {sample.path} ({sample.base} <- {sample.head}, author @{sample.author})\n",
              file=sys.stderr)
        with GitSnapshot(sample.path, sample.base) as base, GitSnapshot(sample.path, sample.head) as head:
            changes = ChangeSet.from_git(sample.path, base.commit, head.commit)
            report = review(head=head, base=base, changes=changes, context=ReviewContext(author=sample.author))
    sys.stdout.write(render(report, args.format, color=args.format == "text" and sys.stdout.isatty()))
    return EXIT_ERRORS if args.exit_code and report.has_errors else EXIT_OK
