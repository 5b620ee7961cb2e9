"""Future lints: a rule announced with the day it becomes an error, judged by the review's (fixed)
clock."""

from __future__ import annotations

import datetime
from pathlib import Path

from bot.core.config import ADOPTION_GAPS, parse_config
from bot.core.findings import Report, Severity, Verdict
from bot.core.snapshot import DirSnapshot
from bot.review.compose import ReviewRequest, run_review

DUE = datetime.date(2027, 3, 1)


def configure(tree: Path, text: str) -> None:
    (tree / ".github").mkdir(exist_ok=True)
    (tree / ".github" / "registry-bot.yml").write_text(text, encoding="utf-8")


def whole_tree(tree: Path, today: datetime.date) -> Report:
    return run_review(ReviewRequest(head=DirSnapshot(tree), today=today))


def test_a_future_lint_is_a_warning_saying_so_until_its_day_then_an_error(
    corpus_copy: Path,
) -> None:
    # a rule today's registry does not meet: a warning with --all, whatever the day
    rule = ADOPTION_GAPS[1]
    plain = [f for f in whole_tree(corpus_copy, DUE).findings if f.rule == rule]
    assert plain and all(
        f.severity is Severity.WARNING and "becomes an error" not in f.message for f in plain
    )
    configure(corpus_copy, f"severity:\n  {rule}: {{becomes_error: {DUE.isoformat()}}}\n")

    before = whole_tree(corpus_copy, DUE - datetime.timedelta(days=1))
    announced = [f for f in before.findings if f.rule == rule]
    assert len(announced) == len(plain)
    assert all(
        f.severity is Severity.WARNING and f"becomes an error on {DUE.isoformat()}" in f.message
        for f in announced
    )
    assert before.verdict is Verdict.SUCCESS

    on_the_day = whole_tree(corpus_copy, DUE)
    due = [f for f in on_the_day.findings if f.rule == rule]
    assert len(due) == len(plain) and all(f.severity is Severity.ERROR for f in due)
    assert on_the_day.verdict is Verdict.FAILURE
    section = next(s for s in on_the_day.sections if s.title == "Severity overrides")
    assert section.data["becomes_error"] == {rule: DUE.isoformat()}


def test_a_future_lint_needs_a_date_and_a_known_rule(corpus_copy: Path) -> None:
    configure(corpus_copy, "severity:\n  examples/missing: {becomes_error: someday}\n")
    report = whole_tree(corpus_copy, DUE)
    assert any(f.rule == "config/invalid" and "becomes_error" in f.message for f in report.findings)
    configure(corpus_copy, "severity:\n  no/such-rule: {becomes_error: 2027-01-01}\n")
    report = whole_tree(corpus_copy, DUE)
    assert any(f.rule == "config/invalid" and "no/such-rule" in f.message for f in report.findings)


def test_yaml_dates_and_quoted_dates_read_the_same() -> None:
    unquoted = parse_config("severity:\n  a/b: {becomes_error: 2027-01-02}\n", "x")
    quoted = parse_config("severity:\n  a/b: {becomes_error: '2027-01-02'}\n  c/d: error\n", "x")
    assert unquoted.becomes_error == quoted.becomes_error == (("a/b", datetime.date(2027, 1, 2)),)
    assert quoted.severity == (("c/d", "error"),)
