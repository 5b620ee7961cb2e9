"""The owners rule family, on real git repositories built from the real corpus."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.core.changes import ChangeSet
from bot.core.findings import Finding, Report, Severity, State
from bot.core.snapshot import GitSnapshot, MemorySnapshot
from bot.review.checks import owners, ownership
from bot.review.engine import ReviewContext, review
from tests.gitrepo import Repo, git

ICEBERG = "spec/registry/iceberg"
ICEBERG_OWNERS = "# Owners of the iceberg entry\n* @iceberg-dev @apache/iceberg-committers\n"
ROOT_LINE = "/spec/registry/iceberg/ @iceberg-dev @apache/iceberg-committers\n"
NEW_ENTRY = "spec/registry/acme"
NEW_REGISTRY = json.dumps(
    {"producer": {"root_doc_URL": "https://acme.example/docs", "produced_facets": []}}
)


@pytest.fixture(scope="module")
def owned_base(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real registry with iceberg owning its entry (own CODEOWNERS and a root line), as
    ``main``.

    Only the corpus's ``spec/`` tree and root CODEOWNERS are copied: the rest (integrations,
    website) is never read by these checks and would only slow every clone down.
    """
    staging = tmp_path_factory.mktemp("staging") / "openlineage"
    shutil.copytree(corpus / "spec", staging / "spec")
    shutil.copy(corpus / "CODEOWNERS", staging / "CODEOWNERS")
    repo = Repo.from_folder(staging, tmp_path_factory.mktemp("base") / "repo")
    repo.write(f"{ICEBERG}/CODEOWNERS", ICEBERG_OWNERS)
    root = (corpus / "CODEOWNERS").read_text(encoding="utf-8")
    repo.write("CODEOWNERS", root.rstrip("\n") + "\n" + ROOT_LINE)
    repo.commit("iceberg owns its entry", branch="main")
    return repo.path


@pytest.fixture
def repo(owned_base: Path, tmp_path: Path) -> Repo:
    """A fresh clone of the owned base, to change on a ``pr`` branch."""
    target = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(owned_base), str(target))
    return Repo(target)


def review_pr(
    repo: Repo, author: str | None = None, approvers: Iterable[str] = (), strict: bool = False
) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        return review(
            head=head,
            base=base,
            changes=ChangeSet.from_git(repo.path, "main", "pr"),
            context=ReviewContext(author=author, approvers=frozenset(approvers), strict=strict),
            checks=[owners.check],
        )


def restart(repo: Repo) -> None:
    """Drop the ``pr`` branch so that the next change starts again from ``main``."""
    git(repo.path, "checkout", "-q", "-f", "main")
    git(repo.path, "branch", "-q", "-D", "pr")


def rule(report: Report, rule_id: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule_id]


def edit_iceberg(repo: Repo) -> None:
    repo.edit_json(
        f"{ICEBERG}/registry.json", lambda d: d["producer"].update(root_doc_URL="https://x.example")
    )
    repo.commit()


# --- missing CODEOWNERS ---------------------------------------------------------------------------


def test_a_new_entry_without_codeowners_is_an_error(repo: Repo) -> None:
    repo.change({f"{NEW_ENTRY}/registry.json": NEW_REGISTRY})
    [finding] = rule(review_pr(repo, author="acme-dev"), "owners/missing-codeowners")
    assert finding.severity is Severity.ERROR and finding.entry == "acme"
    assert finding.path == f"{NEW_ENTRY}/registry.json" and finding.line == 1
    assert "a new entry must name its owners" in finding.message


def test_a_new_entry_with_codeowners_passes_that_rule(repo: Repo) -> None:
    repo.change(
        {f"{NEW_ENTRY}/registry.json": NEW_REGISTRY, f"{NEW_ENTRY}/CODEOWNERS": "* @acme-dev\n"}
    )
    report = review_pr(repo, author="acme-dev")
    assert rule(report, "owners/missing-codeowners") == []
    assert rule(report, "owners/invalid-owner") == []


def test_an_existing_entry_without_codeowners_is_pre_existing_and_says_who_github_routes_it_to(
    repo: Repo,
) -> None:
    repo.edit_json("spec/registry/gcp/lineage/registry.json", lambda d: d.update(extra=1))
    repo.commit()
    report = review_pr(repo, author="OpenLineage/committers")
    [finding] = rule(report, "owners/missing-codeowners")
    assert finding.state is State.UNCHANGED and finding.entry == "gcp:lineage"
    assert not report.is_blocking(finding) and report.verdict.value == "success"
    assert (
        "GitHub routes its review to @OpenLineage/committers (CODEOWNERS line 3)" in finding.message
    )
    strict = review_pr(repo, author="OpenLineage/committers", strict=True)
    assert [strict.is_blocking(f) for f in rule(strict, "owners/missing-codeowners")] == [True]


def test_deleting_an_entry_codeowners_is_an_error(repo: Repo) -> None:
    repo.change({f"{ICEBERG}/CODEOWNERS": None})
    [finding] = rule(review_pr(repo, author="iceberg-dev"), "owners/missing-codeowners")
    assert finding.severity is Severity.ERROR and "this change deletes it" in finding.message


# --- approvals ------------------------------------------------------------------------------------


def test_editing_another_participants_entry_needs_its_owners(repo: Repo) -> None:
    edit_iceberg(repo)
    report = review_pr(repo, author="someone-else", approvers=["a-friend"])
    [finding] = rule(report, "owners/approval-required")
    assert finding.severity is Severity.ERROR and finding.entry == "iceberg"
    assert finding.owners == ("@iceberg-dev", "@apache/iceberg-committers")
    assert finding.path == f"{ICEBERG}/registry.json"
    assert "@iceberg-dev or @apache/iceberg-committers" in finding.message
    assert f"{ICEBERG}/CODEOWNERS line 2" in finding.message
    assert report.required_approvals() == {
        "iceberg": ("@iceberg-dev", "@apache/iceberg-committers")
    }


@pytest.mark.parametrize(
    "approver",
    ["iceberg-dev", "@Iceberg-Dev", "apache/iceberg-committers", "@APACHE/Iceberg-Committers"],
)
def test_it_passes_once_an_owner_or_an_owning_team_approves(repo: Repo, approver: str) -> None:
    edit_iceberg(repo)
    report = review_pr(repo, author="someone-else", approvers=["a-friend", approver])
    assert rule(report, "owners/approval-required") == []
    assert report.required_approvals() == {}


def test_the_owner_editing_their_own_entry_passes(repo: Repo) -> None:
    edit_iceberg(repo)
    report = review_pr(repo, author="iceberg-dev")
    assert not report.has_errors, report.findings


def test_deleting_or_moving_an_entry_needs_its_base_owners(repo: Repo) -> None:
    files = sorted(
        p.relative_to(repo.path).as_posix() for p in (repo.path / ICEBERG).rglob("*") if p.is_file()
    )
    repo.change(dict.fromkeys(files))
    [finding] = rule(
        review_pr(repo, author="someone-else"), "owners/codeowners-change-needs-approval"
    )
    assert finding.entry == "iceberg" and finding.owners == (
        "@iceberg-dev",
        "@apache/iceberg-committers",
    )
    restart(repo)
    git(repo.path, "checkout", "-q", "-b", "pr")
    git(repo.path, "mv", f"{ICEBERG}/facets", "spec/registry/gcp/lineage/facets-moved")
    repo.commit()
    assert review_pr(repo, author="OpenLineage/committers").required_approvals() == {
        "iceberg": ("@iceberg-dev", "@apache/iceberg-committers")
    }


def test_a_new_entry_is_approved_by_the_root_owners(repo: Repo) -> None:
    repo.change(
        {f"{NEW_ENTRY}/registry.json": NEW_REGISTRY, f"{NEW_ENTRY}/CODEOWNERS": "* @acme-dev\n"}
    )
    [finding] = rule(review_pr(repo, author="acme-dev"), "owners/approval-required")
    assert finding.owners == ("@OpenLineage/committers",) and "CODEOWNERS line 3" in finding.message
    assert (
        rule(
            review_pr(repo, author="acme-dev", approvers=["openlineage/committers"]),
            "owners/approval-required",
        )
        == []
    )


def test_a_new_entry_inside_an_existing_entry_is_approved_by_the_root_owners_too(
    repo: Repo,
) -> None:
    """`iceberg:sub` in iceberg's folder is a new name: its files are iceberg's on the base side,
    but claiming the name is the root owners' say, as for any new entry (here the real root
    CODEOWNERS, which routes iceberg's folder to the committers)."""
    repo.write(
        "CODEOWNERS", (repo.path / "CODEOWNERS").read_text(encoding="utf-8").replace(ROOT_LINE, "")
    )
    repo.commit("the real root CODEOWNERS", branch="main")
    sub = f"{ICEBERG}/sub"
    repo.change({f"{sub}/registry.json": NEW_REGISTRY, f"{sub}/CODEOWNERS": "* @mallory\n"})
    report = review_pr(repo, author="iceberg-dev")
    assert report.required_approvals() == {"iceberg:sub": ("@OpenLineage/committers",)}
    [finding] = rule(report, "owners/approval-required")
    assert "`iceberg:sub` is a new entry" in finding.message and report.is_blocking(finding)
    # the folder stays iceberg's: the root owners alone do not pass it either
    report = review_pr(repo, author="mallory", approvers=["OpenLineage/committers"])
    assert report.required_approvals() == {
        "iceberg": ("@iceberg-dev", "@apache/iceberg-committers")
    }
    assert (
        review_pr(
            repo, author="iceberg-dev", approvers=["OpenLineage/committers"]
        ).required_approvals()
        == {}
    )


def test_deleting_a_nested_entry_asks_its_owners_and_the_root_owners(repo: Repo) -> None:
    """The paths a change deletes are held by no entry on the head side, so iceberg's owners
    approve as the root owners only: removing `iceberg:sub` frees the name, which is the root
    owners' say (here the root line giving iceberg's folder to iceberg's owners), and the change to
    its files is its owners' (before: its owners alone removed the name)."""
    sub = f"{ICEBERG}/sub"
    repo.write(f"{sub}/registry.json", NEW_REGISTRY)
    repo.write(f"{sub}/CODEOWNERS", "* @sub-dev\n")
    repo.commit("a nested entry", branch="main")
    repo.change({f"{sub}/registry.json": None, f"{sub}/CODEOWNERS": None})
    assert review_pr(repo, author="sub-dev").required_approvals() == {
        "iceberg:sub": ("@iceberg-dev", "@apache/iceberg-committers")
    }
    assert review_pr(repo, author="iceberg-dev").required_approvals() == {
        "iceberg:sub": ("@sub-dev",)
    }
    assert review_pr(repo, author="sub-dev", approvers=["iceberg-dev"]).required_approvals() == {}


def test_removing_a_registered_name_needs_the_root_owners_too(repo: Repo) -> None:
    """Deleting an entry's whole folder frees its name for anyone: the root owners, who approve a
    name's claim, approve its removal too (before: the entry's owners alone removed it)."""
    repo.write(
        "CODEOWNERS", (repo.path / "CODEOWNERS").read_text(encoding="utf-8").replace(ROOT_LINE, "")
    )
    repo.commit("the real root CODEOWNERS", branch="main")
    files = sorted(
        p.relative_to(repo.path).as_posix() for p in (repo.path / ICEBERG).rglob("*") if p.is_file()
    )
    repo.change(dict.fromkeys(files))
    report = review_pr(repo, author="iceberg-dev")
    assert report.required_approvals() == {"iceberg": ("@OpenLineage/committers",)}
    [finding] = [f for f in report.findings if f.entry == "iceberg" and f.owners]
    assert "removes the registered name `iceberg`" in finding.message
    assert report.is_blocking(finding)
    passed = review_pr(repo, author="iceberg-dev", approvers=["OpenLineage/committers"])
    assert passed.required_approvals() == {}
    # the root owners alone do not remove another participant's entry either
    assert review_pr(repo, author="OpenLineage/committers").required_approvals() == {
        "iceberg": ("@iceberg-dev", "@apache/iceberg-committers")
    }


def test_a_pr_cannot_add_its_author_as_owner_and_approve_itself(repo: Repo) -> None:
    repo.change(
        {f"{ICEBERG}/CODEOWNERS": ICEBERG_OWNERS.replace("committers", "committers @intruder")}
    )
    report = review_pr(repo, author="intruder", approvers=["intruder"])
    [finding] = rule(report, "owners/codeowners-change-needs-approval")
    assert finding.severity is Severity.ERROR and finding.path == f"{ICEBERG}/CODEOWNERS"
    assert finding.owners == ("@iceberg-dev", "@apache/iceberg-committers")
    assert "judged by the owners on the base branch" in finding.message
    assert rule(report, "owners/approval-required") == []  # one finding per entry


def test_an_entry_codeowners_that_unowns_itself_is_still_owned(repo: Repo) -> None:
    """A last line `CODEOWNERS` with no owner leaves the file deciding who owns the entry without
    owner: anyone could make themselves its owner. It falls back to the root owners on the base
    branch (here iceberg's root line), as a file no line matches does."""
    repo.write(f"{ICEBERG}/CODEOWNERS", ICEBERG_OWNERS + "CODEOWNERS\n")
    repo.commit("CODEOWNERS without owner", branch="main")
    repo.change({f"{ICEBERG}/CODEOWNERS": "* @intruder\n"})
    report = review_pr(repo, author="intruder", approvers=["intruder"])
    [finding] = rule(report, "owners/codeowners-change-needs-approval")
    assert finding.owners == ("@iceberg-dev", "@apache/iceberg-committers")
    assert "base-branch CODEOWNERS line" in finding.message and report.is_blocking(finding)


def test_an_owner_may_change_the_owners(repo: Repo) -> None:
    repo.change(
        {f"{ICEBERG}/CODEOWNERS": ICEBERG_OWNERS.replace("committers", "committers @newcomer")}
    )
    report = review_pr(repo, author="newcomer", approvers=["apache/iceberg-committers"])
    assert rule(report, "owners/codeowners-change-needs-approval") == []


def test_core_facets_are_owned_through_the_core_codeowners(repo: Repo) -> None:
    repo.write(
        "spec/registry/core/CODEOWNERS", "* @OpenLineage/committers\nfacets/Sql*.json @sql-team\n"
    )
    repo.commit("core owners", branch="main")
    facet = repo.path / "spec/facets/SQLJobFacet.json"
    repo.change({"spec/facets/SQLJobFacet.json": facet.read_text(encoding="utf-8") + "\n"})
    report = review_pr(repo, author="sql-team")
    assert [f.owners for f in rule(report, "owners/approval-required")] == [
        ("@OpenLineage/committers",)
    ]
    restart(repo)
    repo.change({"spec/facets/SqlNewJobFacet.json": "{}\n"})
    assert rule(review_pr(repo, author="sql-team"), "owners/approval-required") == []


def test_without_author_or_approvers_approval_is_not_checked(repo: Repo) -> None:
    edit_iceberg(repo)
    report = review_pr(repo)
    assert [f.severity for f in rule(report, "owners/approval-not-checked")] == [Severity.NOTICE]
    assert rule(report, "owners/approval-required") == []
    assert rule(review_pr(repo, author="x"), "owners/approval-not-checked") == []


# --- CODEOWNERS syntax ----------------------------------------------------------------------------

BAD_OWNERS = (
    "* @iceberg-dev\n"  # 1
    "# facets belong to the team\n"  # 2
    "facets/ apache/iceberg-committers\n"  # 3 owner without @
    "!facets/examples/ @iceberg-dev\n"  # 4 negation
    "facets/Iceberg[A-Z]*.json @x\n"  # 5 character range
    "facets/examples/\n"  # 6 legal: un-owns the examples
)


def test_bad_codeowners_lines_are_reported_on_their_line(repo: Repo) -> None:
    repo.change({f"{ICEBERG}/CODEOWNERS": BAD_OWNERS})
    report = review_pr(repo, author="iceberg-dev")
    bad = [
        (f.rule, f.line, f.column, f.severity)
        for f in report.findings
        if f.rule in ("owners/invalid-owner", "owners/invalid-pattern")
    ]
    assert bad == [
        ("owners/invalid-owner", 3, 9, Severity.ERROR),
        ("owners/invalid-pattern", 4, 1, Severity.ERROR),
        ("owners/invalid-pattern", 5, 15, Severity.ERROR),
    ]
    assert all(
        f.path == f"{ICEBERG}/CODEOWNERS" and f.entry == "iceberg"
        for f in report.findings
        if f.rule.startswith("owners/invalid")
    )


def test_bad_lines_fail_a_whole_tree_review(repo: Repo, tmp_path: Path) -> None:
    """GitHub skips such a line: a real defect, not an adoption gap, so ``--all`` reports an
    error."""
    repo.write(f"{ICEBERG}/CODEOWNERS", BAD_OWNERS)
    repo.commit("base", branch="main")
    [finding] = [f for f in _check_all(repo.path, tmp_path) if f["rule"] == "owners/invalid-owner"]
    assert (finding["severity"], finding["line"]) == ("error", 3)


def test_an_entry_codeowners_without_owner_for_registry_json(repo: Repo) -> None:
    repo.change({f"{ICEBERG}/CODEOWNERS": "facets/ @iceberg-dev\n"})
    [finding] = rule(review_pr(repo, author="iceberg-dev"), "owners/no-owners")
    assert finding.severity is Severity.ERROR and "no line matches it" in finding.message
    repo.change({f"{ICEBERG}/CODEOWNERS": "* @iceberg-dev\nregistry.json\n"})
    [finding] = rule(review_pr(repo, author="iceberg-dev"), "owners/no-owners")
    assert finding.line == 2 and "line 2 un-owns it" in finding.message


def test_a_pattern_written_from_the_repository_root_is_a_warning_at_its_line(repo: Repo) -> None:
    """`/spec/registry/iceberg/facets/` in iceberg's own CODEOWNERS matches nothing (its patterns
    are relative to its folder): the schemas silently stayed with the `*` line's owners."""
    lines = f"{ICEBERG_OWNERS}/{ICEBERG}/facets/ @iceberg-schemas\nfacets/examples/ @iceberg-dev\n"
    repo.change({f"{ICEBERG}/CODEOWNERS": lines})
    [finding] = rule(review_pr(repo, author="iceberg-dev"), "owners/repo-relative-pattern")
    assert finding.severity is Severity.WARNING and finding.state is State.NEW
    assert (finding.path, finding.line) == (f"{ICEBERG}/CODEOWNERS", 3)
    assert "relative to the entry's folder" in finding.message and "`/facets/`" in finding.hint


def test_a_symlinked_codeowners_is_unreadable(repo: Repo) -> None:
    (repo.path / ICEBERG / "CODEOWNERS").unlink()
    (repo.path / ICEBERG / "CODEOWNERS").symlink_to("/etc/passwd")
    repo.commit()
    [finding] = rule(review_pr(repo, author="iceberg-dev"), "owners/unreadable-codeowners")
    assert finding.severity is Severity.ERROR and "symlink" in finding.message


# --- the root CODEOWNERS GitHub enforces ----------------------------------------------------------


def test_root_codeowners_disagreeing_with_the_entry_is_a_warning(repo: Repo) -> None:
    repo.change({f"{ICEBERG}/CODEOWNERS": "* @iceberg-dev\n"})
    [finding] = rule(review_pr(repo, author="iceberg-dev"), "owners/root-mismatch")
    assert finding.severity is Severity.WARNING and finding.line == 1
    assert "@iceberg-dev, @apache/iceberg-committers (CODEOWNERS line 6)" in finding.message
    assert "`/spec/registry/iceberg/ @iceberg-dev`" in finding.hint


def test_an_entry_with_agreeing_codeowners_edited_by_its_owner_has_no_owner_finding(
    repo: Repo,
) -> None:
    edit_iceberg(repo)
    report = review_pr(repo, author="iceberg-dev")
    # no missing file, no bad line, owned registry.json, same root routing
    assert report.findings == ()


@pytest.mark.parametrize(
    ("github_file", "routed_to"),
    [
        (
            "* @from-github\n/spec/registry/ @registry-team\n",
            "@registry-team (.github/CODEOWNERS line 2)",
        ),
        (
            "/spec/registry/ @registry-team\n* @from-github\n",
            "@from-github (.github/CODEOWNERS line 2)",
        ),
    ],
)
def test_root_lookup_order_and_last_match_wins(
    repo: Repo, github_file: str, routed_to: str
) -> None:
    """.github/CODEOWNERS shadows the root file (which routes iceberg elsewhere); its last match
    wins."""
    repo.write(".github/CODEOWNERS", github_file)
    repo.commit("github folder", branch="main")
    repo.edit_json("spec/registry/gcp/lineage/registry.json", lambda d: d.update(extra=1))
    repo.commit()
    [finding] = rule(review_pr(repo, author="x"), "owners/missing-codeowners")
    assert routed_to in finding.message


def test_editing_a_root_codeowners_github_does_not_read(repo: Repo) -> None:
    repo.write(".github/CODEOWNERS", "* @from-github\n")
    repo.commit("github folder", branch="main")
    repo.change({"CODEOWNERS": "* @someone\n"})
    [finding] = rule(review_pr(repo, author="x"), "owners/ignored-root-codeowners")
    assert finding.path == "CODEOWNERS" and "it reads .github/CODEOWNERS" in finding.message
    restart(repo)
    repo.change({".github/CODEOWNERS": "* @from-github\nbad-line owner\n"})
    report = review_pr(repo, author="x")
    assert rule(report, "owners/ignored-root-codeowners") == []
    assert [(f.path, f.line) for f in rule(report, "owners/invalid-owner")] == [
        (".github/CODEOWNERS", 2)
    ]


def test_a_hostile_root_pattern_is_reported_not_hung() -> None:
    entry = "spec/registry/" + "a" * 3000
    snapshot = MemorySnapshot(
        {
            "CODEOWNERS": b"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b @x\n",
            f"{entry}/registry.json": b"{}",
            f"{entry}/CODEOWNERS": b"* @x\n",
        }
    )
    report = review(head=snapshot, checks=[owners.check])
    [finding] = rule(report, "owners/unchecked-pattern")
    assert (finding.path, finding.line) == ("CODEOWNERS", 1) and "time limit" in finding.message


def test_root_lines_past_the_compile_budget_are_errors_on_their_lines() -> None:
    """A root CODEOWNERS of long patterns that may match anywhere: the lines the bot would not
    compile are errors on their lines, so the review fails rather than judging ownership without
    them."""
    wide = "*" + "/*".join("d" * 8 for _ in range(400))
    lines = "".join(f"{wide}{i} @o{i}\n" for i in range(100))
    entry = "spec/registry/acme"
    snapshot = MemorySnapshot(
        {
            "CODEOWNERS": lines.encode(),
            f"{entry}/registry.json": b"{}",
            f"{entry}/CODEOWNERS": b"* @x\n",
        }
    )
    report = review(head=snapshot, checks=[owners.check])
    found = rule(report, "owners/unchecked-pattern")
    assert found and {f.path for f in found} == {"CODEOWNERS"}
    assert [f.line for f in found] == list(range(1, len(found) + 1))
    assert all("over the bot's limit of 300,000 characters" in f.message for f in found)
    assert report.verdict.value == "failure"


# --- the whole real registry ----------------------------------------------------------------------


def _check_all(path: Path, out_dir: Path, *extra: str) -> list[dict[str, Any]]:
    """``registry-bot check --all`` as the command line runs it; the owners findings of its JSON
    report."""
    out = out_dir / "report.json"
    main(["check", "--all", str(path), "--format", "json", "--output", str(out), *extra])
    findings = json.loads(out.read_text(encoding="utf-8"))["findings"]
    return [f for f in findings if str(f["rule"]).startswith("owners/")]


def test_check_all_on_the_real_corpus_gives_warnings_and_no_errors(
    corpus: Path, tmp_path: Path
) -> None:
    found = _check_all(corpus, tmp_path)
    assert {f["severity"] for f in found} == {"warning"}
    # core has no CODEOWNERS of its own: the root CODEOWNERS delegates spec/registry/core on a line
    # of its own
    assert sorted(f["entry"] for f in found) == [
        "gcp:composer",
        "gcp:dataproc",
        "gcp:lineage",
        "iceberg",
    ]
    assert {f["rule"] for f in found} == {"owners/missing-codeowners"}
    assert {f["severity"] for f in _check_all(corpus, tmp_path, "--strict")} == {"error"}


def test_every_rule_is_described() -> None:
    assert all(
        rule_id.startswith("owners/") and len(text) > 40 for rule_id, text in owners.RULES.items()
    )


def test_each_touched_entry_is_judged_on_its_own(repo: Repo) -> None:
    repo.edit_json(f"{ICEBERG}/registry.json", lambda d: d.update(extra=1))
    repo.edit_json("spec/registry/gcp/lineage/registry.json", lambda d: d.update(extra=1))
    repo.commit()
    report = review_pr(repo, author="iceberg-dev")
    assert report.required_approvals() == {"gcp:lineage": ("@OpenLineage/committers",)}


def test_an_enterprise_managed_user_owns_and_approves_their_entry(repo: Repo) -> None:
    """``@octo_acme`` (an Enterprise Managed User: handle, underscore, short code) was refused as
    an owner: its line was skipped, so the entry fell back to the root owners."""
    repo.write(f"{ICEBERG}/CODEOWNERS", "* @octo_acme\n")
    repo.commit("a managed user owns iceberg", branch="main")
    edit_iceberg(repo)
    report = review_pr(repo, author="octo_acme")
    assert rule(report, "owners/invalid-owner") == [] and report.required_approvals() == {}
    assert review_pr(repo, author="someone").required_approvals() == {"iceberg": ("@octo_acme",)}
    # the command line takes the login too (before: "not a GitHub login", exit 2)
    args = ["check", str(repo.path), "--base", "main", "--head", "pr", "--author", "someone"]
    assert main([*args, "--approved-by", "octo_acme"]) == 0


def test_an_email_owner_is_matched_by_the_same_email(repo: Repo) -> None:
    repo.write(f"{ICEBERG}/CODEOWNERS", "* lead@iceberg.example\n")
    repo.commit("e-mail owner", branch="main")
    edit_iceberg(repo)
    [finding] = rule(review_pr(repo, author="lead"), "owners/approval-required")
    assert finding.owners == ("lead@iceberg.example",)
    assert (
        rule(
            review_pr(repo, author="lead", approvers=["Lead@Iceberg.example"]),
            "owners/approval-required",
        )
        == []
    )


def test_an_email_owner_never_passes_or_fails_silently(repo: Repo) -> None:
    """GitHub matches an e-mail owner to the account with that verified address; the bot cannot
    read accounts' addresses, so the account's approval (its login) never counts, in any door. The
    finding stays an error and now says why, for an entry's owner and for a root owner (before:
    "approval needed from lead@iceberg.example", though lead had approved)."""
    repo.write(f"{ICEBERG}/CODEOWNERS", "* lead@iceberg.example @iceberg-dev\n")
    repo.write("CODEOWNERS", "* root@openlineage.example\n")
    repo.commit("e-mail owners", branch="main")
    edit_iceberg(repo)
    repo.change({"spec/registry/README.md": "# The registry\n"})
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = review(
            head=head,
            base=base,
            changes=ChangeSet.from_git(repo.path, "main", "pr"),
            context=ReviewContext(author="lead", approvers=frozenset({"root"})),
            checks=[owners.check, ownership.check],
        )
    approval = {f.rule: f for f in report.findings if f.owners}
    assert set(approval) == {"owners/approval-required", "ownership/outside-entry"}
    assert "lead@iceberg.example is an e-mail owner" in approval["owners/approval-required"].message
    outside = approval["ownership/outside-entry"].message
    assert "root@openlineage.example is an e-mail owner" in outside
    assert all(report.is_blocking(f) and "the bot cannot" in f.message for f in approval.values())
    # an owner named by login passes the entry; no e-mail note where no e-mail owner is asked
    passed = review_pr(repo, author="iceberg-dev")
    assert rule(passed, "owners/approval-required") == []
