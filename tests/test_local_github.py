"""LocalGitHub over a real git repository built from the corpus: reads from git, GitHub's write
rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.core.changes import diff_lines
from bot.github.api import Annotation, CheckRunOutput, GitHubError, InlineComment, NotFound
from bot.github.local import LocalGitHub
from tests.gitrepo import Repo, git

REPO = "owner/repo"
ENTRY = "spec/registry/gcp/lineage/registry.json"  # edited by the corpus_pr_repo fixture


@pytest.fixture
def repo(corpus_pr_repo: Path, tmp_path: Path) -> Repo:
    """A private clone of the corpus PR repository with the same ``main`` and ``pr`` branches."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(corpus_pr_repo), str(clone))
    git(clone, "checkout", "-q", "-B", "main", "origin/main")
    git(clone, "branch", "-q", "-f", "pr", "origin/pr")
    return Repo(clone)


@pytest.fixture
def gh(repo: Repo) -> LocalGitHub:
    local = LocalGitHub(repo.path, "main", "pr", author="alice", permissions={"carol": "write"})
    yield local
    local.close()


def test_reads_the_pull_request_from_git(gh: LocalGitHub, repo: Repo):
    pr = gh.get_pull_request(REPO, 1)
    files, truncated = gh.list_pull_request_files(REPO, 1)

    assert pr.head_sha == git(repo.path, "rev-parse", "pr") and pr.base_sha == git(
        repo.path, "rev-parse", "main"
    )
    assert (pr.author, pr.state) == ("alice", "open")
    statuses = {f.path: f.status for f in files}
    assert statuses == {
        ENTRY: "modified",
        "spec/registry/acme/registry.json": "added",
        "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json": "removed",
    }
    assert not truncated
    entry = next(f for f in files if f.path == ENTRY)
    assert entry.patch is not None and entry.patch.startswith("@@ ")
    assert "+" in entry.patch and diff_lines(entry.patch)
    assert gh.list_open_pull_requests_for_sha(REPO, pr.head_sha) == [1]
    assert gh.list_open_pull_requests_for_sha(REPO, pr.base_sha) == []


def test_read_tree_and_read_file_match_the_corpus(gh: LocalGitHub, corpus: Path):
    base = gh.read_tree(REPO, "main", ["spec/registry", "CODEOWNERS"])
    head = gh.read_tree(REPO, "pr", ["spec/registry"])

    on_disk = {
        str(p.relative_to(corpus)) for p in (corpus / "spec/registry").rglob("*") if p.is_file()
    }
    assert set(base) == on_disk | {"CODEOWNERS"}
    assert base["CODEOWNERS"] == (corpus / "CODEOWNERS").read_bytes()
    assert (
        "spec/registry/acme/registry.json" in head
        and "spec/registry/acme/registry.json" not in base
    )
    assert json.loads(head[ENTRY])["consumer"]["consumed_facets"] == ["ol:gcp:lineage:X.json"]
    assert gh.read_file(REPO, "main", "CODEOWNERS") == (corpus / "CODEOWNERS").read_bytes()
    assert gh.read_file(REPO, "main", ".github/registry-bot.yml") is None


def test_read_tree_skips_symlinks_and_names_them(repo: Repo):
    (repo.path / "spec/registry/link.json").symlink_to("/etc/passwd")
    sha = repo.commit("a symlink")
    local = LocalGitHub(repo.path, "main", sha)
    tree = local.read_tree(REPO, sha, ["spec/registry"])
    assert "spec/registry/link.json" not in tree
    assert "symlink" in tree.skipped["spec/registry/link.json"]  # type: ignore[attr-defined]
    local.close()


def test_more_than_50_annotations_in_one_request_is_a_422(gh: LocalGitHub):
    head = gh.get_pull_request(REPO, 1).head_sha
    run = gh.create_check_run(REPO, head, "registry-bot", "in_progress")
    many = tuple(Annotation(ENTRY, i, i, "warning", f"w{i}") for i in range(1, 52))

    with pytest.raises(GitHubError) as caught:
        gh.update_check_run(REPO, run, output=CheckRunOutput("t", "s", annotations=many))
    assert caught.value.status == 422 and "at most 50" in str(caught.value)

    gh.update_check_run(REPO, run, output=CheckRunOutput("t", "s", annotations=many[:50]))
    gh.update_check_run(
        REPO, run, conclusion="failure", output=CheckRunOutput("t", "s", annotations=many[50:])
    )
    record = gh.check_runs[0]
    assert len(record.annotations) == 51 and (record.status, record.conclusion) == (
        "completed",
        "failure",
    )
    assert [r["annotations"] for r in record.requests] == [0, 50, 1]


def test_output_over_65535_characters_is_a_422(gh: LocalGitHub):
    head = gh.get_pull_request(REPO, 1).head_sha
    with pytest.raises(GitHubError) as caught:
        gh.create_check_run(
            REPO, head, "registry-bot", "in_progress", CheckRunOutput("t", "x" * 65_536)
        )
    assert caught.value.status == 422
    gh.create_check_run(
        REPO, head, "registry-bot", "in_progress", CheckRunOutput("t", "x" * 65_535)
    )


def test_completed_needs_a_conclusion_and_unknown_commits_are_refused(gh: LocalGitHub):
    head = gh.get_pull_request(REPO, 1).head_sha
    with pytest.raises(GitHubError, match="conclusion"):
        gh.create_check_run(REPO, head, "registry-bot", "completed")
    with pytest.raises(GitHubError, match="No commit found") as caught:
        gh.create_check_run(REPO, "0" * 40, "registry-bot", "queued")
    assert caught.value.status == 422
    with pytest.raises(NotFound):
        gh.update_check_run(REPO, 999, status="in_progress")


def test_an_inline_comment_off_the_diff_fails_the_whole_review(gh: LocalGitHub):
    head = gh.get_pull_request(REPO, 1).head_sha
    patch = next(f.patch for f in gh.list_pull_request_files(REPO, 1)[0] if f.path == ENTRY)
    on_diff = min(diff_lines(patch))
    off_diff = max(diff_lines(patch)) + 50

    with pytest.raises(GitHubError) as caught:
        gh.create_review(
            REPO,
            1,
            head,
            "REQUEST_CHANGES",
            "fix",
            [InlineComment(ENTRY, on_diff, "ok"), InlineComment(ENTRY, off_diff, "off")],
        )
    assert caught.value.status == 422 and "must be part of the diff" in str(caught.value)
    assert gh.reviews == []  # nothing of the failed review was kept

    review = gh.create_review(
        REPO, 1, head, "REQUEST_CHANGES", "fix", [InlineComment(ENTRY, on_diff, "ok")]
    )
    assert [(c.path, c.line) for c in gh.list_review_comments(REPO, 1)] == [(ENTRY, on_diff)]
    with pytest.raises(GitHubError, match="Path could not be resolved"):
        gh.create_review(
            REPO, 1, head, "COMMENT", "x", [InlineComment("README.md", 1, "not in the PR")]
        )
    gh.dismiss_review(REPO, 1, review, "superseded")
    assert gh.list_reviews(REPO, 1)[0].state == "DISMISSED"


def test_reviews_by_others_permissions_and_dismissal_rules(gh: LocalGitHub):
    approval = gh.add_review("carol")
    comment = gh.create_review(REPO, 1, "pr", "COMMENT", "just a note")
    with pytest.raises(GitHubError, match="own pull request"):
        gh.add_review("alice")
    with pytest.raises(GitHubError, match="Can not dismiss a commented") as caught:
        gh.dismiss_review(REPO, 1, comment, "x")
    assert caught.value.status == 422

    assert [(r.user, r.state) for r in gh.list_reviews(REPO, 1)] == [
        ("carol", "APPROVED"),
        ("registry-bot[bot]", "COMMENTED"),
    ]
    assert approval != comment
    assert (gh.get_permission(REPO, "carol"), gh.get_permission(REPO, "dave")) == ("write", "read")


def test_issue_comments_keep_their_edits(gh: LocalGitHub):
    gh.add_issue_comment("carol", "looks fine")
    mine = gh.create_issue_comment(REPO, 1, "first summary")
    gh.edit_issue_comment(REPO, mine, "second summary")
    with pytest.raises(GitHubError) as caught:
        gh.edit_issue_comment(REPO, mine, "x" * 65_537)
    assert caught.value.status == 422

    assert [(c.user, c.body) for c in gh.list_issue_comments(REPO, 1)] == [
        ("carol", "looks fine"),
        ("registry-bot[bot]", "second summary"),
    ]
    assert gh.issue_comments[1].history == ["first summary"]


def test_push_moves_the_head_and_state_is_json(gh: LocalGitHub, repo: Repo):
    old = gh.get_pull_request(REPO, 1).head_sha
    new = repo.change(
        {"spec/registry/acme/registry.json": '{"producer": {"x": 1}}\n'}, "second push"
    )
    assert gh.push(new) == new and gh.get_pull_request(REPO, 1).head_sha == new
    assert gh.list_open_pull_requests_for_sha(REPO, old) == []
    gh.create_issue_comment(REPO, 1, "hi")
    state = json.loads(json.dumps(gh.state()))
    assert state["pull_request"]["head_sha"] == new and state["issue_comments"][0]["body"] == "hi"


def test_the_3000_file_cap_is_emulated(repo: Repo):
    local = LocalGitHub(repo.path, "main", "pr", max_files=2)
    files, truncated = local.list_pull_request_files(REPO, 1)
    assert len(files) == 2 and truncated
    local.close()


def test_other_repositories_and_pulls_are_not_found(gh: LocalGitHub):
    with pytest.raises(NotFound):
        gh.get_pull_request("someone/else", 1)
    with pytest.raises(NotFound):
        gh.list_reviews(REPO, 2)


def test_render_shows_everything_posted(gh: LocalGitHub):
    assert gh.render() == "Nothing was posted.\n"
    head = gh.get_pull_request(REPO, 1).head_sha
    run = gh.create_check_run(REPO, head, "registry-bot", "in_progress")
    gh.update_check_run(
        REPO,
        run,
        conclusion="failure",
        output=CheckRunOutput(
            "1 error",
            "## Summary",
            annotations=(Annotation(ENTRY, 4, 4, "failure", "bad facet", "uris.resolve"),),
        ),
    )
    patch = next(f.patch for f in gh.list_pull_request_files(REPO, 1)[0] if f.path == ENTRY)
    line = min(diff_lines(patch))
    gh.create_review(
        REPO, 1, head, "REQUEST_CHANGES", "Please fix", [InlineComment(ENTRY, line, "here")]
    )
    comment = gh.create_issue_comment(REPO, 1, "old")
    gh.edit_issue_comment(REPO, comment, "Summary: 1 error")

    text = gh.render()
    assert "Check run" in text and "completed, failure" in text
    assert f"{ENTRY}:4 [failure] uris.resolve: bad facet" in text
    assert f"inline {ENTRY}:{line}: here" in text and "CHANGES_REQUESTED" in text
    assert "Summary: 1 error" in text and "edited 1 time(s)" in text and "old" not in text


def test_an_annotation_title_over_255_characters_and_an_authors_own_approval_are_refused(
    gh: LocalGitHub,
):
    """GitHub's annotation ``title``: "The maximum size is 255 characters." (the operation's
    description); an author's own approval: 422 with the error "Review Can not approve your own
    pull request", as public clients report it (before: any title was taken, and the words were
    the model's own). The App's titles fit: a rule id cut at 200 and prefixes of at most 50."""
    head = gh.resolve("pr")
    run = gh.create_check_run(REPO, head, "registry-bot", "in_progress")

    def annotate(title: str) -> None:
        note = Annotation("README.md", 1, 1, "notice", "m", title=title)
        gh.update_check_run(REPO, run, output=CheckRunOutput("t", "s", annotations=(note,)))

    annotate("t" * 255)
    with pytest.raises(GitHubError, match="maximum is 255 characters") as long:
        annotate("t" * 256)
    assert long.value.status == 422
    with pytest.raises(GitHubError, match="Review Can not approve your own pull request"):
        gh.add_review(gh.author)


def test_the_apps_longest_annotation_title_fits_githubs_255_characters(gh: LocalGitHub):
    """A waived finding that was already there carries two prefixes before its rule id (cut at
    200 characters, plus the cut's note): 265 characters, which GitHub refuses with the whole
    request, the verdict's with it (before: no cap on the whole title). Now the title is cut to
    fit and the model takes it."""
    from bot.core.findings import Finding, Severity, State, Waived
    from bot.github.publish import to_annotations

    finding = Finding(
        "r" * 300,
        Severity.WARNING,
        "README.md",
        "m",
        line=1,
        state=State.UNCHANGED,
        waived=Waived("later", "2026-01-01", "owner", "waivers.json"),
    )
    [note] = to_annotations([finding])
    assert note.title.startswith("waived until 2026-01-01: pre-existing warning: rrr")
    assert len(note.title) <= 255
    run = gh.create_check_run(REPO, gh.resolve("pr"), "registry-bot", "in_progress")
    gh.update_check_run(REPO, run, output=CheckRunOutput("t", "s", annotations=(note,)))
