"""The naming library: bundled files, parsing, formatting, typed objects, pickling, hostile
patterns."""

from __future__ import annotations

import json
import pickle
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex

from bot.core.config import Config, with_paths
from bot.core.snapshot import DirSnapshot, MemorySnapshot
from bot.model.naming import FormatError, ParseResult, load_rules, rules_for
from bot.model.naming.events import Found, judge, judge_event, read_events
from bot.model.naming.patterns import PatternProblem, check_pattern, compile_ascii
from bot.model.naming.rules import SLOW_PATTERN, TOO_SLOW, NamingRules
from tests.conftest import ROOT

TABLE_SOURCES = 37


@pytest.fixture(scope="module")
def rules() -> NamingRules:
    return load_rules()


def test_every_source_and_job_kind_of_the_table_is_present(
    rules: NamingRules, corpus: Path
) -> None:
    assert rules.problems == ()
    assert len(rules.datasets) == TABLE_SOURCES
    assert set(rules.jobs) == {"airflow", "spark", "sql", "debezium"}
    table = (corpus / "website/docs/spec/naming.md").read_text()
    rows = [
        line
        for line in table.split("## Job Naming")[0].splitlines()
        if line.startswith("| ") and "Data Store" not in line
    ]
    assert len(rows) == TABLE_SOURCES
    schemes = {s.scheme for s in rules.datasets.values()}
    for row in rows:  # every namespace column's scheme has a source
        namespace = row.split("|")[3].strip().strip("`").split("`")[0]
        assert namespace.split(":")[0].split("://")[0] in schemes, row
    for source in (*rules.datasets.values(), *rules.jobs.values()):
        assert len(source.valid) >= 2 and len(source.invalid) >= 1, source.id
        assert source.raw["docs"], source.id


def test_parse_gives_source_components_or_precise_reason(rules: NamingRules) -> None:
    ok = rules.parse_dataset("postgres://db.example.com:5432", "shop.public.orders")
    assert ok.ok and ok.source == "postgres"
    assert ok.components == {
        "host": "db.example.com",
        "port": "5432",
        "database": "shop",
        "schema": "public",
        "table": "orders",
    }
    bad = rules.parse_dataset("postgres://db.example.com:abc", "shop.public.orders")
    assert (
        not bad.ok
        and bad.reason
        == "namespace matches postgres but port 'abc' is not a port number from 1 to 65535"
    )
    assert "does not have the shape {database}.{schema}.{table}" in (
        rules.parse_dataset("postgres://db:5432", "public.orders").reason or ""
    )
    assert "no scheme" in (rules.parse_dataset("ins", "input").reason or "")
    assert "no dataset naming convention uses the scheme 'ftp'" in (
        rules.parse_dataset("ftp://h", "x").reason or ""
    )
    assert not rules.parse_dataset(None, "x").ok  # type: ignore[arg-type]
    assert "must be strings" in (rules.parse_dataset(["a"], "x").reason or "")  # type: ignore[arg-type]
    assert "NUL" in (rules.parse_dataset("file", "/a\x00b").reason or "")


def test_alternatives_snowflake_oracle_pubsub(rules: NamingRules) -> None:
    org = rules.parse_dataset("snowflake://myorg-myaccount", 'MY_DB.MY_SCHEMA."My Table"')
    assert org.ok and org.form == "organization-account" and org.components["table"] == "My Table"
    locator = rules.parse_dataset(
        "snowflake://ASDF1234.eu-central-1.aws", "DEMO_DB.PUBLIC.CUSTOMERS"
    )
    assert locator.ok and locator.form == "account-locator"
    assert (
        locator.components["cloudRegionId"] == "eu-central-1"
        and locator.components["cloud"] == "aws"
    )
    lower = rules.parse_dataset("snowflake://myorg-myaccount", "DEMO_DB.public.customers")
    assert not lower.ok and "write PUBLIC" in (lower.reason or "")
    sid = rules.format_dataset("oracle", host="h", port="1521", sid="XE", schema="HR", table="EMP")
    assert (sid.namespace, sid.name) == ("oracle://h:1521", "XE.HR.EMP")
    sub = rules.parse_dataset("pubsub", "subscription:my-project-123:orders-sub")
    assert (
        sub.ok and sub.form == "subscription" and sub.components["subscriptionId"] == "orders-sub"
    )


def test_format_applies_case_and_quoting_rules(rules: NamingRules) -> None:
    made = rules.format_dataset(
        "snowflake",
        organization="myorg",
        account="acct",
        database="MY_DB",
        schema="lower_schema",
        table='say "hi"',
    )
    assert made.name == 'MY_DB."lower_schema"."say ""hi"""'
    assert made.uri == 'snowflake://myorg-acct/MY_DB."lower_schema"."say ""hi"""'
    assert rules.parse_dataset(made.namespace, made.name).components["table"] == 'say "hi"'
    athena = rules.format_dataset(
        "athena", region="us-east-1", catalog="AwsDataCatalog", database="Sales", table="Orders"
    )
    assert athena.name == "AwsDataCatalog.sales.orders"
    assert (
        rules.format_dataset("bigquery", projectId="my-project-1", dataset="d", table="t").uri
        == "bigquery:my-project-1.d.t"
    )
    assert rules.format_dataset("local-file", path="/tmp/x").uri == "file:///tmp/x"
    optional = rules.format_dataset("unity-catalog", host="h", catalog="c", schema="s", table="t")
    assert optional.namespace == "unitycatalog://h"
    with pytest.raises(FormatError, match="port 'abc' is not a port number"):
        rules.format_dataset("postgres", host="h", port="abc", database="d", schema="s", table="t")
    with pytest.raises(FormatError, match="no component 'colour'"):
        rules.format_dataset(
            "postgres", host="h", port="1", database="d", schema="s", table="t", colour="red"
        )


def test_every_example_round_trips(rules: NamingRules) -> None:
    for source in rules.datasets.values():
        for example in source.valid:
            parsed = rules.parse_dataset(example.namespace, example.name)
            assert parsed.ok and parsed.source == source.id, (source.id, example, parsed.reason)
            made = rules.format_dataset(source.id, form=parsed.form, **parsed.components)
            assert (made.namespace, made.name) == (example.namespace, example.name)
        for example in source.invalid:
            parsed = rules.parse_dataset(example.namespace, example.name)
            assert not parsed.ok and example.expect_reason in (parsed.reason or ""), (
                source.id,
                example,
            )


def test_accepts_dataset_is_parse_dataset_s_verdict_when_it_accepts(rules: NamingRules) -> None:
    """The regression's shortcut: an identifier it accepts is one ``parse_dataset`` accepts."""
    accepted = 0
    for source in rules.datasets.values():
        for example in (*source.valid, *source.invalid, *source.decided_invalid):
            if rules.accepts_dataset(example.namespace, example.name):
                accepted += 1
                assert rules.parse_dataset(example.namespace, example.name).ok, example
    assert accepted > 50
    assert not rules.accepts_dataset("postgres://h:5432", "d.s")  # a table short
    assert not rules.accepts_dataset("s3://b" + "\x00", "k")
    assert not rules.accepts_dataset("s3://b", "k" * 9000)


def test_jobs_by_kind_or_any(rules: NamingRules) -> None:
    task = rules.parse_job("airflow-prod", "orders_etl.group.count_orders", kind="airflow")
    assert (
        task.ok
        and task.components["dagId"] == "orders_etl"
        and task.components["taskId"] == "group.count_orders"
    )
    assert rules.parse_job("debezium", "inventory.0").ok
    reason = rules.parse_job("d", "inventory.first", kind="debezium").reason or ""
    assert "taskId 'first' is not a task number" in reason
    assert not rules.parse_job("ns", "x", kind="cron").ok
    assert not rules.parse_job("has space", "a.b").ok


def test_typed_objects_are_made_from_the_files(rules: NamingRules) -> None:
    postgres = rules.dataset_type("postgres")
    table = postgres(host="db", port="5432", database="shop", schema="public", table="orders")
    assert table.uri == "postgres://db:5432/shop.public.orders"
    assert postgres.parse("postgres://db:5432", "shop.public.orders") == table
    with pytest.raises(FormatError):
        postgres(host="db", port="99999", database="shop", schema="public", table="orders")
    with pytest.raises(FormatError, match="is a s3 identifier"):
        postgres.parse("s3://bucket-a", "key")
    snowflake = rules.dataset_type("snowflake")
    assert (
        snowflake(accountLocator="xy12345", database="A", schema="B", table="c d").name
        == 'A.B."c d"'
    )
    assert {type(rules.dataset_type(s)).__name__ for s in rules.datasets} == {"type"}


def test_a_workers_schema_deadline_never_decides_which_files_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base-schema validation of a file has a time limit: before, a Spark worker unpickling
    the rules validated every file again against its own clock, so a file the driver used could be
    skipped on a slow worker (its deadline hit) and its identifiers judged without it. The driver's
    verdicts ship with the rules: a worker whose deadline is spent at once decides nothing."""
    from bot.model.naming import loader

    shutil.copytree(ROOT / "naming", tmp_path / "naming")
    base = tmp_path / "naming" / loader.BASE_FILE
    schema = json.loads(base.read_text())
    schema["title"] = "a repository's own base schema"  # not the shipped one: every file is timed
    base.write_text(json.dumps(schema))
    path = tmp_path / "naming/datasets/postgres/postgres.json"
    doc = json.loads(path.read_text())
    doc["description"] = 5  # fails the base schema: skipped by the driver
    path.write_text(json.dumps(doc))
    rules = load_rules(DirSnapshot(tmp_path), "naming")
    assert "postgres" not in rules.datasets and "snowflake" in rules.datasets
    monkeypatch.setattr(loader, "SCHEMA_BUDGET_SECONDS", 0.0)  # a worker far slower than this
    worker = pickle.loads(pickle.dumps(rules))
    assert set(worker.datasets) == set(rules.datasets) and set(worker.jobs) == set(rules.jobs)
    assert worker.problems == tuple(p for p in rules.problems if p.rule != "naming/invalid-file")
    assert [p.rule for p in worker.problems] == ["naming/schema", "naming/unchecked"]
    for namespace, name in [("snowflake://o-a", "DB.S.T"), ("postgres://db:5432", "a.b.c")]:
        assert worker.parse_dataset(namespace, name) == rules.parse_dataset(namespace, name)


def test_a_loaded_machine_skips_no_naming_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the base-schema validation's deadline was wall time: a file validated on a loaded
    machine (its thread waiting, not working) ran out and was skipped, "could not be checked"
    (naming/unchecked, blocking), where an idle machine gave its schema errors. The deadline is
    the thread's CPU time now."""
    from bot.model.naming import loader

    explaining = loader._validator

    class Waits:
        def __init__(self, schema_json: str) -> None:
            self.validator = explaining(schema_json)

        def iter_errors(self, value: Any) -> Any:
            time.sleep(0.3)  # descheduled: wall time passes, this thread's CPU time does not
            return self.validator.iter_errors(value)

    monkeypatch.setattr(loader, "_validator", Waits)
    monkeypatch.setattr(loader, "SCHEMA_BUDGET_SECONDS", 0.2)
    base = json.loads((ROOT / "naming" / loader.BASE_FILE).read_text())
    problems = loader.schema_problems(base, "naming/datasets/x.json", {"kind": "dataset", "x": 1})
    assert problems and {p.rule for p in problems} == {"naming/schema"}


def test_rules_pickle_and_parse_the_same(rules: NamingRules) -> None:
    copy = pickle.loads(pickle.dumps(rules))
    for namespace, name in [
        ("hive://localhost:9083", "test.t1"),
        ("hive://metastore", "default.test"),
    ]:
        assert copy.parse_dataset(namespace, name) == rules.parse_dataset(namespace, name)


def test_a_file_failing_the_base_schema_is_skipped_after_pickling_too(tmp_path: Path) -> None:
    """A Spark worker rebuilds the rules from the pickled documents: it must skip what the driver
    skipped (before, it rebuilt them without the base schema and used such a file)."""
    shutil.copytree(ROOT / "naming", tmp_path / "naming")
    path = tmp_path / "naming/datasets/postgres/postgres.json"
    doc = json.loads(path.read_text())
    doc["description"] = 5  # not a string: fails NamingBase.json, builds all the same
    path.write_text(json.dumps(doc))
    rules = load_rules(DirSnapshot(tmp_path), "naming")
    assert [p.rule for p in rules.problems] == ["naming/schema", "naming/unchecked"]
    copy = pickle.loads(pickle.dumps(rules))
    assert set(copy.datasets) == set(rules.datasets) and "postgres" not in copy.datasets
    identifier = ("postgres://db:5432", "shop.public.orders")
    assert copy.parse_dataset(*identifier) == rules.parse_dataset(*identifier)
    assert not rules.parse_dataset(*identifier).ok


def test_cached_results_cannot_be_changed_by_callers(rules: NamingRules) -> None:
    first = rules.parse_dataset("s3://bucket-a", "k/1")
    first.components["objectKey"] = "changed"
    second = rules.parse_dataset("s3://bucket-a", "k/1")  # a cache hit
    assert second.components["objectKey"] == "k/1"
    second.components.clear()
    assert rules.parse_dataset("s3://bucket-a", "k/1").components == {
        "bucket": "bucket-a",
        "objectKey": "k/1",
    }
    # post-processed (quoting) forms too
    quoted = rules.parse_dataset("snowflake://o-a", 'DB.S."t x"')
    quoted.components["table"] = "changed"
    assert rules.parse_dataset("snowflake://o-a", 'DB.S."t x"').components["table"] == "t x"
    failed = rules.parse_dataset("s3://B", "k")
    failed.components["x"] = "y"
    assert (
        rules.parse_dataset("s3://B", "k").components == {}
        and rules.parse_dataset("ftp://h", "k").components == {}
    )


def test_the_hot_paths_stored_name_check_agrees_with_written(rules: NamingRules) -> None:
    values = [
        "T",
        "t",
        "My_T",
        "MY_T$1",
        "_X",
        "1A",
        '"',
        '""',
        '"a"',
        '"A"',
        '"My T"',
        '"a""b"',
        '"a"b"',
        '"A_B"',
        '"say ""hi"""',
        'A"',
        '"A',
        "",
        "A B",
        "été",
        "ÉTÉ",
        '"été"',
    ]
    for source in ("snowflake", "s3", "athena", "abfss"):
        for comp in rules.datasets[source].components.values():
            for value in values:
                expected = (
                    (value if comp.quoting is None else comp.quoting.canonical(value))
                    if comp.written(value) == value
                    else None
                )
                assert comp.stored(value) == expected, (source, comp.name, value)


@pytest.mark.parametrize(
    "pattern", [r"[\p{L}\p{Pd}$ ]{1,9}", r"\p{Lu}x?", r"[^\P{N}]+", r"[]\pN]", r"a\\p{L}"]
)
def test_the_ascii_twin_of_a_regex_only_pattern_matches_alike(pattern: str) -> None:
    twin, full = compile_ascii(pattern), regex.compile(pattern, regex.V0)
    assert twin is not None
    chars = [chr(x) for x in range(128)]
    for text in [
        *chars,
        *(a + b for a in chars[32::3] for b in chars[33::4]),
        "Ab-$ z",
        "a\\p{L}",
        "x" * 10,
    ]:
        assert bool(twin.fullmatch(text)) == bool(full.fullmatch(text)), (pattern, text)
    assert compile_ascii(r"(?i)\p{Lu}") is None and compile_ascii(r"[[:alpha:]]\p{L}") is None


def test_bigquery_uses_the_ascii_twin_and_still_takes_unicode_tables(rules: NamingRules) -> None:
    form = rules.datasets["bigquery"].forms[0]
    assert form.hot_ascii is not None
    for table in ("t", "t-b c", "t!", "t.x", "T_9$", "x" * 1025):
        joined = "bigquery\x00my-project-1.d." + table
        assert (form.hot_ascii.fullmatch(joined) is None) == (
            form.hot_re.fullmatch(joined) is None
        ), table
        parsed = rules.parse_dataset("bigquery", "my-project-1.d." + table)
        assert parsed.ok == (form.hot_re.fullmatch(joined) is not None)
    assert rules.parse_dataset("bigquery", "my-project-1.d.tä b").components["table"] == "tä b"
    # a snowman is no letter
    assert not rules.parse_dataset("bigquery", "my-project-1.d.t\u2603").ok


@pytest.mark.parametrize("pattern", ["(a+)+b", r"(\w+\s?)+$", r"(a)\1", "(?P<x>a)", "[", "a" * 600])
def test_dangerous_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(PatternProblem):
        check_pattern(pattern)


def test_a_hostile_pattern_in_a_reviewed_folder_never_hangs(tmp_path: Path) -> None:
    folder = tmp_path / "spec" / "naming"
    source = json.loads((Path("naming/datasets/kafka/kafka.json")).read_text())
    # exponential on a backtracking engine
    source["components"]["topic"]["pattern"] = "(a|aa)+(b+)+c"
    (folder / "datasets" / "kafka").mkdir(parents=True)
    (folder / "datasets" / "kafka" / "kafka.json").write_text(json.dumps(source))
    start = time.monotonic()
    rules = load_rules(DirSnapshot(tmp_path), "spec/naming")
    result = rules.parse_dataset("kafka://h:9092", "a" * 5000 + "!")
    assert time.monotonic() - start < 5
    # and what the broken pattern left unchecked (the file's examples), said
    assert [p.rule for p in rules.problems] == ["naming/unsafe-pattern", "naming/unchecked"]
    assert not result.ok


# check_pattern passes these (no nested quantifier); exponential on ``regex`` and ``re`` alike
OVERLAPPING = "(?:[a-z]|a)+"


def _reviewed(tmp_path: Path, path: str, edit: Callable[[Any], None]) -> NamingRules:
    """The bundled naming files as a reviewed repository's, one of them edited."""
    shutil.copytree(ROOT / "naming", tmp_path / "naming")
    doc = json.loads((tmp_path / "naming" / path).read_text())
    edit(doc)
    (tmp_path / "naming" / path).write_text(json.dumps(doc))
    rules = load_rules(DirSnapshot(tmp_path), "naming")
    assert rules.problems == ()
    return rules


def test_a_hostile_decision_pattern_is_bounded_on_every_path(tmp_path: Path) -> None:
    """Before, a decision's namespacePattern was matched with no time limit: covers_namespace (the
    regression's verdict on every failing identifier) and the diagnosis ran for ages."""
    rules = _reviewed(
        tmp_path,
        "decisions.json",
        lambda d: d["namespaces"].append(
            {
                "namespacePattern": "x:" + OVERLAPPING,
                "reason": "x is not a scheme",
                "examples": [{"namespace": "x:b", "name": "t"}],
            }
        ),
    )
    namespace = "x:" + "a" * 26 + "!"
    start = time.process_time()  # regex's limit is CPU time
    assert rules.covers_namespace(namespace)  # a failure, never unknown
    result = rules.parse_dataset(namespace, "t")
    assert time.process_time() - start < 3
    assert not result.ok and result.reason == SLOW_PATTERN  # decided when the rules were built
    assert judge(rules, Found("dataset", namespace, "t"))[0] == "invalid"
    # decided once, it never runs again, even where one match would be quick (every engine agrees)
    assert rules.parse_dataset("x:b", "t").reason == SLOW_PATTERN


def _slow_decision(d: dict[str, Any]) -> None:
    d["namespaces"].append(
        {
            "namespacePattern": "x:" + OVERLAPPING,
            "reason": "x is not a scheme",
            "examples": [{"namespace": "x:b", "name": "t"}],
        }
    )


def test_a_slow_pattern_gets_the_same_verdict_on_every_engine(tmp_path: Path) -> None:
    """The per-match limit is time: a match near it ran out on one engine and not on another (a
    Spark worker rebuilt the rules and timed each match again on its own machine). Which patterns
    are too slow is decided once where the rules are built, by probing, and ships with them: a
    worker whose matches would all finish (a 60 s limit here) gives the driver's verdict."""
    rules = _reviewed(tmp_path, "decisions.json", _slow_decision)
    namespace = "x:" + "a" * 24 + "!"  # seconds of backtracking: past 0.25 s, within 60 s
    driver = rules.parse_dataset(namespace, "t")
    state = rules.__getstate__()
    state["match_timeout"] = 60.0
    worker = NamingRules.__new__(NamingRules)
    worker.__setstate__(state)
    assert worker.parse_dataset(namespace, "t") == driver
    assert worker.covers_namespace(namespace) == rules.covers_namespace(namespace)
    assert pickle.loads(pickle.dumps(rules)).parse_dataset(namespace, "t") == driver
    assert driver.reason == SLOW_PATTERN


# each slow only on upper case: a lower-case probe fails at its first character
UPPER_SLOW: dict[str, tuple[str, Callable[[Any], None], str, str]] = {
    "component": (
        "datasets/postgres/postgres.json",
        lambda d: d["components"]["host"].update(pattern="(?:[a-zA-Z0-9.-]|AB?)+"),
        "postgres://" + "A" * 26 + "!:5432",
        "a.b.c",
    ),
    "quoting": (
        "datasets/snowflake/snowflake.json",
        lambda d: d["quoting"].update(unquoted="(?:[A-Z_]|AB?)+"),
        "snowflake://o-a",
        'DB.S."' + "A" * 26 + '!"',
    ),
    "decision": (
        "decisions.json",
        lambda d: d["namespaces"].append(
            {
                "namespacePattern": "x:(?:[a-zA-Z]|AB?)+",
                "reason": "x is not a scheme",
                "examples": [{"namespace": "x:b", "name": "t"}],
            }
        ),
        "x:" + "A" * 26 + "!",
        "t",
    ),
}


@pytest.mark.parametrize("where", sorted(UPPER_SLOW))
def test_a_pattern_slow_only_on_its_own_alphabet_is_decided(tmp_path: Path, where: str) -> None:
    """Before, the probes were lower case, ``.``, ``/`` and digits: a component, quoting or decision
    pattern slow only on upper case passed them, and an identifier reaching it ran out of time on
    one engine (the regression stopped: ``NamingTimeout``) where another could pass it. Each
    pattern is now probed with runs of its own characters, in both cases: decided too slow once,
    the same verdict on every engine."""
    from types import SimpleNamespace

    from bot.review.regression.compare import Comparator

    path, edit, namespace, name = UPPER_SLOW[where]
    rules = _reviewed(tmp_path, path, edit)
    assert rules.slow_forms or rules.slow_decisions
    result = rules.parse_dataset(namespace, name)
    assert not result.ok and result.reason == SLOW_PATTERN
    status = Comparator._naming_status(
        SimpleNamespace(naming=rules), Found("dataset", namespace, name)
    )  # type: ignore[arg-type]
    assert status is not None and status[0] == "fail"
    worker = pickle.loads(pickle.dumps(rules))
    assert worker.parse_dataset(namespace, name) == result


def test_a_probe_cut_short_by_the_reviews_budget_decides_nothing() -> None:
    """A probe's match takes at most what is left of the review's budget: before, a match cut short
    by it was taken for a pattern too slow (naming/slow-pattern, every identifier of the form
    invalid) on a review that had only run late. Now the budget's end is said (``BudgetSpent``:
    the review does not finish), never a pattern's verdict."""
    from bot.core import budget
    from bot.model.naming.slow import too_slow

    class RunsPastTheBudget:
        pattern = "a"

        def fullmatch(self, text: str, timeout: float) -> None:
            time.sleep(timeout + 0.05)
            raise TimeoutError("regex time out")

    with pytest.raises(budget.BudgetSpent), budget.within(0.05):
        too_slow([(RunsPastTheBudget(), "a" * 10)])


def test_a_decision_past_its_limit_undecided_is_neither_invalid_nor_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a decision's namespacePattern that ran out of time in ``covers_namespace`` made the
    namespace covered (invalid) where a faster machine, finishing the match, could find it not
    covered (unknown): a verdict by the machine's speed. Only a decision decided too slow covers it
    now; one past its limit here is no verdict (the regression does not finish)."""
    from types import SimpleNamespace

    from bot.model.naming import slow
    from bot.review.regression.compare import Comparator, NamingTimeout

    monkeypatch.setattr(slow, "too_slow", lambda probes: None)  # a pattern the probes miss
    rules = _reviewed(tmp_path, "decisions.json", _slow_decision)
    namespace = "x:" + "a" * 26 + "!"
    with pytest.raises(TimeoutError):
        rules.covers_namespace(namespace)
    found = Found("dataset", namespace, "t")
    monkeypatch.setattr(rules, "parse_dataset", lambda n, m: ParseResult(False, reason="no form"))
    assert judge(rules, found) == ("invalid", ParseResult(False, reason=TOO_SLOW))
    with pytest.raises(NamingTimeout):
        Comparator._naming_status(SimpleNamespace(naming=rules), found)  # type: ignore[arg-type]


def test_a_match_past_its_limit_undecided_is_no_regression_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match that ran out of time on this engine with a pattern the probes did not find slow:
    before, the regression took its TOO_SLOW as a
    failure another machine could pass; now the regression does not finish (it never passes)."""
    from types import SimpleNamespace

    from bot.model.naming import slow
    from bot.review.regression.compare import Comparator, NamingTimeout

    monkeypatch.setattr(slow, "too_slow", lambda probes: None)  # a pattern the probes miss
    rules = _reviewed(
        tmp_path,
        "datasets/snowflake/snowflake.json",
        lambda d: d["quoting"].update(unquoted="(?:[A-Z_]|AB?)+"),
    )
    assert not rules.slow_forms and not rules.slow_decisions
    found = Found("dataset", "snowflake://o-a", 'DB.S."' + "A" * 26 + '!"')
    with pytest.raises(NamingTimeout):
        Comparator._naming_status(SimpleNamespace(naming=rules), found)  # type: ignore[arg-type]


def test_a_hostile_quoting_pattern_is_bounded_on_the_hot_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, quoting's ``unquoted`` ran on the stdlib engine with no limit after a form matched:
    a quoted part it could not match took ages (here one the probes miss: they find it now)."""
    from bot.model.naming import slow

    monkeypatch.setattr(slow, "too_slow", lambda probes: None)
    rules = _reviewed(
        tmp_path,
        "datasets/snowflake/snowflake.json",
        lambda d: d["quoting"].update(unquoted="(?:[A-Z_]|AB?)+"),
    )
    start = time.process_time()  # regex's limit is CPU time
    result = rules.parse_dataset("snowflake://o-a", 'DB.S."' + "A" * 26 + '!"')
    assert time.process_time() - start < 3
    assert not result.ok and result.reason == TOO_SLOW
    assert rules.parse_dataset("snowflake://o-a", 'DB.S."t x"').components["table"] == "t x"


def test_rules_for_prefers_the_reviewed_repository(tmp_path: Path) -> None:
    bundled = rules_for(MemorySnapshot({"README.md": b"x"}), Config())
    assert len(bundled.datasets) == TABLE_SOURCES
    only = json.loads(Path("naming/datasets/hive/hive.json").read_text())
    snapshot = MemorySnapshot({"conf/naming/datasets/hive/hive.json": json.dumps(only).encode()})
    reviewed = rules_for(snapshot, with_paths(Config(), naming="conf/naming"))
    assert list(reviewed.datasets) == ["hive"] and reviewed.parse_dataset("hive://h:1", "d.t").ok


def test_every_identifier_in_the_real_events_is_classified(
    rules: NamingRules, corpus: Path
) -> None:
    counts = {"valid": 0, "invalid": 0, "unknown": 0, "placeholder": 0}
    for folder in ("integration", "proxy", "spec/tests"):
        for path in sorted((corpus / folder).rglob("*.json")):
            for event in read_events(path):
                for judged in judge_event(rules, event):
                    result = judged.result
                    assert result.ok or result.reason, (path, judged.found)
                    assert result.ok == (judged.verdict == "valid")
                    counts[judged.verdict] += 1
    assert counts["valid"] > 1400 and counts["invalid"] > 100
    # dbt, Hive, Flink jobs; test placeholders
    assert counts["unknown"] > 400 and counts["placeholder"] == 23
    decided = {
        ("spark://localhost:10000", "default.customers"): "Spark Thrift server",
        ("duckdb://duckdb.db", "duckdb.raw_data.fact_orders"): "DuckDB",
        ("file:/tmp/delta", "default.events"): "warehouse location",
        ("snowflake://ASDF1234.eu-central-1.aws", "DEMO_DB.public.customers"): "write PUBLIC",
    }
    for (namespace, name), phrase in decided.items():
        assert phrase in (rules.parse_dataset(namespace, name).reason or "")


def test_hot_patterns_read_posix_classes_as_the_regex_engine_does() -> None:
    import regex

    from bot.model.naming.patterns import compile_hot

    for pattern, text in (("[[:alpha:]]+", "abc"), ("[[:alpha:]]+", "a:["), ("x[:digit:]", "x:")):
        expected = regex.compile(pattern, regex.V0).fullmatch(text) is not None
        assert (compile_hot(pattern).fullmatch(text) is not None) == expected, (pattern, text)


def test_a_naming_folder_is_read_without_walking_its_siblings(tmp_path: Path) -> None:
    """The rules of one folder come from that folder alone: a sibling the process may not read (a
    container build's storage beside the checkout's naming/) or a large one is never walked."""
    from bot.cli.naming import _rules

    shutil.copytree(ROOT / "naming", tmp_path / "naming")
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "x.json").write_text("{}", encoding="utf-8")
    snapshot = DirSnapshot(tmp_path, only="naming")
    assert snapshot.files() and all(p.startswith("naming/") for p in snapshot.files())
    assert (
        snapshot.read("sibling/x.json") is None
        and DirSnapshot(tmp_path).read("sibling/x.json") == b"{}"
    )
    assert DirSnapshot(tmp_path, only="missing").files() == []
    rules = _rules(str(tmp_path / "naming"))
    assert not rules.problems and (len(rules.datasets), len(rules.jobs)) == (
        len(load_rules().datasets),
        len(load_rules().jobs),
    )


def test_the_bundled_rules_take_a_small_part_of_the_compile_budget(rules: NamingRules) -> None:
    """What every pattern of the bundled files compiles to (each form three times: namespace, name,
    both), against ``MAX_TOTAL_UNITS``: room for a registry with five times as many sources."""
    from bot.core.regex_size import units
    from bot.model.naming.patterns import MAX_TOTAL_UNITS

    sources = [*rules.datasets.values(), *rules.jobs.values()]
    taken = sum(units(c.pattern) or 0 for s in sources for c in s.components.values())
    taken += sum(3 * (units(f.both_source) or 0) for s in sources for f in s.forms)
    print(f"\nbundled naming rules: {taken:,} of {MAX_TOTAL_UNITS:,} compiled units")
    assert 0 < taken < MAX_TOTAL_UNITS / 5
    assert not [p for p in rules.problems if p.rule == "naming/unsafe-pattern"]
