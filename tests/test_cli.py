"""The command line on the real corpus: scopes, formats, exit codes, and git plumbing on a bare
clone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.review.checks import all_rules
from tests import registry_cases as rc
from tests.gitrepo import Repo

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def pr_repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Repo:
    """The corpus with a PR adding the acme participant whose example has a type error."""
    repo = Repo.from_folder(corpus, tmp_path_factory.mktemp("cli") / "repo")
    rc.add_good(repo)
    repo.edit_json(rc.EXAMPLE, lambda v: v["acme_widget"].update(widgetId=7))
    repo.commit("add acme")
    return repo


def test_all_on_the_real_corpus_has_no_errors_and_shows_legacy_as_warnings(corpus: Path) -> None:
    code, out, _ = run_cli("check", str(corpus), "--all", "--format", "json")
    assert code == 0
    report = json.loads(out)
    severities = {f["severity"] for f in report["findings"]}
    assert severities == {"warning"}
    legacy = {(f["rule"], f["path"]) for f in report["findings"]}
    assert ("entry/legacy-key", "spec/registry/core/registry.json") in legacy
    assert (
        "facets/key-form",
        "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json",
    ) in legacy
    assert report["summary"]["verdict"] == "success"
    assert set(report["summary"]["entries"]) == {
        "core",
        "gcp:composer",
        "gcp:dataproc",
        "gcp:lineage",
        "iceberg",
    }
    for finding in report["findings"]:
        assert set(finding) >= {
            "rule",
            "severity",
            "path",
            "line",
            "column",
            "pointer",
            "message",
            "hint",
        }


def test_strict_makes_the_unmet_rules_errors(corpus: Path) -> None:
    assert (
        main(["check", str(corpus), "--all", "--strict", "--format", "json", "-o", "/dev/null"])
        == 1
    )


def test_pr_review_from_a_bare_clone(pr_repo: Repo, tmp_path: Path) -> None:
    bare = pr_repo.bare_clone(tmp_path / "bare.git")
    code, out, _ = run_cli(
        "check",
        str(bare),
        "--base",
        "main",
        "--head",
        "pr",
        "--author",
        "alice",
        "--format",
        "json",
    )
    assert code == 1
    errors = [f for f in json.loads(out)["findings"] if f["severity"] == "error"]
    assert [
        (f["rule"], f["path"], f["pointer"]) for f in errors if f["rule"].startswith("examples/")
    ] == [("examples/invalid", rc.EXAMPLE, "/acme_widget/widgetId")]


def test_text_output_groups_by_entry_with_locations(pr_repo: Repo) -> None:
    code, out, _ = run_cli(
        "check", str(pr_repo.path), "--base", "main", "--head", "pr", "--author", "alice"
    )
    assert code == 1
    assert "== acme" in out
    line = rc.line_of(pr_repo.path / rc.EXAMPLE, '"widgetId"')
    assert f"{rc.EXAMPLE}:{line}:" in out and "examples/invalid" in out
    assert out.rstrip().splitlines()[-1].startswith("FAILURE:")


def test_sarif_output(pr_repo: Repo) -> None:
    code, out, _ = run_cli(
        "check", str(pr_repo.path), "--base", "main", "--author", "alice", "--format", "sarif"
    )
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert all(r["ruleId"] == rule_ids[r["ruleIndex"]] for r in run["results"])
    invalid = [r for r in run["results"] if r["ruleId"] == "examples/invalid"]
    assert invalid[0]["level"] == "error"
    assert invalid[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == rc.EXAMPLE


def test_markdown_output_is_what_the_bot_posts(pr_repo: Repo) -> None:
    code, out, _ = run_cli(
        "check", str(pr_repo.path), "--base", "main", "--author", "alice", "--format", "markdown"
    )
    assert code == 1
    assert out.startswith("## OpenLineage registry ❌ failed")
    assert "`examples/invalid`" in out


def run_into_closed_pipe(*args: str) -> tuple[int, str]:
    """The command with its stdout a pipe nobody reads (``registry-bot ... | true``): every write
    fails with EPIPE. Block-buffered, as users run it (this machine's shells set
    ``PYTHONUNBUFFERED``): a short output then meets the closed pipe only when flushed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bot", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


def test_a_closed_stdout_keeps_the_verdict(pr_repo: Repo, corpus: Path) -> None:
    """A reader that stops early (``| head -1``, ``| true``) never turns a failing review into a
    success: the exit code is the verdict's, also for a report written to ``-o /dev/stdout``."""
    failing = ("check", str(pr_repo.path), "--base", "main", "--head", "pr", "--color", "never")
    for args in (failing, (*failing, "--format", "json", "-o", "/dev/stdout")):
        code, err = run_into_closed_pipe(*args)
        assert code == 1, err
        assert err == ""  # no traceback, no "Exception ignored" from the flush at exit
    # a passing review and a listing still exit 0
    assert run_into_closed_pipe("check", str(corpus), "--all") == (0, "")
    assert run_into_closed_pipe("rules") == (0, "")


@pytest.mark.parametrize(
    "args",
    [
        ("check", "/nonexistent/repo", "--all"),
        ("check", ".", "--base", "no-such-revision"),
        ("check", ".", "--all", "--format", "yaml"),
        ("check", "."),
        ("nosuchcommand",),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    code, _, err = run_cli(*args)
    assert code == 2
    assert err.strip()


def test_every_rule_is_documented_in_the_readme() -> None:
    from bot.cli.commands.rules import rules_markdown
    from bot.outputs.readme import block

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert block(readme, "rules") == rules_markdown(), "run: python -m bot rules --update-readme"
    assert [rule for rule in all_rules() if f"`{rule}`" not in readme] == []
