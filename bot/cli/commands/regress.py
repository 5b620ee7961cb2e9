"""``registry-bot regress``: validate sample events at two revisions and report what the change
breaks."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError, verdict
from bot.cli.commands import _inputs

if TYPE_CHECKING:
    from collections.abc import Iterator

    from bot.core.findings import Finding
    from bot.review.regression.result import RegressionResult
    from bot.review.regression.runner import Events, Inputs

HELP = "run the sample-event regression of a change (--base/--head) with PySpark or in one process"
# in a --parquet folder this command wrote: the next run may replace it (Spark and pyarrow skip
# files whose names start with '.')
PARQUET_MARKER = ".registry-regress"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="a git repository (bare is fine)")
    parser.add_argument("--base", required=True, help="the revision the change starts from")
    parser.add_argument("--head", default="HEAD", help="the revision to check (default: HEAD)")
    parser.add_argument(
        "--events",
        nargs="+",
        default=[],
        metavar="PATH",
        help="more event files, folders or globs (with Spark: any URI the cluster reads, e.g. "
        "s3a://)",
    )
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, e.g. spark.executor.memory=2g (repeatable)",
    )
    parser.add_argument(
        "--engine",
        choices=("spark", "python"),
        default="spark",
        help="run on Spark (default) or in this Python process",
    )
    parser.add_argument(
        "--parquet",
        metavar="DIR",
        help="with Spark: write every non-ok outcome as Parquet into DIR, a new or empty folder or "
        "this command's earlier output, which it replaces (on a cluster: a location it shares)",
    )
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def run(args: argparse.Namespace) -> int:
    from bot.core.config import load_config
    from bot.core.findings import Severity
    from bot.core.snapshot import GitError
    from bot.review.regression.locations import LocationError
    from bot.review.regression.runner import find_events, gather

    conf = _spark_conf(args.conf)
    _check_events(args.events)
    if args.engine == "spark" and importlib.util.find_spec("pyspark") is None:
        raise UsageError(
            "--engine spark needs PySpark, which is not installed: install the spark extra "
            "(pip install 'openlineage-registry-bot[spark]', and a Java runtime), or use --engine "
            "python"
        )
    _check_parquet(args.parquet)
    repo = _inputs.git_repository(args.repo)
    try:
        with (
            _inputs.revision(repo, args.base, "--base") as base,
            _inputs.revision(repo, args.head, "--head") as head,
        ):
            _inputs.registry_folder([base, head], f"{repo} at {args.base} and at {args.head}")
            print(
                f"Reading the sample events of {repo} at {args.base} and {args.head}...",
                file=sys.stderr,
            )
            config, _ = load_config(base)
            events = find_events(head, config, args.events, base)
            _say_found(events)
            inputs = gather(base, head, config, events)
    except GitError as exc:
        raise UsageError(exc.reason) from None
    try:
        if args.engine == "python" or events.empty:  # nothing for Spark to read: it is not started
            result = _run_local(inputs)
        else:
            result = _run_spark(inputs, args.master, conf, args)
    except LocationError as exc:
        raise UsageError(str(exc)) from None
    findings = result.findings(config.regression, config.paths.registry)
    code = verdict(EXIT_ERRORS if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK)
    if args.format == "json":
        sys.stdout.write(
            json.dumps({**result.to_json(), "findings": [f.to_json() for f in findings]}, indent=2)
            + "\n"
        )
    elif args.format == "markdown":
        sys.stdout.write(result.markdown())
    else:
        sys.stdout.write(_text(result, findings))
    return code


def _run_local(inputs: Inputs) -> RegressionResult:
    from bot.review.regression.runner import run_local

    return run_local(inputs)


def _say_found(events: Events) -> None:
    found = events.discovered
    if found is not None and (found.files or found.ignored):
        print(
            f"Found {found.files} event file(s) in the repository ({found.ignored} other JSON "
            f"file(s) there hold no event)",
            file=sys.stderr,
        )
    if events.empty:
        print(
            "No events to check (no samples/, no event file in the repository, no --events): Spark "
            "is not started",
            file=sys.stderr,
        )


def _run_spark(
    inputs: Inputs, master: str, conf: dict[str, str], args: argparse.Namespace
) -> RegressionResult:
    from bot.cli.commands._progress import elapsed, jvm_output
    from bot.core.output_folder import mark
    from bot.review.regression.faults import end_children, java_missing
    from bot.review.regression.spark_job import run_spark, start_session, stop_session

    missing = java_missing()
    if missing:
        raise UsageError(f"{missing}; or use --engine python")

    where = f" and {len(inputs.locations)} event location(s)" if inputs.locations else ""
    print(
        f"Checking {len(inputs.records)} sample event(s){where} on Spark ({master}); Spark takes "
        f"20-30 s to start (--engine python skips it)...",
        file=sys.stderr,
    )
    with jvm_output(args.verbose) as stderr, elapsed("Spark regression", stderr):
        try:
            with _spark_failures():
                spark = start_session(master, extra=conf)
        # the JVM ignores SIGINT while it starts: end it with this process
        except KeyboardInterrupt:
            end_children()
            raise
        try:
            with _spark_failures():
                result = run_spark(
                    spark,
                    inputs.base,
                    inputs.head,
                    inputs.records,
                    inputs.locations,
                    parquet=args.parquet,
                )
        finally:
            stop_session(spark)
    local = _local_parquet(args.parquet)
    if local is not None and local.is_dir():  # Spark's overwrite deleted an earlier marker too
        mark(
            local, PARQUET_MARKER, "written by registry-bot regress --parquet; replaced next time\n"
        )
    return result


@contextlib.contextmanager
def _spark_failures() -> Iterator[None]:
    """Spark's own failure (the environment's, not a verdict on the change) as one line, said
    before the JVM ends: a Java exception's text is read from the JVM."""
    from bot.review.regression.faults import is_spark_failure, one_line

    try:
        yield
    except Exception as exc:
        if not is_spark_failure(exc):
            raise
        raise UsageError(f"Spark failed, the regression did not run: {one_line(exc)}") from None


def _spark_conf(pairs: list[str]) -> dict[str, str]:
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair}: expected KEY=VALUE")
        conf[key.strip()] = value
    return conf


def _check_events(paths: list[str]) -> None:
    """Every local ``--events`` location names an event file (before Spark takes its time to start);
    Spark's driver checks the other URIs the same way."""
    from bot.review.regression.events import is_remote
    from bot.review.regression.locations import LocationError, local_files

    for path in paths:
        if not is_remote(path):
            try:
                local_files([path])
            except LocationError as exc:
                raise UsageError(f"--events {exc}") from None


def _check_parquet(parquet: str | None) -> None:
    """A local ``--parquet`` folder: its parent exists, and Spark, which writes it in overwrite mode
    (deleting what it holds), may replace it: absent, empty or an earlier output of this command
    (it holds ``PARQUET_MARKER``). A remote location (``hdfs://``, ``s3a://``) is the cluster's."""
    from bot.core.output_folder import replaceable

    local = _local_parquet(parquet)
    if local is None:
        return
    if not local.absolute().parent.is_dir():
        raise UsageError(
            f"--parquet {parquet}: the folder {local.absolute().parent} does not exist"
        )
    if not replaceable(local, PARQUET_MARKER):
        raise UsageError(
            f"--parquet {parquet}: "
            + ("a file" if not local.is_dir() else f"a folder with files and no {PARQUET_MARKER}")
            + ", not an earlier output of regress --parquet; Spark would delete it: name a new or "
            "empty folder"
        )


def _local_parquet(parquet: str | None) -> Path | None:
    from bot.review.regression.events import is_remote

    if not parquet or is_remote(parquet):
        return None
    return Path(parquet.removeprefix("file://"))


def _text(result: RegressionResult, findings: list[Finding]) -> str:
    from bot.core.inert import visible

    lines = [
        f"{result.events} events, base {visible(result.base)}, head {visible(result.head)}, "
        f"{result.engine}, {result.seconds:.1f} s"
    ]
    lines += [
        f"{f.severity.value}: {visible(f.path) if f.path else '-'}: {visible(f.message)}"
        for f in findings
    ]
    return "\n".join(lines) + "\n"
