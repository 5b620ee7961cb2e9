"""The regression on a repository shaped like the real one, with no ``--events``: the spec's real
history at a commit that changes a facet schema, with the integrations' expected events of the real
repository at their own path. Its events are found by shape, checked the same by one process and by
Spark, and every fault of an event file is one per-file finding; Spark's own failures are exit 2
with one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bot.core.config import Config, parse_config
from bot.core.snapshot import DirSnapshot, GitSnapshot
from bot.review.regression.discover import discover, glob_pattern
from bot.review.regression.events import file_records, split_events
from bot.review.regression.faults import one_line
from bot.review.regression.runner import find_events, gather, run_local
from bot.review.regression.stream import MAX_ELEMENT_CHARS
from tests.history import commit_of, with_events
from tests.sessions import run_to_the_end

ROOT = Path(__file__).resolve().parent.parent
# a real pull request that changes a core facet schema (SQLJobFacet gains `dialect`)
CHANGE = "#3819"
NO_DAC = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory, history: Path, corpus: Path) -> Path:
    return with_events(
        history,
        commit_of(history, CHANGE),
        corpus / "integration",
        tmp_path_factory.mktemp("real") / "openlineage",
    )


def faults_folder(target: Path) -> Path:
    """One file per input fault, and one good event: the fault files are root's with mode 000
    (unreadable once the process has no CAP_DAC_OVERRIDE), sparse (never read), and not UTF-8 or not
    JSON."""
    target.mkdir(parents=True)
    (target / "good.jsonl").write_text(
        '{"eventType": "START", "eventTime": "2024-01-01T00:00:00Z", "run": '
        '{"runId": "0191c9a8-8dbb-7a8b-b5f4-2c2b2f8b7f01"}, "job": {"namespace": '
        '"ns", "name": "job"}, "producer": "https://example.com/p", '
        '"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json"}\n'
    )
    (target / "latin1.jsonl").write_bytes(b'{"eventType": "START", "x": "caf\xe9"}\n')
    (target / "commented.json").write_text(
        '// a schema with a comment\n{\n  "a": 1\n}\n' + "\n" * 175
    )
    with (target / "big.json").open("wb") as big:
        # sparse: one value (of NUL bytes) over the limit for one element
        big.truncate(MAX_ELEMENT_CHARS + 1)
    locked = target / "locked.json"
    shutil.copy(target / "good.jsonl", locked)
    locked.chmod(0)
    return target


def cli(
    *args: str, no_dac: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``registry-bot regress`` as a terminal runs it: whatever its outcome, it returns only once
    every process it started (Spark's JVM above all) has ended."""
    command = [sys.executable, "-m", "bot", "regress", *args]
    return run_to_the_end(
        [*NO_DAC, *command] if no_dac else command, ROOT, {**os.environ, **(env or {})}
    )


def report(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return {k: v for k, v in json.loads(proc.stdout).items() if k not in ("engine", "seconds")}


def readable_faults(report: dict[str, Any]) -> dict[str, str]:
    return {
        Path(e["file"]).name: e["message"].split(":")[0]
        for g in report["groups"]
        if g["rule"] == "event-readable"
        for e in g["examples"]
    }


# --- discovery ------------------------------------------------------------------------------------


def test_globs_cross_folders_only_with_double_stars() -> None:
    pattern = glob_pattern("integration/**/tests/**")
    assert pattern.fullmatch("integration/common/tests/dbt/alias/result.json")
    assert pattern.fullmatch("integration/tests/a.json")
    assert not pattern.fullmatch("integration/common/src/openlineage/common/schema/x.json")
    assert not glob_pattern("integration/*/tests/*").fullmatch("integration/a/b/tests/x.json")
    assert parse_config("regression:\n  discover: [events/**]\n", "x").regression.discover == (
        "events/**",
    )


def test_the_defaults_find_the_real_integrations_expected_events_and_nothing_else(
    corpus: Path,
) -> None:
    found = discover(DirSnapshot(corpus), Config().regression.discover)
    files = {r.file for r in found.records}
    every = {str(p.relative_to(corpus)) for p in (corpus / "integration").rglob("*.json")}
    schemas = {f for f in every if "/schema/" in f or "/facets/" in f or "/provider/" in f}
    # the facet schemas are not events
    assert len(files) == found.files > 200 and files <= every - schemas
    assert {f.split("/")[1] for f in files} == {"common", "flink", "hive", "spark"}
    assert all(r.expected and r.error is None for r in found.records)


def test_a_non_json_file_is_one_fault_not_one_per_line(tmp_path: Path) -> None:
    folder = faults_folder(tmp_path / "faults")
    with pytest.raises(ValueError, match="not JSON"):
        list(split_events((folder / "commented.json").read_text()))
    records = list(file_records([str(folder / "commented.json"), str(folder / "latin1.jsonl")]))
    assert [(Path(r.file).name, r.index, (r.error or "").split(":")[0]) for r in records] == [
        ("commented.json", 0, "not JSON (nor JSON lines)"),
        ("latin1.jsonl", 0, "undecodable"),
    ]


def test_regress_with_no_events_checks_the_repository_s_own_events(real: Path) -> None:
    proc = cli(
        str(real), "--base", "main", "--head", "pr", "--engine", "python", "--format", "json"
    )
    result = report(proc)
    assert "Found 221 event file(s) in the repository" in proc.stderr
    assert result["events"] > 600
    # the change relaxes SQLJobFacet
    assert result["totals"]["fixed"] > 0 and result["totals"]["broken"] == 0
    assert {g["rule"] for g in result["groups"] if g["outcome"] == "fixed"} == {
        "facet-schema",
        "facet-key",
    }


def test_without_events_spark_is_not_started_and_without_java_regress_is_one_line(
    real: Path, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"  # git but no java
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = {"PATH": str(bin_dir), "JAVA_HOME": ""}
    empty = real.parent / "empty"
    subprocess.run(["git", "clone", "-q", str(real), str(empty)], check=True)
    (empty / ".github").mkdir()
    (empty / ".github/registry-bot.yml").write_text("regression:\n  discover: []\n")
    subprocess.run(["git", "-C", str(empty), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(empty),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "off",
        ],
        check=True,
    )
    subprocess.run(["git", "-C", str(empty), "branch", "-f", "main"], check=True)
    quiet = cli(str(empty), "--base", "main", "--head", "HEAD", env=env)
    assert (
        quiet.returncode == 0
        and "Spark is not started" in quiet.stderr
        and quiet.stdout.startswith("0 events")
    )

    proc = cli(str(real), "--base", "main", "--head", "pr", env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    errors = [line for line in proc.stderr.splitlines() if line.startswith("registry-bot regress:")]
    assert len(errors) == 1 and "Java runtime" in errors[0] and "Traceback" not in proc.stderr


# --- Spark ----------------------------------------------------------------------------------------


@pytest.mark.spark
def test_local_spark_gives_the_one_process_outcomes_on_the_real_repository(
    spark, real: Path
) -> None:  # type: ignore[no-untyped-def]
    from bot.review.regression.spark_job import run_spark

    with GitSnapshot(real, "main") as base, GitSnapshot(real, "pr") as head:
        inputs = gather(base, head, Config(), find_events(head, Config()))
    one = run_local(inputs).to_json()
    on_spark = run_spark(
        spark, inputs.base, inputs.head, inputs.records, inputs.locations
    ).to_json()
    assert {k: v for k, v in on_spark.items() if k not in ("engine", "seconds")} == {
        k: v for k, v in one.items() if k not in ("engine", "seconds")
    }
    assert one["totals"]["fixed"] > 0


@pytest.mark.spark
def test_every_input_fault_is_a_per_file_finding_identical_on_both_engines(
    real: Path, tmp_path: Path
) -> None:
    folder = faults_folder(tmp_path / "faults")
    args = (
        str(real),
        "--base",
        "main",
        "--head",
        "pr",
        "--events",
        str(folder),
        "--format",
        "json",
    )
    one = report(cli(*args, "--engine", "python", no_dac=True))
    on_spark = report(cli(*args, "--master", "local[2]", no_dac=True))
    assert on_spark == one
    assert readable_faults(one) == {
        "big.json": "too large",
        "commented.json": "not JSON (nor JSON lines)",
        # three examples per group: the fourth is
        "latin1.jsonl": "undecodable",
    }
    group = next(g for g in one["groups"] if g["rule"] == "event-readable")
    # ... locked.json, Permission denied
    assert group["count"] == 4 and group["outcome"] == "still_failing"
    assert len(one["findings"]) > 0 and not any(f["severity"] == "error" for f in one["findings"])


@pytest.mark.spark
def test_unreachable_file_systems_and_missing_connectors_are_one_line(spark) -> None:  # type: ignore[no-untyped-def]
    from bot.review.regression.locations import spark_listing

    reasons = []
    for location in ("hdfs://127.0.0.1:1/events", "s3a://no-bucket/events"):
        with pytest.raises(Exception) as caught:  # whatever Spark raises, it must be one line
            spark_listing(spark, [location])
        reasons.append(one_line(caught.value))
    assert "Connection refused" in reasons[0] and "S3AFileSystem" in reasons[1]
    assert all("\n" not in r and " at org." not in r and len(r) < 401 for r in reasons)


@pytest.mark.spark
def test_a_bad_setting_is_exit_2_with_one_line_and_ctrl_c_ends_start_up_at_once(real: Path) -> None:
    proc = cli(str(real), "--base", "main", "--head", "pr", "--conf", "spark.driver.memory=lots")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("registry-bot regress:")]
    assert len(errors) == 1 and "Spark failed" in errors[0] and "Traceback" not in proc.stderr

    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot",
            "regress",
            str(real),
            "--base",
            "main",
            "--head",
            "pr",
            "--master",
            "local[2]",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as started:
        assert started.stderr is not None
        while "on Spark" not in started.stderr.readline():
            assert started.poll() is None
        time.sleep(0.5)  # the JVM is starting
        sent = time.monotonic()
        started.send_signal(signal.SIGINT)
        assert started.wait(timeout=10) == 130 and time.monotonic() - sent < 1.0
        assert "interrupted" in started.stderr.read()


@pytest.mark.spark
def test_a_lost_python_worker_is_exit_2_with_one_line(real: Path, tmp_path: Path) -> None:
    """The executor's Python worker dies in its task (killed, as the kernel's OOM killer would: here
    its daemon's task function is replaced by a SIGKILL): the job fails, and that is the
    environment's fault, not a verdict on the change."""
    dying = tmp_path / "python"
    kill = (
        "import os, runpy, signal, pyspark.worker as w; w.main = lambda *a: os.kill(os.getpid(), "
        "signal.SIGKILL); runpy.run_module('pyspark.daemon', run_name='__main__')"
    )
    dying.write_text(f'#!/bin/sh\nexec {sys.executable} -c "{kill}"\n')
    dying.chmod(0o755)
    events = tmp_path / "events"
    faults_folder(events)
    proc = cli(
        str(real),
        "--base",
        "main",
        "--head",
        "pr",
        "--events",
        str(events / "good.jsonl"),
        "--master",
        "local[2]",
        env={"PYSPARK_PYTHON": str(dying)},
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("registry-bot regress:")]
    assert len(errors) == 1 and "Spark failed" in errors[0] and "Traceback" not in proc.stderr, (
        proc.stderr[-2000:]
    )
    assert "Python worker exited unexpectedly" in errors[0], errors[0]


def test_the_app_s_stage_finds_the_repository_s_events_too(real: Path) -> None:
    """Without samples or configured locations the stage still has events, so it goes on to start
    Spark (here a factory that fails, as without Java: the review goes on, and the section says
    why)."""
    from bot.review.regression import review_stage

    def no_java(master: str) -> Any:
        raise RuntimeError("Java gateway process exited before sending its port number")

    with GitSnapshot(real, "main") as base, GitSnapshot(real, "pr") as head:
        section, findings = review_stage(session_factory=no_java)(base, head, None, Config())
    assert section is not None and findings == []
    assert (
        section.data["skipped"].startswith("Spark could not start")
        and "Java gateway" in section.data["skipped"]
    )
