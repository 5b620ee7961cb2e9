"""Event locations read by Spark's executors: folders, ``file://``, globs, arrays and single events,
a JSON-lines file split by Spark; a missing or empty location is an error naming it (one process
too)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from bot.core.config import Config
from bot.core.findings import Verdict
from bot.core.snapshot import DirSnapshot
from bot.review.regression import review_stage
from bot.review.regression.compare import run_records
from bot.review.regression.events import file_records
from bot.review.regression.locations import LocationError, local_files, spark_files
from bot.review.regression.side import SideSpec
from bot.review.regression.spark_job import input_frame, run_spark
from tests.regress_helpers import DATA, make_tree, spec

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return make_tree(corpus, tmp_path_factory.mktemp("locations") / "tree")


@pytest.fixture(scope="module")
def side(tree: Path) -> SideSpec:
    return spec(tree, "same")


def events() -> list[dict[str, Any]]:
    """The composer samples, each with a facet whose producer is not registered: a failing row per
    event."""
    out = [
        json.loads(line)
        for line in (DATA / "composer_events.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for event in out:
        event["run"]["facets"]["gcp_composer_run"]["_producer"] = "ol:gcp:nobody"
    return out


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """JSON lines in a subfolder, an array, a single event, files that are not event files, hidden
    ones."""
    # Spark's metadata URL-encodes paths: reports name the real files
    root = tmp_path / "my events %41"
    (root / "lines").mkdir(parents=True)
    (root / "lines/composer.ndjson").write_text("".join(json.dumps(e) + "\n" for e in events()))
    (root / "array.json").write_text(json.dumps(events()))
    (root / "single.json").write_text(json.dumps(events()[0], indent=2))
    (root / "notes.txt").write_text("not an event file\n")
    (root / "_SUCCESS").write_text("")
    # what a writer leaves behind: skipped, as Spark skips it
    (root / "_temporary/0").mkdir(parents=True)
    (root / "_temporary/0/part.json").write_text(json.dumps(events()[0]))
    (root / ".partial.jsonl").write_text(json.dumps(events()[0]) + "\n")
    return root


def test_folders_file_uris_and_globs_read_the_same_events_as_one_process(
    spark,
    side: SideSpec,  # type: ignore[no-untyped-def]
    folder: Path,
) -> None:
    local = run_records(file_records(local_files([str(folder)])), side, side)
    expected = len(events()) * 2 + 1
    assert local.events == expected
    for locations in (
        [str(folder)],
        [f"file://{folder}"],
        [f"{folder}/*.json", f"file://{folder}/l*/*.ndjson"],
    ):
        result = run_spark(spark, side, side, (), locations)
        assert result.events == expected, locations
        assert result.counts == dict(local.counts), locations
        files = {row.file.split("@")[0] for rows in result.examples.values() for row in rows}
        assert files and files <= {str(p) for p in folder.rglob("*")}, files
    assert local_files([f"{folder}/*.json"]) == [
        str(folder / "array.json"),
        str(folder / "single.json"),
    ]


def test_a_file_named_directly_is_read_whatever_its_name(
    spark, side: SideSpec, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "events.log"
    shutil.copy(DATA / "composer_events.jsonl", path)
    assert run_spark(spark, side, side, (), [str(path)]).events == len(events())
    assert spark_files(spark, [str(path)]) == [f"file:{path}"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing", "no such file or folder"),
        ("missing/*.jsonl", "the pattern matches no file"),
        ("empty", "no event file (.json, .jsonl, .ndjson) in it"),
        ("other", "no event file (.json, .jsonl, .ndjson) in it"),
    ],
)
def test_a_location_naming_no_event_file_is_an_error_naming_it(
    spark,
    side: SideSpec,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    name: str,
    message: str,
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "other/sub").mkdir(parents=True)
    (tmp_path / "other/sub/readme.txt").write_text("{}\n")
    for location in (f"{tmp_path}/{name}", f"file://{tmp_path}/{name}"):
        with pytest.raises(LocationError) as spark_error:
            run_spark(spark, side, side, (), [location])
        assert str(spark_error.value) == f"{location}: {message}"
        with pytest.raises(LocationError) as local_error:
            local_files([location])
        assert str(local_error.value) == f"{location}: {message}"


def test_a_large_json_lines_file_is_split_by_spark_and_every_line_read_once(
    spark,
    side: SideSpec,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    """ "Large" is made small by lowering Spark's split size: the file is read in many splits, never
    as one record, and each event is numbered within its split."""
    count = 600
    template = events()[0]
    path = tmp_path / "big.jsonl"
    with path.open("w") as out:
        for n in range(count):
            template["run"]["facets"]["gcp_composer_run"]["dagRunId"] = f"run_{n}"
            out.write(json.dumps(template) + "\n")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(path.stat().st_size // 9))
    try:
        assert input_frame(spark, (), [str(path)])[0].rdd.getNumPartitions() >= 9
        result = run_spark(
            spark, side, side, (), [str(path)], parquet=str(tmp_path / "rows.parquet")
        )
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert result.events == count and result.skipped == {}
    rows = pq.read_table(tmp_path / "rows.parquet").to_pylist()
    assert not [r for r in rows if r["rule"] == "event-readable"]
    failing = {(r["file"], r["idx"]) for r in rows if r["rule"] == "facet-producer"}
    assert len(failing) == count  # one per event: no line lost or read twice
    splits = {file for file, _ in failing}
    assert len(splits) >= 9 and all(f.split("@")[0].endswith("/big.jsonl") for f in splits)


def test_the_app_stage_is_neutral_and_names_a_configured_location_that_is_gone(
    spark,
    tree: Path,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    config = Config()
    config = replace(config, regression=replace(config.regression, events=(f"{tmp_path}/gone",)))
    stage = review_stage(session_factory=lambda master: spark)
    section, findings = stage(DirSnapshot(tree), DirSnapshot(tree), None, config)
    assert section is not None and section.verdict is Verdict.NEUTRAL and findings == []
    assert f"{tmp_path}/gone: no such file or folder" in section.markdown
