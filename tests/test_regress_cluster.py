"""The regression on a real standalone cluster whose workers see only the shared events location.

One cluster for the module (``tests/spark_cluster.py``): a master and two one-core workers from the
installed PySpark, each worker in a private mount namespace where the checkout, the virtual
environment, the registry and the driver's archive cache are hidden, with a Python that has only
PySpark. The command line runs the regression on it and on ``local[2]``: the reports must be identical.
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

from tests.gitrepo import Repo
from tests.regress_helpers import DATA, JOB_FACET, make_tree
from tests.spark_cluster import Cluster
from tests.test_naming_events import EXPECTED
from tests.test_regress import corpus_event_files

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("cluster")
    driver, shared = root / "driver", root / "shared"  # the driver's own folder; the one the cluster shares
    repo = Repo.from_folder(make_tree(corpus, driver / "tree", wrong_key=True), driver / "repo")
    repo.edit_json(JOB_FACET, lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"))
    repo.commit("make operator required")
    events = shared / "events"
    (events / "lines").mkdir(parents=True)
    shutil.copy(DATA / "composer_events.jsonl", events / "lines/composer.jsonl")
    shutil.copy(DATA / "composer_wrong_key.json", events / "single.json")  # one event
    shutil.copy(EXPECTED / "dbt_maintainers.json", events / "not_events.json")  # two documents, no event
    for n, path in enumerate(p for p in corpus_event_files(corpus) if "/dbt/" in p or "/proxy/" in p):
        shutil.copy(path, events / f"corpus_{n}.json")  # arrays and single events
    cluster = Cluster(root / "spark", hide=[ROOT, Path(sys.prefix), driver, corpus]).start(workers=2)
    try:
        yield {"repo": repo.path, "events": events, "shared": shared, "cache": driver / "cache", "cluster": cluster}
    finally:
        cluster.stop()


def regress(setup: dict[str, Any], master: str, *args: str, python: str | None = None) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "PYSPARK_PYTHON": python or sys.executable, "XDG_CACHE_HOME": str(setup["cache"])}
    proc = subprocess.run([sys.executable, "-m", "bot", "regress", str(setup["repo"]), "--base", "main", "--head",
                           "pr", "--master", master, "--format", "json", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    return proc.returncode, {k: v for k, v in report.items() if k not in ("engine", "seconds")}


def test_the_cluster_gives_local_outcomes_with_workers_that_have_only_pyspark(setup: dict[str, Any]) -> None:
    cluster: Cluster = setup["cluster"]
    events, shared = setup["events"], setup["shared"]
    code, on_cluster = regress(setup, cluster.url, "--events", f"file://{events}", "--parquet",
                               str(shared / "outcomes.parquet"), python=str(cluster.python))
    local_code, local = regress(setup, "local[2]", "--events", str(events), "--parquet",
                                str(setup["shared"] / "local.parquet"))

    assert (code, on_cluster) == (local_code, local)
    assert code == 1 and local["totals"]["broken"] == 2  # the entry's sample and the shared copy of it
    assert local["skipped"] == {str(events / "not_events.json"): 2}
    assert local["events"] > 20 and local["unregistered_producers"]
    # every executor ran on a worker, which extracted the shipped code (the workers cannot see the driver's)
    executors = cluster.executor_folders()
    assert all(executors) and all((e / "registry-bot-deps/bot").is_dir() for folders in executors for e in folders)
    assert all(any("Finished task" in (e / "stderr").read_text() for e in folders) for folders in executors)
    # the Parquet outcomes, written by the executors to the shared location, are the local ones
    rows = sorted(pq.read_table(shared / "outcomes.parquet").to_pylist(), key=repr)
    assert rows == sorted(pq.read_table(shared / "local.parquet").to_pylist(), key=repr)
    assert sum(r["outcome"] == "broken" for r in rows) == 2

