"""Rules about the change itself are never pre-existing: each one blocks the change that triggers
it.

The base side of a change is reviewed with the same change set, so a rule computed from the change
set (a published copy edited) fires there too; matched against it, the finding would be "unchanged"
and pass. Each rule of ``CHANGE_RULES`` is triggered here by a change planted into the newest real
commit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.core.findings import Finding, Severity, State, Verdict
from bot.review.checks import CHANGE_RULES, all_rules
from bot.review.engine import ReviewContext, judge
from tests import mutations as m
from tests.mutations import Edits
from tests.planting import plant, read, review_pr

Scenario = Callable[[Path, str], Edits]
MALLORY = ReviewContext(author="mallory")  # owns nothing: the owner rules ask for approval


def _planted(kind: Callable[[Path, str], tuple[Edits, Edits] | None]) -> Scenario:
    def scenario(repo: Path, commit: str) -> Edits:
        planted = kind(repo, commit)
        assert planted is not None
        return planted[0]

    return scenario


def _versioned(
    bump: Callable[[tuple[int, int, int]], tuple[int, int, int] | None], rename: bool
) -> Scenario:
    """A facet published at the version ``bump`` gives, with a field removed (``rename``) or
    added."""

    def scenario(repo: Path, commit: str) -> Edits:
        for t in m.targets(repo, commit):
            version = bump(t.version)
            field = m.first_field(t)
            if version is None or (rename and field is None):
                continue
            text = (
                m.rename_key(t.schema_text, field, field + "Value")
                if rename and field
                else m.add_field(t.schema_text, t.defs_name)
            )
            assert text is not None
            return m.new_version(t, text, version)
        raise LookupError("no facet to change")

    return scenario


def _entry_copy(repo: Path, commit: str) -> Edits:
    """A new entry whose name folds to an existing one's (``gcp-lineage`` beside
    ``gcp/lineage``)."""
    path = next(
        p
        for p in m.files_of(repo, commit, "spec/registry")
        if p.count("/") == 4 and p.endswith("/registry.json")
    )
    folder = path.rsplit("/", 1)[0]
    return {
        folder.replace(folder.split("/")[2] + "/", folder.split("/")[2] + "-")
        + "/registry.json": read(repo, commit, path)
    }


def _entry_edit(repo: Path, commit: str) -> Edits:
    path = next(
        p
        for p in m.files_of(repo, commit, "spec/registry")
        if p.endswith("/registry.json") and "/core/" not in p
    )
    data = read(repo, commit, path) or b""
    return {path: data.rstrip() + b"\n\n"}


def _entry_codeowners(repo: Path, commit: str) -> Edits:
    path = next(
        p
        for p in m.files_of(repo, commit, "spec/registry")
        if p.endswith("/registry.json") and "/core/" not in p
    )
    return {path.replace("registry.json", "CODEOWNERS"): b"* @mallory\n"}


def _spec_edit(repo: Path, commit: str) -> Edits:
    text = (read(repo, commit, m.SPEC) or b"").decode()
    assert '"$defs": {' in text
    return {m.SPEC: text.replace('"$defs": {', '"$comment": "planted",\n  "$defs": {', 1).encode()}


def _spec_removed(repo: Path, commit: str) -> Edits:
    assert read(repo, commit, m.SPEC)
    return {m.SPEC: None}


def _root_codeowners(repo: Path, commit: str) -> Edits:
    """The repository's root CODEOWNERS handing the registry folder to someone else."""
    path = next(
        p for p in (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS") if read(repo, commit, p)
    )
    return {path: (read(repo, commit, path) or b"") + b"/spec/registry/ @mallory\n"}


def _mirror_copy(repo: Path, commit: str) -> Edits:
    """A published copy of a version nobody released, added to the mirror."""
    path = m.files_of(repo, commit, "website/static/spec/facets")[0]
    name = path.rsplit("/", 1)[1]
    return {f"website/static/spec/facets/9-9-9/{name}": read(repo, commit, path) or b"{}\n"}


SCENARIOS: dict[str, tuple[Scenario, ReviewContext]] = {
    "versions/published-modified": (_planted(m.published_edited), ReviewContext()),
    "versions/not-bumped": (_planted(m.not_bumped), ReviewContext()),
    "versions/insufficient-bump": (
        _versioned(lambda v: (v[0], v[1], v[2] + 1), rename=True),
        ReviewContext(),
    ),
    "versions/not-increased": (
        _versioned(lambda v: (v[0], v[1] - 1, 0) if v[1] else None, rename=False),
        ReviewContext(),
    ),
    "entry/name-collision": (_entry_copy, ReviewContext()),
    "owners/approval-required": (_entry_edit, MALLORY),
    "owners/codeowners-change-needs-approval": (_entry_codeowners, MALLORY),
    "spec/not-bumped": (_spec_edit, ReviewContext()),
    "spec/removed": (_spec_removed, ReviewContext()),
    "ownership/steering-file-change": (_root_codeowners, MALLORY),
    "ownership/mirror-change": (_mirror_copy, MALLORY),
    "ownership/spec-change": (_spec_edit, MALLORY),
}
# Change rules that need a history of two commits, tested where that history is built.
ELSEWHERE = {
    "versions/transitive-break": "tests/test_versions.py::"
    "test_a_field_removed_then_re_added_with_another_type_is_caught_against_the_first",
    # symlinks, submodules and cut tree listings cannot be planted as file contents
    "bot/unread-path": "tests/test_review_edge.py::"
    "test_the_git_door_reports_a_symlink_and_a_submodule_in_an_entry",
    "bot/change-not-listed": "tests/test_e2e_hostile_edge.py::"
    "test_a_change_too_large_to_list_is_neither_passed_nor_approved",
}


def test_every_change_rule_is_a_rule_and_has_a_scenario() -> None:
    assert set(all_rules()) >= CHANGE_RULES
    assert set(SCENARIOS) | set(ELSEWHERE) == CHANGE_RULES


@pytest.mark.parametrize("rule", sorted(SCENARIOS))
def test_each_rule_about_the_change_blocks_it(history_clone: Path, rule: str) -> None:
    from tests.history import commit_of

    commit = commit_of(history_clone, "#3834")
    scenario, context = SCENARIOS[rule]
    report = review_pr(
        history_clone, plant(history_clone, commit, scenario(history_clone, commit)), context
    )
    found = [f for f in report.findings if f.rule == rule]
    assert found, f"{rule} did not fire: {sorted({f.rule for f in report.findings})}"
    assert all(
        f.state is State.NEW and f.severity is Severity.ERROR and report.is_blocking(f)
        for f in found
    )
    assert report.verdict is Verdict.FAILURE


def test_a_stale_schema_url_the_change_writes_blocks_it(history_clone: Path) -> None:
    """Judged against the base like any finding (tests/test_judging.py: one the change did not make
    stale passes); a URL the change itself sets to an older version is new, an error, and blocks."""
    from tests.history import commit_of

    commit = commit_of(history_clone, "#3834")
    report = review_pr(
        history_clone,
        plant(history_clone, commit, _planted(m.url_kind(m.older_version))(history_clone, commit)),
        ReviewContext(),
    )
    found = [f for f in report.findings if f.rule == "examples/stale-schema-url"]
    assert found and all(f.state is State.NEW and report.is_blocking(f) for f in found)
    assert report.verdict is Verdict.FAILURE


def test_the_judge_never_matches_a_change_rule_against_the_base() -> None:
    def finding(rule: str) -> Finding:
        return Finding(
            rule=rule,
            severity=Severity.ERROR,
            path="website/static/spec/facets/1-0-0/A.json",
            message="published schema is modified",
        )

    head = [finding("versions/published-modified"), finding("facets/id")]
    base = [finding("versions/published-modified"), finding("facets/id")]
    judged, fixed = judge(head, base, {}, {"versions/published-modified"})
    assert [(f.rule, f.state) for f in judged] == [
        ("versions/published-modified", State.NEW),
        ("facets/id", State.UNCHANGED),
    ]
    assert fixed == []  # nor is a change rule at base "fixed" by the head
    judged, _ = judge(head, base, {})
    assert judged[0].state is State.UNCHANGED  # what the engine did before: an in-place edit passed
