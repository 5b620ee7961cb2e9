"""End to end, round three (issue 28): the App acts only on what it saw, through the real processes.

One stand-in GitHub protecting ``main`` (an approval by someone with write access, the bot's check
passing), gunicorn and the worker (real checks; a regression stage that hangs on sample events)
serve one pull request whose head is the ``attack`` branch of the delegation repository
(``tests/delegation_repo.py``: ``gcp/dataproc`` owned by ``@dataproc-owner``, ``iceberg`` by
``@iceberg-owner``, auto-merge on). Each attack moves that branch and delivers the push:

- padding past GitHub's 3,000-file listing hides a workflow, client code and a root file beside an
  entry edit its owner approves: the App neither approves nor merges, naming the workflow, as
  without padding;
- a symlink, a submodule and a blob over 10 MB inside another owner's entry, by someone who owns
  nothing, with and without padding: failure, ``bot/unread-path`` on each and
  ``owners/approval-required``;
- the same padding where GitHub cannot list the head's whole tree either (its 100,000-entry limit,
  lowered here): failure, ``bot/change-not-listed``, and no approval even with the owner's;
- a commit superseded during its review concludes ``cancelled`` (GitHub does not count it as passing
  a required check), and is reviewed again when a force-push makes it the head again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.local_merge import PASSING
from bot.github.tree_files import MAX_BLOB_BYTES
from tests.delegation_repo import AUTHOR, CONFIG, CONFIG_TEXT, DATAPROC, ICEBERG, build
from tests.gitrepo import Repo, git
from tests.test_e2e import Service, http, wait_for
from tests.test_e2e_delegation import bot_approvals, owner_approves

pytestmark = pytest.mark.e2e

WORKFLOW = ".github/workflows/pwn.yml"
PAD = {f"pad/{i:04d}.txt": f"{i}\n" for i in range(3001)}


@pytest.fixture(scope="module")
def service(
    corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Repo]]:
    tmp = tmp_path_factory.mktemp("edge")
    repo = build(corpus, tmp / "repo")
    git(repo.path, "checkout", "-q", "main")
    repo.write(CONFIG, CONFIG_TEXT + "regression:\n  time_budget_seconds: 4\n")
    repo.commit("a short regression budget", branch="main")
    git(repo.path, "branch", "attack", "main")
    svc = Service(
        tmp / "svc",
        worker_args=("--regression-module", "tests.slow_stage"),
        standin_args=("--author", AUTHOR, "--protect", "--pr-head", "attack"),
    )
    (tmp / "svc").mkdir()
    try:
        svc.start(repo.path)
        yield svc, repo
    finally:
        svc.close()


def attack(
    repo: Repo,
    files: dict[str, str | bytes],
    symlinks: dict[str, str] | None = None,
    gitlinks: dict[str, str] | None = None,
) -> str:
    """A commit on ``attack`` fresh from ``main`` with ``files``, ``symlinks`` (path -> target) and
    ``gitlinks`` (path -> commit); returns its sha."""
    git(repo.path, "checkout", "-q", "-B", "attack", "main")
    for path, content in files.items():
        repo.write(path, content)
    for path, target in (symlinks or {}).items():
        (repo.path / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / path).symlink_to(target)
    git(repo.path, "add", "-A")
    for path, commit in (gitlinks or {}).items():
        git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
    git(repo.path, "commit", "-q", "-m", "attack")
    return git(repo.path, "rev-parse", "HEAD")


def reviewed(svc: Service, head: str, timeout: float = 240) -> dict[str, Any]:
    assert svc.deliver("synchronize", head) == 202
    return svc.completed_run(head, timeout=timeout)


def reviewed_twice(state: dict[str, Any], head: str) -> dict[str, Any] | None:
    """``state`` once ``head`` has two completed runs (the push's and the owner's approval's), else
    None."""
    done = [r for r in state["check_runs"] if r["head_sha"] == head and r["status"] == "completed"]
    return state if len(done) > 1 else None


def entry_edit(repo: Repo) -> dict[str, str | bytes]:
    text = (repo.path / f"{DATAPROC}/registry.json").read_text(encoding="utf-8")
    return {
        f"{DATAPROC}/registry.json": text.replace(
            '"root_doc_URL": "', '"root_doc_URL": "https://x.test/#', 1
        )
    }


@pytest.mark.parametrize("padded", [False, True], ids=["listed", "padded"])
def test_padding_hides_no_workflow_from_the_owners_approval(
    service: tuple[Service, Repo], padded: bool
) -> None:
    svc, repo = service
    workflow = (
        "on: pull_request_target\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps: [{run: "
        "env}]\n"
    )
    head = attack(
        repo,
        {
            **entry_edit(repo),
            WORKFLOW: workflow,
            "client/evil.py": "import os\n",
            **(PAD if padded else {}),
        },
    )
    reviewed(svc, head)
    owner_approves(svc, head)  # the entry's owner approves: the review runs again with the approval
    state = wait_for(
        lambda: reviewed_twice(svc.state(), head), 240, "the review after the owner's approval"
    )
    run = [r for r in state["check_runs"] if r["head_sha"] == head][-1]
    assert not [r for r in bot_approvals(state) if r["commit_id"] == head]
    assert state["merged"] is None and state["auto_merge"] is None
    assert f"`{WORKFLOW}`, outside the registry's entry folders" in run["summary"]
    assert "does not approve this change on the owners' behalf" in run["summary"]


@pytest.mark.parametrize("padded", [False, True], ids=["listed", "padded"])
def test_unreadable_paths_in_another_owners_entry_block(
    service: tuple[Service, Repo], padded: bool
) -> None:
    svc, repo = service
    main = git(repo.path, "rev-parse", "main")
    big = b"{" + b" " * (MAX_BLOB_BYTES + 1) + b"}"
    head = attack(
        repo,
        {f"{ICEBERG}/big.json": big, **(PAD if padded else {})},
        symlinks={f"{ICEBERG}/link.json": "../../../../etc/passwd"},
        gitlinks={f"{ICEBERG}/sub": main},
    )
    run = reviewed(svc, head)
    assert run["conclusion"] == "failure"
    unread = {
        a["path"]: a["message"] for a in run["annotations"] if a["title"] == "bot/unread-path"
    }
    assert set(unread) == {f"{ICEBERG}/big.json", f"{ICEBERG}/link.json", f"{ICEBERG}/sub"}
    assert "symlink" in unread[f"{ICEBERG}/link.json"] and "submodule" in unread[f"{ICEBERG}/sub"]
    assert "byte limit" in unread[f"{ICEBERG}/big.json"]
    assert any(a["title"] == "owners/approval-required" for a in run["annotations"])
    assert not [r for r in bot_approvals(svc.state()) if r["commit_id"] == head]


def test_a_change_too_large_to_list_is_neither_passed_nor_approved(
    service: tuple[Service, Repo],
) -> None:
    svc, repo = service
    head = attack(repo, {**entry_edit(repo), **PAD})
    entries = len(git(repo.path, "ls-tree", "-r", "-t", "main").splitlines())
    http(
        "POST",
        f"{svc.github}/_standin/settings",
        f'{{"tree_limit": {entries + 100}}}'.encode(),
        {"Content-Type": "application/json"},
    )  # the base lists whole, the padded head does not
    try:
        run = reviewed(svc, head)
        owner_approves(svc, head)
        state = wait_for(
            lambda: reviewed_twice(svc.state(), head), 240, "the review after the owner's approval"
        )
    finally:
        http(
            "POST",
            f"{svc.github}/_standin/settings",
            b'{"tree_limit": 100000}',
            {"Content-Type": "application/json"},
        )
    assert run["conclusion"] == "failure"
    assert (
        "`bot/change-not-listed`" in run["summary"] and "stops at 100,000 entries" in run["summary"]
    )
    assert "published-modified" not in run["summary"]  # nothing past the cut is taken for deleted
    last = [r for r in state["check_runs"] if r["head_sha"] == head][-1]
    assert last["conclusion"] == "failure" and "could not see the whole change" in last["summary"]
    assert (
        not [r for r in bot_approvals(state) if r["commit_id"] == head] and state["merged"] is None
    )


def test_a_superseded_commit_never_satisfies_the_required_check(
    service: tuple[Service, Repo],
) -> None:
    svc, repo = service
    # a slow review
    first = attack(repo, {**entry_edit(repo), f"{DATAPROC}/samples/run.json": "{}\n"})
    assert svc.deliver("synchronize", first) == 202
    wait_for(
        lambda: any(
            r["head_sha"] == first and r["status"] == "in_progress"
            for r in svc.state()["check_runs"]
        ),
        60,
        "the first commit's review under way",
    )
    second = attack(repo, entry_edit(repo))
    assert svc.deliver("synchronize", second) == 202
    superseded = wait_for(
        lambda: next(
            (
                r
                for r in svc.state()["check_runs"]
                if r["head_sha"] == first and r["status"] == "completed"
            ),
            None,
        ),
        60,
        "the first review's end",
    )
    assert superseded["conclusion"] == "cancelled" and superseded["conclusion"] not in PASSING
    assert "Superseded" in superseded["title"]
    svc.completed_run(second, timeout=60)

    # a force-push makes the first commit the head again
    git(repo.path, "checkout", "-q", "-B", "attack", first)
    assert svc.deliver("synchronize", first) == 202
    again = wait_for(
        lambda: next(
            (
                r
                for r in svc.state()["check_runs"]
                if r["head_sha"] == first
                and r["status"] == "completed"
                and r["id"] != superseded["id"]
            ),
            None,
        ),
        60,
        "the first commit reviewed again",
    )
    # reviewed: its regression did not finish within its budget
    assert again["conclusion"] == "failure"
    assert "did not finish" in again["summary"]
