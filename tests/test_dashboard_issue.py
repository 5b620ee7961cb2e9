"""The dashboard issue: one per repository, created on the first push to the default branch and
edited in place on every later one (10 merges here), never a second; pushes elsewhere change
nothing."""

from __future__ import annotations

import datetime
import json
import re
import time
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from bot.github.api import GitHubError
from bot.github.events import Job, decide
from bot.github.local import LocalGitHub
from bot.outputs.render.dashboard import MARKER
from bot.review.compose import ReviewRequest, run_review
from bot.service.worker import Worker
from tests.gitrepo import Repo, git
from tests.test_worker_lazy_snapshot import LazyLocalGitHub

REPO = "owner/registry"
NOW = datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.UTC).timestamp()
TODAY = datetime.date(2026, 6, 1)


def push_payload(ref: str, after: str, default_branch: str = "main") -> dict[str, Any]:
    """The fields of GitHub's ``push`` delivery the App reads."""
    return {
        "ref": ref,
        "before": "0" * 40,
        "after": after,
        "deleted": False,
        "created": False,
        "installation": {"id": 1},
        "repository": {"full_name": REPO, "default_branch": default_branch},
        "pusher": {"name": "someone"},
        "commits": [],
    }


def merge(repo: Repo, i: int) -> str:
    """A change merged to ``main``: one more core facet example fixed or a file touched."""
    repo.write(f"docs/merged-{i}.md", f"merge {i}\n")
    return repo.commit(f"merge {i}", branch="main")


class One:
    def __init__(self, gh: LocalGitHub) -> None:
        self.gh = gh

    def for_installation(self, installation_id: int) -> LocalGitHub:
        return self.gh


def test_the_dashboard_issue_is_created_once_and_edited_in_place_across_10_merges(
    tmp_path: Path, corpus: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    git(repo.path, "branch", "pr")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO)
    worker = Worker(One(gh), clock=lambda: NOW)
    shas = []
    for i in range(10):
        sha = merge(repo, i)
        shas.append(sha)
        decision = decide("push", f"push-{i}", push_payload("refs/heads/main", sha))
        assert decision.job is not None and decision.job.pr_key == f"{REPO}#dashboard"
        assert worker.handle(decision.job) == (
            "dashboard-created" if i == 0 else "dashboard-updated"
        )
    [issue] = gh.issues
    assert issue.body.startswith(MARKER) and shas[-1][:12] in issue.body
    assert len(issue.history) == 9 and all(old[:12] not in issue.body for old in shas[:-1])
    assert [shas[i][:12] in body for i, body in enumerate(issue.history)] == [True] * 9
    assert gh.methods_written() == ["create_issue"] + ["edit_issue"] * 9
    assert gh.check_runs == [] and gh.reviews == []


def test_the_real_registrys_dashboard_issue_lists_every_finding_by_entry(
    tmp_path: Path, corpus: Path, capsys: Any
) -> None:
    from bot.cli import main

    assert main(["check", "--all", "--format", "json", str(corpus)]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    git(repo.path, "branch", "pr")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO)
    sha = git(repo.path, "rev-parse", "main")
    decision = decide("push", "push-real", push_payload("refs/heads/main", sha))
    assert decision.job is not None
    Worker(One(gh), clock=lambda: NOW).handle(decision.job)
    [issue] = gh.issues
    sections = issue.body.split("\n### ")[1:]
    by_entry = {s.split("`", 2)[1]: s for s in sections}
    assert set(by_entry) >= {f.get("entry", "(repository)") for f in findings}
    for f in findings:
        section = by_entry[f.get("entry", "(repository)")]
        assert f"https://github.com/{REPO}/blob/{sha}/{f['path']}#L{f['line']}" in section
    assert all("Owners: `@" in s for s in sections)
    assert f"{len(findings)} findings" in issue.body


def test_pushes_to_other_branches_or_deletions_are_ignored() -> None:
    assert decide("push", "p1", push_payload("refs/heads/feature", "a" * 40)).job is None
    assert decide("push", "p2", push_payload("refs/tags/v1", "a" * 40)).job is None
    deleted = {**push_payload("refs/heads/main", "0" * 40), "deleted": True}
    assert decide("push", "p3", deleted).job is None
    assert (
        decide("push", "p4", {**push_payload("refs/heads/main", "a" * 40), "after": 12}).status
        == 400
    )


def test_the_issue_names_the_pull_requests_waiting_on_each_entrys_owners(
    tmp_path: Path, corpus: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    entry = next(
        p.parent
        for p in sorted((repo.path / "spec/registry").rglob("registry.json"))
        if p.parent.name != "core"
    )
    name = entry.relative_to(repo.path / "spec/registry").as_posix().replace("/", ":")
    registry_json = (entry / "registry.json").relative_to(repo.path).as_posix()
    # the same content, laid out again: a change of the entry
    repo.edit_json(registry_json, lambda doc: doc)
    repo.write(f"{entry.relative_to(repo.path).as_posix()}/README.md", "a note\n")
    repo.commit("touch the entry")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=5, author="stranger")
    worker = Worker(One(gh), clock=lambda: NOW)
    head = git(repo.path, "rev-parse", "pr")
    worker.handle(Job("pr-5", "pull_request", "opened", 1, REPO, 5, head))
    [summary] = [c for c in gh.issue_comments if "registry-bot:summary" in c.body]
    assert f"<!-- registry-bot:waiting {name} -->" in summary.body

    sha = merge(repo, 0)
    decision = decide("push", "push-0", push_payload("refs/heads/main", sha))
    assert decision.job is not None
    worker.handle(decision.job)
    [issue] = gh.issues
    section = next(s for s in issue.body.split("\n### ")[1:] if s.startswith(f"`{name}`"))
    assert "Pull requests waiting on its owners: #5\n" in section
    others = [s for s in issue.body.split("\n### ")[1:] if not s.startswith(f"`{name}`")]
    assert not any("waiting on its owners" in s for s in others)


def test_a_merged_file_whose_name_breaks_markdown_is_linked_inertly(
    tmp_path: Path, corpus: Path
) -> None:
    """A file name with ``)``, spaces, a mention, HTML and a link of its own: its finding links to
    the file (the name percent-encoded) and nothing of the name becomes a mention, a tag or a
    link. Before, the link ended at the name's ``)`` and the rest was live Markdown."""
    import urllib.parse

    from bot.github import dashboard_issue

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    entry = next(
        p.parent
        for p in sorted((repo.path / "spec/registry").rglob("registry.json"))
        if p.parent.name != "core"
    )
    folder = entry.relative_to(repo.path).as_posix()
    name = f"{folder}/facets/x) @octocat <img src=x.png> [pwn](https:evil.example) #1 %41?.json"
    repo.write(name, "{\n")  # not JSON: a finding at that path
    sha = repo.commit("a hostile name", branch="main")
    gh = LocalGitHub(repo.path, "main", "main", repo=REPO)
    body = dashboard_issue.body_for(gh, REPO, sha, TODAY)
    [line] = [x for x in body.splitlines() if "octocat" in x]
    html = cmarkgfm.github_flavored_markdown_to_html(line, options=Options.CMARK_OPT_UNSAFE)
    [href] = re.findall(r'<a href="([^"]*)"', html)
    assert href.startswith(f"https://github.com/{REPO}/blob/{sha}/{folder}/facets/x%29%20%40")
    encoded, anchor = href.split(f"/blob/{sha}/", 1)[1].split("#")  # the name's # is encoded
    assert urllib.parse.unquote(encoded) == name and anchor.startswith("L")
    assert html.count("<a ") == 1 and "<img" not in html
    prose = re.sub(r"<[^>]*>", "", re.sub(r"<code>.*?</code>", "", html))  # text outside code
    assert "octocat" not in prose and "evil" not in prose and "#1" not in prose


FORGED = "<!-- registry-bot:waiting " + " ".join(f"0fake{i}" for i in range(3)) + " core -->"


@pytest.mark.parametrize("inside_an_entry", [True, False])
def test_a_file_name_cannot_forge_the_pull_requests_waiting_on_owners(
    tmp_path: Path, corpus: Path, inside_an_entry: bool
) -> None:
    """The summary comment of a pull request whose approvals are all there quotes a file named like
    the App's hidden line. The App writes its own line at its place, empty, and the dashboard reads
    only that place: no entry lists the pull request, no fake entry gets a board. Before, the
    first such text anywhere in the comment counted (``core`` and every fake name waiting)."""
    from bot.github.publish import waiting_of

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    entry = next(
        p.parent
        for p in sorted((repo.path / "spec/registry").rglob("registry.json"))
        if p.parent.name != "core" and any((p.parent / "facets").glob("*.json"))
    )
    folder = entry.relative_to(repo.path).as_posix()
    if inside_an_entry:  # the entry's own owner adds a broken file: a finding quoting its name
        repo.write(f"{folder}/CODEOWNERS", "* @owner-login\n")
        repo.commit("own codeowners", branch="main")
        name, author = f"{folder}/facets/{FORGED}.json", "owner-login"
    else:  # a stranger's file outside every entry
        name, author = f"spec/registry/{FORGED}.md", "stranger"
    repo.change({name: "{\n"})
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=7, author=author)
    worker = Worker(One(gh), clock=lambda: NOW)
    worker.handle(
        Job("pr-7", "pull_request", "opened", 1, REPO, 7, git(repo.path, "rev-parse", "pr"))
    )
    [summary] = [c for c in gh.issue_comments if "registry-bot:summary" in c.body]
    assert FORGED in summary.body  # quoted, in a code span
    assert summary.body.split("\n")[2] == "<!-- registry-bot:waiting -->"
    assert waiting_of(summary.body) == []
    html = cmarkgfm.github_flavored_markdown_to_html(summary.body, options=Options.CMARK_OPT_UNSAFE)
    assert FORGED not in html  # shown as text (&lt;!--), never a comment of the page

    worker.handle(Job("push-1", "push", "", 1, REPO, 0, merge(repo, 1)))
    [issue] = gh.issues
    boards = [s.split("\n", 1)[0] for s in issue.body.split("\n### ")[1:]]
    assert "Pull requests waiting on its owners" not in issue.body
    assert "`core`" in boards and not any("0fake" in b for b in boards)


def test_only_the_header_line_says_who_waits_and_only_entries_of_the_commit_count() -> None:
    from bot.core.snapshot import MemorySnapshot
    from bot.github.publish import waiting_of
    from bot.outputs.dashboard import build

    head = "<!-- registry-bot:summary -->\n<!-- registry-bot:verdict=failure -->\n"
    assert waiting_of(head + "<!-- registry-bot:waiting a b:c -->\n## x\n") == ["a", "b:c"]
    assert waiting_of(head + "<!-- registry-bot:waiting -->\n## x\n") == []
    # a comment of the release before, nothing waiting: the quoted line is no header
    assert waiting_of(head + "## x\n| `<!-- registry-bot:waiting a -->` |\n") == []
    assert waiting_of("x\n" + head + "<!-- registry-bot:waiting a -->\n## x\n") == []
    files = {"spec/registry/acme/registry.json": b"{}", "spec/registry/acme/CODEOWNERS": b"* @a\n"}
    request = ReviewRequest(head=MemorySnapshot(files), today=TODAY)
    board = build(
        run_review(request),
        request.head,
        request.settings,
        TODAY,
        pending={"acme": ["#1"], "0fake": ["#1"]},
    )
    assert [(e.name, e.pending) for e in board.entries if e.name != "(repository)"] == [
        ("acme", ("#1",))
    ]


def test_a_blob_github_fails_to_send_publishes_no_dashboard(tmp_path: Path, corpus: Path) -> None:
    """One entry's ``registry.json`` answered 502: the job fails (and is retried, as a review is),
    the issue keeps the last good dashboard. Before, three checks became ``bot/internal-error``
    and the issue was rewritten without their findings."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    gh = LazyLocalGitHub(repo.path, "main", "main", repo=REPO)  # blobs fetched as GitHub sends them
    worker = Worker(One(gh), clock=lambda: NOW)
    assert worker.handle(Job("push-0", "push", "", 1, REPO, 0, merge(repo, 0))) == (
        "dashboard-created"
    )
    [issue] = gh.issues
    good = issue.body
    sha = merge(repo, 1)
    gh.failing = next(
        p.relative_to(repo.path).as_posix()
        for p in sorted((repo.path / "spec/registry").rglob("registry.json"))
        if p.parent.name != "core"
    )
    with pytest.raises(GitHubError, match="502"):
        worker.handle(Job("push-1", "push", "", 1, REPO, 0, sha))
    assert issue.body == good and gh.methods_written() == ["create_issue"]
    gh.failing = ""  # the retry
    assert worker.handle(Job("push-1", "push", "", 1, REPO, 0, sha)) == "dashboard-updated"
    assert sha[:12] in issue.body and "internal-error" not in issue.body


def test_a_push_delivered_after_a_newer_one_leaves_the_newer_dashboard(
    tmp_path: Path, corpus: Path
) -> None:
    """Two merges, their pushes handled newest first (a late delivery, a retry): the older one
    finds the default branch elsewhere and describes its head, as the newer job did, so nothing
    changes. Before, it rewrote the issue to the older commit, which stayed until the next merge."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    old, new = merge(repo, 0), merge(repo, 1)
    gh = LocalGitHub(repo.path, "main", "main", repo=REPO)
    worker = Worker(One(gh), clock=lambda: NOW)
    assert worker.handle(Job("push-new", "push", "", 1, REPO, 0, new)) == "dashboard-created"
    assert worker.handle(Job("push-old", "push", "", 1, REPO, 0, old)) == "dashboard-updated"
    [issue] = gh.issues
    assert new[:12] in issue.body and old[:12] not in issue.body
    assert gh.methods_written() == ["create_issue"]
    # one read before writing; the older job's second read finds the head it followed
    assert gh.calls.count("default_branch_head") == 3


def test_a_push_whose_newer_pushs_job_never_wrote_describes_the_head(
    tmp_path: Path, corpus: Path
) -> None:
    """Finding: the newer push's job failed for good (given up after its retries) or was dropped;
    the older push's job found the branch moved and wrote nothing, so the issue kept an older
    commit's dashboard until the next merge. Now it writes the dashboard of the head."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    gh = LocalGitHub(repo.path, "main", "main", repo=REPO)
    worker = Worker(One(gh), clock=lambda: NOW)
    first = merge(repo, 0)
    assert worker.handle(Job("push-0", "push", "", 1, REPO, 0, first)) == "dashboard-created"
    old, new = merge(repo, 1), merge(repo, 2)  # push-2's job is given up, never written
    assert worker.handle(Job("push-1", "push", "", 1, REPO, 0, old)) == "dashboard-updated"
    [issue] = gh.issues
    assert new[:12] in issue.body and old[:12] not in issue.body, issue.body[:400]
    assert gh.methods_written() == ["create_issue", "edit_issue"]


def test_a_branch_that_moves_at_every_read_is_followed_a_bounded_number_of_times(
    tmp_path: Path, corpus: Path
) -> None:
    """Merges landing faster than a dashboard is computed: the job follows the head at most
    ``MAX_FOLLOW`` times, then leaves the branch to the newest push's job; it never writes a
    dashboard of a commit that is not the head."""
    from bot.github import dashboard_issue

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    merged = iter(range(1, 100))

    class Busy(LocalGitHub):
        def default_branch_head(self, repo_name: str) -> str:
            merge(repo, next(merged))  # another merge lands while the job computes
            return super().default_branch_head(repo_name)

    gh = Busy(repo.path, "main", "main", repo=REPO)
    worker = Worker(One(gh), clock=lambda: NOW)
    assert worker.handle(Job("push-0", "push", "", 1, REPO, 0, merge(repo, 0))) == (
        "dashboard-stale"
    )
    assert gh.issues == [] and gh.methods_written() == []
    assert gh.calls.count("default_branch_head") == 1 + dashboard_issue.MAX_FOLLOW


def test_more_open_pull_requests_than_are_read_is_said_in_the_issue(
    tmp_path: Path, corpus: Path
) -> None:
    """150 open pull requests: the comments of the 100 lowest-numbered are read (one request
    each), and the issue says the other 50 are not listed. Before, they were left out silently."""
    from bot.github import dashboard_issue

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    sha = merge(repo, 0)
    gh = LocalGitHub(repo.path, "main", "main", repo=REPO)
    read: list[int] = []
    gh.list_open_pull_requests = lambda r: [(n, sha, sha) for n in range(150, 0, -1)]  # type: ignore[method-assign]
    gh.list_issue_comments = lambda r, n: read.append(n) or []  # type: ignore[method-assign,func-returns-value]
    body = dashboard_issue.body_for(gh, REPO, sha, TODAY)
    assert read == list(range(1, 101))
    assert (
        "> Pull requests waiting on their owners: only the 100 lowest-numbered of the 150 open "
        "pull requests were read; the other 50 are not listed here.\n"
    ) in body
    gh.list_open_pull_requests = lambda r: [(n, sha, sha) for n in range(1, 101)]  # type: ignore[method-assign]
    assert "lowest-numbered" not in dashboard_issue.body_for(gh, REPO, sha, TODAY)


def test_a_given_up_dashboard_job_is_redone_once_later(tmp_path: Path, corpus: Path) -> None:
    """Finding: the newest push's job given up (GitHub failing at each of its retries) after an
    older push's job wrote: the issue described the older commit until the next merge. Now the
    queue's give-up hook enqueues one job for the branch, run ``DASHBOARD_REDO_AFTER`` seconds
    later, which describes the head; a redone job given up too is not redone again (no loop)."""
    from bot.service.worker import DASHBOARD_REDO_AFTER, give_up_hook
    from tests.test_conclude import Bot, Clock

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    gh = LocalGitHub(repo.path, "main", "main", repo=REPO)
    bot = Bot(tmp_path, gh, Clock(float(int(time.time()))))  # huey's retries: the real clock
    bot.queue.set_handler(bot.worker.handle, give_up_hook(bot.worker, reconciling=True))
    try:

        def given_up(delivery: str, head: str) -> None:
            """``delivery``'s job fails at its first try and at each of huey's three retries."""
            gh.fail("default_branch_head", GitHubError("GET branch: 502 Bad Gateway", 502), 4)
            assert bot.queue.accept(Job(delivery, "push", "", 1, REPO, 0, head))
            bot.run_queued()
            for _ in range(4):
                bot.advance(bot.clock.now + 2)
            assert bot.queue.is_done(delivery)

        first = merge(repo, 0)
        assert bot.queue.accept(Job("push-0", "push", "", 1, REPO, 0, first))
        assert bot.run_queued() == 1 and first[:12] in gh.issues[0].body
        new = merge(repo, 1)
        given_up("push-1", new)
        assert bot.run_queued() == 1  # the redone job, put off
        assert first[:12] in gh.issues[0].body  # stale: the newest push's job wrote nothing
        [redo_at] = bot.etas()
        assert DASHBOARD_REDO_AFTER - 10 < redo_at - bot.clock.now <= DASHBOARD_REDO_AFTER
        assert bot.advance(redo_at) == 1
        [issue] = gh.issues
        assert new[:12] in issue.body and first[:12] not in issue.body

        # the redone job of a later push fails too: given up for good, nothing more is enqueued
        later = merge(repo, 2)
        given_up("push-2", later)
        assert bot.run_queued() == 1
        [redo_at] = bot.etas()
        gh.fail("default_branch_head", GitHubError("GET branch: 502 Bad Gateway", 502), 4)
        bot.advance(redo_at)
        for _ in range(4):
            bot.advance(bot.clock.now + 2)
        assert bot.queue.is_done("push-2.redo") and bot.etas() == []
        assert bot.run_queued() == 0 and new[:12] in gh.issues[0].body
    finally:
        bot.queue.close()


def test_issues_turned_off_end_the_dashboard_job_with_the_setting_in_the_log(
    tmp_path: Path, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Where the repository's Issues are off GitHub answers the issues API 410 "Issues are
    disabled for this repo": a "no" a retry cannot change, so the job ends (no retries, no redone
    job) and the log names the setting (before: the 410 escaped, the queue retried the job three
    times and then redid it, every push; the model had no such setting)."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    git(repo.path, "branch", "pr")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO)
    gh.has_issues = False
    sha = merge(repo, 0)
    decision = decide("push", "push-0", push_payload("refs/heads/main", sha))
    assert decision.job is not None
    assert Worker(One(gh), clock=lambda: NOW).handle(decision.job) == "dashboard-refused"
    assert gh.calls.count("list_issues") == 1 and gh.issues == []
    assert "Issues are disabled for this repo" in caplog.text and "turns on Issues" in caplog.text


def test_a_stale_dashboard_job_is_redone_once_later_and_supersedes_no_newer_push(
    tmp_path: Path, corpus: Path
) -> None:
    """Finding: a job that found the default branch moved at every read (``dashboard-stale``) wrote
    nothing and left the branch to the newest push's job; when that job was lost (dropped, never
    delivered) the issue stayed on an older commit until the next merge. Now it redoes the branch
    once, ``DASHBOARD_REDO_AFTER`` seconds later, which describes the head; the redone job does not
    drop a newer push's job waiting meanwhile, and a redone job stale too is not redone again."""
    from bot.github import dashboard_issue
    from bot.service.worker import DASHBOARD_REDO_AFTER
    from tests.test_conclude import Bot, Clock

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    merged = iter(range(1, 100))
    busy = [10**6]  # reads of the branch during which a merge lands
    pushed: list[str] = []  # deliveries of those merges' pushes, taken while the job runs

    class Busy(LocalGitHub):
        def default_branch_head(self, repo_name: str) -> str:
            if busy[0] > 0:
                busy[0] -= 1
                sha = merge(repo, next(merged))  # another merge lands while the job computes
                if pushed:
                    assert bot.queue.accept(Job(pushed.pop(), "push", "", 1, REPO, 0, sha))
            return super().default_branch_head(repo_name)

    gh = Busy(repo.path, "main", "main", repo=REPO)
    bot = Bot(tmp_path, gh, Clock(float(int(time.time()))))
    try:
        assert bot.queue.accept(Job("push-0", "push", "", 1, REPO, 0, merge(repo, 0)))
        # stale (the newest push's job is lost); its redone job taken and put on huey's schedule
        assert bot.run_queued() == 2 and gh.issues == []
        busy[0] = 0
        [redo_at] = bot.etas()
        assert DASHBOARD_REDO_AFTER - 10 < redo_at - bot.clock.now <= DASHBOARD_REDO_AFTER
        assert bot.advance(redo_at) == 1
        [issue] = gh.issues
        head = gh.default_branch_head(REPO)
        assert head[:12] in issue.body and bot.queue.is_done("push-0.redo")

        # stale again (its 1 + MAX_FOLLOW reads), and a merge's push delivered while the job ran:
        # that push's job runs, not dropped as superseded by the redone job
        busy[0] = 1 + dashboard_issue.MAX_FOLLOW
        pushed.append("push-2")
        assert bot.queue.accept(Job("push-1", "push", "", 1, REPO, 0, merge(repo, 50)))
        assert bot.run_queued() == 3 and bot.queue.is_done("push-2")
        head = gh.default_branch_head(REPO)
        assert head[:12] in gh.issues[0].body
        [redo_at] = bot.etas()

        # a redone job stale too: not redone again
        busy[0] = 10**6
        bot.advance(redo_at)
        assert bot.queue.is_done("push-1.redo") and bot.etas() == []
    finally:
        bot.queue.close()


def test_a_push_whose_commits_change_owners_or_the_configuration_says_so() -> None:
    """A push's job carries ``OWNERS_CHANGED`` when a commit adds, changes or removes a CODEOWNERS
    file or the bot's configuration (the worker then reviews the open pull requests again); any
    other file, or commits of another shape, do not (nothing is refused for it)."""
    from bot.github.events import OWNERS_CHANGED

    def action(commits: object) -> str:
        payload = {**push_payload("refs/heads/main", "a" * 40), "commits": commits}
        job = decide("push", "d", payload).job
        assert job is not None
        return job.action

    assert action([{"modified": ["spec/registry/gcp/dataproc/CODEOWNERS"]}]) == OWNERS_CHANGED
    assert action([{"added": []}, {"removed": [".github/registry-bot.yml"]}]) == OWNERS_CHANGED
    assert action([{"modified": ["docs/CODEOWNERS.md", "spec/registry/x/registry.json"]}]) == ""
    assert action([]) == action("commits") == action([1, {"added": "CODEOWNERS"}]) == ""
