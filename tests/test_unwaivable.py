"""Rules no waiver ever applies to: who must approve a change, and what the review did not judge.

Findings of an audit: the owners' waiver of ``owners/approval-required`` at their entry's README
("anyone may fix typos") passed a stranger's change of the README *and* of the entry's registry.json
(the entry's one approval finding sits on its first changed path, which the waiver matched); a
waiver of ``owners/codeowners-change-needs-approval`` passed a stranger's ``* @mallory`` CODEOWNERS.
Such a waiver is ``waivers/invalid`` and waives nothing, and ``/registry-bot waive`` never proposes
one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.core.findings import State, Verdict
from bot.core.snapshot import DirSnapshot
from bot.core.waivers import APPROVAL_RULES, NEVER_WAIVED
from bot.github.events import WAIVE_COMMAND
from bot.review.checks import all_rules
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo
from tests.test_waive_command import answered, entry_facet
from tests.test_waivers import TODAY, review_pr

OWNER = "@acme-owner"


def owned_entry(repo: Repo) -> str:
    """An entry with facets, given its own CODEOWNERS (``* @acme-owner``) on the base."""
    registry_json = next(
        p
        for p in sorted((repo.path / "spec/registry").rglob("registry.json"))
        if p.parent.name != "core" and any((p.parent / "facets").glob("*.json"))
    )
    folder = registry_json.parent.relative_to(repo.path).as_posix()
    repo.write(f"{folder}/CODEOWNERS", f"* {OWNER}\n")
    repo.write(f"{folder}/README.md", "notes\n")
    return folder


def waiver(rule: str, path: str) -> dict[str, str]:
    return {
        "rule": rule,
        "path": path,
        "pointer": "",
        "reason": "anyone may fix typos in our README",
        "granted_by": OWNER,
        "expires": "2026-12-31",
    }


def waivers_json(*waivers: dict[str, str]) -> str:
    return json.dumps({"waivers": list(waivers)}, indent=2) + "\n"


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "openlineage")


def test_an_approval_waiver_approves_no_strangers_change(repo: Repo) -> None:
    folder = owned_entry(repo)
    readme = f"{folder}/README.md"
    repo.write(f"{folder}/waivers.json", waivers_json(waiver("owners/approval-required", readme)))
    repo.commit("the owners' entry, with their waiver", branch="main")
    repo.change({readme: "notes, and a typo fixed\n"})
    repo.edit_json(
        f"{folder}/registry.json",
        lambda d: d.setdefault("producer", {}).update(root_doc_URL="https://mallory.example/docs"),
    )
    repo.commit("a stranger's edit")
    report = review_pr(repo, author="mallory")
    [approval] = [f for f in report.findings if f.rule == "owners/approval-required"]
    assert approval.waived is None and report.is_blocking(approval)
    assert report.verdict is Verdict.FAILURE and not report.waived()
    [invalid] = [f for f in report.findings if f.rule == "waivers/invalid"]
    assert invalid.path == f"{folder}/waivers.json" and "never waived" in invalid.hint
    assert "owners/approval-required" in invalid.message


def test_a_waiver_cannot_hand_an_entrys_codeowners_to_a_stranger(repo: Repo) -> None:
    folder = owned_entry(repo)
    codeowners = f"{folder}/CODEOWNERS"
    rule = "owners/codeowners-change-needs-approval"
    repo.write(f"{folder}/waivers.json", waivers_json(waiver(rule, codeowners)))
    repo.commit("the owners' entry, with their waiver", branch="main")
    repo.change({codeowners: "* @mallory\n"})
    report = review_pr(repo, author="mallory")
    [takeover] = [f for f in report.findings if f.rule == rule]
    assert takeover.waived is None and report.verdict is Verdict.FAILURE


def test_a_pull_request_adding_an_approval_waiver_is_told_it_waives_nothing(repo: Repo) -> None:
    folder = owned_entry(repo)
    repo.commit("the owners' entry", branch="main")
    rule = "ownership/steering-file-change"
    repo.change({f"{folder}/waivers.json": waivers_json(waiver(rule, ".github/registry-bot.yml"))})
    report = review_pr(repo, author=OWNER.removeprefix("@"))
    [invalid] = [f for f in report.findings if f.rule == "waivers/invalid"]
    assert invalid.state is State.NEW and report.is_blocking(invalid)
    assert rule in invalid.message and "decides who approves" in invalid.message


def test_a_registry_wide_waiver_of_an_approval_rule_waives_nothing(corpus_copy: Path) -> None:
    """The configuration's waivers (granted by the registry's owners) are refused the same way."""
    config = corpus_copy / ".github" / "registry-bot.yml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"waivers": [waiver("owners/approval-required", "README.md")]}))
    report = run_review(ReviewRequest(head=DirSnapshot(corpus_copy), today=TODAY))
    [invalid] = [f for f in report.findings if f.rule == "waivers/invalid"]
    assert invalid.path == ".github/registry-bot.yml" and "cannot apply" in invalid.message
    assert not [f for f in report.findings if f.rule == "waivers/unmatched"]


def test_every_rule_deciding_who_approves_is_never_waived() -> None:
    """The approval rules as the checks declare them: owners' approvals and ownership moves."""
    deciding = {
        r
        for r in all_rules()
        if r.startswith("ownership/") or (r.startswith("owners/") and "approv" in r)
    }
    assert deciding == APPROVAL_RULES and APPROVAL_RULES <= NEVER_WAIVED


def proposal(tmp_path: Path, corpus: Path, arguments: str) -> str:
    """The reply to ``/registry-bot waive ARGUMENTS`` from a stranger."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    facet = entry_facet(repo)
    repo.change({facet: (repo.path / facet).read_text() + "\n"})
    gh = answered(repo, f"{WAIVE_COMMAND} {arguments.replace('FACET', facet)}", "stranger", "none")
    try:
        [reply] = gh.issue_comments
        marker, _, text = str(reply.body).partition("\n")  # the delivery it answers, hidden
        assert marker.startswith("<!-- registry-bot:waive delivery=")
        return text
    finally:
        gh.close()


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ("owners/approval-required FACET# anyone may fix typos", "decides who approves"),
        ("ownership/outside-entry FACET# ours", "decides who approves"),
        ("bot/unread-path FACET# a symlink we keep", "did not judge something in full"),
        ("Examples/Missing FACET# later", "rule: breaks the schema's pattern"),
        ("examples/missing/x FACET# later", "rule: breaks the schema's pattern"),
        ("examples/missing FACET# " + "long " * 120, "reason: breaks the schema's maxLength (500)"),
    ],
)
def test_the_waive_command_proposes_no_waiver_the_review_would_refuse(
    tmp_path: Path, corpus: Path, arguments: str, why: str
) -> None:
    body = proposal(tmp_path, corpus, arguments)
    assert body.startswith("Cannot propose a waiver:") and why in body and "```json" not in body


def test_the_waive_command_still_proposes_a_waiver_it_may_apply(
    tmp_path: Path, corpus: Path
) -> None:
    body = proposal(tmp_path, corpus, "examples/missing FACET# " + "x" * 500)
    assert "Proposed waiver" in body and "```json" in body
