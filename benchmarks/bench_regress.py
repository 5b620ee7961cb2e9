"""Benchmark of the regression: synthetic realistic events, base and head, three engines.

    python benchmarks/bench_regress.py                 # 20,000 events (a few minutes with Spark start-up)
    python benchmarks/bench_regress.py --events 1000000 --skip-naive

Prints events per second for: naive ``jsonschema.validate`` per event (one side), the single-process
path (both sides), and the Spark job in ``local[2]`` (both sides, Spark reading the JSON-lines file),
plus Spark start-up, the cost of one review on a warm session, and peak memory of the process tree.
The head side changes one core facet schema (SchemaDatasetFacet gains an optional field), as a pull
request would, so facets of that schema are validated on both sides.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.config import Config  # noqa: E402  # after the path setup above
from bot.regression.compare import run_records  # noqa: E402
from bot.regression.events import EventRecord, file_records  # noqa: E402
from bot.regression.side import SideSpec  # noqa: E402
from bot.snapshot import DirSnapshot  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "openlineage"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpus/openlineage")
P = "https://openlineage.io/spec/"
PRODUCER = "https://cloud.google.com/composer/docs/composer-3/lineage-integration"
TYPES = ["STRING", "INTEGER", "NUMERIC", "TIMESTAMP", "BOOLEAN", "DATE"]


def dataset(rng: random.Random, i: int) -> dict[str, object]:
    fields = [{"name": f"col_{k}", "type": rng.choice(TYPES), "description": f"column {k} of the table"}
              for k in range(rng.randint(4, 16))]
    return {"namespace": "bigquery", "name": f"project-{rng.randint(1, 9)}.dataset_{i}.table_{rng.randint(1, 500)}",
            "facets": {
                "schema": {"_producer": PRODUCER, "_schemaURL": P + "facets/1-2-0/SchemaDatasetFacet.json#/$defs/"
                           "SchemaDatasetFacet", "fields": fields},
                "dataSource": {"_producer": PRODUCER, "_schemaURL": P + "facets/1-0-1/DatasourceDatasetFacet.json#/"
                               "$defs/DatasourceDatasetFacet", "name": "bigquery", "uri": "bigquery://project"}}}


def event(rng: random.Random, n: int) -> dict[str, object]:
    datasets = [dataset(rng, i) for i in range(rng.randint(1, 5))]
    split = rng.randint(0, len(datasets))
    return {
        "eventType": rng.choice(["START", "COMPLETE"]), "eventTime": "2026-01-01T10:00:00.000Z",
        "producer": PRODUCER, "schemaURL": P + "2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "facets": {
            "parent": {"_producer": PRODUCER,
                       "_schemaURL": P + "facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
                       "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4))},
                       "job": {"namespace": "composer://project/env", "name": f"dag_{n % 50}"}},
            "gcp_composer_run": {"_producer": "ol:gcp:composer", "_schemaURL": P + "facets/1-0-0/GcpComposerRunFacet"
                                 ".json#/$defs/GcpComposerRunFacet", "dagRunId": f"scheduled__{n}"}}},
        "job": {"namespace": "composer://project/env", "name": f"dag_{n % 50}.task_{n % 7}", "facets": {
            "gcp_composer_job": {"_producer": "ol:gcp:composer", "_schemaURL": P + "facets/1-0-0/GcpComposerJobFacet"
                                 ".json#/$defs/GcpComposerJobFacet", "environmentName": "env", "dagId": f"dag_{n % 50}",
                                 "taskId": f"task_{n % 7}", "operator": "BigQueryInsertJobOperator",
                                 "airflowVersion": "2.9.3+composer", "composerVersion": "3.0.0"},
            "sql": {"_producer": PRODUCER, "_schemaURL": P + "facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
                    "query": "INSERT INTO t SELECT * FROM s WHERE x > 1 " * rng.randint(1, 4)}}},
        "inputs": datasets[:split], "outputs": datasets[split:],
    }


def write_events(path: Path, count: int) -> float:
    rng = random.Random(42)
    size = 0
    with path.open("w") as out:
        for n in range(count):
            line = json.dumps(event(rng, n), separators=(",", ":"))
            size += len(line)
            out.write(line + "\n")
    return size / count


def trees(work: Path) -> tuple[Path, Path]:
    base, head = work / "base", work / "head"
    for folder in ("spec", "website/static/spec"):
        shutil.copytree(CORPUS / folder, base / folder)
    shutil.copytree(base, head)
    schema_file = head / "spec/facets/SchemaDatasetFacet.json"
    doc = json.loads(schema_file.read_text())
    props = doc["$defs"]["SchemaDatasetFacet"]["allOf"][1]["properties"]
    props["owner"] = {"type": "string", "description": "added by the benchmark's pull request"}
    schema_file.write_text(json.dumps(doc))
    return base, head


class PeakMemory:
    """Peak resident memory (VmHWM) summed over this process and its descendants (JVM, Python workers)."""

    def __init__(self) -> None:
        self.peak: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> list[int]:
        pids, frontier = [os.getpid()], [os.getpid()]
        while frontier:
            pid = frontier.pop()
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            pids += [int(c) for c in children]
            frontier += [int(c) for c in children]
        return pids

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            for pid in self._tree():
                try:
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            self.peak[pid] = max(self.peak.get(pid, 0), int(line.split()[1]))
                except OSError:
                    continue

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def megabytes(self) -> float:
        return sum(self.peak.values()) / 1024


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
    registry = Registry().with_resources((u, Resource.from_contents(s)) for u, s in store.schemas.items())
    sample = records[:limit]
    started = time.perf_counter()
    for record in sample:
        doc = json.loads(record.text)
        for instance, url in [(doc, doc["schemaURL"])] + [
                (f, f["_schemaURL"]) for holder in (doc["run"], doc["job"], *doc["inputs"], *doc["outputs"])
                for f in holder["facets"].values()]:
            with contextlib.suppress(jsonschema.ValidationError):
                jsonschema.validate(instance, {"$ref": url}, cls=jsonschema.Draft202012Validator, registry=registry,
                                    format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return len(sample) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--naive-events", type=int, default=100)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-regress-"))
    try:
        base_root, head_root = trees(work)
        events = work / "events.jsonl"
        size = write_events(events, args.events)
        print(f"{args.events:,} synthetic events, {size / 1024:.1f} KB each on average, cores: {os.cpu_count()}, "
              f"load average: {os.getloadavg()[0]:.1f}")
        base = SideSpec.build(DirSnapshot(base_root), Config(), "base")
        head = SideSpec.build(DirSnapshot(head_root), Config(), "head")

        if not args.skip_naive:
            rate = naive(list(stream(events, args.naive_events)), base_root, args.naive_events)
            print(f"naive jsonschema.validate per event, one side ({args.naive_events} events): {rate:,.0f} events/s")

        started = time.perf_counter()
        tally = run_records(stream(events), base, head)
        local_rate = tally.events / (time.perf_counter() - started)
        print(f"one Python process, base and head: {local_rate:,.0f} events/s "
              f"({sum(tally.counts.values()):,} rule results, {len(tally.rows):,} not ok)")
        del tally

        if args.skip_spark:
            return
        from bot.regression.spark_job import run_spark, start_session

        with PeakMemory() as memory:
            started = time.perf_counter()
            spark = start_session(args.master, extra={"spark.driver.memory": "2g"})
            session_s = time.perf_counter() - started
            started = time.perf_counter()
            first = run_spark(spark, base, head, paths=[str(events)])
            first_s = time.perf_counter() - started
            started = time.perf_counter()
            second = run_spark(spark, base, head, paths=[str(events)])
            warm_s = time.perf_counter() - started
            small = list(file_records([str(CORPUS / "client/python/tests/example_full_event.json")]))
            started = time.perf_counter()
            run_spark(spark, base, head, small)
            review_s = time.perf_counter() - started
            spark.stop()
        spark_rate = second.events / warm_s
        print(f"Spark {args.master}: session {session_s:.1f} s; first job {first_s:.1f} s "
              f"({first.events / first_s:,.0f} events/s cold); warm {spark_rate:,.0f} events/s")
        print(f"Spark vs one process: {spark_rate / local_rate:.2f}x")
        if not args.skip_naive:
            print(f"Spark vs naive: {spark_rate / rate:,.0f}x")
        print(f"one small review on the warm session: {review_s:.2f} s; peak memory of the process tree: "
              f"{memory.megabytes:,.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
