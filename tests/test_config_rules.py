"""Rule ids in the configuration are checked against the checks that run: a custom check's rule can
be configured, an unknown id is reported and ignored while the rest of the configuration stays in
force, and the configuration does not import the checks."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

from bot.core.findings import Finding, Severity
from bot.core.snapshot import MemorySnapshot
from bot.review.compose import ReviewRequest, run_review
from bot.review.input import ReviewInput

RULES = {"custom/always": "A custom check's rule: one finding on every review."}
CONFIG = ".github/registry-bot.yml"


def check(review: ReviewInput) -> Iterator[Finding]:
    """A custom check as the worker's ``--checks MODULE:NAME`` loads it; this module declares its
    RULES."""
    yield Finding(rule="custom/always", severity=Severity.ERROR, path="README.md", message="always")


def reviewed(config: str) -> list[Finding]:
    tree = MemorySnapshot({CONFIG: config.encode(), "spec/registry/.keep": b""})
    return list(run_review(ReviewRequest(head=tree, checks=(check,))).findings)


def test_a_custom_checks_severity_override_applies() -> None:
    findings = reviewed("severity:\n  custom/always: notice\n")
    assert [(f.rule, f.severity) for f in findings] == [("custom/always", Severity.NOTICE)]


def test_an_unknown_rule_id_is_reported_and_the_rest_stays_in_force() -> None:
    findings = reviewed("severity:\n  custom/always: warning\n  facets/no-such-rule: notice\n")
    by_rule = {f.rule: f for f in findings}
    # the rest of the configuration applies
    assert by_rule["custom/always"].severity is Severity.WARNING
    assert "facets/no-such-rule" in by_rule["config/invalid"].message
    assert by_rule["config/invalid"].path == CONFIG


def test_the_built_in_checks_rules_are_known() -> None:
    tree = MemorySnapshot(
        {
            CONFIG: b"severity:\n  facets/prefix-key: warning\nverdict:\n  adoption_gaps: "
            b"[owners/missing-codeowners]\n",
            "spec/registry/.keep": b"",
        }
    )
    report = run_review(ReviewRequest(head=tree))
    assert "config/invalid" not in {f.rule for f in report.findings}


def test_the_configuration_does_not_import_the_checks() -> None:
    code = (
        "import sys; from bot.core.config import parse_config; "
        "parse_config('severity:\\n  custom/always: notice\\n', 'x'); "
        "print(sorted(m for m in sys.modules if m.startswith('bot.review.checks')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
