"""The regression on a real standalone cluster whose workers see only the shared events location.

One cluster for the module (``tests/spark_cluster.py``): a master and two one-core workers from the
installed PySpark, each worker in a private mount namespace where the checkout, the virtual
environment, the registry and the driver's archive cache are hidden, with a Python that has only
PySpark. The command line runs the regression on it: the report must be the one ``local[2]`` gives.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.conftest import SPARK_CONF
from tests.gitrepo import Repo
from tests.regress_helpers import DATA, JOB_FACET, make_tree
from tests.spark_cluster import Cluster, spark_defaults
from tests.test_naming_events import EXPECTED
from tests.test_regress import corpus_event_files

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("cluster")
    # the driver's own folder; the one the cluster shares
    driver, shared = root / "driver", root / "shared"
    repo = Repo.from_folder(make_tree(corpus, driver / "tree", wrong_key=True), driver / "repo")
    repo.edit_json(
        JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    repo.commit("make operator required")
    events = shared / "events"
    (events / "lines").mkdir(parents=True)
    shutil.copy(DATA / "composer_events.jsonl", events / "lines/composer.jsonl")
    shutil.copy(DATA / "composer_wrong_key.json", events / "single.json")  # one event
    # two documents, no event
    shutil.copy(EXPECTED / "dbt_maintainers.json", events / "not_events.json")
    for n, path in enumerate(
        p for p in corpus_event_files(corpus) if "/dbt/" in p or "/proxy/" in p
    ):
        shutil.copy(path, events / f"corpus_{n}.json")  # arrays and single events
    # the master and workers start as quickly as the executors (the tests' Spark configuration)
    quick = spark_defaults(SPARK_CONF)["spark.executor.extraJavaOptions"]
    hide = [ROOT, Path(sys.prefix), driver, corpus]
    cluster = Cluster(root / "spark", hide=hide, java_options=quick).start(workers=2)
    try:
        yield {
            "repo": repo.path,
            "events": events,
            "shared": shared,
            "cache": driver / "cache",
            "cluster": cluster,
        }
    finally:
        cluster.stop()


def cli(
    setup: dict[str, Any], master: str, *args: str, python: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``registry-bot regress`` of the change ``main`` → ``pr`` on ``master``, as a user runs it."""
    env = {
        **os.environ,
        "PYSPARK_PYTHON": python or sys.executable,
        "XDG_CACHE_HOME": str(setup["cache"]),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "regress",
            str(setup["repo"]),
            "--base",
            "main",
            "--head",
            "pr",
            "--master",
            master,
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
        check=False,
    )


def regress(
    setup: dict[str, Any], master: str, *args: str, python: str | None = None
) -> tuple[int, dict[str, Any]]:
    proc = cli(setup, master, "--format", "json", *args, python=python)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    return proc.returncode, {k: v for k, v in report.items() if k not in ("engine", "seconds")}


def local_report(spark: Any, setup: dict[str, Any], parquet: Path) -> dict[str, Any]:
    """The same regression on the tests' ``local[2]`` session: what ``regress --master local[2]``
    reports."""
    from bot.core.config import load_config
    from bot.core.snapshot import GitSnapshot
    from bot.review.regression.runner import find_events, gather
    from bot.review.regression.spark_job import run_spark

    base, head = GitSnapshot(setup["repo"], "main"), GitSnapshot(setup["repo"], "pr")
    config, _ = load_config(base)
    inputs = gather(base, head, config, find_events(head, config, [str(setup["events"])]))
    result = run_spark(
        spark, inputs.base, inputs.head, inputs.records, inputs.locations, parquet=str(parquet)
    )
    findings = result.findings(config.regression, config.paths.registry)
    report = {**result.to_json(), "findings": [f.to_json() for f in findings]}
    return {
        k: v for k, v in json.loads(json.dumps(report)).items() if k not in ("engine", "seconds")
    }


def test_the_cluster_gives_local_outcomes_with_workers_that_have_only_pyspark(
    spark, setup: dict[str, Any]
) -> None:  # type: ignore[no-untyped-def]
    cluster: Cluster = setup["cluster"]
    events, shared = setup["events"], setup["shared"]
    code, on_cluster = regress(
        setup,
        cluster.url,
        "--events",
        f"file://{events}",
        "--parquet",
        str(shared / "outcomes.parquet"),
        python=str(cluster.python),
    )
    local = local_report(spark, setup, shared / "local.parquet")

    assert on_cluster == local
    # the entry's sample and the shared copy of it
    assert code == 1 and local["totals"]["broken"] == 2
    assert local["skipped"] == {str(events / "not_events.json"): 2}
    assert local["events"] > 20 and local["unregistered_producers"]
    # every executor ran tasks on a worker, which extracted the shipped code (it cannot see the
    # driver's)
    executors = cluster.executor_folders()
    assert all(executors) and all(
        (e / "registry-bot-deps/bot").is_dir() for folders in executors for e in folders
    )
    assert all(
        any("Finished task" in (e / "stderr").read_text() for e in folders) for folders in executors
    )
    # the Parquet outcomes, written by the executors to the shared location, are the local ones
    rows = sorted(pq.read_table(shared / "outcomes.parquet").to_pylist(), key=repr)
    assert rows == sorted(pq.read_table(shared / "local.parquet").to_pylist(), key=repr)
    assert sum(r["outcome"] == "broken" for r in rows) == 2


def test_parquet_where_only_the_driver_looks_is_an_error_not_an_empty_dataset(
    setup: dict[str, Any],
) -> None:
    """The executors cannot see the driver's folder: they write into their own, and the driver finds
    none of the outcomes where it committed them."""
    cluster: Cluster = setup["cluster"]
    # in the driver's own folder, hidden from the workers
    target = setup["cache"].parent / "outcomes.parquet"
    proc = cli(
        setup,
        cluster.url,
        "--events",
        str(setup["events"] / "single.json"),
        "--parquet",
        str(target),
        python=str(cluster.python),
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert f"{target}: 0 of the " in proc.stderr and "a location every node shares" in proc.stderr


def disk_use(folders: list[Path]) -> int:
    return sum(p.lstat().st_size for folder in folders for p in folder.rglob("*") if p.is_file())


def test_faults_are_findings_on_the_cluster_and_the_real_repository_needs_no_events(  # type: ignore[no-untyped-def]
    setup: dict[str, Any], history: Path, corpus: Path
) -> None:
    """An executor that cannot read a file (it is in the driver's own folder), a non-UTF-8 line, a
    non-JSON file, a too-large array: each one per-file finding. Then the real-shaped repository
    with no --events gives the one-process outcomes; the earlier runs' extracted archives are
    gone."""
    from tests.history import commit_of, with_events
    from tests.test_regress_discovery import CHANGE, faults_folder

    cluster: Cluster = setup["cluster"]
    faults = faults_folder(setup["shared"] / "faults")
    only_driver = setup["cache"].parent / "only.jsonl"
    shutil.copy(faults / "good.jsonl", only_driver)
    code, report = regress(
        setup, cluster.url, "--events", str(faults), str(only_driver), python=str(cluster.python)
    )
    group = next(g for g in report["groups"] if g["rule"] == "event-readable")
    # (1: the samples break); the locked file is root's: the workers read it
    assert code == 1 and group["count"] == 4
    assert [(Path(e["file"]).name, e["message"].split(":")[0]) for e in group["examples"]] == [
        ("only.jsonl", "unreadable"),
        ("big.json", "too large"),
        ("commented.json", "not JSON (nor JSON lines)"),
    ]
    assert "the executors could not open it" in group["examples"][0]["message"]
    after_first = disk_use(cluster.work_dirs)

    real = with_events(
        history, commit_of(history, CHANGE), corpus / "integration", setup["cache"].parent / "real"
    )
    env = {
        **os.environ,
        "PYSPARK_PYTHON": str(cluster.python),
        "XDG_CACHE_HOME": str(setup["cache"]),
    }
    runs = [
        subprocess.run(
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
                "--format",
                "json",
                *engine,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=600,
            check=False,
        )
        for engine in (["--master", cluster.url], ["--engine", "python"])
    ]
    reports = [
        {k: v for k, v in json.loads(p.stdout).items() if k not in ("engine", "seconds")}
        for p in runs
    ]
    assert (
        reports[0] == reports[1]
        and reports[0]["events"] > 600
        and reports[0]["totals"]["fixed"] > 0
    )
    # one extracted archive per executor of the last run: the three runs before left none behind
    extracted = [
        e
        for folders in cluster.executor_folders()
        for e in folders
        if (e / "registry-bot-deps").is_dir()
    ]
    assert extracted and {e.parent.name for e in extracted} == {
        max(e.parent.name for e in extracted)
    }
    assert disk_use(cluster.work_dirs) < after_first + 20 * 1024 * 1024
