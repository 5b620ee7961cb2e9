"""Fairness on the real history: every merged OpenLineage commit replayed as the pull request it
was.

Maintainers merged every one of these commits, so an error the bot raises on one is either a defect
that commit introduced, a rule of the registry proposal the history predates (the adoption gaps:
listed in ``bot.core.config.ADOPTION_GAPS`` and explained in docs/fairness.md), or a false alarm.
The defects the commits introduced were found by reading their diffs; they are listed below with the
rule that must catch each. Everything else must pass.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.core.config import ADOPTION_GAPS, Config, VerdictPolicy
from bot.review.history import CommitReview, replay
from tests.conftest import SHARED

# a sweep of the real history: not traced by coverage (tests/conftest.py)
pytestmark = pytest.mark.no_cover

BUNDLE = SHARED / "corpus/openlineage-history/openlineage-spec-history.bundle"

# Pull request number (or the whole subject of a commit that names none) -> rules that must block
# it: the defects it introduced (docs/fairness.md).
KNOWN_DEFECTS: dict[str, set[str]] = {
    # `documentation` written for `description` (still in today's schema)
    "#531": {"lint/unknown-keyword"},
    "#1413": {"lint/required-undeclared"},  # `engine_version` required, `version` declared
    # `totalElements`, `failedElements` required, never declared
    "#1442": {"lint/required-undeclared"},
    # the DatasourceDatasetFacet example holds a DatasetVersion facet; examples written with the
    # _schemaURL of another facet (DocumentationDatasetFacet for the job facet), of
    # OpenLineage.json, or of an older version
    "#1997": {"examples/unknown-key", "examples/schema-url", "examples/stale-schema-url"},
    # Dates where the schema says date-time: written in #1997, when the example could not be checked
    # offline (no mirror for its $ref yet); #2520 made it checkable, #3221 fixed it.
    "#2520": {"examples/invalid"},
    "#2740": {"entry/misplaced-facets"},  # a consumer block holding produced_facets
    # An example edited (a field added) while its _schemaURL keeps naming the version before the
    # bump. (#2510 edited only the error text of the ExtractionErrorRunFacet example, whose URL was
    # stale already: not its defect, shown as pre-existing.)
    "#2562": {"examples/stale-schema-url"},  # fileCount added to the example, URL left at 1-0-0
    # DatasourceDatasetFacet bumped to 1-0-1, example URL 1-0-0
    "#3361": {"examples/stale-schema-url"},
    # contentType added, DocumentationDatasetFacet URL left at 1-0-0
    "#3748": {"examples/stale-schema-url"},
    # the DatasetTypeDatasetFacet example names DatasetVersionDatasetFacet
    "#3752": {"examples/schema-url"},
    # a file named ...Facet1.json, not as declared
    "#3256": {"facets/name-mismatch", "uris/unresolved"},
    # a facet $ref added to the RunEvent of OpenLineage.json, whose $id stays at the published 1-0-5
    "Added ExternalQueryRunFacet.json": {"spec/not-bumped"},
}


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("history") / "openlineage.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
    return repo


@pytest.fixture(scope="module")
def history(history_repo: Path) -> list[CommitReview]:
    return list(replay(history_repo))


def pr_of(row: CommitReview) -> str | None:
    for number in KNOWN_DEFECTS:
        if not number.startswith("#"):
            if row.subject == number:
                return number
        elif f"({number})" in row.subject or f"{number} " in row.subject:
            return number
    return None


def blocking_rules(row: CommitReview) -> set[str]:
    return {f.rule for f in row.blocking}


def test_the_whole_history_is_replayed_without_a_crash(history: list[CommitReview]) -> None:
    assert len(history) >= 140
    assert [(r.commit[:7], r.crash) for r in history if r.crash] == []


@pytest.mark.parametrize("number", sorted(KNOWN_DEFECTS))
def test_every_known_defect_is_caught(history: list[CommitReview], number: str) -> None:
    (row,) = [r for r in history if pr_of(r) == number]
    missing = KNOWN_DEFECTS[number] - blocking_rules(row)
    assert not missing, (
        f"{number} ({row.subject}) was not blocked for {missing}; blocked for {blocking_rules(row)}"
    )


def test_no_good_commit_is_blocked_for_anything_but_the_proposals_policy(
    history: list[CommitReview],
) -> None:
    """Apart from the known defects, a merged commit is blocked only by an adoption gap it adds
    itself."""
    wrong = {}
    for row in history:
        allowed = set(ADOPTION_GAPS) | KNOWN_DEFECTS.get(pr_of(row) or "", set())
        extra = blocking_rules(row) - allowed
        if extra:
            wrong[f"{row.commit[:7]} {row.subject[:60]}"] = sorted(extra)
    assert wrong == {}


def test_pre_existing_problems_never_block(history: list[CommitReview]) -> None:
    """The judging itself: on the real history, no blocking finding is one that was already at
    base."""
    assert all(f.state is not None and f.state.value == "new" for r in history for f in r.blocking)
    assert sum(r.pre_existing_errors for r in history) > 0, (
        "the history has pre-existing errors to judge"
    )


def test_with_the_gaps_adopted_gradually_only_the_defects_block(history_repo: Path) -> None:
    """``verdict.adoption_gaps_in_changes: warning``, the policy the history was written under: the
    commits that introduced a defect are exactly the ones blocked."""
    config = Config(verdict=VerdictPolicy(adoption_gaps_in_changes="warning"))
    blocked = {pr_of(r) or r.commit[:7] for r in replay(history_repo, config=config) if r.blocking}
    # a defect that is itself an adoption gap (#531's misspelling) is a warning under that policy
    assert blocked == {
        number for number, rules in KNOWN_DEFECTS.items() if rules - set(ADOPTION_GAPS)
    }
