"""The worker: who may ask for a recheck, lazily built resources (the queue contract: test_queue_contract)."""

from __future__ import annotations

from bot.app.events import Job
from bot.app.worker import Resources, Worker
from tests.fakes import FakeGitHub


def job(delivery: str, number: int = 1, sha: str = "a" * 40, requester: str = "") -> Job:
    return Job(delivery, "pull_request", "synchronize", 1, "o/r", number, sha, requester)


def test_worker_checks_the_permission_of_who_asks_for_a_recheck(fake_github: FakeGitHub) -> None:
    class Factory:
        def for_installation(self, installation_id: int) -> FakeGitHub:
            return fake_github
    assert Worker(Factory()).handle(job("d1", requester="stranger")) == "refused"
    assert fake_github.writes == []


def test_resources_are_built_once_and_lazily() -> None:
    built: list[int] = []

    def factory():  # type: ignore[no-untyped-def]
        built.append(1)
        return lambda *args: (None, [])
    resources = Resources(factory)
    assert built == []
    assert resources.regression() is resources.regression()
    assert built == [1]
