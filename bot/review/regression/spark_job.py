"""The regression as a Spark job: events in, Arrow batches through ``mapInArrow``, aggregates out.

Each Python worker builds one ``Comparator`` per (base, head) pair and reuses it for every partition
it runs (validators compile once per partition at most, never per event). Workers return only what
is not ``ok`` plus per-partition counts, so little crosses back from Python to the JVM.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from bot.review.regression.compare import OK, Comparator, Row, Tally
from bot.review.regression.events import (
    WHOLE_SUFFIX,
    EventRecord,
    line_record,
    unreadable,
    whole_records,
)
from bot.review.regression.locations import LocationError, spark_listing
from bot.review.regression.result import EXAMPLES_PER_GROUP, RegressionResult
from bot.review.regression.side import SideSpec

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

LISTED_FILES_CHECKED_BY_DRIVER = 1000
JVM_EXIT_SECONDS = 30.0  # a stopped session's JVM runs its shutdown hooks (1-2 s measured)
INPUT_COLUMNS = (
    "file string, idx long, data binary, entry string, error string, whole boolean, expected "
    "boolean, size long"
)
# A .json file up to this size is read whole by one task (one row); a larger one is read as its
# comma-separated records, brought together in file order in one task and streamed
# (``bot.review.regression.stream``), so neither the executor's JVM nor its Python worker ever holds
# the file (only one element of it at a time).
WHOLE_READ_MAX_BYTES = 16 * 1024 * 1024
SEPARATOR = ","
OUTPUT_COLUMNS = (
    "kind string, producer string, rule string, facet string, schema string, subject string, "
    "outcome string, base string, head string, message string, file string, idx long, n long"
)
# per Python worker process: reused across partitions and jobs
_WORKER_CACHE: dict[str, Comparator] = {}
_CLEANED: list[bool] = []  # per Python worker process: ended executors' archives removed once


def start_session(
    master: str = "local[*]",
    app: str = "registry-bot-regression",
    extra: dict[str, str] | None = None,
) -> SparkSession:
    """A SparkSession without UI; the workers run ``PYSPARK_PYTHON`` (default: this interpreter).

    On a cluster (any master but ``local``) the project's code and dependencies are shipped to the
    executors (``bot.review.regression.ship``), so workers need only Python and PySpark.
    """
    from pyspark.sql import SparkSession

    # PySpark starts its workers with $PYSPARK_PYTHON (the conf key is only read by spark-submit).
    # Locally they must run this interpreter, which has the dependencies; a cluster's workers run
    # their own (``python3`` unless set), and get the code and dependencies shipped.
    if master.startswith("local"):
        python = os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    else:
        from bot.review.regression.ship import session_conf

        python = os.environ.get("PYSPARK_PYTHON", "python3")
        extra = {**session_conf(), **(extra or {})}
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.pyspark.python", python)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "2000")
        # the driver has listed the event files already: Spark checks up to this many itself
        # rather than with a job of one task per file
        .config(
            "spark.sql.sources.parallelPartitionDiscovery.threshold",
            str(LISTED_FILES_CHECKED_BY_DRIVER),
        )
        .config("spark.python.worker.reuse", "true")
    )
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def stop_session(session: SparkSession, wait: float = JVM_EXIT_SECONDS) -> None:
    """Stop ``session`` and the JVM this process launched for it. PySpark keeps its JVM for a later
    session and leaves it to end when this process's end closes its stdin, 1-2 s later (Spark's
    shutdown hooks delete its temporary folders): a command would return while its JVM still runs.
    The JVM is told to end the same way, by closing its stdin, and waited for (ended after
    ``wait`` seconds); a JVM this process did not launch (``PYSPARK_GATEWAY_PORT``) is left."""
    import subprocess

    from pyspark import SparkContext

    session.stop()
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    if gateway is None or not isinstance(process, subprocess.Popen):
        return
    with SparkContext._lock:
        SparkContext._gateway = None
        SparkContext._jvm = None
    gateway.shutdown()
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(wait)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _comparator(specs: tuple[SideSpec, SideSpec]) -> Comparator:
    key = f"{specs[0].token}:{specs[1].token}"
    comparator = _WORKER_CACHE.get(key)
    if comparator is None:
        _WORKER_CACHE.clear()  # one pair at a time: a warm worker does not grow without bound
        comparator = _WORKER_CACHE[key] = Comparator(*specs)
    return comparator


def _rows(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[Any, ...]]:
    for batch in batches:
        columns = batch.to_pydict()
        yield from zip(
            columns["file"],
            columns["idx"],
            columns["data"],
            columns["entry"],
            columns["error"],
            columns["whole"],
            columns["expected"],
            columns["size"],
            strict=True,
        )


def _records(
    rows: Iterable[tuple[Any, ...]], ordinals: Counter[tuple[str, int]], read: Counter[str]
) -> Iterator[EventRecord]:
    """The events of a partition's input rows; ``read`` counts the rows of each file Spark read (a
    listed file with none could not be read by the executors). Bytes are decoded here, strictly: a
    file or a line that is not UTF-8 is a fault of its own, never a crash of the job. The records of
    a streamed ``.json`` file are consecutive rows, in file order."""
    for streamed, group in itertools.groupby(rows, key=lambda row: row[7] is not None and row[0]):
        if streamed:
            read[streamed] += 1
            yield from whole_records(unquote(streamed), _rejoined(group))
            continue
        for file, idx, data, entry, error, whole, expected, _ in group:
            if error is not None:
                yield EventRecord(file, idx, "", entry, error, expected)
            elif whole:  # a whole file read by Spark (its metadata gives the path URL-encoded)
                read[file] += 1
                yield from whole_records(unquote(file), data or b"", entry)
            # a line read by Spark: number it within its split (exact for a file's first split)
            elif idx < 0:
                read[file] += 1
                if not (data or b"").strip():
                    continue  # blank lines are not events and take no number
                block = -idx - 1
                ordinals[(file, block)] += 1
                number = ordinals[(file, block)] - 1
                yield line_record(
                    unquote(file) if block == 0 else f"{unquote(file)}@{block}", number, data, entry
                )
            else:  # an event the driver read from the repository
                yield EventRecord(file, idx, (data or b"").decode(), entry, expected=expected)


def _rejoined(rows: Iterable[tuple[Any, ...]]) -> Iterator[bytes]:
    """A streamed file's bytes from its comma-separated records: the separators put back, and the
    one a file ending with a comma loses (Hadoop's reader yields no empty last record) restored from
    its size."""
    total = size = 0
    for n, row in enumerate(rows):
        size = row[7]
        data = row[2] or b""
        total += len(data) + (n > 0)
        yield SEPARATOR.encode() + data if n else data
    if total < size:
        yield SEPARATOR.encode()


def _tally_batch(tally: Tally, read: Counter[str]) -> pa.RecordBatch:
    import pyarrow as pa

    out: dict[str, list[Any]] = {
        name: []
        for name in (
            "kind",
            "producer",
            "rule",
            "facet",
            "schema",
            "subject",
            "outcome",
            "base",
            "head",
            "message",
            "file",
            "idx",
            "n",
        )
    }

    def add(
        kind: str,
        n: int,
        producer: str = "",
        rule: str = "",
        facet: str = "",
        schema: str = "",
        row: Row | None = None,
        outcome: str = "",
    ) -> None:
        values = [
            kind,
            producer,
            rule,
            facet,
            schema,
            row.subject if row else None,
            row.outcome if row else outcome,
            row.base if row else None,
            row.head if row else None,
            row.message if row else None,
            row.file if row else None,
            row.index if row else None,
            n,
        ]
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
    for file, n in tally.incomplete.items():
        add("incomplete", n, row=Row("", "", "", "", "", "", "", "", "", file, 0))
    for producer, n in tally.unregistered.items():
        file, index = tally.unregistered_first[producer]
        add(
            "unregistered",
            n,
            schema=producer,
            row=Row("", "", "", "", "", "", "", "", "", file, index),
        )
    for file, n in read.items():
        add("read", n, row=Row("", "", "", "", "", "", "", "", "", file, 0))
    add("events", tally.events)
    return pa.RecordBatch.from_pydict(out)


def _partition(specs_broadcast: Any) -> Any:
    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if not _CLEANED:
            from bot.review.regression.ship import clean_finished

            _CLEANED.append(bool(clean_finished()))
        comparator = _comparator(specs_broadcast.value)
        tally = Tally()
        ordinals: Counter[tuple[str, int]] = Counter()
        read: Counter[str] = Counter()
        for record in _records(_rows(batches), ordinals, read):
            comparator.check(record, tally)
        yield _tally_batch(tally.settle(), read)

    return run


def input_frame(
    spark: SparkSession,
    records: Iterable[EventRecord],
    locations: Iterable[str] = (),
    partitions: int | None = None,
) -> tuple[DataFrame, dict[str, int]]:
    """Events as rows: the repository's own events from the driver, and every event location read by
    the executors through Spark's text source; with the files the executors read (name -> size).

    JSON-lines files are read line by line, split by Spark like any text file (``idx`` carries the
    split's start so a worker numbers the lines within it); ``.json`` files up to
    ``WHOLE_READ_MAX_BYTES`` are read whole (one row each), larger ones streamed
    (``_streamed_frame``). The driver lists the files and never reads them. A file the executors
    cannot open (permissions, a folder only the driver sees) is skipped by Spark and reported by
    ``run_spark``, file by file.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    records = list(records)
    files = spark_listing(spark, locations)
    frames: list[DataFrame] = []
    rows = [
        (r.file, r.index, r.text.encode(), r.entry, r.error, False, r.expected, None)
        for r in records
    ]
    if rows:
        count = max(1, min(partitions or spark.sparkContext.defaultParallelism, len(rows)))
        frames.append(
            spark.createDataFrame(spark.sparkContext.parallelize(rows, count), INPUT_COLUMNS)
        )
    reader = spark.read.option("ignoreMissingFiles", "true").option("ignoreCorruptFiles", "true")
    streamed = [
        f for f, size in files.items() if f.endswith(WHOLE_SUFFIX) and size > WHOLE_READ_MAX_BYTES
    ]
    for whole in (True, False):
        chosen = [f for f in files if f.endswith(WHOLE_SUFFIX) == whole and f not in streamed]
        if chosen:
            read = reader.text(chosen, wholetext=whole)
            idx = F.lit(0).cast("long") if whole else -F.col("_metadata.file_block_start") - 1
            frames.append(
                read.select(
                    F.col("_metadata.file_path").alias("file"),
                    idx.alias("idx"),
                    F.col("value").cast("binary").alias("data"),
                    F.lit(None).cast("string").alias("entry"),
                    F.lit(None).cast("string").alias("error"),
                    F.lit(whole).alias("whole"),
                    F.lit(False).alias("expected"),
                    F.lit(None).cast("long").alias("size"),
                )
            )
    if streamed:
        frames.append(_streamed_frame(spark, streamed, partitions))
    if not frames:
        return spark.createDataFrame([], INPUT_COLUMNS), files
    return functools.reduce(DataFrame.unionByName, frames), files


def _streamed_frame(spark: SparkSession, files: list[str], partitions: int | None) -> DataFrame:
    """Large ``.json`` files as their comma-separated records (small whatever the file's layout: a
    compact array on one line too), each file's records brought to one partition and sorted back
    into file order (split, then position within the split), so one Python worker streams the
    file."""
    from pyspark.sql import functions as F

    reader = (
        spark.read.option("ignoreMissingFiles", "true")
        .option("ignoreCorruptFiles", "true")
        .option("lineSep", SEPARATOR)
    )
    count = max(1, min(partitions or spark.sparkContext.defaultParallelism, len(files)))
    return (
        reader.text(files)
        .select(
            F.col("_metadata.file_path").alias("file"),
            F.lit(0).cast("long").alias("idx"),
            F.col("value").cast("binary").alias("data"),
            F.lit(None).cast("string").alias("entry"),
            F.lit(None).cast("string").alias("error"),
            F.lit(True).alias("whole"),
            F.lit(False).alias("expected"),
            F.col("_metadata.file_size").alias("size"),
            F.col("_metadata.file_block_start").alias("block"),
            F.monotonically_increasing_id().alias("order"),
        )
        .repartition(count, "file")
        .sortWithinPartitions("file", "block", "order")
        .drop("block", "order")
    )


def run_spark(
    spark: SparkSession,
    base: SideSpec,
    head: SideSpec,
    records: Iterable[EventRecord] = (),
    locations: Iterable[str] = (),
    parquet: str | None = None,
    partitions: int | None = None,
    deadline: float | None = None,
) -> RegressionResult:
    """Run the regression on ``spark``; write the non-ok outcomes as Parquet when ``parquet`` is
    given.

    ``deadline`` (a ``time.monotonic()`` value) is checked before each Spark action; the caller
    cancels a running action itself (``RegressionStage`` does, with a job group).
    """

    def in_time() -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("the regression's time budget ran out")

    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    started = time.monotonic()
    specs = spark.sparkContext.broadcast((base, head))
    frame, files = input_frame(spark, records, list(locations), partitions)
    out = frame.mapInArrow(_partition(specs), OUTPUT_COLUMNS).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        in_time()
        outcomes = out.where("kind = 'row'").drop("kind", "n")
        if parquet:
            outcomes.write.mode("overwrite").parquet(parquet)
        # per-partition summaries are small: one action brings them all, summed here
        counts: Counter[tuple[str, str, str, str]] = Counter()
        seen: set[tuple[str, str]] = set()
        notes = Tally()  # documents skipped, unregistered producers
        events = 0
        read: Counter[str] = Counter()
        for r in (
            out.where("kind != 'row'")
            .select("kind", "producer", "rule", "facet", "outcome", "schema", "file", "idx", "n")
            .collect()
        ):
            if r.kind == "count":
                counts[(r.producer, r.rule, r.facet, r.outcome)] += int(r.n)
            elif r.kind == "seen":
                seen.add((r.producer, r.schema))
            elif r.kind == "skipped":
                notes.skipped[_local(r.file)] += int(r.n)
            elif r.kind == "incomplete":
                notes.incomplete[_local(r.file)] += int(r.n)
            elif r.kind == "unregistered":
                notes.note_unregistered(r.schema, _local(r.file), int(r.idx), int(r.n))
            elif r.kind == "read":
                read[_local(unquote(r.file))] += int(r.n)
            else:
                events += int(r.n)
        if parquet:
            _check_written(
                spark, parquet, outcomes.schema, sum(n for (*_, o), n in counts.items() if o != OK)
            )
        first = []
        if any(outcome != OK for (_, _, _, outcome) in counts):
            in_time()
            window = Window.partitionBy("producer", "rule", "facet", "outcome").orderBy(
                "file", "idx", "subject", "message"
            )
            first = (
                out.where("kind = 'row'")
                .withColumn("rank", F.row_number().over(window))
                .where(F.col("rank") <= EXAMPLES_PER_GROUP)
                .collect()
            )
    finally:
        out.unpersist()
        specs.unpersist()
    rows = [
        Row(
            r.producer,
            r.rule,
            r.facet,
            r.schema,
            r.subject,
            r.outcome,
            r.base,
            r.head,
            r.message,
            _local(r.file),
            int(r.idx),
        )
        for r in first
    ]
    # files the executors could not open: one fault each, as one process reports
    unread = Comparator(base, head)
    faults = Tally()
    for name, size in files.items():
        if size > 0 and not read[_local(name)]:
            unread.check(EventRecord(_local(name), 0, "", None, _unread_reason(name)), faults)
    events += faults.events
    counts.update(faults.counts)
    rows += faults.rows
    master = spark.sparkContext.master
    return RegressionResult.from_parts(
        base, head, f"Spark {master}", events, counts, rows, seen, time.monotonic() - started, notes
    )


def _check_written(spark: SparkSession, parquet: str, schema: Any, expected: int) -> None:
    """The Parquet outcomes are all where the driver committed them: executors writing to folders of
    their own (a local path on a cluster) leave the driver an empty dataset, and that is an
    error."""
    written = spark.read.schema(schema).parquet(parquet).count()
    if written != expected:
        raise LocationError(
            f"{parquet}: {written:,} of the {expected:,} outcomes written are there; on a "
            "cluster, write to a location every node shares (HDFS, S3, a shared filesystem)"
        )


def _unread_reason(name: str) -> str:
    """Why the executors read nothing of a listed file: the driver's own error opening it when it
    has one (the message the single-process path gives), else that only the executors could not."""
    if name.startswith("file:"):
        try:
            with open(_local(name), "rb") as stream:
                stream.read(1)
        except OSError as exc:
            return unreadable(exc)
    return "unreadable: the executors could not open it (a folder only this machine sees?)"


def _local(file: str) -> str:
    """A file as Spark's metadata names it, written as the single-process path does."""
    return file.removeprefix("file://").removeprefix("file:")
