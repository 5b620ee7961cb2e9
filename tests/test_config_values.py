"""Configuration values YAML or a conversion refuses are ``config/invalid``, never a crash, and a
pull request writing a configuration that cannot be used fails, approved or not.

PyYAML raises a plain ``ValueError`` for ``2027-02-30``, ``float`` an ``OverflowError`` for a
5,000-digit number: ``check``, ``replay`` and the App's worker crashed on such a base-side file, and
a pull request introducing one passed (its head-side configuration was never read).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.changes import ChangeSet
from bot.core.config import ConfigError, load_config, parse_config
from bot.core.findings import State, Verdict
from bot.core.snapshot import DirSnapshot, GitSnapshot
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo

BROKEN = [
    "waivers:\n  - {rule: facets/suffix, path: spec/facets/X.json, pointer: '', reason: r, "
    "granted_by: '@OpenLineage/committers', expires: 2027-02-30}\n",
    "review: {max_inline_comments: .inf}\n",
    "review: {max_inline_comments: .nan}\n",
    "review: {time_budget_seconds: .nan}\n",
    f"review: {{time_budget_seconds: {'9' * 5000}}}\n",
    f"review: {{max_inline_comments: {'9' * 5000}}}\n",
    "review: {max_inline_comments: 1e400}\n",
]


@pytest.mark.parametrize("text", BROKEN)
def test_a_value_that_cannot_be_used_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_config(text, ".github/registry-bot.yml")


@pytest.mark.parametrize("text", BROKEN[:2])
def test_a_base_configuration_that_cannot_be_used_is_a_finding_and_the_defaults_apply(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/registry-bot.yml").write_text(text)
    config, findings = load_config(DirSnapshot(tmp_path))
    assert [f.rule for f in findings] == ["config/invalid"]
    assert config.review.max_inline_comments == type(config.review)().max_inline_comments


def test_a_change_writing_a_configuration_that_cannot_be_used_fails_even_approved(
    tmp_path: Path, corpus: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    codeowners = (repo.path / "CODEOWNERS").read_text().splitlines()
    owner = next(line.split()[1] for line in codeowners if line.startswith("* "))
    repo.change({".github/registry-bot.yml": BROKEN[0]})
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author="someone",
                approvers=frozenset({owner.removeprefix("@")}),
            )
        )
    unusable = [f for f in report.findings if f.rule == "config/invalid"]
    assert len(unusable) == 1 and unusable[0].state is State.NEW
    assert "day is out of range" in unusable[0].message
    assert not [f for f in report.findings if f.rule == "ownership/steering-file-change"]
    assert report.verdict is Verdict.FAILURE
