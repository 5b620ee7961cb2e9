"""End to end: a fix offered as a GitHub suggestion, committed as GitHub commits it, turns the check
green.

The service (gunicorn, worker, stand-in GitHub) runs the real checks on the real corpus. The base
branch's configuration makes the layout rule an error; the pull request changes the documentation
URL of a registry entry and lays out two of its lines carelessly. The inline comment must carry a
``suggestion`` block attached to exactly those lines (``start_line``..``line``); replacing them with
its content, as GitHub's "Commit suggestion" does, must make the review pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import Repo, git
from tests.test_e2e import Service
from tests.test_e2e_real import MEMBER, STANDIN, WORKER, errors

pytestmark = pytest.mark.e2e

ENTRY = "spec/registry/gcp/dataproc/registry.json"
SUGGESTION = re.compile(r"\n(`{3,})suggestion\n(.*?)\1", re.S)


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    made = Repo.from_folder(corpus, tmp_path / "repo")
    made.write(".github/registry-bot.yml", "formatting:\n  severity: error\n")
    made.commit("the registry's policy: layout mistakes fail a review", branch="main")
    lines = (made.path / ENTRY).read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[2].startswith('    "root_doc_URL": ') and lines[3].startswith(
        '    "produced_facets": ['
    )
    lines[2] = (
        "      " + lines[2].strip().replace('": ', '" :  ').replace('",', '#openlineage",') + "\n"
    )
    lines[3] = lines[3].rstrip("\n").replace('["', '[ "') + "   \n"
    made.change({ENTRY: "".join(lines)}, "gcp:dataproc: edit the entry")
    return made


@pytest.fixture
def service(repo: Repo, tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path, worker_args=WORKER, standin_args=STANDIN)
    try:
        svc.start(repo.path)
        yield svc
    finally:
        svc.close()


def test_the_suggestion_sits_on_the_lines_it_replaces_and_committing_it_turns_the_check_green(
    service: Service, repo: Repo
) -> None:
    service.approve(MEMBER)  # an owner approves: the layout is all that is left
    head = git(repo.path, "rev-parse", "pr")
    assert service.deliver("opened", head) == 202
    run = service.completed_run(head)
    assert run["conclusion"] == "failure" and errors(run) == [(ENTRY, 3, "format/json")]

    [review] = [r for r in service.summary_for(head)["reviews"] if r["user"] == "registry-bot[bot]"]
    [comment] = [c for c in review["comments"] if "format/json" in c["body"]]
    assert (comment["path"], comment["start_line"], comment["line"]) == (ENTRY, 3, 4)
    match = SUGGESTION.search(comment["body"])
    assert match is not None
    replacement = match[2]

    # GitHub's "Commit suggestion": lines start_line..line replaced by the block's content
    lines = (repo.path / ENTRY).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[comment["start_line"] - 1 : comment["line"]] = replacement.splitlines(keepends=True)
    repo.write(ENTRY, "".join(lines))
    applied = repo.commit("Apply suggestions from code review", branch="pr")
    original = git(repo.path, "show", f"main:{ENTRY}") + "\n"
    assert (repo.path / ENTRY).read_text() == original.replace('/lineage"', '/lineage#openlineage"')

    assert service.push("pr") == applied
    assert service.deliver("synchronize", applied) == 202
    run = service.completed_run(applied)
    assert run["conclusion"] == "success" and errors(run) == []
