"""The worker's review of one pull request against the in-memory GitHub (``LocalGitHub``): fetch,
review, publish."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.core.findings import Section, Verdict
from bot.core.snapshot import GitSnapshot
from bot.github import local
from bot.github.api import ChangedFile, GitHubError, PullRequest
from bot.github.local import LocalGitHub
from bot.github.pipeline import approvers, fetch, review_inputs, to_changeset
from bot.github.publish import CHECK_NAME, REFUSED_SUMMARY, SUMMARY_MARKER
from bot.service.worker import review_pull_request
from tests.fakes import FAKE_CHECKS
from tests.gitrepo import Repo, git

G = TypeVar("G", bound=LocalGitHub)
REPO = "OpenLineage/OpenLineage"
ENTRY = "spec/registry/gcp/dataproc/registry.json"
TEAM = "OpenLineage/committers"  # owns everything in the corpus's root CODEOWNERS


def broken_entry(extra: str = "Missing.json") -> str:
    return (
        json.dumps(
            {
                "producer": {
                    "root_doc_URL": "https://cloud.google.com/dataproc/docs/guides/lineage",
                    "produced_facets": [
                        "ol:gcp:dataproc:GcpDataprocRunFacet.json",
                        f"ol:gcp:dataproc:{extra}",
                    ],
                }
            },
            indent=2,
        )
        + "\n"
    )


def changed_files(repo: Path, base: str, head: str) -> list[ChangedFile]:
    out = []
    for line in git(repo, "diff", "--name-status", base, head).splitlines():
        status, path = line.split("\t", 1)
        patch = git(repo, "diff", "-U3", base, head, "--", path).split("\n")
        patch = patch[next(i for i, x in enumerate(patch) if x.startswith("@@")) :]
        out.append(
            ChangedFile(
                path, {"A": "added", "D": "removed"}.get(status, "modified"), patch="\n".join(patch)
            )
        )
    return out


def tree(repo: Path, rev: str) -> dict[str, bytes]:
    with GitSnapshot(repo, rev) as snap:
        return {p: snap.read(p) or b"" for p in snap.files()}


def make_pr_repo(tmp_path: Path, corpus: Path) -> Repo:
    """The corpus with a pull request (``pr``) naming a missing facet file on line 6 of ENTRY."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.change({ENTRY: broken_entry()}, "add a facet")
    return repo


@pytest.fixture
def pr_repo(tmp_path: Path, corpus: Path) -> Repo:
    return make_pr_repo(tmp_path, corpus)


def load(
    repo: Repo, number: int = 7, github: type[G] = LocalGitHub, **options: Any
) -> tuple[G, PullRequest]:
    """The in-memory GitHub (``github``: LocalGitHub or a subclass) serving ``repo``'s pull request
    ``main`` <- ``pr``, and that pull request."""
    gh = github(repo.path, "main", "pr", repo=REPO, number=number, author="contributor", **options)
    gh.set_team(TEAM, [])  # the corpus's root owner: a team GitHub shows, no one in it yet
    return gh, gh.get_pull_request(REPO, number)


def test_failing_pull_request_gets_check_annotations_review_and_summary(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "failure"
    [run] = gh.runs_for(pr.head_sha)
    assert (run.name, run.status, run.conclusion) == (CHECK_NAME, "completed", "failure")
    assert [(a["path"], a["start_line"], a["level"]) for a in run.annotations] == [
        (ENTRY, 6, "failure")
    ]
    assert "Missing.json" in run.summary
    [(_, review)] = [w for w in gh.writes if w[0] == "create_review"]
    assert review["event"] == "REQUEST_CHANGES"
    assert [(c.path, c.line) for c in review["comments"]] == [(ENTRY, 6)]
    body = review["comments"][0].body
    assert "@someone" not in body and "<b>" not in body  # quoted text is inert
    [comment] = gh.issue_comments
    assert SUMMARY_MARKER in comment.body and "@someone" not in comment.body


def test_fix_turns_green_edits_the_summary_and_dismisses_the_old_review(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS)
    [first_comment] = gh.issue_comments
    fixed = pr_repo.change({ENTRY: broken_entry("GcpDataprocRunFacet.json")}, "fix")
    gh.push(fixed)
    pr2 = gh.get_pull_request(REPO, 7)
    assert review_pull_request(gh, pr2, "d-2", checks=FAKE_CHECKS) == "success"
    assert gh.runs_for(fixed)[0].conclusion == "success"
    assert "dismiss_review" in gh.methods_written()
    comments = gh.issue_comments
    assert comments[0].id == first_comment.id and "passed" in comments[0].body
    assert len([c for c in comments if SUMMARY_MARKER in c.body]) == 1
    # the verdict flip notifies once
    assert "changed from **failed** to **passed**" in comments[1].body


def test_rerun_posts_nothing_twice(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS)
    review_pull_request(gh, pr, "d-1-again", checks=FAKE_CHECKS)
    written = gh.methods_written()
    assert written.count("create_review") == 1
    assert written.count("create_issue_comment") == 1
    assert len(gh.runs_for(pr.head_sha)) == 2  # a re-run gets its own check run, as GitHub wants


def test_a_review_lists_reviews_once_and_inline_comments_only_when_the_bot_has_reviewed(
    pr_repo: Repo,
) -> None:
    gh, pr = load(pr_repo)
    review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS)
    first = list(gh.calls)
    assert first.count("list_reviews") == 1  # read for the approvals, reused to publish
    # no review of the bot yet: none of its inline comments either
    assert "list_review_comments" not in first
    pushed = pr_repo.commit("a push that changes nothing")
    gh.push(pushed)
    review_pull_request(gh, gh.get_pull_request(REPO, 7), "d-2", checks=FAKE_CHECKS)
    second = gh.calls[len(first) :]
    assert second.count("list_reviews") == 1 and second.count("list_review_comments") == 1
    [_, (_, again)] = [w for w in gh.writes if w[0] == "create_review"]
    assert again["comments"] == []  # the same finding on the same line is not posted twice


def test_stale_head_is_never_published(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    moved = PullRequest(REPO, 7, "f" * 40, pr.base_sha, "main", "pr", "contributor", "open")
    gh.get_pull_request = lambda repo, number: moved  # type: ignore[method-assign]
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "superseded"
    [run] = gh.runs_for(pr.head_sha)
    assert run.conclusion == "cancelled" and "Superseded" in run.title
    assert "create_review" not in gh.methods_written()
    assert "create_issue_comment" not in gh.methods_written()


def test_internal_error_concludes_the_check_run_with_the_delivery(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)

    def crash(review: object) -> list[object]:
        raise KeyError("boom")

    gh.fail("list_reviews", ValueError("a bug"))
    assert review_pull_request(gh, pr, "delivery-42", checks=(crash,)) == "error"
    [run] = gh.runs_for(pr.head_sha)
    assert run.status == "completed" and run.conclusion == "failure"
    assert "internal error" in run.title and "delivery-42" in run.summary


def test_github_outage_concludes_the_run_and_asks_for_a_retry(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    gh.fail("read_tree", GitHubError("502 Bad Gateway", 502))
    with pytest.raises(GitHubError):
        review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS)
    assert gh.runs_for(pr.head_sha)[0].conclusion == "failure"
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "failure"  # the retry works


def test_pull_request_outside_the_registry_gets_a_quick_neutral_check(
    corpus: Path, tmp_path: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.change({"client/README.md": "changed\n"})
    gh, pr = load(repo)
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "neutral"
    run = gh.runs_for(pr.head_sha)[0]
    assert "nothing to review" in run.summary
    assert gh.methods_written() == ["create_check_run", "update_check_run"]


def test_a_broken_configuration_is_shown_on_a_pull_request_with_nothing_to_review(
    corpus: Path, tmp_path: Path
) -> None:
    """Finding: the quick neutral check dropped ``config/invalid``: a configuration on the default
    branch that cannot be used (the defaults apply) went unseen on every pull request outside the
    default folders, though a full review shows it. Shown now, as the base's (never blocking the
    change)."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.change({".github/registry-bot.yml": "paths: [not, a, mapping]\n"})
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "pr")
    git(repo.path, "checkout", "-q", "pr")
    repo.change({"client/README.md": "changed\n"})
    gh, pr = load(repo)
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "neutral"
    run = gh.runs_for(pr.head_sha)[0]
    assert "nothing to review" in run.summary and "config/invalid" in run.summary


def test_a_truncated_file_list_is_reviewed_from_the_two_trees(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    listed = review_inputs(fetch(gh, pr), checks=FAKE_CHECKS)
    gh.max_files = 0  # GitHub's listing cap reached: what the listing shows matters no more
    inputs = fetch(gh, pr)
    report = review_inputs(inputs, checks=FAKE_CHECKS)
    assert inputs.from_trees and inputs.changes.paths() >= {
        f.path for f in fetch(gh, pr).changes.files
    }
    assert report.verdict is listed.verdict is Verdict.FAILURE and report.neutral_reason is None
    assert {f.fingerprint() for f in report.current()} == {
        f.fingerprint() for f in listed.current()
    }
    assert any("3,000 files" in s.markdown for s in report.sections)


def test_only_needed_paths_are_fetched(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    inputs = fetch(gh, pr)
    assert inputs.head.files("spec/registry") and inputs.head.read("CODEOWNERS") is not None
    assert not inputs.head.files("client") and not inputs.head.files("integration")


def test_config_comes_from_the_default_branch_not_the_head(pr_repo: Repo) -> None:
    gh, _ = load(pr_repo)
    elsewhere = "paths:\n  registry: elsewhere\n"
    gh.push(pr_repo.change({".github/registry-bot.yml": elsewhere}))
    assert fetch(gh, gh.get_pull_request(REPO, 7)).config.paths.registry == "spec/registry"
    git(pr_repo.path, "checkout", "-q", "-B", "default", "main")
    pr_repo.write(".github/registry-bot.yml", elsewhere)
    pr_repo.commit("configure", branch="default")
    gh.default_branch = "default"
    assert fetch(gh, gh.get_pull_request(REPO, 7)).config.paths.registry == "elsewhere"


def test_many_findings_are_sent_50_annotations_per_request_and_cut_comments(
    corpus: Path, tmp_path: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    facets = [f"ol:gcp:dataproc:Missing{i}.json" for i in range(120)]
    repo.change({ENTRY: json.dumps({"producer": {"produced_facets": facets}}, indent=2)})
    gh, pr = load(repo)
    review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS)
    [run] = gh.runs_for(pr.head_sha)
    assert len(run.annotations) == 120
    assert sorted(a["start_line"] for a in run.annotations) == list(range(4, 124))
    [(_, review)] = [w for w in gh.writes if w[0] == "create_review"]
    assert len(review["comments"]) == 30 and review["body"].count("\n- error") == 90


def test_approvers_take_each_users_latest_deciding_review() -> None:
    from bot.github.api import ReviewInfo

    reviews = [
        ReviewInfo(1, "a", "APPROVED", "x"),
        ReviewInfo(2, "a", "COMMENTED", "x"),
        ReviewInfo(3, "b", "APPROVED", "x"),
        ReviewInfo(4, "b", "CHANGES_REQUESTED", "y"),
        ReviewInfo(5, "c", "CHANGES_REQUESTED", "x"),
        ReviewInfo(6, "c", "APPROVED", "y"),
    ]
    assert approvers(reviews) == {"a", "c"}


def test_changeset_from_github_files() -> None:
    changes = to_changeset(
        [
            ChangedFile("a", "added", patch="@@ -0,0 +1,2 @@\n+x\n+y"),
            ChangedFile("b", "renamed", previous_path="c", patch=None),
            ChangedFile("d", "removed"),
        ]
    )
    assert changes.get("a") is not None and changes.get("a").lines == {1, 2}  # type: ignore[union-attr]
    assert changes.paths() == {"a", "b", "c", "d"} and changes.get("b").patch_missing  # type: ignore[union-attr]


def test_regression_hook_adds_its_section_and_survives_a_crash(pr_repo: Repo) -> None:
    gh, pr = load(pr_repo)
    inputs = fetch(gh, pr)

    def table(
        base: object, head: object, changes: object, config: object
    ) -> tuple[Section, list[object]]:
        return Section("Regression", "| event | base | head |\n| --- | --- | --- |"), []

    def crash(*args: object) -> tuple[Section, list[object]]:
        raise RuntimeError("Spark could not start")

    assert review_inputs(inputs, table, FAKE_CHECKS).sections[0].markdown.startswith("| event")  # type: ignore[arg-type]
    failed = review_inputs(inputs, crash, checks=())  # type: ignore[arg-type]
    assert (
        failed.verdict.value == "failure" and "Spark could not start" in failed.sections[0].markdown
    )
    assert {f.rule for f in failed.current()} == {"bot/regression-did-not-finish"}


def test_findings_in_wide_characters_conclude_the_verdict_within_githubs_byte_limit(
    corpus: Path, tmp_path: Path
) -> None:
    """Finding: the summary was fitted to 65,535 characters, but GitHub refuses a check run's
    summary over 65,535 bytes (as the stand-in now does): findings quoting CJK names made the
    concluding update a 422, and the run said "internal error" instead of its verdict."""
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    facets = [f"ol:gcp:dataproc:{'名前空間' * 60}{i}.json" for i in range(120)]
    repo.change({ENTRY: json.dumps({"producer": {"produced_facets": facets}}, indent=2)})
    gh, pr = load(repo)
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "failure"
    [run] = gh.runs_for(pr.head_sha)
    assert run.conclusion == "failure" and run.title != "The bot hit an internal error"
    assert 60_000 < len(run.summary) < len(run.summary.encode()) <= 65_535
    [(_, review)] = [w for w in gh.writes if w[0] == "create_review"]
    assert len(review["body"].encode()) <= 65_536


def test_a_summary_github_refuses_still_concludes_the_verdict(
    pr_repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub's documented limits have differed from what it enforces (characters against bytes):
    a concluding update whose summary GitHub refuses (422) is sent again with a short summary, so
    the run concludes its verdict instead of "internal error"."""
    monkeypatch.setattr(local, "MAX_OUTPUT_BYTES", 300)
    gh, pr = load(pr_repo)
    assert review_pull_request(gh, pr, "d-1", checks=FAKE_CHECKS) == "failure"
    [run] = gh.runs_for(pr.head_sha)
    # the short summary keeps its hidden first line, the base the verdict judged
    assert run.conclusion == "failure"
    assert run.summary == f"<!-- registry-bot:base {pr.base_sha} -->\n{REFUSED_SUMMARY}"
    assert run.title.startswith("OpenLineage registry ❌ failed") and run.annotations
