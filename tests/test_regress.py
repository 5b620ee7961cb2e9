"""The regression's rules and outcomes, in one process (the Spark job shares this code; see
test_regress_spark)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from bot.core.config import Config, RegressionPolicy
from bot.core.findings import Severity, Verdict
from bot.core.snapshot import DirSnapshot
from bot.review.regression import review_stage
from bot.review.regression.compare import (
    BROKEN,
    FIXED,
    OK,
    STILL_FAILING,
    Comparator,
    Tally,
    _facet_maps,
    _resolve_facet,
    run_records,
)
from bot.review.regression.events import (
    expand_local,
    file_records,
    has_placeholders,
    parse_event,
    split_events,
)
from bot.review.regression.result import RegressionResult
from bot.review.regression.side import SideSpec, Validators
from tests.regress_helpers import (
    BIGQUERY_NAMING,
    JOB_FACET,
    RUN_FACET,
    SAMPLES,
    edit_json,
    make_tree,
    outcomes,
    run,
    spec,
)

EVENTS = "events.jsonl"


@pytest.fixture
def tree(tmp_path: Path, corpus: Path) -> Path:
    return make_tree(corpus, tmp_path / "base")


@pytest.fixture
def head(tmp_path: Path, tree: Path) -> Path:
    target = tmp_path / "head"
    shutil.copytree(tree, target)
    return target


def corpus_event_files(corpus: Path) -> list[str]:
    """Every real event file of the corpus (facet schema files under integration/ are not
    events)."""
    return [
        p
        for p in expand_local(
            [str(corpus / "integration"), str(corpus / "proxy"), str(corpus / "client")]
        )
        if "/src/openlineage/common/" not in p and "/shared/facets/" not in p
    ]


def test_unchanged_registry_breaks_nothing_on_the_real_corpus(corpus: Path, tree: Path) -> None:
    records = list(file_records(corpus_event_files(corpus)))
    assert len(records) > 600
    side = spec(tree, "same")
    tally = run_records(records, side, side)
    assert tally.events == len(records)
    assert not [r for r in tally.rows if r.outcome in (BROKEN, FIXED)]
    # the corpus does have real problems, reported on both sides as still failing
    assert any(r.rule == "facet-schema" and r.outcome == STILL_FAILING for r in tally.rows)
    assert tally.counts and sum(n for (_, _, _, o), n in tally.counts.items() if o == OK) > 1000


def test_placeholders_of_partial_expected_events_are_not_values(corpus: Path, tree: Path) -> None:
    path = (
        corpus
        / "integration/hive/hive-openlineage-hook/integrations/container/simpleCtasStart.json"
    )
    records = list(file_records([str(path)]))
    assert has_placeholders(parse_event(records[0].text))
    side = spec(tree, "same")
    tally = run_records(records, side, side)
    # runId, eventTime and _producer are placeholders or absent: no schema or producer failure comes
    # of them
    assert not [r for r in tally.rows if r.rule in ("event-schema", "facet-producer")], tally.rows
    assert not any("json-unit" in r.message for r in tally.rows)


def test_compiled_and_pure_python_validators_agree_on_every_corpus_event(
    corpus: Path, tree: Path
) -> None:
    side = spec(tree, "same")
    validators = Validators(side, {})
    checked = 0
    for record in file_records(corpus_event_files(corpus)):
        event = parse_event(record.text)
        partial = has_placeholders(event)
        targets = [(side.spec_url, "/$defs/RunEvent", event)] if "run" in event else []
        for _, facets in _facet_maps(event):
            for key, facet in facets.items():
                resolved = _resolve_facet(side, key, facet)[0] if isinstance(facet, dict) else None
                if resolved is not None:
                    fragment = resolved[1] or "".join(
                        f"/$defs/{n}" for n in side.files[resolved[0]].defs_for(key)[:1]
                    )
                    targets.append((resolved[0], fragment, facet))
        for url, fragment, instance in targets:
            compiled = validators.compiled(url, fragment)
            if compiled is None:
                continue
            fast = not validators.errors_rs(compiled, instance, partial)
            assert partial or fast == compiled.rs.is_valid(instance)
            slow = not validators.explain(compiled, instance, partial)
            assert fast == slow, (record.file, record.index, url, fragment)
            checked += 1
    assert checked > 1500


def test_a_field_made_required_breaks_exactly_the_events_lacking_it(tree: Path, head: Path) -> None:
    edit_json(
        head / JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    tally = run(tree, head)
    assert outcomes(tally, BROKEN) == {(EVENTS, 2, "job.facets.gcp_composer_job", "facet-schema")}
    broken = next(r for r in tally.rows if r.outcome == BROKEN)
    assert (
        "operator" in broken.message and broken.schema == "ol:gcp:composer:GcpComposerJobFacet.json"
    )


def test_the_reverse_change_fixes_that_sample(tree: Path, head: Path) -> None:
    edit_json(
        tree / JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    tally = run(tree, head)
    assert outcomes(tally, FIXED) == {(EVENTS, 2, "job.facets.gcp_composer_job", "facet-schema")}
    assert not outcomes(tally, BROKEN)


def test_a_renamed_facet_key_breaks_every_event_using_the_old_key(tree: Path, head: Path) -> None:
    def rename(doc: dict) -> None:
        doc["properties"] = {"gcp_composer_dag": doc["properties"].pop("gcp_composer_job")}

    edit_json(head / JOB_FACET, rename)
    tally = run(tree, head)
    assert outcomes(tally, BROKEN) == {
        (EVENTS, i, "job.facets.gcp_composer_job", "facet-key") for i in range(3)
    }


def test_a_removed_facet_file_still_used_by_samples_is_broken(tree: Path, head: Path) -> None:
    (head / RUN_FACET).unlink()
    tally = run(tree, head)
    assert outcomes(tally, BROKEN) == {
        (EVENTS, i, "run.facets.gcp_composer_run", "facet-key") for i in range(3)
    }


def test_a_removed_facet_file_absent_from_the_mirror_makes_the_schema_unknown(
    tree: Path, head: Path
) -> None:
    (head / RUN_FACET).unlink()
    (head / "website/static/spec/facets/1-0-0/GcpComposerRunFacet.json").unlink()
    tally = run(tree, head)
    broken = {(r.rule, r.head) for r in tally.rows if r.outcome == BROKEN}
    assert broken == {("facet-schema", "unknown"), ("facet-key", "unknown")}
    assert len([r for r in tally.rows if r.outcome == BROKEN]) == 6


def test_a_naming_change_rejecting_sample_identifiers_is_broken(tree: Path, head: Path) -> None:
    edit_json(
        head / BIGQUERY_NAMING, lambda d: d["components"]["dataset"].update(pattern="[a-z]{1,3}")
    )
    tally = run(tree, head)
    assert outcomes(tally, BROKEN) == {
        (EVENTS, i, f"{side}[0]", "dataset-name")
        for i in range(3)
        for side in ("inputs", "outputs")
    }


def test_unchanged_samples_have_no_outcome_but_ok(tree: Path, head: Path) -> None:
    tally = run(tree, head)
    assert tally.events == 3
    assert not [r for r in tally.rows if r.rule != "facet-producer"], tally.rows


def test_a_facet_key_differing_from_its_schema_is_reported(corpus: Path, tmp_path: Path) -> None:
    root = make_tree(corpus, tmp_path / "tree", wrong_key=True)
    tally = run(root, root)
    rows = [r for r in tally.rows if r.rule == "facet-key"]
    assert [(Path(r.file).name, r.index, r.facet, r.outcome) for r in rows] == [
        ("wrong_key.json", 0, "composer_job", STILL_FAILING)
    ]
    assert "gcp_composer_job" in rows[0].message


def test_coverage_reports_undeclared_and_unseen_facets(tree: Path, head: Path) -> None:
    side = spec(head, "head")
    result = RegressionResult.from_tally(side, side, run(tree, head), "one Python process", 0.1)
    cover = result.coverage["gcp:composer"]
    assert cover.undeclared == [
        "ol:core:DatasourceDatasetFacet.json",
        "ol:core:ParentRunFacet.json",
        "ol:core:SchemaDatasetFacet.json",
    ]
    assert cover.unseen == []
    findings = result.findings(RegressionPolicy())
    assert [f.rule for f in findings if f.rule.startswith("regression/un")] == [
        "regression/undeclared-facet"
    ]


def test_verdict_policy_and_rendering(tree: Path, head: Path) -> None:
    edit_json(
        head / JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    base_side, head_side = spec(tree, "main"), spec(head, "pr|<b>")
    result = RegressionResult.from_tally(
        base_side, head_side, run(tree, head), "one Python process", 0.2
    )
    broken = [f for f in result.findings(RegressionPolicy()) if f.rule == "regression/broken"]
    assert [f.severity for f in broken] == [Severity.ERROR]
    assert broken[0].path.endswith("samples/events.jsonl")
    relaxed = result.findings(RegressionPolicy(broken="warning"))
    assert {f.severity for f in relaxed if f.rule == "regression/broken"} == {Severity.WARNING}
    assert not [
        f for f in result.findings(RegressionPolicy(broken="off")) if f.rule == "regression/broken"
    ]
    assert [
        f.severity
        for f in result.findings(RegressionPolicy(broken="fatal"))
        if f.rule == "regression/broken"
    ] == [Severity.ERROR]  # a value the bot does not know keeps the default
    text = result.markdown()
    assert "| broken by this change | gcp:composer | facet-schema | gcp_composer_job | 1 |" in text
    # A joiner after "#": the example's event number must not link issue #2 (docs/output-safety.md).
    assert (
        "`spec/registry/gcp/composer/samples/events.jsonl` #\u200d2 job.facets.gcp_composer_job"
        in text
    )
    data = json.loads(json.dumps(result.to_json()))
    assert data["totals"]["broken"] == 1


def test_bad_input_is_reported_not_lost(tree: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"eventType": "START"\n' + "[" * 5000 + "]" * 5000 + "\n" + '"just a string"\n')
    side = spec(tree, "same")
    tally = run_records(file_records([str(bad), str(tmp_path / "missing.json")]), side, side)
    readable = [(r.index, r.message[:20]) for r in tally.rows if r.rule == "event-readable"]
    assert len(readable) == 4
    assert all(r.outcome == STILL_FAILING for r in tally.rows if r.rule == "event-readable")


def test_split_events_reads_arrays_objects_and_lines() -> None:
    assert [i for i, _ in split_events('[{"a": 1}, {"b": 2}]')] == [0, 1]
    assert [i for i, _ in split_events('{"a": 1}')] == [0]
    assert [t for _, t in split_events('{"a": 1}\n\n{"b": 2}\n')] == ['{"a": 1}', '{"b": 2}']


def test_the_stage_is_neutral_when_spark_cannot_start(tree: Path, head: Path) -> None:
    def no_spark(master: str) -> object:
        raise RuntimeError("JAVA_HOME is not set")

    stage = review_stage(session_factory=no_spark)  # type: ignore[arg-type]
    section, findings = stage(DirSnapshot(tree), DirSnapshot(head), None, Config())
    assert section is not None and section.verdict is Verdict.NEUTRAL
    assert "JAVA_HOME is not set" in section.markdown and findings == []


def test_the_comparator_compiles_shared_schemas_once(tree: Path) -> None:
    side = spec(tree, "same")
    comparator = Comparator(side, SideSpec.build(DirSnapshot(tree), Config(), "again"))
    tally = Tally()
    for record in file_records([str(tree / "spec/registry/gcp/composer/samples/events.jsonl")]):
        comparator.check(record, tally)
    assert comparator.base.pool is comparator.head.pool
    assert all(v is not None for v in comparator.base.pool.values())
    assert len(comparator.base.pool) == 6  # event, composer job and run, parent, schema, dataSource


def test_draft_2020_12_facet_schemas_are_what_we_compile(tree: Path) -> None:
    side = spec(tree, "same")
    Draft202012Validator.check_schema(side.schemas[side.by_filename["GcpComposerJobFacet.json"]])


def test_the_command_line_reports_a_broken_sample_from_git(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main
    from tests.gitrepo import Repo

    repo = Repo.from_folder(make_tree(corpus, tmp_path / "tree"), tmp_path / "repo")
    repo.edit_json(
        JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    repo.commit("make operator required")
    extra = tmp_path / "more.jsonl"
    shutil.copy(tmp_path / "tree/spec/registry/gcp/composer/samples/events.jsonl", extra)

    code = main(
        [
            "regress",
            str(repo.path),
            "--base",
            "main",
            "--head",
            "pr",
            "--engine",
            "python",
            "--events",
            str(extra),
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    # the entry's sample and the same event given with --events
    assert report["totals"]["broken"] == 2
    assert [f["severity"] for f in report["findings"] if f["rule"] == "regression/broken"] == [
        "error"
    ]

    assert (
        main(["regress", str(repo.path), "--base", "main", "--head", "main", "--engine", "python"])
        == 0
    )
    assert main(["regress", str(repo.path), "--base", "nope", "--engine", "python"]) == 2


def test_a_head_naming_file_that_cannot_be_read_is_judged_without_not_a_crash(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A naming file the head commits as a symlink: the rules skip it (naming/invalid-file), and the
    regression judges the samples without it, so their BigQuery datasets lose their convention
    (broken). Before, reading it for the rules' digest raised: a traceback, exit 1."""
    from bot.cli import main
    from tests.gitrepo import Repo

    repo = Repo.from_folder(make_tree(corpus, tmp_path / "tree"), tmp_path / "repo")
    repo.delete(BIGQUERY_NAMING)
    (repo.path / BIGQUERY_NAMING).symlink_to("../../NamingBase.json")
    repo.commit("a naming file as a symlink")
    argv = ["regress", str(repo.path), "--base", "main", "--head", "pr", "--engine", "python"]
    assert main([*argv, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["broken"] == 6
    assert {g["rule"] for g in report["groups"] if g["outcome"] == "broken"} == {"dataset-name"}
    # the report says why: the file the head's rules could not use
    [problem] = report["naming_problems"]["head"]
    assert problem.startswith(f"{BIGQUERY_NAMING}: ") and "symlink" in problem
    assert "base" not in report["naming_problems"]
    assert main([*argv, "--format", "markdown"]) == 1
    assert "The head side's naming files have 1 problem(s)" in capsys.readouterr().out


@pytest.mark.parametrize("breaks", [True, False])
def test_a_deleted_sample_is_judged_against_the_change_that_deletes_it(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], breaks: bool
) -> None:
    """Samples are read from the head side; before, a change that broke a sample and deleted the
    samples/ folder had no event to judge and passed. The base's samples that the head deletes
    (of an entry it keeps) are judged too; deleting a sample the change does not break passes."""
    from bot.cli import main
    from tests.gitrepo import Repo

    repo = Repo.from_folder(make_tree(corpus, tmp_path / "tree"), tmp_path / "repo")
    if breaks:
        repo.edit_json(
            JOB_FACET,
            lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
        )
    repo.delete(SAMPLES)
    repo.commit("delete the samples")
    argv = ["regress", str(repo.path), "--base", "main", "--head", "pr", "--engine", "python"]
    assert main([*argv, "--format", "json"]) == (1 if breaks else 0)
    report = json.loads(capsys.readouterr().out)
    assert report["events"] == 3
    assert report["totals"]["broken"] == (1 if breaks else 0)


def test_an_event_dropped_from_an_edited_sample_file_is_judged_too(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The change breaks the third sample event and removes it from the file, keeping the others:
    before, only the file's head version was read, and the change passed."""
    from bot.cli import main
    from tests.gitrepo import Repo

    repo = Repo.from_folder(make_tree(corpus, tmp_path / "tree"), tmp_path / "repo")
    repo.edit_json(
        JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("operator"),
    )
    lines = (repo.path / SAMPLES / "events.jsonl").read_text().splitlines()
    repo.write(f"{SAMPLES}/events.jsonl", "\n".join(lines[:2]) + "\n")
    repo.commit("break the third sample and drop it")
    argv = ["regress", str(repo.path), "--base", "main", "--head", "pr", "--engine", "python"]
    assert main([*argv, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["events"] == 3  # the two kept, and the dropped one (judged once)
    broken = [g for g in report["groups"] if g["outcome"] == "broken"]
    assert [(e["file"], e["index"]) for g in broken for e in g["examples"]] == [
        (f"{SAMPLES}/events.jsonl", 2)
    ]


def test_short_uris_resolve_schemas_and_producers(tree: Path) -> None:
    from bot.review.regression.events import EventRecord

    event = json.loads(
        (tree / "spec/registry/gcp/composer/samples/events.jsonl").read_text().splitlines()[0]
    )
    facet = event["job"]["facets"]["gcp_composer_job"]
    facet["_schemaURL"] = "ol:gcp:composer:GcpComposerJobFacet.json"
    del facet["dagId"]  # required: the short URI must lead to the schema that says so
    event["run"]["facets"]["gcp_composer_run"]["_producer"] = "ol:gcp:nobody"
    side = spec(tree, "same")
    assert (
        side.expand("ol:core:1-0-0/ParentRunFacet.json")
        == "https://openlineage.io/spec/facets/1-0-0/ParentRunFacet.json"
    )
    tally = run_records([EventRecord("e.json", 0, json.dumps(event))], side, side)
    failing = {(r.rule, r.facet) for r in tally.rows}
    assert failing == {("facet-schema", "gcp_composer_job"), ("facet-producer", "gcp_composer_run")}
    assert "dagId" in next(r.message for r in tally.rows if r.rule == "facet-schema")


def test_the_reference_registry_samples_pass_and_object_form_declarations_count() -> None:
    """The bundled samples break nothing; egeria declares in the proposal's object form, which
    counts."""
    from bot.cli.sample import REFERENCE

    side = spec(REFERENCE, "head")
    tally = run(REFERENCE, REFERENCE)
    assert outcomes(tally, "broken") == set()
    result = RegressionResult.from_tally(side, side, tally, "one Python process", 0.1)
    assert set(result.coverage) == {"airflow", "egeria"}
    for producer in ("airflow", "egeria"):  # egeria uses the object form: it counts as declared
        assert (result.coverage[producer].undeclared, result.coverage[producer].unseen) == ([], [])
    assert result.findings(RegressionPolicy()) == []


def test_fast_paths_give_the_general_path_s_outcomes_on_the_corpus_and_on_mutations(
    corpus: Path, tree: Path, head: Path
) -> None:
    edit_json(
        head / JOB_FACET,
        lambda d: d["$defs"]["GcpComposerJobFacet"]["allOf"][1]["required"].append("sql"),
    )
    edit_json(
        head / BIGQUERY_NAMING, lambda d: d["components"]["dataset"].update(pattern="[a-z]{1,3}")
    )
    (head / RUN_FACET).unlink()
    records = [
        *file_records(corpus_event_files(corpus)),
        *file_records(expand_local([str(tree / "spec/registry")])),
    ]
    for base_root, head_root in ((tree, tree), (tree, head), (head, tree)):
        base, other = spec(base_root, "base"), spec(head_root, "head")
        fast = run_records(records, base, other)
        general = run_records(records, base, other, Comparator(base, other, fast=False))
        assert fast.events == general.events == len(records) - sum(fast.skipped.values())
        # registry.json, facet schemas
        assert fast.skipped == general.skipped and sum(fast.skipped.values()) > 0
        assert fast.counts == general.counts and fast.seen == general.seen
        assert fast.rows == general.rows
        assert (
            fast.unregistered == general.unregistered
            and fast.unregistered_first == general.unregistered_first
        )
    assert sum(fast.counts.values()) > 10_000 and len({r.outcome for r in fast.rows}) >= 3


def test_the_spark_engine_without_pyspark_is_a_clear_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """PySpark is the `spark` extra (the web image has none): `regress` says so in one line, exit
    2."""
    from bot.cli import main

    # what an install without the extra looks like to find_spec
    monkeypatch.setitem(sys.modules, "pyspark", None)
    assert main(["regress", str(tmp_path), "--base", "main"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        "needs PySpark" in err
        and "[spark]" in err
        and "--engine python" in err
        and len(err.splitlines()) == 1
    )


class CountingSnapshot(DirSnapshot):
    """A folder as a snapshot, remembering every file read (a read costs GitHub requests in the
    App)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def read(self, path: str) -> bytes | None:
        self.reads.append(path)
        return super().read(path)


def test_without_sample_events_the_stage_reads_no_schema_and_starts_no_spark(corpus: Path) -> None:
    base, head = CountingSnapshot(corpus), CountingSnapshot(corpus)
    started: list[str] = []
    stage = review_stage(session_factory=lambda master: started.append(master))  # type: ignore[arg-type, func-returns-value]

    # the corpus's integration events are not read
    no_discovery = Config(regression=RegressionPolicy(discover=()))
    section, findings = stage(base, head, None, no_discovery)

    assert (
        section is not None and section.data == {"events": 0} and findings == [] and started == []
    )
    # neither side's schemas: nothing would be validated against them
    assert base.reads == head.reads == []
    SideSpec.build(base, Config(), "base")  # what the stage used to do first
    assert len(base.reads) > 40  # (the counter sees reads: every schema of the side)


DISCOVERED = "integration/demo/tests/events.jsonl"
DATA_EVENTS = Path(__file__).parent / "data/regress/composer_events.jsonl"


@pytest.mark.parametrize("change", ["delete", "drop-one", "keep"])
def test_a_discovered_event_file_the_change_deletes_or_edits_is_judged_too(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str
) -> None:
    """The repository's own expected events (``regression.discover``), not samples: a change that
    breaks their identifiers and deletes the file, or drops the broken event from it, passed (only
    the head's files were read). The base's events the head drops are judged base against head;
    a file the change leaves alone is not read twice."""
    from bot.cli import main
    from tests.gitrepo import Repo

    tree = make_tree(corpus, tmp_path / "tree")
    shutil.rmtree(tree / SAMPLES)
    (tree / DISCOVERED).parent.mkdir(parents=True)
    shutil.copy(DATA_EVENTS, tree / DISCOVERED)
    repo = Repo.from_folder(tree, tmp_path / "repo")
    repo.edit_json(
        BIGQUERY_NAMING, lambda d: d["components"]["dataset"].update(pattern="[a-z]{1,3}")
    )
    lines = (repo.path / DISCOVERED).read_text().splitlines()
    if change == "delete":
        repo.delete(DISCOVERED)
    elif change == "drop-one":
        repo.write(DISCOVERED, "\n".join(lines[:2]) + "\n")
    repo.commit("break the identifiers")
    argv = ["regress", str(repo.path), "--base", "main", "--head", "pr", "--engine", "python"]
    assert main([*argv, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["events"] == 3  # each event once: the head's, then the base's it drops
    assert report["totals"]["broken"] == 6  # each event's input and output
    broken = [g for g in report["groups"] if g["outcome"] == "broken"]
    assert {e["file"] for g in broken for e in g["examples"]} == {DISCOVERED}


def test_dropped_discovered_events_read_only_the_files_that_differ() -> None:
    """Bounded: with blob ids, a base file the head keeps as it is is not read again."""
    import hashlib

    from bot.core.snapshot import MemorySnapshot
    from bot.review.regression.discover import discover, dropped_records

    class Counting(MemorySnapshot):
        reads: list[str]

        def object_id(self, path: str) -> str | None:
            data = MemorySnapshot.read(self, path)
            return None if data is None else hashlib.sha1(data).hexdigest()

        def read(self, path: str) -> bytes | None:
            self.reads.append(path)
            return super().read(path)

    event = (DATA_EVENTS.read_text().splitlines()[0] + "\n").encode()
    files = {f"integration/a/tests/{n}.jsonl": event for n in ("same", "gone")}
    base = Counting(files, "base")
    head = Counting({"integration/a/tests/same.jsonl": event}, "head")
    base.reads, head.reads = [], []
    globs = ("integration/**/tests/**",)
    dropped = list(dropped_records(base, head, globs, discover(head, globs)))
    assert [r.file for r in dropped] == ["integration/a/tests/gone.jsonl"]
    assert base.reads == ["integration/a/tests/gone.jsonl"]


def test_a_change_deleting_the_naming_folder_is_judged_without_naming_rules(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, a head without naming files fell back to the bot's bundled rules: a change deleting
    the repository's conventions was judged by other rules and, here, passed. The head is judged
    by the rules it has (none: each identifier the base judged becomes unknown, broken) and the
    report says why."""
    from bot.cli import main
    from tests.gitrepo import Repo
    from tests.regress_helpers import NAMING

    repo = Repo.from_folder(make_tree(corpus, tmp_path / "tree"), tmp_path / "repo")
    for name in ("datasets", "jobs"):
        repo.delete(f"{NAMING}/{name}")
    repo.commit("delete the naming conventions")
    argv = ["regress", str(repo.path), "--base", "main", "--head", "pr", "--engine", "python"]
    assert main([*argv, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {(g["rule"], g["outcome"]) for g in report["groups"] if g["outcome"] == "broken"} == {
        ("dataset-name", "broken"),
        ("job-name", "broken"),
    }
    [problem] = report["naming_problems"]["head"]
    assert problem.startswith(f"{NAMING}: holds no naming file")


@pytest.mark.parametrize("discovered", [True, False])
def test_an_event_naming_a_key_twice_is_unreadable_as_naming_check_says(
    corpus: Path, tmp_path: Path, discovered: bool
) -> None:
    """orjson keeps a duplicate key's last value: before, the regression judged the event (here its
    job as the second name) while `naming check` refused it. Now both refuse it: one event-readable
    failure naming the key, in a discovered file. An --events file (bulk, not the repository's)
    keeps orjson's reading: the scan would cost about 14% per event there (docs/regression.md)."""
    from bot.model.naming.events import EventsProblem, read_events
    from bot.review.regression.discover import discover
    from bot.review.regression.runner import Events, Inputs, run_local

    line = DATA_EVENTS.read_text().splitlines()[0]
    doubled = line.replace('"job": {', '"job": {"name": "not a job name!", ', 1)
    assert doubled != line
    tree = make_tree(corpus, tmp_path / "tree")
    events_file = tree / DISCOVERED
    events_file.parent.mkdir(parents=True)
    events_file.write_text(doubled + "\n" + line + "\n")
    side = spec(tree, "same")
    if discovered:
        found = discover(DirSnapshot(tree), ("integration/**/tests/**",))
        assert found.files == 1
        events = Events(found.records, [])
    else:
        events = Events([], [str(events_file)])
    report = run_local(Inputs(side, side, events.records, events.locations)).to_json()
    assert report["events"] == 2
    refused = [
        (e["index"], e["message"])
        for g in report["groups"]
        if g["rule"] == "event-readable"
        for e in g["examples"]
    ]
    judged = [g for g in report["groups"] if g["rule"] == "job-name"]
    if discovered:
        assert [(i, "duplicate key 'name'" in message) for i, message in refused] == [(0, True)]
        assert not judged  # nothing of it judged
    else:  # judged as orjson reads it: the last value, this event's own job name (no failure)
        assert not refused
        assert not judged
    # naming check refuses it for the same reason
    with pytest.raises(EventsProblem, match="duplicate key 'name'"):
        read_events(events_file)


@pytest.mark.parametrize(
    ("text", "duplicate"),
    [
        ('{"a": "x:y", "b": {"c": "ol:x:y"}}', None),
        ('{"a": 1, "b": {"c": 1, "c": 2}}', "c"),
        # an escaped colon makes up for the dropped key's: the exact scan still finds it
        ('{"a": "\\u003a", "b": {"c": 1, "c": 2}}', "c"),
        ('{"a": "\\u003a", "b": {"c": 1}}', None),
    ],
)
def test_the_duplicate_key_scan_is_exact(text: str, duplicate: str | None) -> None:
    import orjson

    from bot.review.regression.events import duplicate_key

    for form in (text, text.encode()):
        found = duplicate_key(form, orjson.loads(form))
        assert (found is None) == (duplicate is None)
        assert duplicate is None or f"duplicate key {duplicate!r}" in str(found)
