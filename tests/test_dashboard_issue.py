"""The dashboard issue: one per repository, created on the first push to the default branch and
edited in place on every later one (10 merges here), never a second; pushes elsewhere change
nothing."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from bot.github.events import decide
from bot.github.local import LocalGitHub
from bot.outputs.render.dashboard import MARKER
from bot.service.worker import Worker
from tests.gitrepo import Repo, git

REPO = "owner/registry"
NOW = datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.UTC).timestamp()


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
    from bot.github.events import Job

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

    import cmarkgfm
    from cmarkgfm.cmark import Options

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
    body = dashboard_issue.body_for(gh, REPO, sha, datetime.date(2026, 6, 1))
    [line] = [x for x in body.splitlines() if "octocat" in x]
    html = cmarkgfm.github_flavored_markdown_to_html(line, options=Options.CMARK_OPT_UNSAFE)
    [href] = re.findall(r'<a href="([^"]*)"', html)
    assert href.startswith(f"https://github.com/{REPO}/blob/{sha}/{folder}/facets/x%29%20%40")
    encoded, anchor = href.split(f"/blob/{sha}/", 1)[1].split("#")  # the name's # is encoded
    assert urllib.parse.unquote(encoded) == name and anchor.startswith("L")
    assert html.count("<a ") == 1 and "<img" not in html
    prose = re.sub(r"<[^>]*>", "", re.sub(r"<code>.*?</code>", "", html))  # text outside code
    assert "octocat" not in prose and "evil" not in prose and "#1" not in prose
