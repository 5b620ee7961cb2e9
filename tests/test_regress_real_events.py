"""The regression on real events as test suites keep them: the naming verdicts of ``naming check``,
folders mixing events with other JSON, unregistered schemas and producers (one process; Spark shares
the comparator, see test_regress_spark)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot.core.config import RegressionPolicy
from bot.core.findings import Severity
from bot.model.naming import load_rules
from bot.model.naming.events import INVALID, UNKNOWN, VALID, document_kind, judge_event
from bot.review.regression.compare import OK, STILL_FAILING, UNKNOWN_SCHEMA, run_records
from bot.review.regression.events import EventRecord, expand_local, file_records, parse_event
from bot.review.regression.result import RegressionResult
from tests.regress_helpers import make_tree, spec
from tests.test_naming_events import FULL_EVENT, airflow_events, mixed_folder
from tests.test_regress import corpus_event_files

NAMING_RULES = ("dataset-name", "job-name")
OUTCOME_OF = {INVALID: STILL_FAILING, UNKNOWN: UNKNOWN_SCHEMA}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return make_tree(corpus, tmp_path_factory.mktemp("real") / "tree")


def test_naming_check_and_the_regression_agree_on_every_corpus_identifier(
    corpus: Path, tree: Path
) -> None:
    """One code path: every identifier the regression judges has the verdict ``naming check`` gives
    it."""
    records = list(file_records(corpus_event_files(corpus)))
    side = spec(tree, "same")
    tally = run_records(records, side, side)
    regression = Counter(
        (r.file, r.index, r.subject, r.outcome) for r in tally.rows if r.rule in NAMING_RULES
    )
    ok = sum(
        n
        for (_, rule, _, outcome), n in tally.counts.items()
        if rule in NAMING_RULES and outcome == OK
    )
    rules = load_rules()
    naming: Counter[tuple[str, int, str, str]] = Counter()
    valid = 0
    for record in records:
        event = parse_event(record.text)
        if document_kind(event) is None:
            continue
        for judged in judge_event(rules, event):
            if judged.verdict == VALID:
                valid += 1
            elif judged.verdict in OUTCOME_OF:
                naming[
                    (record.file, record.index, judged.found.subject, OUTCOME_OF[judged.verdict])
                ] += 1
    assert regression == naming
    assert ok == valid
    assert valid > 1400 and sum(naming.values()) > 600  # 483 unknown jobs, the real naming problems


def test_a_mixed_folder_reports_only_events(corpus: Path, tree: Path, tmp_path: Path) -> None:
    folder = mixed_folder(corpus, tmp_path / "mixed")
    records = list(file_records(expand_local([str(folder)])))
    side = spec(tree, "same")
    tally = run_records(records, side, side)
    skipped = {Path(f).name: n for f, n in tally.skipped.items()}
    assert skipped == {
        "hive_dataproc_config.json": 1,
        "dbt_maintainers.json": 2,
        "spec_tests_ParentRunFacet_2.json": 1,
        "integration_spark_shared_facets_spark_v1_error-facet.json": 1,
        "spec_registry_gcp_composer_registry.json": 1,
    }
    assert tally.events == len(records) - 6
    failing_files = {Path(r.file).name for r in tally.rows}
    assert not failing_files & set(skipped)  # before: each was an event failing event-schema
    result = RegressionResult.from_tally(side, side, tally, "one Python process", 0.1)
    notices = [
        f for f in result.findings(RegressionPolicy()) if f.rule == "regression/not-an-event"
    ]
    assert (
        len(notices) == 1
        and notices[0].severity is Severity.NOTICE
        and "6 JSON document(s)" in notices[0].message
    )
    assert sum("not OpenLineage events" in line for line in result.markdown().splitlines()) == 1
    assert json.loads(json.dumps(result.to_json()))["skipped"]


def test_unregistered_schemas_are_unknown_and_producers_one_notice_each(
    corpus: Path, tree: Path
) -> None:
    side = spec(tree, "same")
    tally = run_records(file_records([str(corpus / FULL_EVENT)]), side, side)
    keys = {r.facet: r.outcome for r in tally.rows if r.rule == "facet-key"}
    # dataQualityAssertions names https://openlineage.io/spec/1-0-1/OpenLineage.json: a schema, not
    # a registered file
    assert keys[
        "dataQualityAssertions"
    ] == UNKNOWN_SCHEMA and "not a registered facet schema" in next(
        r.message
        for r in tally.rows
        if r.facet == "dataQualityAssertions" and r.rule == "facet-key"
    )
    assert STILL_FAILING not in keys.values()
    # before: one failure per facet (23)
    assert not [r for r in tally.rows if r.rule == "facet-producer"]
    producer = "https://github.com/OpenLineage/OpenLineage/blob/v1-0-0/client"
    assert dict(tally.unregistered) == {producer: 26}
    result = RegressionResult.from_tally(side, side, tally, "one Python process", 0.1)
    notices = [
        f
        for f in result.findings(RegressionPolicy())
        if f.rule == "regression/unregistered-producer"
    ]
    assert (
        len(notices) == 1 and producer in notices[0].message and "26 facet(s)" in notices[0].message
    )


def test_airflow_dag_and_task_events_pass_the_regression(corpus: Path, tree: Path) -> None:
    task, dag = airflow_events(corpus)
    records = [
        EventRecord("task.json", 0, json.dumps(task)),
        EventRecord("dag.json", 0, json.dumps(dag)),
    ]
    side = spec(tree, "same")
    tally = run_records(records, side, side)
    assert not [r for r in tally.rows if r.rule == "job-name"], [
        r for r in tally.rows if r.rule == "job-name"
    ]
    assert (
        tally.counts[
            ("https://github.com/OpenLineage/OpenLineage/blob/v1-0-0/client", "job-name", "", OK)
        ]
        == 4
    )


def test_a_non_event_in_an_entry_s_samples_is_a_failure_not_a_notice(
    corpus: Path, tmp_path: Path
) -> None:
    from tests.regress_helpers import SAMPLES, run
    from tests.test_naming_events import EXPECTED

    root = make_tree(corpus, tmp_path / "tree")
    (root / SAMPLES / "maintainers.json").write_text(
        (EXPECTED / "dbt_maintainers.json").read_text()
    )
    tally = run(root, root)
    readable = [r for r in tally.rows if r.rule == "event-readable"]
    assert [(Path(r.file).name, r.index, r.outcome) for r in readable] == [
        ("maintainers.json", 0, STILL_FAILING),
        ("maintainers.json", 1, STILL_FAILING),
    ]
    assert "samples/ folder holds events only" in readable[0].message and not tally.skipped
