"""``registry-bot demo``: review a bundled sample pull request, with no GitHub account and no
cluster."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import (
    EXIT_ERRORS,
    EXIT_OK,
    UsageError,
    add_color_argument,
    use_color,
    verdict,
)
from bot.cli.commands.check import FORMATS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pyspark.sql import SparkSession

    from bot.core.findings import Report
    from bot.review.compose import Stage

HELP = (
    "review a bundled sample pull request against the bundled reference registry and print the "
    "verdict"
)

INTRO = """\
registry-bot demo: a small OpenLineage registry (core, airflow, egeria, marquez) as a git repository, and a
pull request by @{author} that registers `dagster` with mistakes planted on purpose (no CODEOWNERS, a facet
key without its prefix, an example of the wrong type, a remote $ref, an unpublished version) and edits
`marquez`, which the author does not own. The review below should fail; that is the point.
"""  # noqa: E501


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="build the sample repository in DIR (a new folder) and keep it, to try `check` on it",
    )
    parser.add_argument(
        "--exit-code",
        action="store_true",
        help="exit 1 when the review finds errors (default: 0 once the review ran)",
    )
    parser.add_argument(
        "--no-regression",
        action="store_true",
        help="skip the PySpark regression over the sample events (saves Spark's start-up)",
    )
    add_color_argument(parser)


def run(args: argparse.Namespace) -> int:
    from bot.cli.sample import AUTHOR, BASE_BRANCH, PR_BRANCH
    from bot.outputs.render import render

    if args.keep and os.path.lexists(args.keep):
        raise UsageError(f"--keep {args.keep}: already exists; name a new folder")
    if args.keep and not Path(args.keep).absolute().parent.is_dir():
        raise UsageError(
            f"--keep {args.keep}: the folder {Path(args.keep).absolute().parent} does not exist"
        )
    print(INTRO.format(author=AUTHOR), file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="registry-bot-demo-") as scratch:
        target = Path(args.keep) if args.keep else Path(scratch) / "registry"
        report = _review(target, regression=not args.no_regression, verbose=args.verbose, site=True)
    color = args.format == "text" and use_color(args.color, sys.stdout)
    code = verdict(EXIT_ERRORS if args.exit_code and report.has_errors else EXIT_OK)
    sys.stdout.write(render(report, args.format, color=color))
    if args.format == "text":
        print(
            "\nThe errors above are the mistakes planted in the sample pull request; the demo "
            "exits 0 once the review ran (--exit-code: 1 on errors).",
            file=sys.stderr,
        )
    if args.keep:
        print(
            f"\nThe sample repository is kept in {args.keep}: try `registry-bot check {args.keep} "
            f"--base {BASE_BRANCH} --head {PR_BRANCH} --author {AUTHOR}`",
            file=sys.stderr,
        )
    return code


def _review(
    target: Path,
    regression: bool,
    verbose: bool = False,
    session_factory: Callable[[str], SparkSession] | None = None,
    site: bool = False,
) -> Report:
    """Build the sample repository in ``target`` and review its pull request as the App does (with
    the regression, Spark in local mode); with ``site``, also publish the head's registry and say
    where."""
    from bot.cli.sample import build_sample_repo
    from bot.core.changes import ChangeSet
    from bot.core.snapshot import GitSnapshot
    from bot.outputs.site.preview import site_preview
    from bot.review.compose import ReviewRequest, run_review

    sample = build_sample_repo(target)
    with (
        GitSnapshot(sample.path, sample.base) as base,
        GitSnapshot(sample.path, sample.head) as head,
    ):
        changes = ChangeSet.from_git(sample.path, base.commit, head.commit)
        request = ReviewRequest(head=head, base=base, changes=changes, author=sample.author)
        with _regression(regression, verbose, session_factory) as stages:
            report = run_review(request, [*stages, site_preview])
        if site:
            from bot.cli.commands.publish import demo_site

            print(demo_site(head) + "\n", file=sys.stderr)
    return report


def review_sample(
    target: Path, session_factory: Callable[[str], SparkSession] | None = None
) -> str:
    """The demo's text output (no colour), as the README shows it."""
    from bot.outputs.render import render

    return render(_review(target, regression=True, session_factory=session_factory), "text")


@contextlib.contextmanager
def _regression(
    wanted: bool, verbose: bool, session_factory: Callable[[str], SparkSession] | None
) -> Iterator[list[Stage]]:
    """The regression stage over the sample events, as the App's worker runs it (Spark in local
    mode)."""
    if not wanted:
        yield []
        return
    from bot.cli.commands._progress import elapsed, jvm_output
    from bot.review.compose import regression
    from bot.review.regression import review_stage

    print(
        "Running the PySpark regression over the sample events: Spark starts in local mode (20-30 "
        "s)...",
        file=sys.stderr,
    )
    stage = review_stage(session_factory=session_factory)
    with jvm_output(verbose) as stderr, elapsed("Spark regression", stderr):
        try:
            yield [regression(stage)]
        # Ctrl-C above all: a failing stop of a half-started Spark must not hide it
        except BaseException:
            if session_factory is None:
                with contextlib.suppress(Exception):
                    stage.close()
            raise
        if session_factory is None:  # a session passed in belongs to the caller
            stage.close()
