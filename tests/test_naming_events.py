"""Identifiers in real events: job kinds from the jobType facet, parents judged by their own
evidence, placeholders of every expected-event syntax, and folders mixing events with other JSON.

Events are real ones from the corpus (or from OpenLineage/compatibility-tests, see
tests/data/expected), copied into a temporary folder and, where a case needs it, given a part of
another real event.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.model.naming import load_rules
from bot.model.naming.events import (
    FACETS,
    INVALID,
    PLACEHOLDER,
    UNKNOWN,
    VALID,
    Judged,
    document_kind,
    judge_event,
    read_events,
)
from bot.model.naming.placeholders import has_placeholders, is_placeholder
from bot.model.naming.rules import NamingRules

EXPECTED = Path(__file__).resolve().parent / "data" / "expected"
# a complete RunEvent of a scheduler task (myjob.mytask)
FULL_EVENT = "proxy/fluentd/events/event_full.json"
# Airflow task parent, DAG root, each with its jobType
AIRFLOW_PARENT = "spec/tests/ParentRunFacet/2.json"
# SPARK / SQL_JOB
SPARK_EVENT = "integration/spark/cli/tests/test_simple/example_expected_event_complete.json"


@pytest.fixture(scope="module")
def rules() -> NamingRules:
    return load_rules()


def _load(corpus: Path, path: str) -> Any:
    return json.loads((corpus / path).read_text(encoding="utf-8"))


def _by_pointer(judged: list[Judged]) -> dict[str, Judged]:
    return {j.found.pointer: j for j in judged}


def airflow_events(corpus: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A task's event and its DAG's event, as Airflow emits them: the real event_full.json with the
    real ParentRunFacet of spec/tests (task parent and DAG root carry their jobType facets)."""
    parent = _load(corpus, AIRFLOW_PARENT)["parent"]
    task = _load(corpus, FULL_EVENT)
    task["job"] = copy.deepcopy(parent["job"])  # airflow / my_dag.my_task, jobType AIRFLOW TASK
    task["run"]["facets"]["parent"] = copy.deepcopy(parent)
    dag = _load(corpus, FULL_EVENT)
    dag["job"] = copy.deepcopy(parent["root"]["job"])  # airflow / my_dag, jobType AIRFLOW DAG
    del dag["run"]["facets"]["parent"]
    return task, dag


def test_airflow_dag_and_task_jobs_are_named_by_their_jobtype(
    rules: NamingRules, corpus: Path
) -> None:
    task, dag = airflow_events(corpus)
    judged = _by_pointer(judge_event(rules, task))
    assert (judged["/job"].verdict, judged["/job"].result.source, judged["/job"].result.form) == (
        VALID,
        "airflow",
        "task",
    )
    parent, root = judged["/run/facets/parent/job"], judged["/run/facets/parent/root/job"]
    assert (parent.verdict, parent.result.form) == (VALID, "task")
    # before: the DAG was judged by the task form ({dagId}.{taskId}) and failed
    assert (root.verdict, root.result.source, root.result.form) == (VALID, "airflow", "dag")
    assert root.result.components == {"namespace": "airflow", "dagId": "my_dag"}
    dag_job = _by_pointer(judge_event(rules, dag))["/job"]
    assert (dag_job.verdict, dag_job.result.form) == (VALID, "dag")
    # the job type decides the form: a task named like a DAG is invalid, with the task form's reason
    dag["job"]["facets"]["jobType"]["jobType"] = "TASK"
    wrong = _by_pointer(judge_event(rules, dag))["/job"]
    assert wrong.verdict == INVALID and "{dagId}.{taskId}" in (wrong.result.reason or "")
    # a job type the naming file has no form for is unknown, not a failure
    dag["job"]["facets"]["jobType"]["jobType"] = "TASK_GROUP"
    assert _by_pointer(judge_event(rules, dag))["/job"].verdict == UNKNOWN


def test_a_parent_job_is_judged_by_its_own_evidence_never_the_child_s(
    rules: NamingRules, corpus: Path
) -> None:
    airflow_parent = _load(corpus, AIRFLOW_PARENT)["parent"]
    # a Spark action (jobType SPARK / SQL_JOB) whose parent is its application
    spark = _load(corpus, SPARK_EVENT)
    assert _by_pointer(judge_event(rules, spark))["/job"].result.source == "spark"
    # launched by an Airflow task: the parent's own jobType says Airflow, whatever the child is
    spark["run"]["facets"]["parent"]["job"] = copy.deepcopy(airflow_parent["job"])
    parent = _by_pointer(judge_event(rules, spark))["/run/facets/parent/job"]
    assert (parent.verdict, parent.result.source, parent.result.form) == (VALID, "airflow", "task")
    # without a jobType of its own, the parent is judged by its shape against every job kind: a DAG
    # id alone is accepted by airflow (dag) and spark (application), and the verdict names both
    spark["run"]["facets"]["parent"]["job"] = {"namespace": "airflow", "name": "my_dag"}
    parent = _by_pointer(judge_event(rules, spark))["/run/facets/parent/job"]
    assert parent.verdict == VALID and parent.result.source == "airflow or spark"
    # and a shape no convention accepts is unknown (the kind is not known), not a Spark failure
    spark["run"]["facets"]["parent"]["job"] = {
        "namespace": "default",
        "name": "Writing to BigQuery",
    }
    parent = _by_pointer(judge_event(rules, spark))["/run/facets/parent/job"]
    assert parent.verdict == UNKNOWN and "no jobType facet" in (parent.result.reason or "")


def test_integrations_without_a_naming_file_are_unknown(rules: NamingRules, corpus: Path) -> None:
    dbt = read_events(
        corpus
        / "integration/common/tests/dbt/structured_logs/postgres/seed/results/seed_ol_events.json"
    )
    jobs = [j for event in dbt for j in judge_event(rules, event) if j.found.pointer == "/job"]
    assert jobs and all(j.verdict == UNKNOWN and "'DBT'" in (j.result.reason or "") for j in jobs)


@pytest.mark.parametrize(
    ("source", "pointer"),
    [
        # ${json-unit.regex}
        (
            "integration/spark/app/integrations/container/pysparkCreateTableCompleteEvent.json",
            "/job",
        ),
        # {PROJECT_ID}...
        ("integration/spark/app/integrations/container/pysparkBigquerySaveEnd.json", "/inputs/0"),
        ("expected:spark_dataproc_parent_1.38.0.json", "/job"),  # {{ match(result, '...') }}
    ],
)
def test_placeholders_of_every_syntax_are_never_identifiers(
    rules: NamingRules, corpus: Path, tmp_path: Path, source: str, pointer: str
) -> None:
    origin = (
        EXPECTED / source.split(":", 1)[1] if source.startswith("expected:") else corpus / source
    )
    path = tmp_path / origin.name
    shutil.copy(origin, path)
    [event] = read_events(path)
    assert has_placeholders(event)
    judged = _by_pointer(judge_event(rules, event))[pointer]
    assert judged.verdict == PLACEHOLDER and not judged.result.ok


def test_jinja_matchers_in_identifiers_of_a_real_dbt_event(
    rules: NamingRules, corpus: Path, tmp_path: Path
) -> None:
    """dbt's expected events write ``{{ any(result) }}`` for run ids; the same matcher for a name is
    a placeholder."""
    events = read_events(corpus / "integration/common/tests/dbt/postgres/result.json")
    assert is_placeholder(events[0]["run"]["runId"])
    event = events[3]
    event["outputs"][0]["name"] = "{{ any(result) }}"
    event["inputs"][0]["namespace"] = "{{ match(result, 'postgres://.*') }}"
    verdicts = {j.found.pointer: j.verdict for j in judge_event(rules, event)}
    assert verdicts["/outputs/0"] == verdicts["/inputs/0"] == PLACEHOLDER
    # a template *inside* a real value (dbt SQL) is not a placeholder
    assert not is_placeholder("select * from {{ ref('stg_orders') }}")
    assert not is_placeholder("{{ config(materialized='table') }} select 1 from {{ ref('a') }}")


def test_document_kinds_of_real_json(corpus: Path) -> None:
    kinds = {
        "client/python/tests/serde_example_run_event.json": "RunEvent",
        "client/python/tests/serde_example_dataset_event.json": "DatasetEvent",
        "client/python/tests/serde_example_job_event.json": "JobEvent",
        # partial
        "integration/spark/app/integrations/container/deltaMergeCommandVerificationStart.json": "RunEvent",  # noqa: E501
        # eventType and outputs only
        "integration/spark/cli/tests/test_iceberg/create_table.json": "RunEvent",
        AIRFLOW_PARENT: FACETS,
        "integration/spark/shared/facets/spark/v1/error-facet.json": None,  # a facet schema
        "spec/registry/gcp/composer/registry.json": None,
    }
    for path, kind in kinds.items():
        assert document_kind(_load(corpus, path)) == kind, path
    for name in ("hive_dataproc_config.json", "dbt_maintainers.json"):
        for doc in read_events(EXPECTED / name):
            assert document_kind(doc) is None, name


def mixed_folder(corpus: Path, target: Path) -> Path:
    """Real events next to other real JSON, as an event folder of a test suite holds them."""
    target.mkdir()
    for path in (
        FULL_EVENT,
        SPARK_EVENT,
        "client/python/tests/serde_example_dataset_event.json",
        "integration/common/tests/dbt/structured_logs/postgres/seed/results/seed_ol_events.json",
        AIRFLOW_PARENT,
        "integration/spark/shared/facets/spark/v1/error-facet.json",
        "spec/registry/gcp/composer/registry.json",
    ):
        shutil.copy(corpus / path, target / path.replace("/", "_"))
    for name in (
        "hive_dataproc_config.json",
        "dbt_maintainers.json",
        "spark_dataproc_parent_1.38.0.json",
    ):
        shutil.copy(EXPECTED / name, target / name)
    return target


def test_naming_check_skips_other_json_with_one_notice(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = mixed_folder(corpus, tmp_path / "mixed")
    main(["naming", "check", str(folder), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    skipped = {Path(f).name: n for f, n in report["skipped"].items()}
    assert skipped == {
        "hive_dataproc_config.json": 1,
        "dbt_maintainers.json": 2,
        "integration_spark_shared_facets_spark_v1_error-facet.json": 1,
        "spec_registry_gcp_composer_registry.json": 1,
    }
    judged_files = {Path(str(e["file"])).name for e in report["events"]}
    assert "spec_tests_ParentRunFacet_2.json" in judged_files  # facet documents are judged too
    # the compatibility test's {{ match(...) }} job name, the Spark CLI test's ${json-unit.regex}
    # warehouse paths
    assert report["verdicts"][PLACEHOLDER] == 5 and report["verdicts"][UNKNOWN] > 10
    main(["naming", "check", str(folder), "-q"])
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("skipped 5 JSON documents") for line in lines) == 1


def test_the_regression_s_short_walk_finds_what_the_full_walk_finds(corpus: Path) -> None:
    """``identifiers(event, candidates)`` stops once the raw text's count of ``"namespace"`` is
    reached."""
    from bot.model.naming.events import _shallow, identifiers, shallow_identities
    from bot.review.regression.events import expand_local, file_records, parse_event

    checked = shallow = 0
    for record in file_records(
        expand_local([str(corpus / d) for d in ("integration", "proxy", "client")])
    ):
        event = parse_event(record.text)
        full = identifiers(event)
        candidates = record.text.count('"namespace"')
        assert identifiers(event, candidates) == full, record.file
        checked += len(full)
        # the regression's identities: the same identifiers, without locations
        if isinstance(event, dict):
            found, seen = shallow_identities(event)
            walked, walked_seen = _shallow(event)
            assert seen == walked_seen and found == [
                (f.role, f.namespace, f.name, f.integration, f.job_type) for f in walked
            ], record.file
            shallow += seen == candidates and bool(found)
            # stopped at the text's count: the same identities whenever the places hold them all
            limited, limited_seen = shallow_identities(event, candidates)
            assert limited_seen == min(seen, candidates), record.file
            if seen == candidates:
                assert Counter(limited) == Counter(found), record.file
    assert checked > 2000 and shallow > 300
    hidden = '{"eventType": "START", "outputs": [{"n\\u0061mespace": "s3://b", "name": "k"}]}'
    # the caller passes None for escapes
    assert identifiers(json.loads(hidden), None)[0].namespace == "s3://b"
