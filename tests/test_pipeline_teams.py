"""Team approvals with the real checks: the App asks GitHub whether the author or an approver is an
active member of a team that owns the changed files (base side), and passes ``org/team`` on to the
owners check.

The base is the real corpus (root CODEOWNERS: ``* @OpenLineage/committers``) plus an entry
CODEOWNERS for ``gcp:dataproc`` (``@OpenLineage/gcp-team``) and a root line for iceberg
(``@OpenLineage/iceberg-team``). The pull request reformats the registry.json of ``gcp:composer``
and ``gcp:dataproc``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.findings import Finding
from bot.github.api import GitHubError, PullRequest
from bot.github.local import LocalGitHub
from bot.github.pipeline import fetch, review_inputs
from bot.github.publish import SUMMARY_MARKER
from bot.github.teams import MAX_LOOKUPS
from bot.service.worker import review_pull_request
from tests.gitrepo import Repo, git
from tests.test_pipeline import REPO

COMPOSER = "spec/registry/gcp/composer/registry.json"
DATAPROC = "spec/registry/gcp/dataproc/registry.json"
COMMITTERS, GCP_TEAM, ICEBERG_TEAM = (
    "OpenLineage/committers",
    "OpenLineage/gcp-team",
    "OpenLineage/iceberg-team",
)


@pytest.fixture(scope="module")
def change(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    repo = Repo.from_folder(corpus, tmp_path_factory.mktemp("teams") / "repo")
    repo.write("spec/registry/gcp/dataproc/CODEOWNERS", f"* @{GCP_TEAM}\n")
    root = (corpus / "CODEOWNERS").read_text(encoding="utf-8")
    repo.write("CODEOWNERS", root + f"spec/registry/iceberg/ @{ICEBERG_TEAM}\n")
    repo.commit("entry owners", branch="main")
    for path in (COMPOSER, DATAPROC):
        repo.edit_json(path, lambda data: data)  # reformatted: a change without mistakes
    repo.commit("reformat", branch="pr")
    assert sorted(git(repo.path, "diff", "--name-only", "main", "pr").splitlines()) == [
        COMPOSER,
        DATAPROC,
    ]
    return repo.path


def pull(
    change: Path, author: str = "contributor", teams: dict[str, list[str]] | None = None
) -> tuple[LocalGitHub, PullRequest]:
    gh = LocalGitHub(
        change,
        "main",
        "pr",
        repo=REPO,
        number=7,
        author=author,
        team_members=teams
        if teams is not None
        else {COMMITTERS: ["carol"], GCP_TEAM: ["dan"], ICEBERG_TEAM: ["carol", "dan"]},
    )
    return gh, gh.get_pull_request(REPO, 7)


def lookups(gh: LocalGitHub) -> list[tuple[str, str]]:
    """The team memberships asked about, in order: (org/team, login)."""
    return [
        (f"{a['org']}/{a['team_slug']}", a["login"])
        for method, a in gh.log
        if method == "get_team_membership"
    ]


def approvals(findings: tuple[Finding, ...]) -> dict[str, tuple[str, ...]]:
    return {f.entry or "": f.owners for f in findings if f.rule == "owners/approval-required"}


def test_without_approvals_each_entry_names_its_owning_team(change: Path) -> None:
    gh, pr = pull(change)
    inputs = fetch(gh, pr)
    report = review_inputs(inputs)
    assert approvals(report.findings) == {
        "gcp:composer": (f"@{COMMITTERS}",),
        "gcp:dataproc": (f"@{GCP_TEAM}",),
    }
    # only the teams owning the changed files are asked about, for the author; never the iceberg
    # team
    assert lookups(gh) == [(COMMITTERS, "contributor"), (GCP_TEAM, "contributor")]
    assert inputs.approvers == frozenset() and not [
        s for s in report.sections if s.title == "Team membership"
    ]


def test_an_approval_by_a_team_member_counts_for_the_team(change: Path) -> None:
    gh, pr = pull(change)
    gh.add_review("carol")  # in committers, not in gcp-team
    inputs = fetch(gh, pr)
    assert inputs.approvers == {"carol", COMMITTERS}
    assert approvals(review_inputs(inputs).findings) == {"gcp:dataproc": (f"@{GCP_TEAM}",)}


def test_an_author_in_one_team_and_an_approver_in_the_other_pass(change: Path) -> None:
    gh, pr = pull(change, author="dan")
    gh.add_review("carol")
    report = review_inputs(fetch(gh, pr))
    assert approvals(report.findings) == {} and report.verdict.value == "success"


def test_a_non_member_approval_does_not_count(change: Path) -> None:
    gh, pr = pull(change)
    gh.add_review("mallory")
    report = review_inputs(fetch(gh, pr))
    assert set(approvals(report.findings)) == {"gcp:composer", "gcp:dataproc"}
    assert ("OpenLineage/committers", "mallory") in lookups(gh)


def test_a_missing_members_permission_asks_for_approval_and_says_so(change: Path) -> None:
    gh, pr = pull(change)
    gh.add_review("carol")
    gh.fail(
        "get_team_membership", GitHubError("Resource not accessible by integration", 403), times=10
    )
    assert review_pull_request(gh, pr, "d-1") == "failure"  # the review completes
    [run] = gh.runs_for(pr.head_sha)
    assert "Team membership could not be verified" in run.summary
    assert "lacks the Members: read permission" in run.summary
    assert {a["title"] for a in run.annotations if a["level"] == "failure"} == {
        "owners/approval-required"
    }
    [comment] = [c for c in gh.issue_comments if SUMMARY_MARKER in c.body]
    assert (
        "Team membership could not be verified" in comment.body
        and "@OpenLineage/gcp-team" in comment.body
    )


def test_a_team_github_does_not_show_is_unverified(change: Path) -> None:
    gh, pr = pull(change, teams={COMMITTERS: ["carol"]})  # gcp-team: 404, as without the permission
    gh.add_review("carol")
    inputs = fetch(gh, pr)
    assert inputs.approvers == {"carol", COMMITTERS}
    assert [team for team, _ in inputs.teams.unverified] == [GCP_TEAM]
    section = inputs.teams.section()
    assert section is not None and "does not show this team" in section.markdown
    assert approvals(review_inputs(inputs).findings) == {"gcp:dataproc": (f"@{GCP_TEAM}",)}


@pytest.mark.parametrize("status", [502, 0])
def test_a_lookup_github_fails_is_retried_not_judged(change: Path, status: int) -> None:
    """GitHub failing (5xx) or not answering says nothing about the team: the job is retried, and
    the retry passes (before: 'could not be verified', a failure and a finished job)."""
    gh, pr = pull(change, author="dan")
    gh.add_review("carol")
    gh.fail("get_team_membership", GitHubError("Bad gateway", status), times=1)
    with pytest.raises(GitHubError):
        review_pull_request(gh, pr, "d-1")
    assert review_pull_request(gh, pr, "d-2") == "success"


def test_past_the_lookup_cap_the_teams_left_are_not_approving_and_the_note_says_the_cap(
    change: Path,
) -> None:
    """More approvals by non-members than one review looks up (anyone can approve a public pull
    request): the teams left are not approving, never "unverified", and the note names the cap,
    not the Members permission (before: both teams unverified, with the permission's advice)."""
    gh, pr = pull(change)
    for i in range(MAX_LOOKUPS):
        gh.add_review(f"sock{i}")
    inputs = fetch(gh, pr)
    assert len(lookups(gh)) == MAX_LOOKUPS
    assert inputs.teams.unverified == () and inputs.teams.unasked == (COMMITTERS, GCP_TEAM)
    section = inputs.teams.section()
    assert section is not None and f"more than {MAX_LOOKUPS} membership lookups" in section.markdown
    assert "Members: read" not in section.markdown
    assert set(approvals(review_inputs(inputs).findings)) == {"gcp:composer", "gcp:dataproc"}


def test_an_apps_account_is_never_looked_up(change: Path) -> None:
    """No team has an App's account (``dependabot[bot]``) as a member: its pull request asks only
    about its human approvers."""
    gh, pr = pull(change, author="dependabot[bot]")
    gh.add_review("carol")
    inputs = fetch(gh, pr)
    assert lookups(gh) == [(COMMITTERS, "carol"), (GCP_TEAM, "carol")]
    assert approvals(review_inputs(inputs).findings) == {"gcp:dataproc": (f"@{GCP_TEAM}",)}


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("spec/registry/README.md", "ownership/outside-entry"),
        ("CODEOWNERS", "ownership/steering-file-change"),
        ("spec/OpenLineage.json", "ownership/spec-change"),
    ],
)
def test_a_team_owning_a_file_outside_the_entries_counts_through_its_member(
    tmp_path: Path, corpus: Path, path: str, rule: str
) -> None:
    """The real root CODEOWNERS gives everything outside the entries to `@OpenLineage/committers`:
    a committer's approval of a registry README or of a root CODEOWNERS edit (which moves iceberg's
    folder, also the committers') counts once the team is asked about (before: only entries'
    teams were, so no approval could ever pass such a change)."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    root = (corpus / "CODEOWNERS").read_text(encoding="utf-8")
    text = "# The registry\n" if path != "CODEOWNERS" else root + "spec/registry/iceberg/ @ice\n"
    repo.write(path, text)
    repo.commit("outside the entries", branch="pr")
    gh, pr = pull(repo.path)
    gh.add_review("mallory")
    report = review_inputs(fetch(gh, pr))
    [finding] = [f for f in report.findings if f.rule == rule]
    assert finding.owners == (f"@{COMMITTERS}",) and report.is_blocking(finding)
    gh, pr = pull(repo.path)
    gh.add_review("carol")
    inputs = fetch(gh, pr)
    assert (COMMITTERS, "carol") in lookups(gh) and COMMITTERS in inputs.approvers
    report = review_inputs(inputs)
    assert [f for f in report.findings if f.rule.startswith("ownership/")] == []


def test_a_new_entry_inside_an_entry_asks_the_root_owners_team(
    tmp_path: Path, corpus: Path
) -> None:
    """`gcp:dataproc:sub` made inside gcp:dataproc's folder is a new name: a member of the root
    owners' team approving it counts (its team is looked up, not only gcp-team)."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.write("spec/registry/gcp/dataproc/CODEOWNERS", f"* @{GCP_TEAM}\n")
    repo.commit("entry owners", branch="main")
    sub = "spec/registry/gcp/dataproc/sub"
    registry = '{"producer": {"root_doc_URL": "https://x.example", "produced_facets": []}}\n'
    repo.write(f"{sub}/registry.json", registry)
    repo.write(f"{sub}/CODEOWNERS", f"* @{GCP_TEAM}\n")
    repo.commit("a new name", branch="pr")
    gh, pr = pull(repo.path, author="dan")
    assert approvals(review_inputs(fetch(gh, pr)).findings) == {
        "gcp:dataproc:sub": (f"@{COMMITTERS}",)
    }
    gh, pr = pull(repo.path, author="dan")
    gh.add_review("carol")
    inputs = fetch(gh, pr)
    assert (COMMITTERS, "carol") in lookups(gh)
    assert approvals(review_inputs(inputs).findings) == {}


def test_removing_an_entry_asks_the_root_owners_team(tmp_path: Path, corpus: Path) -> None:
    """Deleting gcp:dataproc frees its name: the root owners' team approves that too, and its
    member's approval counts in the App (its team is looked up), as on the command line (before:
    a member of the entry's own team removed the name alone)."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    folder = repo.path / "spec/registry/gcp/dataproc"
    repo.write("spec/registry/gcp/dataproc/CODEOWNERS", f"* @{GCP_TEAM}\n")
    repo.commit("entry owners", branch="main")
    files = sorted(p.relative_to(repo.path).as_posix() for p in folder.rglob("*") if p.is_file())
    repo.change(dict.fromkeys(files))
    gh, pr = pull(repo.path, author="dan")
    report = review_inputs(fetch(gh, pr))
    [finding] = [f for f in report.findings if f.entry == "gcp:dataproc" and f.owners]
    assert finding.owners == (f"@{COMMITTERS}",) and report.is_blocking(finding)
    assert "removes the registered name" in finding.message
    gh, pr = pull(repo.path, author="dan")
    gh.add_review("carol")
    inputs = fetch(gh, pr)
    assert (COMMITTERS, "carol") in lookups(gh)
    report = review_inputs(inputs)
    assert [f for f in report.findings if f.entry == "gcp:dataproc" and f.owners] == []


def test_a_team_is_asked_about_by_its_slug_once_however_codeowners_spells_it(
    tmp_path: Path, corpus: Path
) -> None:
    """GitHub's team slugs are lower case and CODEOWNERS matches teams and logins
    case-insensitively: `@OpenLineage/GCP-Team` and `@openlineage/gcp-team` are one team, asked
    about by its slug, once, for a login however it is spelt (before: by the spelling written, once
    per spelling)."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.write("spec/registry/gcp/dataproc/CODEOWNERS", "* @OpenLineage/GCP-Team\n")
    repo.write("spec/registry/gcp/composer/CODEOWNERS", "* @openlineage/gcp-team\n")
    repo.commit("entry owners", branch="main")
    for path in (COMPOSER, DATAPROC):
        repo.edit_json(path, lambda data: data)
    repo.commit("reformat", branch="pr")
    gh, pr = pull(repo.path, author="Dan")
    gh.add_review("dan")
    inputs = fetch(gh, pr)
    assert lookups(gh) == [("openlineage/gcp-team", "Dan")]
    report = review_inputs(inputs)
    assert approvals(report.findings) == {} and report.verdict.value == "success"


def test_a_team_of_another_organization_is_named_as_such(tmp_path: Path, corpus: Path) -> None:
    """The proposal's layout names vendors' teams (`@acme/openlineage`): an App installed for the
    repository's organization is never shown another organization's team, and the "Team
    membership" note says so rather than blaming the Members permission (before: "does not show
    this team to the App (404): no Members: read permission, or no such team"). Only the App's
    note says it: the findings are those of every door."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.write("spec/registry/gcp/dataproc/CODEOWNERS", "* @acme/openlineage\n")
    repo.commit("a vendor's team", branch="main")
    repo.edit_json(DATAPROC, lambda data: data)
    repo.commit("reformat", branch="pr")
    gh, pr = pull(repo.path)
    gh.add_review("carol")
    inputs = fetch(gh, pr)
    assert [team for team, _ in inputs.teams.unverified] == ["acme/openlineage"]
    section = inputs.teams.section()
    org = REPO.partition("/")[0]
    assert section is not None
    assert f"belongs to acme, not to the repository's organization {org}" in section.markdown
    assert approvals(review_inputs(inputs).findings) == {"gcp:dataproc": ("@acme/openlineage",)}
