"""``registry-bot demo``: review a bundled sample pull request, with no GitHub account and no cluster."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_ERRORS, EXIT_OK
from bot.render import FORMATS, render

if TYPE_CHECKING:
    from bot.changes import ChangeSet
    from bot.findings import Report
    from bot.snapshot import Snapshot

HELP = "review a bundled sample pull request against the bundled reference registry and print the verdict"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--keep", metavar="DIR", help="build the sample repository here and keep it")
    parser.add_argument("--exit-code", action="store_true",
                        help="exit 1 when the review finds errors (default: 0 once the review ran)")
    parser.add_argument("--no-regression", action="store_true",
                        help="skip the PySpark regression over the sample events (saves Spark's start-up)")


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
            if not args.no_regression:
                report = _with_regression(report, base, head, changes)
            # issue 12 (publish): the published registry of the sample's head, and where to open it
            from bot.commands.publish import demo_site
            print(demo_site(head) + "\n", file=sys.stderr)
    sys.stdout.write(render(report, args.format, color=args.format == "text" and sys.stdout.isatty()))
    return EXIT_ERRORS if args.exit_code and report.has_errors else EXIT_OK


def _with_regression(report: Report, base: Snapshot, head: Snapshot, changes: ChangeSet) -> Report:
    """Add the regression over the sample events, as the App's worker does (Spark in local mode)."""
    from bot.config import load_config
    from bot.regression import review_stage

    print("Running the PySpark regression over the sample events (Spark starts in local mode)...",
          file=sys.stderr)
    stage = review_stage()
    try:
        section, findings = stage(base, head, changes, load_config(base)[0])
    finally:
        stage.close()
    return report.with_sections(*([section] if section else []), findings=findings)
