"""A check that crashed or stopped judged nothing: never pre-existing, never waived, its severity
not configurable, and the App neither passes nor acts on the change.

The same crash on both sides (a bug that does not depend on the change) had the same fingerprint,
so it was judged pre-existing and the change passed: the App approved and merged it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.cli.commands.replay import _Single
from bot.core.changes import ChangeSet
from bot.core.config import load_config
from bot.core.findings import Report, Severity, State, Verdict
from bot.core.incomplete import REGRESSION_UNFINISHED, incomplete
from bot.core.snapshot import DirSnapshot, GitSnapshot
from bot.core.waivers import never_waived
from bot.github.events import Job
from bot.github.local import LocalGitHub
from bot.github.local_merge import BranchProtection
from bot.github.publish import CHECK_NAME
from bot.model.naming import bundled_folder
from bot.review.checks import CHECKS
from bot.review.compose import ReviewRequest, run_review
from bot.review.input import ReviewInput
from bot.review.waiving import waive
from bot.service.worker import Worker
from tests import registry_cases as rc
from tests.delegation_repo import AUTHOR, DATAPROC_OWNER, build
from tests.gitrepo import Repo
from tests.test_waivers import TODAY, entry_folder, rel, review_pr, root_owner, waiver

BOT = "registry-bot[bot]"
REPO = "OpenLineage/OpenLineage"
# the crashing check's module declares its rules, so configured rule ids are checked against them
POSTGRES = "spec/naming/datasets/postgres/postgres.json"
RULES = {"test/crash": "never reported: the check crashes first"}


def crashing(_review: ReviewInput) -> list[object]:
    """A check with a bug: it crashes on every input, the same way on base and head."""
    raise RuntimeError("bug in the check")


CHECKS_WITH_A_BUG = (*CHECKS, crashing)


def test_a_check_that_crashes_the_same_way_on_both_sides_fails_the_change(
    tmp_path: Path, corpus: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    repo.edit_json(
        "spec/registry/core/registry.json",
        lambda r: r["producer"]["produced_facets"].append("ol:core:TestRunFacet.json"),
    )
    repo.commit("a good edit")
    report = review(repo)
    crashed = [f for f in report.findings if f.rule == "bot/internal-error"]
    assert len(crashed) == 1 and crashed[0].state is State.NEW
    assert report.verdict is Verdict.FAILURE


def review(repo: Repo) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        return run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author="OpenLineage/committers",
                checks=CHECKS_WITH_A_BUG,
            )
        )


@pytest.mark.parametrize(
    "configured",
    [
        {"severity": {"bot/internal-error": "notice", "bot/incomplete-review": "warning"}},
        {"severity": {"bot/internal-error": {"becomes_error": "2099-01-01"}}},
        {"verdict": {"adoption_gaps": ["bot/internal-error"]}},
        # what the review could not read (a finding of the audit: these two were configurable)
        {"severity": {"bot/unread-path": "warning", "bot/change-not-listed": "notice"}},
    ],
)
def test_the_severity_of_a_check_that_did_not_finish_cannot_be_configured(
    corpus_copy: Path, configured: dict[str, object]
) -> None:
    config = corpus_copy / ".github" / "registry-bot.yml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps(configured))
    report = run_review(ReviewRequest(head=DirSnapshot(corpus_copy), checks=CHECKS_WITH_A_BUG))
    refused = [f for f in report.findings if f.rule == "config/invalid"]
    assert refused and all(
        "a review that could not finish never passes" in f.message for f in refused
    )
    crashed = [f for f in report.findings if f.rule == "bot/internal-error"]
    assert crashed and all(f.severity.value == "error" for f in crashed)
    assert report.verdict is Verdict.FAILURE


def test_no_waiver_applies_to_a_review_that_did_not_finish(corpus_copy: Path) -> None:
    """An entry's owners waive, exactly, an unfinished regression on one of their files, and beside
    it a missing example on the same file (which is waived: the waivers are the owners'). A
    configuration cannot waive a crash: a waiver names a path, a crash has none."""
    repo = Repo(corpus_copy)
    folder = entry_folder(repo)
    target = rel(repo, sorted((folder / "facets").glob("*.json"))[0])
    owner = root_owner(repo)
    waivers = [
        waiver(target, owner, rule=REGRESSION_UNFINISHED),
        waiver(target, owner, rule="examples/missing"),
    ]
    (folder / "waivers.json").write_text(json.dumps({"waivers": waivers}))
    unfinished = incomplete("the regression did not finish", target, rule=REGRESSION_UNFINISHED)
    missing = replace(unfinished, rule="examples/missing", severity=Severity.WARNING)
    snapshot = DirSnapshot(corpus_copy)
    config, _ = load_config(snapshot)
    judged = waive([unfinished, missing], (), [], snapshot, None, None, config, TODAY)
    by_rule = {f.rule: f for f in judged if f.path == target and not f.rule.startswith("waivers/")}
    assert by_rule["examples/missing"].waived is not None
    assert by_rule[REGRESSION_UNFINISHED].waived is None


@pytest.fixture(scope="module")
def delegation(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("unjudged") / "repo").path


def test_the_app_neither_passes_nor_approves_nor_merges_past_a_crash(delegation: Path) -> None:
    """The owner approved an entry edit the App would approve for them and merge; a check crashes
    the same way on base and head."""
    gh = LocalGitHub(
        delegation,
        "main",
        "pr",
        repo=REPO,
        number=7,
        author=AUTHOR,
        protection=BranchProtection(required_approvals=0, required_checks=(CHECK_NAME,)),
    )
    try:
        gh.add_review(DATAPROC_OWNER)
        worker = Worker(_Single(gh), checks=CHECKS_WITH_A_BUG)
        outcome = worker.handle(Job("d", "pull_request_review", "submitted", 1, REPO, 7))
        approvals = [r for r in gh.reviews if r.user == BOT and r.event == "APPROVE"]
        assert outcome == "failure" and gh.check_runs[-1].conclusion == "failure"
        assert approvals == [] and gh.merged is None
    finally:
        gh.close()


# An example whose validation stopped was not validated (audit: a waiver of examples/timeout, or a
# timeout already on the base matched to the head's by fingerprint, passed an example broken in
# every way the schema checks): each rule, its facet schema's edit, and what the example holds to
# reach it
NOT_VALIDATED: dict[str, tuple[Callable[[Any], object], Callable[[Any], object]]] = {
    "examples/timeout": (
        lambda schema: facet(schema)["properties"]["settings"]["properties"]["labels"][
            "items"
        ].update(pattern="^(?=a)(a|aa)+$"),  # refused by the linear engine, slow on the bounded one
        lambda widget: widget["settings"].update(labels=["a" * 40 + "b"] * 20),
    ),
    "examples/unresolved-ref": (
        lambda schema: facet(schema)["properties"].update(
            gone={"$ref": "https://openlineage.io/spec/facets/1-0-0/AcmeGoneRunFacet.json"}
        ),
        lambda widget: widget.update(gone=1),
    ),
    "examples/recursion": (
        lambda schema: (
            schema["$defs"].update(Loop={"allOf": [{"$ref": "#/$defs/Loop"}], "type": "string"}),
            facet(schema)["properties"].update(loop={"$ref": "#/$defs/Loop"}),
        ),
        lambda widget: widget.update(loop=1),
    ),
    "examples/unchecked": (
        lambda schema: facet(schema)["properties"]["settings"].update(type=5),  # not a schema
        lambda widget: widget["settings"].update(retries=1),
    ),
}


def facet(schema: Any) -> Any:
    """The object part of acme's facet definition."""
    return schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]


def stopped_example_change(tmp_path: Path, corpus: Path, rule: str, waived: bool) -> Repo:
    """Base: acme, whose example's validation stops with ``rule`` (and, with ``waived``, the owners'
    waiver of it). The change breaks the example in every way the schema checks."""
    schema, reach = NOT_VALIDATED[rule]
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    rc.add_good(repo)
    rc.edit(repo, rc.FACET, schema)
    rc.edit(repo, rc.MIRROR, schema)
    rc.edit(repo, rc.EXAMPLE, lambda v: reach(v["acme_widget"]))
    if waived:
        repo.write(
            f"{rc.ENTRY}/waivers.json",
            json.dumps({"waivers": [waiver(rc.EXAMPLE, "@alice", rule=rule)]}, indent=2) + "\n",
        )
    repo.commit("acme, with an example not validated", branch="main")

    def broken(value: Any) -> None:
        widget = value["acme_widget"]
        del widget["widgetId"]  # required
        widget["settings"]["retries"] = "three"  # an integer

    repo.change({})
    rc.edit(repo, rc.EXAMPLE, broken)
    repo.commit("break the example")
    return repo


@pytest.mark.parametrize("waived", [False, True], ids=["on-the-base", "waived"])
@pytest.mark.parametrize("rule", NOT_VALIDATED)
def test_an_example_not_validated_never_passes(
    tmp_path: Path, corpus: Path, rule: str, waived: bool
) -> None:
    report = review_pr(stopped_example_change(tmp_path, corpus, rule, waived), author="alice")
    [stopped] = [f for f in report.findings if f.rule == rule and f.path == rc.EXAMPLE]
    assert stopped.state is State.NEW and stopped.waived is None and report.is_blocking(stopped)
    assert report.verdict is Verdict.FAILURE and not report.waived()
    refused = [f for f in report.findings if f.rule == "waivers/invalid"]
    assert len(refused) == waived and all("did not judge" in f.message for f in refused)


# What the review could not check beside an invalid thing that shared its rule id (audit: a naming
# file "could not be checked" was naming/schema, a CODEOWNERS line the bot could not match was
# owners/invalid-pattern; the same on the base made them pre-existing, and waivable)


def test_a_naming_file_not_checked_against_its_base_schema_never_passes(
    tmp_path: Path, corpus: Path
) -> None:
    """The base's NamingBase.json reaches a $ref that does not resolve offline: no naming file can
    be checked, so a change breaking one is not judged, and fails."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    shutil.copytree(bundled_folder(), repo.path / "spec/naming")
    repo.edit_json(
        "spec/naming/NamingBase.json",
        lambda s: (
            s["$defs"]["DatasetNaming"]
            .setdefault("allOf", [])
            .append({"$ref": "https://example.com/naming/Elsewhere.json"})
        ),
    )
    repo.commit("a base schema that cannot be checked against offline", branch="main")
    repo.edit_json(POSTGRES, lambda v: v.update(forms="none"))
    repo.commit("break the postgres naming file")
    report = review_pr(repo)
    [unchecked] = [
        f for f in report.findings if f.rule == "naming/unchecked" and f.path == POSTGRES
    ]
    assert unchecked.state is State.NEW and report.is_blocking(unchecked)
    assert report.verdict is Verdict.FAILURE  # it passed: the same "could not be checked" at base


def test_a_codeowners_line_the_bot_could_not_match_never_passes(
    tmp_path: Path, corpus: Path
) -> None:
    """Root CODEOWNERS lines past the bot's compile limit on the base: who owns what the change
    touches was not judged, whoever approved it and whatever the owners waive."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    wide = "*" + "/*".join("d" * 8 for _ in range(400))
    owners = (repo.path / "CODEOWNERS").read_text()
    repo.write("CODEOWNERS", owners + "".join(f"{wide}{i} @o{i}\n" for i in range(100)))
    repo.commit("root lines the bot cannot compile", branch="main")
    folder = entry_folder(repo)
    repo.write(rel(repo, folder / "README.md"), "# Notes\n")
    repo.commit("a note in the entry")  # nothing else wrong: it passed, the lines pre-existing
    report = review_pr(repo)
    unchecked = [f for f in report.findings if f.rule == "owners/unchecked-pattern"]
    assert unchecked and all(f.state is State.NEW and report.is_blocking(f) for f in unchecked)
    assert not [f for f in report.findings if f.rule == "owners/invalid-pattern"]
    assert never_waived("owners/unchecked-pattern") and never_waived("naming/unchecked")
    assert report.verdict is Verdict.FAILURE


# What could not be checked in a file the change leaves alone, and whose grounds it leaves alone too
# (audit: a naming file failing NamingBase.json on the base said naming/unchecked on every review,
# never pre-existing, so it failed every pull request touching the naming folder, whatever it
# changed; an example whose schema was broken on the base failed every change of its entry): the
# same "could not check" on the base is the untouched file's standing problem, shown, not blocking


def test_a_naming_file_broken_on_the_base_does_not_block_a_change_to_another(
    tmp_path: Path, corpus: Path
) -> None:
    """mysql.json fails NamingBase.json on the base; the change edits postgres.json alone. mysql's
    rules are skipped on both sides alike: the change cannot alter what they would decide."""
    mysql = "spec/naming/datasets/mysql/mysql.json"
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    shutil.copytree(bundled_folder(), repo.path / "spec/naming")
    repo.edit_json(mysql, lambda v: v.update(owner="data team"))  # a member the schema refuses
    repo.commit("a naming file failing the base schema", branch="main")
    repo.edit_json(POSTGRES, lambda v: v["examples"]["valid"].append(v["examples"]["valid"][0]))
    repo.commit("another example of postgres")
    report = review_pr(repo)
    [unchecked] = [f for f in report.findings if f.rule == "naming/unchecked"]
    assert unchecked.path == mysql and unchecked.state is State.UNCHANGED
    assert not report.is_blocking(unchecked) and unchecked.waived is None
    assert report.verdict is not Verdict.FAILURE, [
        (f.rule, f.path, f.message) for f in report.findings if report.is_blocking(f)
    ]
    # the whole tree (check --all) still fails on it
    whole = run_review(ReviewRequest(head=DirSnapshot(repo.path)))
    [standing] = [f for f in whole.findings if f.rule == "naming/unchecked"]
    assert standing.path == mysql and whole.is_blocking(standing)


def entry_note_change(tmp_path: Path, corpus: Path, rule: str) -> Repo:
    """Base: acme, whose example's validation stops with ``rule``. The change adds a note to the
    entry: the example, its schema and every schema behind it are left alone."""
    schema, reach = NOT_VALIDATED[rule]
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    rc.add_good(repo)
    rc.edit(repo, rc.FACET, schema)
    rc.edit(repo, rc.MIRROR, schema)
    rc.edit(repo, rc.EXAMPLE, lambda v: reach(v["acme_widget"]))
    repo.commit("acme, with an example not validated", branch="main")
    repo.change({f"{rc.ENTRY}/README.md": "# Acme\n"}, "a note in the entry")
    return repo


@pytest.mark.parametrize("rule", NOT_VALIDATED)
def test_an_example_not_validated_on_both_sides_and_left_alone_is_pre_existing(
    tmp_path: Path, corpus: Path, rule: str
) -> None:
    report = review_pr(entry_note_change(tmp_path, corpus, rule), author="alice")
    [stopped] = [f for f in report.findings if f.rule == rule and f.path == rc.EXAMPLE]
    assert stopped.state is State.UNCHANGED and not report.is_blocking(stopped)
    assert not [f for f in report.findings if f.rule == rule and f.state is State.NEW]


def test_an_example_whose_broken_schema_the_change_edits_is_still_the_changes(
    tmp_path: Path, corpus: Path
) -> None:
    """The same example, left alone, but its schema (its ground, still not a valid schema) edited:
    what the example is checked against changed, so what could not be checked is the change's."""
    repo = entry_note_change(tmp_path, corpus, "examples/unchecked")
    rc.edit(repo, rc.FACET, lambda s: facet(s)["properties"]["settings"].update(title="Settings"))
    repo.commit("edit the schema")
    report = review_pr(repo, author="alice")
    [stopped] = [
        f for f in report.findings if f.rule == "examples/unchecked" and f.path == rc.EXAMPLE
    ]
    assert stopped.state is State.NEW and report.is_blocking(stopped)
    assert report.verdict is Verdict.FAILURE
