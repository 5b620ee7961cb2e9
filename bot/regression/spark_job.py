"""The regression as a Spark job: events in, Arrow batches through ``mapInArrow``, aggregates out.

Each Python worker builds one ``Comparator`` per (base, head) pair and reuses it for every partition
it runs (validators compile once per partition at most, never per event). Workers return only what
is not ``ok`` plus per-partition counts, so little crosses back from Python to the JVM.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.regression.compare import OK, Comparator, Row, Tally
from bot.regression.events import EventRecord, is_remote, split_events
from bot.regression.result import EXAMPLES_PER_GROUP, RegressionResult
from bot.regression.side import SideSpec

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

INPUT_COLUMNS = "file string, idx long, text string, entry string, error string, whole boolean, length long"
SPLIT_BYTES = 16 * 1024 * 1024  # local JSON-lines files: byte ranges that Python workers read themselves,
MAX_SPLIT_BYTES = 128 * 1024 * 1024  # at least this and at most that: two ranges per core when they fit
SPLITS_PER_CORE = 2
OUTPUT_COLUMNS = ("kind string, producer string, rule string, facet string, schema string, subject string, "
                  "outcome string, base string, head string, message string, file string, idx long, n long")
_WORKER_CACHE: dict[str, Comparator] = {}  # per Python worker process: reused across partitions and jobs


def start_session(master: str = "local[*]", app: str = "registry-bot-regression",
                  extra: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession without UI; the workers run this interpreter (or ``PYSPARK_PYTHON``)."""
    from pyspark.sql import SparkSession

    # PySpark starts its workers with $PYSPARK_PYTHON (the conf key is only read by spark-submit):
    # without it they run the system Python and cannot import this package's dependencies.
    python = os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.pyspark.python", python)
               .config("spark.pyspark.driver.python", sys.executable)
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "2000")
               .config("spark.python.worker.reuse", "true"))
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _comparator(specs: tuple[SideSpec, SideSpec]) -> Comparator:
    key = f"{specs[0].token}:{specs[1].token}"
    comparator = _WORKER_CACHE.get(key)
    if comparator is None:
        _WORKER_CACHE.clear()  # one pair at a time: a warm worker does not grow without bound
        comparator = _WORKER_CACHE[key] = Comparator(*specs)
    return comparator


def read_split(path: str, start: int, length: int) -> Iterator[EventRecord]:
    """The lines of one byte range of a local file, with Hadoop's rule: a line belongs to the split it
    starts in (a split other than the first skips its partial first line and finishes its last one)."""
    label = path if start == 0 else f"{path}@{start}"
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            position = start
            if start:
                position += len(handle.readline())
            index = 0
            end = start + length
            while position <= end:
                line = handle.readline()
                if not line:
                    break
                position += len(line)
                if line.strip():
                    yield EventRecord(label, index, line.decode("utf-8", "replace"))
                    index += 1
    except OSError as exc:
        yield EventRecord(label, 0, "", None, f"unreadable: {exc.strerror}")


def _records(batch: pa.RecordBatch, ordinals: Counter[tuple[str, int]]) -> Iterator[EventRecord]:
    columns = batch.to_pydict()
    for file, idx, text, entry, error, whole, length in zip(
            columns["file"], columns["idx"], columns["text"], columns["entry"], columns["error"], columns["whole"],
            columns["length"], strict=True):
        if length is not None:
            yield from read_split(file, idx, length)
        elif error is not None or not whole:
            if idx < 0:  # a line read by Spark: number it within its split (exact for a file's first split)
                block = -idx - 1
                ordinals[(file, block)] += 1
                idx = ordinals[(file, block)] - 1
                file = file if block == 0 else f"{file}@{block}"
            yield EventRecord(file, idx, text or "", entry, error)
        else:
            for index, event_text in split_events(text or ""):
                yield EventRecord(file, index, event_text, entry)


def _tally_batch(tally: Tally) -> pa.RecordBatch:
    import pyarrow as pa

    out: dict[str, list[Any]] = {name: [] for name in (
        "kind", "producer", "rule", "facet", "schema", "subject", "outcome", "base", "head", "message", "file",
        "idx", "n")}

    def add(kind: str, n: int, producer: str = "", rule: str = "", facet: str = "", schema: str = "",
            row: Row | None = None, outcome: str = "") -> None:
        values = [kind, producer, rule, facet, schema,
                  row.subject if row else None, row.outcome if row else outcome, row.base if row else None,
                  row.head if row else None, row.message if row else None, row.file if row else None,
                  row.index if row else None, n]
        for name, value in zip(out, values, strict=True):
            out[name].append(value)

    for row in tally.rows:
        add("row", 1, row.producer, row.rule, row.facet, row.schema, row)
    for (producer, rule, facet, outcome), n in tally.counts.items():
        add("count", n, producer, rule, facet, outcome=outcome)
    for producer, schema in tally.seen:
        add("seen", 1, producer, schema=schema)
    for file, n in tally.skipped.items():
        add("skipped", n, row=Row("", "", "", "", "", "", "", "", "", file, 0))
    for producer, n in tally.unregistered.items():
        file, index = tally.unregistered_first[producer]
        add("unregistered", n, schema=producer, row=Row("", "", "", "", "", "", "", "", "", file, index))
    add("events", tally.events)
    return pa.RecordBatch.from_pydict(out)


def _partition(specs_broadcast: Any) -> Any:
    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        comparator = _comparator(specs_broadcast.value)
        tally = Tally()
        ordinals: Counter[tuple[str, int]] = Counter()
        for batch in batches:
            for record in _records(batch, ordinals):
                comparator.check(record, tally)
        yield _tally_batch(tally.settle())
    return run


def split_bytes(total: int, cores: int) -> int:
    """The byte range size for ``total`` bytes of local JSON lines: every Python task pays a fixed cost
    (measured at about 0.1 s of worker CPU), so ranges are as large as keeps every core busy."""
    return max(SPLIT_BYTES, min(MAX_SPLIT_BYTES, -(-total // (max(1, cores) * SPLITS_PER_CORE))))


def input_frame(spark: SparkSession, records: Iterable[EventRecord], paths: Iterable[str] = (),
                partitions: int | None = None) -> DataFrame:
    """Events as rows: small local records from the driver, plus any path Spark can read.

    Local JSON-lines files become byte ranges that the Python workers read themselves: moving every
    line from the JVM to Python costs more than validating it. ``.json`` files are read whole by Spark
    (one event or an array per file); other JSON lines (HDFS, S3, ...) are read by Spark's text
    source, where ``idx`` carries the split's start so a worker can number lines within it.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    frames: list[DataFrame] = []
    rows = [(r.file, r.index, r.text, r.entry, r.error, False, None) for r in records]
    if rows:
        count = max(1, min(partitions or spark.sparkContext.defaultParallelism, len(rows)))
        frames.append(spark.createDataFrame(spark.sparkContext.parallelize(rows, count), INPUT_COLUMNS))
    paths = list(paths)
    local = [p.removeprefix("file://") for p in paths if not p.endswith(".json") and not is_remote(p)]
    sizes = {path: Path(path).stat().st_size for path in local}
    step = split_bytes(sum(sizes.values()), spark.sparkContext.defaultParallelism)
    splits = [(path, start, None, None, None, False, min(step, size - start))
              for path, size in sizes.items() for start in range(0, size, step)]
    if splits:  # one byte range per partition, no shuffle
        frames.append(spark.createDataFrame(spark.sparkContext.parallelize(splits, len(splits)), INPUT_COLUMNS))
    whole = [p for p in paths if p.endswith(".json")]
    lines = [p for p in paths if not p.endswith(".json") and is_remote(p)]
    if whole:
        read = spark.read.text(whole, wholetext=True)
        frames.append(read.select(
            F.col("_metadata.file_path").alias("file"), F.lit(0).cast("long").alias("idx"),
            F.col("value").alias("text"), F.lit(None).cast("string").alias("entry"),
            F.lit(None).cast("string").alias("error"), F.lit(True).alias("whole"),
            F.lit(None).cast("long").alias("length")))
    if lines:
        read = spark.read.text(lines)
        frames.append(read.select(
            F.col("_metadata.file_path").alias("file"),
            (-F.col("_metadata.file_block_start") - 1).alias("idx"),
            F.col("value").alias("text"), F.lit(None).cast("string").alias("entry"),
            F.lit(None).cast("string").alias("error"), F.lit(False).alias("whole"),
            F.lit(None).cast("long").alias("length")).where(F.trim("text") != ""))
    if not frames:
        return spark.createDataFrame([], INPUT_COLUMNS)
    return functools.reduce(DataFrame.unionByName, frames)


def run_spark(spark: SparkSession, base: SideSpec, head: SideSpec, records: Iterable[EventRecord] = (),
              paths: Iterable[str] = (), parquet: str | None = None, partitions: int | None = None,
              deadline: float | None = None) -> RegressionResult:
    """Run the regression on ``spark``; write the non-ok outcomes as Parquet when ``parquet`` is given.

    ``deadline`` (a ``time.monotonic()`` value) is checked before each Spark action; the caller cancels
    a running action itself (``RegressionStage`` does, with a job group).
    """

    def in_time() -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("the regression's time budget ran out")

    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    started = time.monotonic()
    specs = spark.sparkContext.broadcast((base, head))
    frame = input_frame(spark, records, list(paths), partitions)
    out = frame.mapInArrow(_partition(specs), OUTPUT_COLUMNS).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        in_time()
        if parquet:
            out.where("kind = 'row'").drop("kind", "n").write.mode("overwrite").parquet(parquet)
        # per-partition summaries are small: one action brings them all, summed here
        counts: Counter[tuple[str, str, str, str]] = Counter()
        seen: set[tuple[str, str]] = set()
        notes = Tally()  # documents skipped, unregistered producers
        events = 0
        for r in out.where("kind != 'row'").select("kind", "producer", "rule", "facet", "outcome", "schema",
                                                   "file", "idx", "n").collect():
            if r.kind == "count":
                counts[(r.producer, r.rule, r.facet, r.outcome)] += int(r.n)
            elif r.kind == "seen":
                seen.add((r.producer, r.schema))
            elif r.kind == "skipped":
                notes.skipped[_local(r.file)] += int(r.n)
            elif r.kind == "unregistered":
                notes.note_unregistered(r.schema, _local(r.file), int(r.idx), int(r.n))
            else:
                events += int(r.n)
        first = []
        if any(outcome != OK for (_, _, _, outcome) in counts):
            in_time()
            window = Window.partitionBy("producer", "rule", "facet", "outcome").orderBy("file", "idx", "subject")
            first = (out.where("kind = 'row'").withColumn("rank", F.row_number().over(window))
                     .where(F.col("rank") <= EXAMPLES_PER_GROUP).collect())
    finally:
        out.unpersist()
        specs.unpersist()
    rows = [Row(r.producer, r.rule, r.facet, r.schema, r.subject, r.outcome, r.base, r.head, r.message,
                _local(r.file), int(r.idx)) for r in first]
    master = spark.sparkContext.master
    return RegressionResult.from_parts(base, head, f"Spark {master}", events, counts, rows, seen,
                                       time.monotonic() - started, notes)


def _local(file: str) -> str:
    """A file as Spark's metadata names it, written as the single-process path does."""
    return file.removeprefix("file://").removeprefix("file:")
