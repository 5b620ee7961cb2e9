"""Every rule id the bot reports has a case: a test that makes the rule fire. This file holds the
cases that no other test had; ``test_every_rule_has_a_case`` keeps it that way for new rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.config import Config, ReviewPolicy
from bot.core.findings import Finding
from bot.core.snapshot import DirSnapshot
from bot.model.naming import slow
from bot.review.checks import all_rules
from bot.review.compose import ReviewRequest, run_review
from bot.review.input import ReviewInput
from tests.test_naming_checks import _commit, _edit, _repo, _review

TESTS = Path(__file__).resolve().parent


def test_every_rule_has_a_case() -> None:
    """Each rule id appears, quoted, in some test (this file included, and the planted-defect kinds
    that ``test_mutations`` asserts fire): a rule nobody tests is a rule that can stop firing
    unnoticed."""
    text = "".join(
        p.read_text(encoding="utf-8")
        for p in TESTS.rglob("test_*.py")
        if p.name != Path(__file__).name
    )
    # the planted kinds test_mutations runs
    text += (TESTS / "mutations.py").read_text(encoding="utf-8")
    text += Path(__file__).read_text(encoding="utf-8").split("# -- the cases", 1)[1]
    assert [rule for rule in all_rules() if f'"{rule}"' not in text] == []


# -- the cases -------------------------------------------------------------------------------------


def _naming_rules(tmp_path: Path, rel: str, change) -> set[str]:  # type: ignore[no-untyped-def]
    repo = _repo(tmp_path)
    _edit(repo, rel, change)
    _commit(repo, "change")
    return {f.rule for f in _review(repo)}


def test_duplicate_naming_id(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    naming = repo / "spec" / "naming" / "datasets"
    (naming / "postgres-copy").mkdir()
    (naming / "postgres-copy" / "postgres.json").write_text(
        (naming / "postgres/postgres.json").read_text()
    )
    _commit(repo, "a second file with the same id")
    assert "naming/duplicate-id" in {f.rule for f in _review(repo)}


def test_template_syntax(tmp_path: Path) -> None:
    def unbalanced(d: dict) -> None:  # type: ignore[type-arg]
        d["forms"][0]["name"] = "{database.{schema}.{table}"

    assert "naming/template-syntax" in _naming_rules(
        tmp_path, "datasets/postgres/postgres.json", unbalanced
    )


def test_unused_component(tmp_path: Path) -> None:
    def extra(d: dict) -> None:  # type: ignore[type-arg]
        d["components"]["cluster"] = {
            "description": "Never used.",
            "pattern": "[a-z]+",
            "expect": "a name",
        }

    assert "naming/unused-component" in _naming_rules(
        tmp_path, "datasets/postgres/postgres.json", extra
    )


def test_invalid_example_accepted(tmp_path: Path) -> None:
    def accepted(d: dict) -> None:  # type: ignore[type-arg]
        valid = d["examples"]["valid"][0]
        d["examples"]["invalid"][0].update(namespace=valid["namespace"], name=valid["name"])

    assert "naming/invalid-example-accepted" in _naming_rules(
        tmp_path, "datasets/postgres/postgres.json", accepted
    )


def test_decision_mismatch(tmp_path: Path) -> None:
    def valid_now(d: dict) -> None:  # type: ignore[type-arg]
        d["namespaces"][0]["examples"][0].update(namespace="postgres://db:5432", name="a.b.c")

    assert "naming/decision-mismatch" in _naming_rules(tmp_path, "decisions.json", valid_now)


def test_slow_pattern(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern past the match time bound (the bound made tiny: any pattern is then too slow)."""
    # the naming family's work (``bot.review.checks.naming`` runs it)
    monkeypatch.setattr(slow, "MATCH_TIMEOUT", 1e-9)
    monkeypatch.setattr(slow, "PROBE_LENGTH", 200_000)

    def touched(d: dict) -> None:  # type: ignore[type-arg]
        d["description"] += " (edited)"

    assert "naming/slow-pattern" in _naming_rules(
        tmp_path, "datasets/postgres/postgres.json", touched
    )


def _whole_tree(root: Path, config: Config | None = None) -> list[Finding]:
    return list(run_review(ReviewRequest(head=DirSnapshot(root), config=config)).findings)


def test_unreadable_file(tmp_path: Path) -> None:
    """A check that meets a file it cannot read safely stops with an error naming it (the engine's
    safety net; the built-in checks report their own ``*/unreadable`` rules)."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside.json"
    outside.write_text("{}")
    (tmp_path / "notes.json").symlink_to(outside)

    def reads_notes(review: ReviewInput) -> Iterator[Finding]:
        review.head.read("notes.json")
        yield from ()

    report = run_review(ReviewRequest(head=DirSnapshot(tmp_path), checks=(reads_notes,)))
    [finding] = report.findings
    assert (finding.rule, "outside the repository" in finding.message) == (
        "bot/unreadable-file",
        True,
    )


def test_incomplete_review(corpus: Path) -> None:
    spent = Config(review=ReviewPolicy(time_budget_seconds=0.000001))
    assert "bot/incomplete-review" in {f.rule for f in _whole_tree(corpus, spent)}
