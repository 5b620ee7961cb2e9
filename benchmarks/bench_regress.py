"""Benchmark of the regression: synthetic realistic events, base and head, through the command line.

    python benchmarks/bench_regress.py                       # 20,000 events, Spark local[2]
    python benchmarks/bench_regress.py --events 100000 1000000 --files 8 --cluster --skip-naive \\
        --work /work/tmp-bench
    # one 300 MB JSON array:
    python benchmarks/bench_regress.py --events 58000 --files 1 --array --skip-naive

Prints events per second for: naive ``jsonschema.validate`` per event (one side), and ``registry-bot
regress`` as a user runs it: in one process (``--engine python``), on Spark ``local[2]`` and
(``--cluster``) on a two-worker standalone cluster on loopback whose
workers have only Python and PySpark (``tests/spark_cluster.py``). For each Spark run: the job's
events/s, the command's wall time, and the peak resident memory of the driver (the command's Python
process plus its JVM, sampled), which must not grow with the input. The head side changes one core
facet schema (SchemaDatasetFacet gains an optional field), as a pull request would.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.core.config import Config  # noqa: E402  # after the path setup above
from bot.core.snapshot import DirSnapshot  # noqa: E402
from bot.review.regression.events import EventRecord  # noqa: E402
from bot.review.regression.side import SideSpec  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "openlineage"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpus/openlineage")
P = "https://openlineage.io/spec/"
PRODUCER = "https://cloud.google.com/composer/docs/composer-3/lineage-integration"
SCHEMA_FILE = "spec/facets/SchemaDatasetFacet.json"
TYPES = ["STRING", "INTEGER", "NUMERIC", "TIMESTAMP", "BOOLEAN", "DATE"]


def dataset(rng: random.Random, i: int) -> dict[str, object]:
    fields = [
        {"name": f"col_{k}", "type": rng.choice(TYPES), "description": f"column {k} of the table"}
        for k in range(rng.randint(4, 16))
    ]
    return {
        "namespace": "bigquery",
        "name": f"project-{rng.randint(1, 9)}.dataset_{i}.table_{rng.randint(1, 500)}",
        "facets": {
            "schema": {
                "_producer": PRODUCER,
                "_schemaURL": P + "facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
                "fields": fields,
            },
            "dataSource": {
                "_producer": PRODUCER,
                "_schemaURL": P + "facets/1-0-1/DatasourceDatasetFacet.json#/"
                "$defs/DatasourceDatasetFacet",
                "name": "bigquery",
                "uri": "bigquery://project",
            },
        },
    }


def event(rng: random.Random, n: int) -> dict[str, object]:
    datasets = [dataset(rng, i) for i in range(rng.randint(1, 5))]
    split = rng.randint(0, len(datasets))
    return {
        "eventType": rng.choice(["START", "COMPLETE"]),
        "eventTime": "2026-01-01T10:00:00.000Z",
        "producer": PRODUCER,
        "schemaURL": P + "2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {
            "runId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "facets": {
                "parent": {
                    "_producer": PRODUCER,
                    "_schemaURL": P + "facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
                    "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4))},
                    "job": {"namespace": "composer://project/env", "name": f"dag_{n % 50}"},
                },
                "gcp_composer_run": {
                    "_producer": "ol:gcp:composer",
                    "_schemaURL": P + "facets/1-0-0/GcpComposerRunFacet"
                    ".json#/$defs/GcpComposerRunFacet",
                    "dagRunId": f"scheduled__{n}",
                },
            },
        },
        "job": {
            "namespace": "composer://project/env",
            "name": f"dag_{n % 50}.task_{n % 7}",
            "facets": {
                "gcp_composer_job": {
                    "_producer": "ol:gcp:composer",
                    "_schemaURL": P + "facets/1-0-0/GcpComposerJobFacet"
                    ".json#/$defs/GcpComposerJobFacet",
                    "environmentName": "env",
                    "dagId": f"dag_{n % 50}",
                    "taskId": f"task_{n % 7}",
                    "operator": "BigQueryInsertJobOperator",
                    "airflowVersion": "2.9.3+composer",
                    "composerVersion": "3.0.0",
                },
                "sql": {
                    "_producer": PRODUCER,
                    "_schemaURL": P + "facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
                    "query": "INSERT INTO t SELECT * FROM s WHERE x > 1 " * rng.randint(1, 4),
                },
            },
        },
        "inputs": datasets[:split],
        "outputs": datasets[split:],
    }


def write_events(folder: Path, count: int, files: int, array: bool = False) -> float:
    """``count`` events in ``files`` files, as JSON lines, or (``array``) as one compact JSON array
    per ``.json`` file, on one line (what ``json.dump`` of a list writes); returns the average event
    size."""
    import orjson

    rng = random.Random(42)
    folder.mkdir(parents=True)
    size = 0
    suffix = "json" if array else "jsonl"
    outputs = [(folder / f"events-{k}.{suffix}").open("wb") for k in range(files)]
    try:
        for n in range(count):
            line = orjson.dumps(event(rng, n))
            line = (b"[" if n < files else b",") + line if array else line + b"\n"
            size += len(line)
            outputs[n % files].write(line)
    finally:
        for out in outputs:
            if array:
                out.write(b"]")
            out.close()
    return size / count


def trees(work: Path) -> tuple[Path, Path]:
    base, head = work / "base", work / "head"
    for folder in ("spec", "website/static/spec"):
        shutil.copytree(CORPUS / folder, base / folder)
    shutil.copytree(base, head)
    schema_file = head / SCHEMA_FILE
    doc = json.loads(schema_file.read_text())
    props = doc["$defs"]["SchemaDatasetFacet"]["allOf"][1]["properties"]
    props["owner"] = {"type": "string", "description": "added by the benchmark's pull request"}
    schema_file.write_text(json.dumps(doc))
    return base, head


class DriverMemory:
    """Peak resident memory of the driver: a process and its JVM descendants (sampled VmRSS,
    summed), and apart from it the Python workers a local master starts under the JVM."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.driver = 0
        self.workers = 0
        self.failed = 0
        self.last_error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _children(pid: int) -> list[int]:
        """Children of every thread (the JVM starts the Python workers from one of its threads)."""
        found: list[int] = []
        try:
            # gone when the process exits between two reads
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            return found
        for task in tasks:
            with contextlib.suppress(OSError, ValueError):
                found += [int(c) for c in (task / "children").read_text().split()]
        return found

    @staticmethod
    def _rss(pid: int) -> tuple[str, int]:
        try:
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            return "", 0
        fields = dict(line.split(":", 1) for line in status if ":" in line)
        return fields.get("Name", "").strip(), int(fields.get("VmRSS", "0 kB").split()[0]) * 1024

    def sample(self) -> None:
        driver, workers, frontier = self._rss(self.pid)[1], 0, self._children(self.pid)
        while frontier:
            pid = frontier.pop()
            name, rss = self._rss(pid)
            if name == "java":
                driver += rss
            elif name.startswith("python"):
                workers += rss
            frontier += self._children(pid)
        self.driver, self.workers = max(self.driver, driver), max(self.workers, workers)

    def _run(self) -> None:
        """Sample until stopped; a sample that fails (a process vanished mid-read) is skipped, never
        the end of sampling: a dead sampler would report the peak of its first seconds as the whole
        run's."""
        while not self._stop.wait(0.2):
            try:
                self.sample()
            # any /proc race; the next sample reads afresh
            except Exception as error:  # noqa: BLE001
                self.failed += 1
                self.last_error = repr(error)

    def __enter__(self) -> DriverMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def registry_repo(base_root: Path, head_root: Path, target: Path) -> Path:
    """A git repository: ``main`` is the base tree, ``pr`` the head tree."""
    from tests.gitrepo import Repo

    repo = Repo.from_folder(base_root, target)
    repo.write(SCHEMA_FILE, (head_root / SCHEMA_FILE).read_text())
    repo.commit("SchemaDatasetFacet gains an optional field")
    return repo.path


def regress(
    repo: Path,
    events: Path,
    master: str,
    conf: list[str],
    python: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, float]:
    """``registry-bot regress`` on ``master`` (``python``: in one process): the job's events/s, the
    wall time, the driver's peak memory."""
    engine = ["--engine", "python"] if master == "python" else ["--master", master]
    command = [
        sys.executable,
        "-m",
        "bot",
        "regress",
        str(repo),
        "--base",
        "main",
        "--head",
        "pr",
        "--events",
        str(events),
        *engine,
        "--format",
        "json",
    ]
    for item in conf:
        command += ["--conf", item]
    environment = {**os.environ, **(env or {}), "PYSPARK_PYTHON": python or sys.executable}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT, env=environment)
        with DriverMemory(process.pid) as memory:
            code = process.wait()
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if code not in (0, 1):
            raise RuntimeError(
                f"regress on {master} failed ({code}): {err.read().decode()[-3000:]}"
            )
        report = json.loads(out.read())
    return {
        "events": report["events"],
        "rate": report["events"] / report["seconds"],
        "job": report["seconds"],
        "wall": wall,
        "driver": memory.driver / 2**20,
        "workers": memory.workers / 2**20,
        "sampler_misses": memory.failed,
        "broken": report["totals"]["broken"],
    }


def stream(path: Path, limit: int | None = None) -> Iterator[EventRecord]:
    """The events of a JSON-lines file, read as a stream (a million events do not fit in a list)."""
    with path.open() as lines:
        for index, line in enumerate(lines):
            if limit is not None and index >= limit:
                return
            yield EventRecord(str(path), index, line)


def naive(records: list[EventRecord], base_root: Path, limit: int) -> float:
    """``jsonschema.validate`` per event and per facet, one side, the way a first script would."""
    import jsonschema
    from referencing import Registry, Resource

    store = SideSpec.build(DirSnapshot(base_root), Config(), "base", naming=lambda s, c: None)
    registry = Registry().with_resources(
        (u, Resource.from_contents(s)) for u, s in store.schemas.items()
    )
    sample = records[:limit]
    started = time.perf_counter()
    for record in sample:
        doc = json.loads(record.text)
        for instance, url in [(doc, doc["schemaURL"])] + [
            (f, f["_schemaURL"])
            for holder in (doc["run"], doc["job"], *doc["inputs"], *doc["outputs"])
            for f in holder["facets"].values()
        ]:
            with contextlib.suppress(jsonschema.ValidationError):
                jsonschema.validate(
                    instance,
                    {"$ref": url},
                    cls=jsonschema.Draft202012Validator,
                    registry=registry,
                    format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
                )
    return len(sample) / (time.perf_counter() - started)


def report(label: str, run: dict[str, float], local: bool) -> None:
    # a cluster's are on its workers
    workers = f", Python workers {run['workers']:,.0f} MB" if local else ""
    print(
        f"{label}: {run['rate']:,.0f} events/s in the job ({run['events']:,.0f} events, "
        f"{run['job']:.1f} s; {run['wall']:.1f} s for the whole command, start-up included); peak "
        f"driver memory {run['driver']:,.0f} MB (Python + JVM){workers}; load average "
        f"{os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--events", type=int, nargs="+", default=[20_000], help="one run per count, one cluster"
    )
    parser.add_argument(
        "--files", type=int, default=4, help="JSON-lines files the events are spread over"
    )
    parser.add_argument(
        "--work", type=Path, default=None, help="where to generate the events (deleted after)"
    )
    parser.add_argument("--naive-events", type=int, default=100)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--skip-one-process", action="store_true")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--cluster", action="store_true", help="also on a two-worker standalone cluster"
    )
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="passed to regress"
    )
    parser.add_argument(
        "--array", action="store_true", help="each file one JSON array (.json) on one line"
    )
    args = parser.parse_args()
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-regress-", dir=args.work))
    cluster = None
    try:
        base_root, head_root = trees(work)
        repo = registry_repo(base_root, head_root, work / "repo")
        cache = work / "cache"  # the archive shipped to the executors: on the driver's side only
        cache.mkdir()
        if args.cluster:
            from tests.spark_cluster import Cluster

            hidden = [ROOT, Path(sys.prefix), repo, base_root, head_root, cache]
            cluster = Cluster(work / "spark", hide=hidden).start(workers=2)
        for count in args.events:
            events = work / f"events-{count}"
            started = time.perf_counter()
            size = write_events(events, count, args.files, args.array)
            print(
                f"{count:,} synthetic events in {args.files} files, {size / 1024:.1f} KB each on "
                f"average ({size * count / 2**30:.2f} GiB, written in "
                f"{time.perf_counter() - started:.0f} s), cores: {os.cpu_count()}, load average: "
                f"{os.getloadavg()[0]:.1f}"
            )
            if not args.skip_naive:
                first = sorted(events.iterdir())[0]
                rate = naive(list(stream(first, args.naive_events)), base_root, args.naive_events)
                print(
                    f"naive jsonschema.validate per event, one side ({args.naive_events} events): "
                    f"{rate:,.0f} events/s"
                )
            if not args.skip_one_process:
                report(
                    "regress --engine python",
                    regress(repo, events, "python", args.conf),
                    local=False,
                )
            report(
                f"regress --master {args.master}",
                regress(repo, events, args.master, args.conf),
                args.master.startswith("local"),
            )
            if cluster is not None:
                report(
                    f"regress on the two-worker cluster ({cluster.url})",
                    regress(
                        repo,
                        events,
                        cluster.url,
                        args.conf,
                        str(cluster.python),
                        {"XDG_CACHE_HOME": str(cache)},
                    ),
                    local=False,
                )
            shutil.rmtree(events)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
