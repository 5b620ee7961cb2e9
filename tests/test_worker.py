"""The worker: who may ask for a recheck, lazily built resources (the queue contract:
test_queue_contract)."""

from __future__ import annotations

from pathlib import Path

from bot.github.events import Job
from bot.github.local import LocalGitHub
from bot.service.worker import Resources, Worker
from tests.conftest import ROOT
from tests.gitrepo import Repo


def job(delivery: str, number: int = 1, sha: str = "a" * 40, requester: str = "") -> Job:
    return Job(delivery, "pull_request", "synchronize", 1, "o/r", number, sha, requester)


def test_worker_checks_the_permission_of_who_asks_for_a_recheck(tmp_path: Path) -> None:
    repo = Repo.from_folder(ROOT / "registry", tmp_path / "repo")
    repo.change({"x.json": "{}\n"})
    gh = LocalGitHub(repo.path, "main", "pr", repo="o/r", permissions={"stranger": "triage"})

    class Factory:
        def for_installation(self, installation_id: int) -> LocalGitHub:
            return gh

    assert Worker(Factory()).handle(job("d1", requester="stranger")) == "refused"
    assert gh.calls == ["get_permission"] and gh.writes == []


def test_resources_are_built_once_and_lazily() -> None:
    built: list[int] = []

    def factory():  # type: ignore[no-untyped-def]
        built.append(1)
        return lambda *args: (None, [])

    resources = Resources(factory)
    assert built == []
    assert resources.regression() is resources.regression()
    assert built == [1]
