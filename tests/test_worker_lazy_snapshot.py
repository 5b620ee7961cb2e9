"""Lazy GitHub snapshots: one tree listing, blobs downloaded (in batches) only when a check reads
one, failures not hidden."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from responses import matchers

from bot.core.config import Config
from bot.github.api import GitHubError
from bot.github.lazy_snapshot import LazyTree, TreeSnapshot, raise_read_failure
from bot.github.local import LocalGitHub
from bot.service.worker import review_pull_request
from tests import test_github_client, test_pipeline
from tests.gitrepo import Repo
from tests.test_github_client import API, REPO, blob, client, graphql_endpoint, token_endpoint
from tests.test_pipeline import REPO as REPO_NAME
from tests.test_pipeline import load

app_key, fake_time, mocked = (
    test_github_client.app_key,
    test_github_client.fake_time,
    test_github_client.mocked,
)
pr_repo = test_pipeline.pr_repo  # the corpus with a broken registry entry on branch ``pr``


class LazyLocalGitHub(LocalGitHub):
    """The in-memory GitHub, but ``read_tree`` answers like the real client: a ``LazyTree`` counting
    downloads."""

    failing = ""

    def __init__(self, repo_path: Path, *args: Any, **kwargs: Any) -> None:
        super().__init__(repo_path, *args, **kwargs)
        self.downloads: list[str] = []

    def read_tree(self, repo: str, ref: str, prefixes: Sequence[str]) -> Mapping[str, bytes]:
        eager = super().read_tree(repo, ref, prefixes)
        snapshot = self._snapshot(ref)
        # listed by blob sha, as GitHub lists a tree (the files listing names the same shas)
        ids = {path: snapshot.object_id(path) or path for path in eager}
        # a blob the mirror shares with the spec is named by the spec's path (downloaded once)
        mirror = Config().paths.mirror + "/"
        paths: dict[str, str] = {}
        for path in sorted(ids, key=lambda p: p.startswith(mirror)):
            paths.setdefault(ids[path], path)

        def fetch(sha: str) -> bytes:
            path = paths[sha]
            if path == self.failing:
                raise GitHubError("502 Bad Gateway", 502)
            self.downloads.append(path)
            return eager[path]

        return LazyTree({path: (ids[path], len(data)) for path, data in eager.items()}, fetch)


def test_the_client_lists_once_and_downloads_on_first_read_only_in_one_batch(
    mocked, app_key, fake_time
):  # type: ignore[no-untyped-def]
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    tree = [
        {
            "path": "spec/registry/a/registry.json",
            "type": "blob",
            "mode": "100644",
            "sha": "a1",
            "size": 2,
        },
        {
            "path": "website/static/spec/x.json",
            "type": "blob",
            "mode": "100644",
            "sha": "m1",
            "size": 7,
        },
    ]
    for ref in ("b" * 40, "h" * 40):
        mocked.get(
            f"{API}/repos/{REPO}/git/trees/{ref}",
            json={"sha": "root", "tree": tree, "truncated": False},
            match=[matchers.query_param_matcher({"recursive": "1"})],
        )
    asked = graphql_endpoint(mocked, {"a1": blob("{}"), "m1": blob("[1, 2]\n")})
    rest = mocked.get(
        f"{API}/repos/{REPO}/git/blobs/a1",
        json={"encoding": "base64", "content": "e30=", "sha": "a1"},
    )
    _, gh = client(app_key, fake_time)

    base = TreeSnapshot(gh.read_tree(REPO, "b" * 40, ["spec", "website/static/spec"]), "base")
    head = TreeSnapshot(gh.read_tree(REPO, "h" * 40, ["spec", "website/static/spec"]), "head")
    assert head.files("website/static/spec") == ["website/static/spec/x.json"]
    assert head.size("website/static/spec/x.json") == 7 and head.size("nope.json") is None
    assert asked == []  # listing and sizes cost no download

    assert head.read("spec/registry/a/registry.json") == b"{}"
    assert base.read("spec/registry/a/registry.json") == b"{}"
    assert head.read("spec/missing.json") is None
    assert base.read("website/static/spec/x.json") == b"[1, 2]\n"
    # the first read brought the listed blobs, once
    assert asked == [["a1", "m1"]] and rest.call_count == 0


def test_a_snapshot_over_a_plain_mapping_reads_it() -> None:
    snapshot = TreeSnapshot({"b/x.json": b"12", "a.json": b""}, "memory")
    assert snapshot.files() == ["a.json", "b/x.json"] and snapshot.files("b") == ["b/x.json"]
    assert (snapshot.size("b/x.json"), snapshot.read("./b/x.json"), snapshot.read("c")) == (
        2,
        b"12",
        None,
    )
    raise_read_failure(snapshot)  # nothing failed: no exception


def test_a_failed_download_is_raised_again_after_the_review() -> None:
    def fetch(sha: str) -> bytes:
        raise GitHubError("boom", 502)

    snapshot = TreeSnapshot(LazyTree({"a.json": ("s", 1)}, fetch), "head")
    with pytest.raises(GitHubError):
        snapshot.read("a.json")
    with pytest.raises(GitHubError, match="boom"):
        raise_read_failure(TreeSnapshot({}, "base"), snapshot)


@pytest.mark.parametrize("ask", ["size", "blob_id", "read"])
def test_a_failed_read_of_a_plain_mapping_is_kept_whichever_question_asked(ask: str) -> None:
    """A mapping that fetches its content (not a ``LazyTree``) answers a size or an id by reading
    it: a failure there is kept too. Before, only ``read`` kept it, so a check asking the size
    crashed into ``bot/internal-error`` and the review (the dashboard issue) went on without it."""

    class Failing(dict[str, bytes]):
        def __getitem__(self, key: str) -> bytes:
            raise GitHubError("502 Bad Gateway", 502)

    snapshot = TreeSnapshot(Failing({"a.json": b"{}"}), "head")
    with pytest.raises(GitHubError):
        getattr(snapshot, ask)("a.json")
    with pytest.raises(GitHubError, match="502"):
        raise_read_failure(snapshot)


def test_a_review_of_the_corpus_downloads_only_what_the_checks_read(pr_repo: Repo) -> None:
    (eager, pr), (lazy, _) = load(pr_repo), load(pr_repo, github=LazyLocalGitHub)
    assert (
        review_pull_request(lazy, pr, "d-1") == review_pull_request(eager, pr, "d-1") == "failure"
    )
    [lazy_run], [eager_run] = lazy.runs_for(pr.head_sha), eager.runs_for(pr.head_sha)
    assert (lazy_run.title, lazy_run.summary) == (eager_run.title, eager_run.summary)
    assert lazy_run.annotations == eager_run.annotations

    mirror = Config().paths.mirror
    files = LocalGitHub.read_tree(eager, REPO_NAME, pr.head_sha, list(Config().watched()))
    watched = [p for p in files if any(p.startswith(f + "/") for f in Config().watched())]
    # the corpus mirrors the spec
    assert len([p for p in watched if p.startswith(mirror + "/")]) > 50
    assert len(set(lazy.downloads)) < len(watched) // 2
    # every $ref resolved in the repository
    assert not [p for p in lazy.downloads if p.startswith(mirror + "/")]


def test_a_file_github_fails_to_send_fails_the_run_and_retries_instead_of_a_verdict(
    pr_repo: Repo,
) -> None:
    lazy, pr = load(pr_repo, github=LazyLocalGitHub)
    lazy.failing = "spec/registry/gcp/dataproc/registry.json"
    with pytest.raises(GitHubError):
        review_pull_request(lazy, pr, "d-1")
    [run] = lazy.runs_for(pr.head_sha)
    assert run.conclusion == "failure" and "internal error" in run.title
    assert not [w for w, _ in lazy.writes if w == "create_review"]  # no review from a partial read
