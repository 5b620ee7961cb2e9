"""``registry-bot action`` in process, against GitHub's REST API as the Action's token sees it (the
stand-in): approvals, the owning teams' members, teams the token cannot see, the membership lookup
cap, GitHub failing, bot authors, long review listings. (The installed Action, its steps as a runner
runs them: ``tests/test_hooks.py``.)

The change edits two entries of the bundled reference registry: ``marquez`` (owned by
``@MarquezProject/committers``) and ``egeria`` (``@odpi/egeria-lineage``), nothing else wrong with
it, so the owners' approvals are the whole verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import bot.github.action
from bot.cli import main
from bot.github.client import RetryPolicy
from bot.github.local import LocalGitHub, ReviewRecord
from bot.github.teams import MAX_LOOKUPS
from tests.conftest import ROOT
from tests.gitrepo import Repo
from tests.standin import Fault, StandIn

REFERENCE = ROOT / "registry" / "reference"
REPO = "OpenLineage/OpenLineage"
MARQUEZ = "spec/registry/marquez/registry.json"
EGERIA = "spec/registry/egeria/registry.json"
MARQUEZ_TEAM, EGERIA_TEAM = "MarquezProject/committers", "odpi/egeria-lineage"
APPROVAL = "owners/approval-required"


def edit_both(repo: Repo) -> None:
    """New documentation URLs for marquez and egeria (the files keep their layout)."""
    for path in (MARQUEZ, EGERIA):
        text = (repo.path / path).read_text(encoding="utf-8")
        repo.write(path, text.replace('/",', '/moved/",', 1))
    repo.commit("move the documentation")


@pytest.fixture(scope="module")
def change(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = Repo.from_folder(REFERENCE, tmp_path_factory.mktemp("action") / "repo")
    edit_both(repo)
    return repo.path


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same change where egeria's CODEOWNERS names a login beside its team: ``@erin``."""
    repo = Repo.from_folder(REFERENCE, tmp_path_factory.mktemp("action-mixed") / "repo")
    repo.write("spec/registry/egeria/CODEOWNERS", f"* @{EGERIA_TEAM} @erin\n")
    repo.commit("egeria names erin", branch="main")
    edit_both(repo)
    return repo.path


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without the waits between them."""
    monkeypatch.setattr(bot.github.action, "RETRY", RetryPolicy(base_delay=0.0, max_delay=0.0))


def github(repo: Path, teams: dict[str, list[str]], author: str = "mallory") -> LocalGitHub:
    return LocalGitHub(repo, "main", "pr", repo=REPO, number=7, author=author, team_members=teams)


@dataclass(frozen=True)
class Done:
    code: int
    results: list[dict[str, Any]]  # the SARIF file's results
    summary: str
    out: str
    err: str
    paths: list[str]  # the API paths the Action asked for

    def levels(self, rule: str = APPROVAL) -> dict[str, str]:
        """SARIF level of each ``rule`` result, by file."""
        return {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["level"]
            for r in self.results
            if r["ruleId"] == rule
        }


def action(
    local: LocalGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    author: str | None = "mallory",
    faults: Iterable[Fault] = (),
    args: Iterable[str] = (),
    event: dict[str, Any] | None = None,
) -> Done:
    """The review step of a ``pull_request`` event by ``author`` (None: the event names no one),
    or of ``event``."""
    folder = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    folder.mkdir()
    if event is None:
        event = {"pull_request": {"number": 7, "user": {"login": author} if author else {}}}
    (folder / "event.json").write_text(json.dumps(event), encoding="utf-8")
    sarif, summary = folder / "out.sarif", folder / "summary.md"
    capsys.readouterr()
    with StandIn(local) as server:
        for fault in faults:
            server.add_fault(fault)
        monkeypatch.setenv("GITHUB_TOKEN", server.state.issue_token()[0])
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(folder / "event.json"))
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        code = main(
            [
                "action",
                str(local.repo_path),
                "--base",
                "main",
                "--head",
                "pr",
                "--sarif",
                str(sarif),
                *args,
            ]
        )
        paths = [str(r["path"]) for r in server.state.requests]
    out, err = capsys.readouterr()
    results = json.loads(sarif.read_text())["runs"][0]["results"] if sarif.exists() else []
    return Done(code, results, summary.read_text() if summary.exists() else "", out, err, paths)


def test_an_approval_by_a_member_of_each_owning_team_passes(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]})
    unapproved = action(local, tmp_path, monkeypatch, capsys)
    assert unapproved.code == 1 and unapproved.levels() == {MARQUEZ: "error", EGERIA: "error"}
    local.add_review("maria")
    local.add_review("erin")
    approved = action(local, tmp_path, monkeypatch, capsys)
    assert approved.code == 0 and approved.levels() == {}, approved.out


@pytest.mark.parametrize("socks", [2, MAX_LOOKUPS])
def test_approvals_from_accounts_that_own_nothing_never_pass(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    socks: int,
) -> None:
    """Enough approvals by non-members that the lookups reach the cap: the teams left unasked are
    not approving, never "not checked" (before: every approval finding a notice, exit 0), and the
    summary says the cap, not the token."""
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]})
    for i in range(socks):
        local.add_review(f"sock{i}")
    done = action(local, tmp_path, monkeypatch, capsys)
    assert done.code == 1 and done.levels() == {MARQUEZ: "error", EGERIA: "error"}, done.out
    assert "not checked" not in done.summary and "read:org" not in done.summary
    looked_up = len([p for p in done.paths if "/memberships/" in p])
    assert looked_up <= MAX_LOOKUPS
    if socks == MAX_LOOKUPS:
        assert f"more than {MAX_LOOKUPS} membership lookups" in done.summary


def test_a_team_the_token_cannot_see_excuses_only_the_entries_it_alone_owns(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """egeria's team is hidden from the token (404): its approval is not checked (a notice);
    marquez's team is visible and no member approved: still an error (before: both notices, exit
    0)."""
    local = github(change, {MARQUEZ_TEAM: ["maria"]})
    done = action(local, tmp_path, monkeypatch, capsys)
    assert done.levels() == {MARQUEZ: "error", EGERIA: "note"}, done.out
    assert done.code == 1
    assert "Approval not checked" in done.summary and f"@{EGERIA_TEAM}" in done.summary
    local.add_review("maria")
    approved = action(local, tmp_path, monkeypatch, capsys)
    assert approved.code == 0 and approved.levels() == {EGERIA: "note"}, approved.out


def test_a_hidden_team_beside_a_login_owner_does_not_excuse_the_login(
    mixed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """egeria is owned by a hidden team and by ``@erin``: erin's missing approval can be checked,
    so it stays an error; once erin approves, the team is not even asked about."""
    local = github(mixed, {MARQUEZ_TEAM: ["maria"]})
    local.add_review("maria")
    done = action(local, tmp_path, monkeypatch, capsys)
    assert done.code == 1 and done.levels() == {EGERIA: "error"}, done.out
    local.add_review("erin")
    approved = action(local, tmp_path, monkeypatch, capsys)
    assert approved.code == 0 and approved.levels() == {}, approved.out
    assert not [p for p in approved.paths if p.startswith(f"/orgs/{EGERIA_TEAM.split('/')[0]}/")]


def test_without_a_pull_request_no_approval_is_judged(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A push event names no pull request: no approval can be read, so every entry's is "not
    checked" (the per-team rule above does not narrow this)."""
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]})
    done = action(
        local,
        tmp_path,
        monkeypatch,
        capsys,
        event={"after": "0" * 40},
        args=["--author", "mallory"],
    )
    assert done.code == 0 and done.levels() == {MARQUEZ: "note", EGERIA: "note"}, done.out
    assert "Approval not checked" in done.summary and "no pull request in the event" in done.summary
    assert not [p for p in done.paths if p.startswith(("/repos/", "/orgs/"))]


def test_github_failing_a_lookup_is_retried_then_the_review_cannot_finish(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A 502 is retried as the App's client retries it; one that lasts fails the review with a
    could-not-finish finding, the SARIF file and the summary still written (before: a traceback,
    exit 1, no SARIF for the upload step)."""
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]})
    local.add_review("maria")
    local.add_review("erin")
    lookups = "/orgs/*/teams/*/memberships/*"
    once = action(local, tmp_path, monkeypatch, capsys, faults=[Fault(lookups, 502, count=1)])
    assert once.code == 0 and once.levels() == {}, once.out + once.err
    lasting = action(local, tmp_path, monkeypatch, capsys, faults=[Fault(lookups, 502, count=100)])
    assert lasting.code == 1 and "Traceback" not in lasting.err
    assert lasting.levels("bot/incomplete-review") == {".": "error"}, lasting.out
    assert "502" in lasting.summary and "502" in lasting.out
    reviews = action(
        local, tmp_path, monkeypatch, capsys, faults=[Fault("/repos/*/pulls/*/reviews", 503, 100)]
    )
    assert reviews.code == 1 and reviews.levels("bot/incomplete-review") == {".": "error"}
    assert reviews.levels() == {MARQUEZ: "error", EGERIA: "error"}  # no approval counted


@pytest.mark.parametrize(
    ("status", "message"),  # GitHub's answers to a token it refuses
    [
        (401, "Bad credentials"),
        (403, "Resource not accessible by integration"),
        (404, "Not Found"),
    ],
)
def test_reviews_the_token_may_not_read_make_a_review_that_cannot_finish(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
    message: str,
) -> None:
    """A token GitHub refuses the reviews to (a bad token, no ``pull-requests: read``, a repository
    it cannot see) leaves the approvals unread: the review cannot finish (exit 1, SARIF and summary
    written), as when GitHub fails. Before, every entry's approval became a notice and the job
    passed on a change nobody was seen to approve."""
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]})
    refused = Fault("/repos/*/pulls/*/reviews", status, count=100, message=message)
    done = action(local, tmp_path, monkeypatch, capsys, faults=[refused])
    assert done.code == 1 and "Traceback" not in done.err, done.out + done.err
    assert done.levels("bot/incomplete-review") == {".": "error"}, done.out
    assert done.levels() == {MARQUEZ: "error", EGERIA: "error"}  # no approval counted
    assert f"{status} {message}" in done.summary and "pull-requests: read" in done.summary
    assert "Approval not checked" not in done.summary
    assert sum(p.endswith("/pulls/7/reviews") for p in done.paths) == 1  # not retried


@pytest.mark.parametrize("where", ["event", "--author"])
def test_a_pull_request_opened_by_a_bot_is_reviewed(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
) -> None:
    """GitHub names an App's pull request ``dependabot[bot]`` (before: exit 2, "not a GitHub
    login")."""
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]}, "dependabot[bot]")
    args = ["--author", "dependabot[bot]"] if where == "--author" else []
    done = action(
        local,
        tmp_path,
        monkeypatch,
        capsys,
        author="dependabot[bot]" if where == "event" else None,
        args=args,
    )
    assert done.code == 1 and done.levels() == {MARQUEZ: "error", EGERIA: "error"}, done.err
    assert "@dependabot[bot]" in done.out


def test_a_review_past_the_first_thirty_pages_still_counts(
    change: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An owner's later "changes requested" on the 31st page of reviews withdraws their approval on
    the first (before: the listing stopped after 30 pages, and the approval passed the change)."""
    local = github(change, {MARQUEZ_TEAM: ["maria"], EGERIA_TEAM: ["erin"]})
    local.add_review("maria")
    local.add_review("erin")
    head = local.resolve("pr")
    with local._lock:
        local.reviews.extend(
            ReviewRecord(100_000 + i, f"reader{i}", "COMMENTED", head, "+1", "COMMENT")
            for i in range(3_000)
        )
    approved = action(local, tmp_path, monkeypatch, capsys)
    assert approved.code == 0 and approved.levels() == {}, approved.out
    local.add_review("maria", "REQUEST_CHANGES", "not this URL")
    withdrawn = action(local, tmp_path, monkeypatch, capsys)
    assert withdrawn.code == 1 and withdrawn.levels() == {MARQUEZ: "error"}, withdrawn.out
    assert len([p for p in withdrawn.paths if p.endswith("/reviews")]) == 31
    # a listing past what the Action follows is not seen in full: no verdict from it
    monkeypatch.setattr(bot.github.action, "MAX_PAGES", 30)
    cut = action(local, tmp_path, monkeypatch, capsys)
    assert cut.code == 1 and cut.levels("bot/incomplete-review") == {".": "error"}, cut.out
    assert "more than 30 pages, not read in full" in cut.summary
    assert cut.levels() == {MARQUEZ: "error", EGERIA: "error"}  # no approval counted
