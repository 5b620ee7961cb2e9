"""``registry-bot regress``: validate sample events at two revisions and report what the change breaks."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError
from bot.commands import _inputs

if TYPE_CHECKING:
    from bot.findings import Finding
    from bot.regression.result import RegressionResult

HELP = "run the sample-event regression of a change (--base/--head) with PySpark or in one process"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="a git repository (bare is fine)")
    parser.add_argument("--base", required=True, help="the revision the change starts from")
    parser.add_argument("--head", default="HEAD", help="the revision to check (default: HEAD)")
    parser.add_argument("--events", nargs="+", default=[], metavar="PATH",
                        help="more event files, folders or globs (any path Spark reads, e.g. s3a://, with Spark)")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    parser.add_argument("--engine", choices=("spark", "python"), default="spark",
                        help="run on Spark (default) or in this Python process")
    parser.add_argument("--parquet", metavar="DIR", help="with Spark: write every non-ok outcome as Parquet")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def run(args: argparse.Namespace) -> int:
    from bot.config import load_config
    from bot.findings import Severity
    from bot.regression.runner import gather, run_local
    from bot.snapshot import GitError

    _check_events(args.events)
    if args.engine == "spark" and importlib.util.find_spec("pyspark") is None:
        raise UsageError("--engine spark needs PySpark, which is not installed: install the spark extra "
                         "(pip install 'openlineage-registry-bot[spark]', and a Java runtime), or use --engine python")
    if args.parquet and not Path(args.parquet).absolute().parent.is_dir():
        raise UsageError(f"--parquet {args.parquet}: the folder {Path(args.parquet).absolute().parent} does not exist")
    repo = _inputs.git_repository(args.repo)
    try:
        with _inputs.revision(repo, args.base, "--base") as base, _inputs.revision(repo, args.head, "--head") as head:
            _inputs.registry_folder([base, head], f"{repo} at {args.base} and at {args.head}")
            print(f"Reading the sample events of {repo} at {args.base} and {args.head}...", file=sys.stderr)
            config, _ = load_config(base)
            inputs = gather(base, head, config, args.events)
    except GitError as exc:
        raise UsageError(exc.reason) from None
    if args.engine == "python":
        try:
            result = run_local(inputs)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    else:
        from bot.commands._progress import elapsed, jvm_output
        from bot.regression.spark_job import run_spark, start_session

        print(f"Checking {len(inputs.records)} event(s) on Spark ({args.master}); Spark takes 20-30 s to start "
              f"(--engine python skips it)...", file=sys.stderr)
        with jvm_output(args.verbose) as stderr, elapsed("Spark regression", stderr):
            spark = start_session(args.master)
            try:
                result = run_spark(spark, inputs.base, inputs.head, inputs.records, inputs.remote,
                                   parquet=args.parquet)
            finally:
                spark.stop()
    findings = result.findings(config.regression, config.paths.registry)
    if args.format == "json":
        sys.stdout.write(json.dumps({**result.to_json(), "findings": [f.to_json() for f in findings]}, indent=2) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(result.markdown())
    else:
        sys.stdout.write(_text(result, findings))
    return EXIT_ERRORS if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK


def _check_events(paths: list[str]) -> None:
    """Every local ``--events`` location names something: a file, a folder or a glob that matches."""
    import glob

    from bot.regression.events import is_remote

    for path in paths:
        if is_remote(path):
            continue
        local = path.removeprefix("file://")
        if glob.has_magic(local):
            if not glob.glob(local, recursive=True):  # noqa: PTH207  # absolute globs
                raise UsageError(f"--events {path}: the pattern matches no file")
        elif not Path(local).exists():
            raise UsageError(f"--events {path}: no such file or folder")


def _text(result: RegressionResult, findings: list[Finding]) -> str:
    from bot.render.inert import visible

    lines = [f"{result.events} events, base {visible(result.base)}, head {visible(result.head)}, {result.engine}, "
             f"{result.seconds:.1f} s"]
    lines += [f"{f.severity.value}: {visible(f.path) if f.path else '-'}: {visible(f.message)}" for f in findings]
    return "\n".join(lines) + "\n"
