"""The regression on a real local SparkSession: same answers as one process, mutations, the warm
review stage."""

from __future__ import annotations

import shutil
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from bot.core.config import Config
from bot.core.findings import Severity, Verdict
from bot.core.snapshot import DirSnapshot
from bot.model.registry import Registry
from bot.review.regression import review_stage
from bot.review.regression.compare import BROKEN, run_records
from bot.review.regression.events import file_records, sample_records
from bot.review.regression.result import RegressionResult
from bot.review.regression.spark_job import run_spark
from tests.regress_helpers import BIGQUERY_NAMING, COMPOSER, JOB_FACET, edit_json, make_tree, spec
from tests.test_naming_events import EXPECTED
from tests.test_regress import corpus_event_files

pytestmark = pytest.mark.spark


def assert_same_rows(actual, expected) -> None:  # type: ignore[no-untyped-def]
    """DataFrame equality ignoring row order (duplicates count).
    ``pyspark.testing.assertDataFrameEqual`` imports pyspark.pandas, which does not load with pandas
    3, hence Spark's own ``exceptAll``."""
    assert actual.schema.simpleString() == expected.schema.simpleString()
    missing, extra = expected.exceptAll(actual).collect(), actual.exceptAll(expected).collect()
    assert (missing, extra) == ([], [])


ROW_COLUMNS = (
    "producer string, rule string, facet string, schema string, subject string, outcome string, "
    "base string, head string, file string, idx long"
)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("spark")
    base = make_tree(corpus, root / "base", wrong_key=True)
    head = root / "head"
    shutil.copytree(base, head)
    edit_json(
        head / JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    return base, head


def test_spark_and_one_process_give_the_same_outcomes(
    spark,
    corpus: Path,
    trees: tuple[Path, Path],  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    base_root, head_root = trees
    base, head = spec(base_root, "base"), spec(head_root, "head")
    files = corpus_event_files(corpus)
    samples = list(
        sample_records(DirSnapshot(head_root), Registry(DirSnapshot(head_root), Config()))
    )
    lines = tmp_path / "events.jsonl"  # read by Spark line by line, numbered within the file
    shutil.copy(head_root / "spec/registry/gcp/composer/samples/events.jsonl", lines)
    # read by Spark whole (arrays and objects)
    whole = [p for p in files if "/dbt/" in p or "/proxy/" in p]
    # not events
    whole += [str(EXPECTED / "hive_dataproc_config.json"), str(EXPECTED / "dbt_maintainers.json")]
    rest = [p for p in files if p not in whole]

    parquet = tmp_path / "outcomes.parquet"
    result = run_spark(
        spark,
        base,
        head,
        [*samples, *file_records(rest)],
        [*whole, str(lines)],
        parquet=str(parquet),
        partitions=2,
    )
    local = run_records(
        [*samples, *file_records(rest), *file_records(whole), *file_records([str(lines)])],
        base,
        head,
    )

    assert result.events == local.events
    assert result.counts == dict(local.counts)
    notes = RegressionResult.from_tally(base, head, local, "one Python process", 0.0)
    assert result.skipped == notes.skipped and {
        Path(f).name: n for f, n in result.skipped.items()
    } == {"hive_dataproc_config.json": 1, "dbt_maintainers.json": 2}
    # one notice per producer
    assert result.unregistered == notes.unregistered and result.unregistered
    # event templates, counted per file once
    assert result.incomplete == notes.incomplete and result.incomplete
    actual = spark.read.parquet(str(parquet)).select(
        "producer", "rule", "facet", "schema", "subject", "outcome", "base", "head", "file", "idx"
    )
    # Spark names the files it reads
    actual = actual.withColumn("file", F.regexp_replace("file", "^file:", ""))
    expected_rows = [
        (
            r.producer,
            r.rule,
            r.facet,
            r.schema,
            r.subject,
            r.outcome,
            r.base,
            r.head,
            r.file,
            r.index,
        )
        for r in local.rows
    ]
    assert_same_rows(actual, spark.createDataFrame(expected_rows, ROW_COLUMNS))
    broken = {
        (Path(r.file).name, r.index, r.subject)
        for r in [x for rows in result.examples.values() for x in rows]
        if r.outcome == BROKEN
    }
    assert broken == {("events.jsonl", 2, "job.facets.gcp_composer_job")}
    # the sample, and the same event read by Spark from the JSON-lines file
    assert result.total(BROKEN) == 2


def test_spark_judges_identifiers_by_the_naming_files_one_process_uses(
    spark,
    trees: tuple[Path, Path],  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    """A head naming file failing NamingBase.json is skipped by one process: the samples' BigQuery
    datasets are no longer covered (broken). The workers rebuild the pickled rules; before, they
    rebuilt them without the base schema, used that file, and passed them."""
    base_root = trees[0]
    head_root = tmp_path / "head"
    shutil.copytree(base_root, head_root)
    edit_json(head_root / BIGQUERY_NAMING, lambda d: d.update(description=5))
    base, head = spec(base_root, "base"), spec(head_root, "head")
    samples = list(
        sample_records(DirSnapshot(head_root), Registry(DirSnapshot(head_root), Config()))
    )
    local = run_records(samples, base, head)
    result = run_spark(spark, base, head, samples, partitions=2)
    assert result.counts == dict(local.counts)
    assert any(k[1] == "dataset-name" and k[3] == BROKEN for k in local.counts)


def test_the_review_stage_reuses_one_warm_session(spark, trees: tuple[Path, Path]) -> None:  # type: ignore[no-untyped-def]
    base_root, head_root = trees
    started: list[str] = []

    def factory(master: str):  # type: ignore[no-untyped-def]
        started.append(master)
        return spark

    stage = review_stage(master="local[2]", session_factory=factory)
    first, findings = stage(DirSnapshot(base_root), DirSnapshot(head_root), None, Config())
    second, _ = stage(DirSnapshot(base_root), DirSnapshot(base_root), None, Config())
    assert started == ["local[2]"]
    assert first is not None and first.verdict is None and first.data["totals"]["broken"] == 1
    assert [f.severity for f in findings if f.rule == "regression/broken"] == [Severity.ERROR]
    assert second is not None and second.data["totals"]["broken"] == 0
    assert "| broken by this change |" in first.markdown


def test_the_review_stage_is_neutral_when_the_budget_runs_out(
    spark, trees: tuple[Path, Path]
) -> None:  # type: ignore[no-untyped-def]
    base_root, head_root = trees
    config = Config()
    config = replace(config, regression=replace(config.regression, time_budget_seconds=0.0))
    stage = review_stage(session_factory=lambda master: spark)
    section, findings = stage(DirSnapshot(base_root), DirSnapshot(head_root), None, config)
    assert section is not None and section.verdict is Verdict.NEUTRAL
    assert "time budget" in section.markdown and findings == []
    assert asdict(config.regression)["time_budget_seconds"] == 0.0


def test_parquet_replaces_its_own_earlier_output_and_nothing_else(  # type: ignore[no-untyped-def]
    spark, trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """``regress --parquet DIR`` writes with Spark's overwrite mode, which deletes what DIR holds:
    a folder holding other files is refused before Spark starts (``tests/test_cli_writes.py``),
    while the command's own earlier output (its marker, which Spark and pyarrow skip) is replaced
    run after run. The warm session stands in for the one the command would start."""
    import pyarrow.parquet as pq

    from bot.cli import main
    from bot.cli.commands.regress import PARQUET_MARKER
    from tests.gitrepo import Repo

    monkeypatch.setattr("bot.review.regression.spark_job.start_session", lambda *a, **k: spark)
    monkeypatch.setattr("bot.review.regression.spark_job.stop_session", lambda session: None)
    base_root, head_root = trees
    repo = Repo.from_folder(base_root, tmp_path / "repo")
    shutil.copy(head_root / JOB_FACET, repo.path / JOB_FACET)
    repo.commit("make operator required")
    out = tmp_path / "outcomes"
    argv = ["regress", str(repo.path), "--base", "main", "--head", "pr", "--parquet", str(out)]
    for _ in range(2):
        assert main(argv) == 1, capsys.readouterr().err
        assert (out / PARQUET_MARKER).is_file()
        assert {r["outcome"] for r in pq.read_table(out).to_pylist()} >= {BROKEN}
    capsys.readouterr()
    (out / PARQUET_MARKER).unlink()  # no longer recognisably ours: refused, left as it is
    before = sorted(p.name for p in out.iterdir())
    assert main(argv) == 2
    assert "not an earlier output of regress --parquet" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_key_another_name_takes_is_broken_on_both_engines(  # type: ignore[no-untyped-def]
    spark, trees: tuple[Path, Path], tmp_path: Path
) -> None:
    """Registering `gcp:composer:job` makes composer's `gcp_composer_job` key its prefix: the
    sample events carrying it are broken (`facet-key`), with the same rows and counts on Spark as in
    one process (the taken-prefix rule is decided once per plan, from the spec's names)."""
    base_root, _ = trees
    head_root = tmp_path / "head"
    shutil.copytree(base_root, head_root)
    (head_root / COMPOSER / "job").mkdir()
    (head_root / COMPOSER / "job" / "registry.json").write_text('{"producer": {}}\n')
    base, head = spec(base_root, "base"), spec(head_root, "head")
    samples = list(
        sample_records(DirSnapshot(head_root), Registry(DirSnapshot(head_root), Config()))
    )
    result = run_spark(spark, base, head, samples, partitions=2)
    local = RegressionResult.from_tally(
        base, head, run_records(samples, base, head), "one Python process", 0.0
    )
    assert result.events == local.events and result.counts == local.counts
    rows = {
        group: sorted((r.file, r.index, r.subject, r.message) for r in examples)
        for group, examples in result.examples.items()
    }
    assert rows == {
        group: sorted((r.file, r.index, r.subject, r.message) for r in examples)
        for group, examples in local.examples.items()
    }
    broken = {
        r.subject for r in [x for e in result.examples.values() for x in e] if r.outcome == BROKEN
    }
    assert broken == {"job.facets.gcp_composer_job"}
