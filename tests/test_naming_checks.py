"""The naming checks run through the engine on real git repositories, and the naming CLI."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.changes import ChangeSet
from bot.core.snapshot import DirSnapshot, GitSnapshot
from bot.model.naming import bundled_folder
from bot.review.engine import review

ROOT = Path(__file__).resolve().parent.parent


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(bundled_folder(), repo / "spec" / "naming")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    _commit(repo, "base")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "pr"], check=True)
    return repo


def _commit(repo: Path, message: str) -> None:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        ],
        check=True,
    )


def _review(repo: Path) -> list:  # type: ignore[type-arg]
    from bot.review.checks import naming

    with GitSnapshot(repo, "main") as base, GitSnapshot(repo, "pr") as head:
        changes = ChangeSet.from_git(repo, base.commit, head.commit)
        return list(review(head=head, base=base, changes=changes, checks=[naming.check]).findings)


def _edit(repo: Path, rel: str, change) -> None:  # type: ignore[no-untyped-def]
    path = repo / "spec" / "naming" / rel
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_the_bundled_folder_passes_and_an_untouched_folder_is_skipped(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "README.md").write_text("x")
    _commit(repo, "unrelated")
    assert _review(repo) == []
    report = review(
        head=DirSnapshot(repo), checks=[importlib.import_module("bot.review.checks.naming").check]
    )
    assert report.findings == ()


def test_broken_examples_and_components_are_found_on_their_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)

    def break_postgres(d: dict) -> None:  # type: ignore[type-arg]
        d["examples"]["valid"][0]["name"] = "analytics.orders"
        d["examples"]["invalid"][0]["namespace"] = "postgres://db.example.com:5432"
        d["forms"][0]["name"] = "{database}.{schema}.{tabel}"

    def break_mysql(d: dict) -> None:  # type: ignore[type-arg]
        d["examples"]["valid"][0]["name"] = "shop.orders.extra"

    _edit(repo, "datasets/postgres/postgres.json", break_postgres)
    _edit(repo, "datasets/mysql/mysql.json", break_mysql)
    _commit(repo, "break")
    findings = _review(repo)
    rules = {(f.rule, f.path.rsplit("/", 1)[-1]) for f in findings}
    assert ("naming/undeclared-component", "postgres.json") in rules
    assert ("naming/round-trip", "mysql.json") in rules
    assert ("naming/docs-out-of-sync", "Naming.md") in rules
    undeclared = next(f for f in findings if f.rule == "naming/undeclared-component")
    text = (repo / "spec/naming/datasets/postgres/postgres.json").read_text().splitlines()
    assert (
        '"name": "{database}.{schema}.{tabel}"' in text[undeclared.line - 1]
        or "forms" in text[undeclared.line - 2]
    )


def test_duplicates_shared_schemes_ambiguity_and_hostile_patterns(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    naming = repo / "spec" / "naming"
    twin = json.loads((naming / "datasets/hive/hive.json").read_text())
    twin["id"] = "hive-two"
    twin["$id"] = twin["$id"].replace("/hive/", "/hive-two/").replace("hive.json", "hive-two.json")
    (naming / "datasets/hive-two").mkdir()
    (naming / "datasets/hive-two/hive-two.json").write_text(json.dumps(twin, indent=2))
    _edit(
        repo,
        "datasets/kafka/kafka.json",
        lambda d: d["components"]["topic"].__setitem__("pattern", "(a|aa)+(b+)+c"),
    )
    _edit(repo, "datasets/s3/s3.json", lambda d: d.__setitem__("id", "s3-renamed"))
    _commit(repo, "conflicts")
    rules = {f.rule for f in _review(repo)}
    assert {
        "naming/shared-scheme",
        "naming/ambiguous",
        "naming/unsafe-pattern",
        "naming/file-location",
    } <= rules


def test_slow_patterns_behind_a_literal_and_in_decisions_are_found(tmp_path: Path) -> None:
    """Before, the probes reached neither: a host pattern after ``postgres://`` and a decision's
    namespacePattern, both catastrophic yet passed by check_pattern, passed the naming check."""
    repo = _repo(tmp_path)
    overlapping = "(?:[a-z]|a)+"
    _edit(
        repo,
        "datasets/postgres/postgres.json",
        lambda d: d["components"]["host"].__setitem__("pattern", overlapping),
    )
    _edit(
        repo,
        "decisions.json",
        lambda d: d["namespaces"].append(
            {
                "namespacePattern": "x:" + overlapping,
                "reason": "x is not a scheme",
                "examples": [{"namespace": "x:b", "name": "t"}],
            }
        ),
    )
    assert main(["naming", "docs", "--dir", str(repo / "spec/naming")]) == 0
    _commit(repo, "slow patterns")
    slow = {(f.path, f.pointer) for f in _review(repo) if f.rule == "naming/slow-pattern"}
    assert slow == {
        ("spec/naming/datasets/postgres/postgres.json", "/forms/0"),
        ("spec/naming/decisions.json", "/namespaces/4/namespacePattern"),
    }


def test_schema_and_json_errors(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "spec/naming/datasets/teradata/teradata.json").write_text('{"id": "teradata",')
    _edit(repo, "datasets/trino/trino.json", lambda d: d.__setitem__("scheme", "Trino!"))
    _commit(repo, "bad files")
    findings = _review(repo)
    invalid = next(f for f in findings if f.rule == "naming/invalid-file")
    assert invalid.path.endswith("teradata.json") and "line 1" in invalid.message
    schema = next(f for f in findings if f.rule == "naming/schema")
    assert schema.pointer == "/scheme" and schema.line is not None and schema.line > 1


def test_docs_check_exits_1_when_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["naming", "docs", "--check"]) == 0
    folder = tmp_path / "naming"
    shutil.copytree(bundled_folder(), folder)
    (folder / "Naming.md").write_text("stale\n")
    assert main(["naming", "docs", "--check", "--dir", str(folder)]) == 1
    assert main(["naming", "docs", "--dir", str(folder)]) == 0
    assert main(["naming", "docs", "--check", "--dir", str(folder)]) == 0


def test_naming_check_reads_json_arrays_and_lines(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = {
        "eventType": "START",
        "job": {
            "namespace": "airflow-prod",
            "name": "etl.load",
            "facets": {"jobType": {"integration": "AIRFLOW"}},
        },
        "inputs": [{"namespace": "postgres://db:5432", "name": "a.b.c"}],
        "outputs": [
            {
                "namespace": "s3://bucket-a",
                "name": "out/x",
                "facets": {
                    "symlinks": {"identifiers": [{"namespace": "hive://h:9083", "name": "d.t"}]}
                },
            }
        ],
    }
    lines = tmp_path / "events.jsonl"
    lines.write_text(json.dumps(good) + "\n\n" + json.dumps(good) + "\n")
    assert main(["naming", "check", str(lines)]) == 0
    assert "8 identifiers in 2 events: 0 invalid" in capsys.readouterr().out
    assert (
        main(
            [
                "naming",
                "check",
                "--format",
                "json",
                str(corpus / "integration/common/tests/dbt/spark/thrift/result.json"),
            ]
        )
        == 1
    )
    out = json.loads(capsys.readouterr().out)
    spark = [
        i for e in out["events"] for i in e["identifiers"] if i["namespace"].startswith("spark://")
    ]
    assert spark and all(not i["ok"] and "Thrift" in i["reason"] for i in spark)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    # unreadable input: a usage error, as the README says
    assert main(["naming", "check", str(broken)]) == 2
    assert main(["naming", "check", str(tmp_path / "missing.json")]) == 2


def test_the_module_runs_as_a_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "naming", "docs", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_every_broken_form_is_said_and_what_was_not_checked_is_unchecked(tmp_path: Path) -> None:
    """On a copy of a real naming file (Snowflake, two forms): before, the loader stopped at the
    first broken form (the second form's problem was never said), and the file's examples went
    unchecked without a word. Both forms' problems are findings, and one naming/unchecked says what
    was not checked."""
    repo = _repo(tmp_path)

    def break_both(d: dict) -> None:  # type: ignore[type-arg]
        d["forms"][0]["name"] = "{database}.{schema}.{tabel}"
        d["forms"][1]["namespace"] = "snowflake://{accountLocator"
        d["examples"]["valid"][0]["name"] = "not.a.valid.snowflake.name"

    _edit(repo, "datasets/snowflake/snowflake.json", break_both)
    _commit(repo, "break two forms")
    found = {
        (f.rule, f.pointer)
        for f in _review(repo)
        if f.path.endswith("snowflake.json") and f.rule != "naming/docs-out-of-sync"
    }
    assert ("naming/undeclared-component", "/forms/0") in found
    assert ("naming/template-syntax", "/forms/1/namespace") in found
    assert ("naming/unchecked", "") in found


def test_a_spent_pattern_budget_stays_pre_existing_when_another_file_takes_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget's message counts what the other files' patterns took: before, a pattern added
    in an unrelated file changed it, and a pre-existing naming/unsafe-pattern became new. Its
    subject leaves the count out: it stays pre-existing."""
    from bot.core.findings import State
    from bot.model.naming import loader
    from bot.model.naming.patterns import UnitBudget

    probe = UnitBudget()
    monkeypatch.setattr(loader, "UnitBudget", lambda: probe)
    loader.build_sources(
        (
            (str(p.relative_to(bundled_folder().parent)), json.loads(p.read_text()))
            for p in sorted(bundled_folder().rglob("*.json"))
        ),
        "naming",
        None,
    )
    taken = probe.total - probe.left
    # the bundled files' patterns, but the last units: the last pattern does not fit
    monkeypatch.setattr(loader, "UnitBudget", lambda: UnitBudget(taken - 1))
    repo = _repo(tmp_path)
    _edit(  # an unrelated file (sorted first) takes more
        repo,
        "datasets/abfss/abfss.json",
        lambda d: d["components"]["container"].update(
            pattern="[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])(?:_[a-z0-9]{1,20})?"
        ),
    )
    _commit(repo, "a longer pattern elsewhere")
    spent = [f for f in _review(repo) if f.rule == "naming/unsafe-pattern" and "taken" in f.message]
    assert spent
    at_base = [f for f in spent if f.state is State.UNCHANGED]
    assert at_base, [(f.path, f.pointer, f.state, f.message) for f in spent]


def test_a_file_failing_its_base_schema_says_the_rest_was_not_checked(tmp_path: Path) -> None:
    """A naming file that fails NamingBase.json on the base (a member the schema does not allow):
    before, it was skipped whole after its pre-existing naming/schema finding, so a change
    breaking one of its examples passed unjudged. What the file holds beyond the schema is one
    naming/unchecked (never pre-existing), and the change fails."""
    from bot.core.findings import Severity, State

    repo = _repo(tmp_path)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    _edit(repo, "datasets/postgres/postgres.json", lambda d: d.update(owner="data team"))
    _commit(repo, "a member the base schema does not allow")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "pr"], check=True)

    def break_example(d: dict) -> None:  # type: ignore[type-arg]
        d["examples"]["valid"][0]["name"] = "not a postgres name"

    _edit(repo, "datasets/postgres/postgres.json", break_example)
    _commit(repo, "an example the parser rejects")
    found = [f for f in _review(repo) if f.path.endswith("postgres.json")]
    new = [f for f in found if f.state is State.NEW and f.severity is Severity.ERROR]
    assert [f.rule for f in new] == ["naming/unchecked"], found
    assert "not checked" in new[0].message
    assert [f.state for f in found if f.rule == "naming/schema"] == [State.UNCHANGED]
