"""The README's first command: the bundled reference registry and the sample pull request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.sample import REFERENCE, build_sample_repo
from bot.core.changes import ChangeSet
from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot, GitSnapshot
from bot.review.engine import ReviewContext, review
from bot.review.regression import review_stage
from tests.interrupts import Started
from tests.sessions import run_to_the_end, session_processes

ROOT = Path(__file__).resolve().parent.parent


def test_the_reference_registry_is_clean_even_strictly() -> None:
    report = review(head=DirSnapshot(REFERENCE), context=ReviewContext(strict=True))
    assert report.findings == ()
    assert set(report.entries) == {"core", "airflow", "egeria", "marquez"}


def test_demo_reports_the_sample_pull_request_mistakes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "demo", "--no-regression", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    errors = {(f["rule"], f.get("entry")) for f in report["findings"] if f["severity"] == "error"}
    assert errors == {
        ("owners/missing-codeowners", "dagster"),
        ("owners/approval-required", "dagster"),
        ("owners/approval-required", "marquez"),
        ("entry/misplaced-facets", "dagster"),
        ("uris/unresolved", "dagster"),
        ("facets/prefix-key", "dagster"),
        ("facets/remote-ref", "dagster"),
        ("examples/invalid", "dagster"),
        ("versions/not-published", "dagster"),
    }
    assert report["summary"]["required_approvals"] == {
        "dagster": ["@OpenLineage/committers"],
        "marquez": ["@MarquezProject/committers"],
    }


def test_demo_exit_code_flag_reports_errors() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "demo", "--no-regression", "--exit-code"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout.rstrip().splitlines()[-1].startswith("FAILURE: 9 error(s)")


@pytest.mark.spark
def test_demo_regression_on_the_warm_session(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sample = build_sample_repo(tmp_path / "registry")
    stage = review_stage(session_factory=lambda master: spark)
    with (
        GitSnapshot(sample.path, sample.base) as base,
        GitSnapshot(sample.path, sample.head) as head,
    ):
        changes = ChangeSet.from_git(sample.path, base.commit, head.commit)
        section, findings = stage(base, head, changes, load_config(base)[0])
    assert section is not None
    totals = section.data["totals"]
    # still failing: the facet key without its owner's prefix, and postgresql://, which
    # decisions.json rejects
    assert (totals["broken"], totals["fixed"], totals["still_failing"]) == (0, 1, 2)
    rules = {(f.rule, f.path) for f in findings}
    assert (
        "regression/still-failing",
        "spec/registry/dagster/samples/orders_pipeline.json",
    ) in rules
    assert ("regression/unseen-facet", "spec/registry/dagster/registry.json") in rules


@pytest.mark.spark
def test_the_demo_returns_once_the_jvm_it_started_has_ended() -> None:
    """The whole demo, the regression's Spark included, in its own session: when it returns,
    nothing it started still runs. PySpark leaves its JVM to end when the process does (1-2 s
    later: Spark's shutdown hooks); the demo ends it before returning."""
    proc = run_to_the_end(
        [str(Path(sys.executable).parent / "registry-bot"), "demo"], ROOT, dict(os.environ)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Spark regression" in proc.stderr and "FAILURE: 9 error(s)" in proc.stdout


@pytest.mark.parametrize("delay", [0.1, 0.3, 1.0, 5.0, 20.0, 40.0])
def test_ctrl_c_at_any_moment_of_the_demo_leaves_nothing_behind(delay: float) -> None:
    """SIGINT to the whole process group (what a terminal's Ctrl-C sends), ``delay`` seconds after
    the interpreter began importing the bot: while the command line loads, before, during and after
    Spark's start (whose JVM ignores SIGINT): exit 130, one line saying so, no traceback, no process
    left running and no java at all."""
    import os
    import signal
    import time

    run = Started([str(Path(sys.executable).parent / "registry-bot"), "demo"])
    proc = run.proc
    try:
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        err = run.wait(120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = session_processes(proc.pid)
    settle = time.monotonic() + 5  # a process that just ended is a zombie until init collects it
    while any(line.endswith(" Z") for line in left) and time.monotonic() < settle:
        time.sleep(0.1)
        left = session_processes(proc.pid)
    for line in left:
        os.kill(int(line.split()[0]), signal.SIGKILL)
    # the demo finished before the signal: nothing to interrupt (a fast machine)
    if proc.returncode == 0:
        assert not left
        return
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith(": interrupted"), err
    assert sum("interrupted" in line for line in err.splitlines()) == 1, err
    assert [line for line in left if not line.endswith(" Z") or "(java)" in line] == [], left
