"""A file GitHub failed to send, read by a stage after the checks (the regression, the site
preview), voids the review as a failed read by a check does: the job is retried, no verdict is
published.

The regression read the sides' files after ``read_in_full`` had looked for failed reads, caught the
failure and reported "did not finish": a Redis outage (every GitHub request is paced through Redis)
or a GitHub 5xx became a published ``failure`` and a finished job.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import redis.exceptions

from bot.cli.commands.replay import _Single
from bot.github.events import Job
from bot.github.local import LocalGitHub
from bot.github.local_merge import BranchProtection
from bot.github.publish import CHECK_NAME
from bot.review.regression.stage import RegressionStage
from bot.service.worker import Resources, Worker
from tests.conftest import ROOT
from tests.delegation_repo import AUTHOR, DATAPROC_OWNER, build
from tests.gitrepo import git

REPO = "OpenLineage/OpenLineage"
SAMPLES = ROOT / "registry/reference/spec/registry/airflow/samples/events.jsonl"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("reads") / "repo").path


class LazyLocal:
    """``LocalGitHub`` whose trees are read as the REST client reads them: a listing, then one
    request per blob on first read, cached by sha. While ``redis_down``, a request that reaches the
    network goes through the RedisPacer first and fails with Redis's ConnectionError."""

    def __init__(self, inner: LocalGitHub) -> None:
        self.inner = inner
        self.redis_down = False
        self.cache: dict[str, bytes] = {}
        self.failed: list[str] = []

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.inner, name)

    def read_tree(self, repo, ref, prefixes):  # type: ignore[no-untyped-def]
        import hashlib

        from bot.github.lazy_snapshot import LazyTree

        eager = self.inner.read_tree(repo, ref, prefixes)
        entries = {}
        for path, data in eager.items():
            # git's blob id, as GitHub lists a tree (the files listing names the same shas)
            sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            entries[path] = (sha, len(data))
            self.cache.setdefault("src:" + sha, data)

        def fetch(sha: str) -> bytes:
            if sha in self.cache:
                return self.cache[sha]
            if self.redis_down:
                import redis.exceptions

                self.failed.append(next((p for p, (s, _) in entries.items() if s == sha), sha))
                raise redis.exceptions.ConnectionError("Error 111 connecting to redis:6379")
            self.cache[sha] = self.cache["src:" + sha]
            return self.cache[sha]

        return LazyTree(entries, fetch, eager.skipped, eager.skipped_ids, eager.cut)


def test_a_redis_outage_during_the_regression_does_not_publish_a_verdict(repo: Path) -> None:
    """The queue's Redis goes down as the regression starts reading its inputs: the job waits the
    outage out (the error reaches the queue), and no conclusion is written."""
    git(repo, "checkout", "-q", "-B", "samples-base", "main")
    samples = repo / "spec/registry/gcp/dataproc/samples"
    samples.mkdir(exist_ok=True)
    (samples / "events.jsonl").write_bytes(SAMPLES.read_bytes())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "samples")
    git(repo, "checkout", "-q", "-B", "samples-pr", "samples-base")
    git(repo, "checkout", "-q", "pr", "--", "spec/registry/gcp/dataproc/registry.json")
    git(repo, "commit", "-qm", "dataproc edit")
    git(repo, "checkout", "-q", "main")
    local = LocalGitHub(
        repo,
        "samples-base",
        "samples-pr",
        repo=REPO,
        number=7,
        author=AUTHOR,
        protection=BranchProtection(required_approvals=0, required_checks=(CHECK_NAME,)),
    )
    gh = LazyLocal(local)

    def no_spark(master: str | None) -> object:
        raise AssertionError("the regression reads its inputs before Spark starts")

    def factory() -> object:
        stage = RegressionStage(session_factory=no_spark)

        def run(*args: object) -> object:
            gh.redis_down = True  # the outage starts as the regression starts
            return stage(*args)  # type: ignore[arg-type]

        return run

    try:
        local.add_review(DATAPROC_OWNER)
        worker = Worker(_Single(gh), resources=Resources(factory))  # type: ignore[arg-type]
        with pytest.raises(redis.exceptions.ConnectionError):
            worker.handle(Job("d", "pull_request_review", "submitted", 1, REPO, 7))
        assert gh.failed, "the regression read nothing new: the scenario was not reached"
        assert local.check_runs[-1].conclusion is None
        assert local.merged is None
        assert not [r for r in local.reviews if r.user == "registry-bot[bot]"]
    finally:
        local.close()
