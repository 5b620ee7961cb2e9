"""Hostile input gives a finding, never a crash or a hang."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.changes import ChangeSet
from bot.core.config import Config, load_config
from bot.core.findings import Report
from bot.core.jsondoc import MAX_DEPTH, JsonDoc, JsonProblem
from bot.core.snapshot import DirSnapshot, GitSnapshot, MemorySnapshot, UnsafePath
from bot.review.engine import ReviewContext, review
from tests import registry_cases as rc
from tests.gitrepo import Repo


def rules(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


@pytest.fixture
def tree(corpus_copy: Path) -> Path:
    for path, content in rc.good_files().items():
        target = corpus_copy / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return corpus_copy


def strict(tree: Path) -> Report:
    return review(head=DirSnapshot(tree), context=ReviewContext(strict=True))


def test_invalid_utf8_is_reported_on_its_line(tree: Path) -> None:
    (tree / rc.ENTRY / "registry.json").write_bytes(
        b'{\n  "producer": {\n    "root_doc_URL": "\xff"\n  }\n}\n'
    )
    (finding,) = [f for f in strict(tree).findings if f.rule == "entry/unreadable"]
    assert (finding.line, finding.column) == (3, 22)
    assert "not valid UTF-8" in finding.message


def test_a_50_mb_file_is_refused_without_parsing(tree: Path) -> None:
    with (tree / rc.FACET).open("w") as handle:
        handle.write('{"padding": "' + "x" * (50 * 1024 * 1024) + '"}')
    (finding,) = [f for f in strict(tree).findings if f.rule == "facets/unreadable"]
    assert "over the 10,485,760-byte limit" in finding.message


def test_json_nested_100000_levels(tree: Path) -> None:
    (tree / rc.EXAMPLE).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (finding,) = [f for f in strict(tree).findings if f.rule == "examples/unreadable"]
    assert "nested too deeply" in finding.message


def test_json_just_past_the_depth_limit_is_refused_and_at_it_accepted() -> None:
    JsonDoc.parse("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(JsonProblem, match="nested too deeply"):
        JsonDoc.parse("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_catastrophic_pattern_is_decided_in_linear_time_and_named(tree: Path) -> None:
    """jsonschema-rs matches with the linear-time ``regex`` crate, decides and words the failure;
    the pure-Python validator, which would have to stop the match (tests/test_hostile_regex.py),
    is not needed."""
    schema = json.loads((tree / rc.FACET).read_text(encoding="utf-8"))
    schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]["properties"]["widgetId"]["pattern"] = (
        "^(a|aa)+$"
    )
    (tree / rc.FACET).write_text(json.dumps(schema), encoding="utf-8")
    example = json.loads((tree / rc.EXAMPLE).read_text(encoding="utf-8"))
    example["acme_widget"]["widgetId"] = "a" * 60 + "b"
    (tree / rc.EXAMPLE).write_text(json.dumps(example), encoding="utf-8")
    # one-line JSON
    found = [f for f in strict(tree).findings if f.path == rc.EXAMPLE and f.rule != "format/json"]
    assert [f.rule for f in found] == ["examples/invalid"]
    assert "does not match '^(a|aa)+$'" in found[0].message


def test_symlink_outside_the_repository_is_not_followed(tree: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(
        '{"producer": {"root_doc_URL": "https://leak.example.com"}}', encoding="utf-8"
    )
    target = tree / rc.ENTRY / "registry.json"
    target.unlink()
    target.symlink_to(secret)
    (finding,) = [f for f in strict(tree).findings if f.rule == "entry/unreadable"]
    assert "outside the repository" in finding.message
    assert "leak" not in finding.message


def test_check_all_on_a_tree_with_a_symlink_names_it_without_a_traceback(
    tree: Path, tmp_path: Path
) -> None:
    """Finding (issue 19): ``--all`` printed an ``UnsafePath`` traceback beside its finding (owners
    and format asked the size of the link, which raised), and two ``bot/internal-error``
    findings."""
    target = tree / rc.ENTRY / "registry.json"
    target.unlink()
    target.symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "bot", "check", "--all", str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parent.parent,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "UnsafePath" not in done.stdout + done.stderr
    assert "error entry/unreadable registry.json cannot be read" in done.stdout
    assert "outside the repository" in done.stdout and "bot/internal-error" not in done.stdout


def test_symlink_in_git_is_not_followed(tmp_path: Path, corpus: Path) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    rc.add_good(repo)
    repo.delete(rc.EXAMPLE)
    (repo.path / rc.EXAMPLE).symlink_to("/etc/passwd")
    repo.commit()
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = review(
            head=head,
            base=base,
            changes=ChangeSet.from_git(repo.path, "main", "pr"),
            context=ReviewContext(author="alice"),
        )
    (finding,) = [f for f in report.findings if f.rule == "examples/unreadable"]
    assert "symlink" in finding.message and "root:" not in finding.message


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "spec/../../x"])
def test_paths_with_dotdot_are_refused(corpus: Path, path: str) -> None:
    with pytest.raises(UnsafePath):
        DirSnapshot(corpus).read(path)
    with pytest.raises(UnsafePath):
        MemorySnapshot({path: b"{}"})


def test_config_paths_leaving_the_repository_are_refused() -> None:
    snapshot = MemorySnapshot({".github/registry-bot.yml": b"paths:\n  registry: ../../etc\n"})
    config, findings = load_config(snapshot)
    assert config.paths.registry == Config().paths.registry
    assert [f.rule for f in findings] == ["config/invalid"]


def test_relative_ref_climbing_out_resolves_to_nothing(tree: Path) -> None:
    schema = json.loads((tree / rc.FACET).read_text(encoding="utf-8"))
    schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]["properties"]["x"] = {
        "$ref": "../../../../etc/passwd"
    }
    (tree / rc.FACET).write_text(json.dumps(schema), encoding="utf-8")
    assert "facets/unresolved-ref" in rules(strict(tree))


def test_a_crashing_check_becomes_a_finding_and_the_others_still_run(corpus: Path) -> None:
    def broken(_: object) -> list[object]:
        raise ZeroDivisionError("boom")

    from bot.review.checks import entry

    report = review(head=DirSnapshot(corpus), checks=(broken, entry.check))  # type: ignore[arg-type]
    assert "bot/internal-error" in rules(report)
    assert "entry/legacy-key" in rules(report)
    assert report.has_errors
