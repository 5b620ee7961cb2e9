"""The real github_client against the stand-in GitHub server over real HTTP, on the corpus pull
request."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
import requests

from bot.core.changes import diff_lines
from bot.core.snapshot import GitSnapshot
from bot.github.api import Annotation, CheckRunOutput, GitHubError, InlineComment, RateLimited
from bot.github.client import AppClientFactory, GitHubClient
from bot.github.local import LocalGitHub
from bot.github.local_merge import BranchProtection
from bot.github.refusals import is_refusal
from bot.service.worker import review_pull_request
from tests.fakes import FAKE_CHECKS
from tests.gitrepo import Repo
from tests.standin import StandIn, generate_private_key_pem
from tests.standin.server import ContentLimit

REPO = "owner/repo"
ENTRY = "spec/registry/gcp/lineage/registry.json"  # edited by the corpus_pr_repo fixture
ROOT = Path(__file__).resolve().parent.parent


class FakeSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def standin(corpus_pr_repo: Path) -> Iterator[StandIn]:
    local = LocalGitHub(corpus_pr_repo, "main", "pr", repo=REPO, author="alice")
    with StandIn(local) as server:
        yield server
    local.close()


@pytest.fixture
def sleeps() -> FakeSleep:
    return FakeSleep()


@pytest.fixture
def factory(standin: StandIn, sleeps: FakeSleep) -> AppClientFactory:
    return AppClientFactory(
        standin.state.app_id,
        standin.state.private_key_pem,
        standin.url,
        sleep=sleeps,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )


def gh_of(factory: AppClientFactory, standin: StandIn) -> GitHubClient:
    return factory.for_installation(standin.state.installation_id)


def test_reads_the_corpus_pull_request(
    standin: StandIn, factory: AppClientFactory, corpus_pr_repo: Path
):
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, 1)
    files, truncated = gh.list_pull_request_files(REPO, 1)
    base = gh.read_tree(REPO, pr.base_sha, ["spec/registry", "CODEOWNERS"])
    head = gh.read_tree(REPO, pr.head_sha, ["spec/registry"])

    assert not truncated and {f.path for f in files} == {
        ENTRY,
        "spec/registry/acme/registry.json",
        "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json",
    }
    with GitSnapshot(corpus_pr_repo, "pr") as snap:
        assert dict(head) == {p: snap.read(p) for p in snap.files("spec/registry")}
    assert "CODEOWNERS" in base and "spec/registry/acme/registry.json" not in base
    assert gh.read_file(REPO, pr.default_branch, ".github/registry-bot.yml") is None
    assert gh.read_file(REPO, pr.base_sha, "CODEOWNERS") == base["CODEOWNERS"]
    assert gh.bot_login() == "registry-bot[bot]"
    assert gh.rate_limit_remaining() == standin.state.remaining
    assert factory.stats.requests == len(standin.state.requests)  # every HTTP request counted


def test_posts_a_full_result(standin: StandIn, factory: AppClientFactory):
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, 1)
    patch = next(f.patch for f in gh.list_pull_request_files(REPO, 1)[0] if f.path == ENTRY)
    line = min(diff_lines(patch))
    annotations = [Annotation(ENTRY, i, i, "warning", f"warning {i}") for i in range(1, 121)]

    run = gh.create_check_run(
        REPO, pr.head_sha, "registry-bot", "in_progress", external_id="delivery-1"
    )
    for start in range(0, len(annotations), 50):
        last = start + 50 >= len(annotations)
        gh.update_check_run(
            REPO,
            run,
            conclusion="neutral" if last else None,
            output=CheckRunOutput(
                "120 warnings", "summary", annotations=annotations[start : start + 50]
            ),
        )
    review = gh.create_review(
        REPO,
        1,
        pr.head_sha,
        "REQUEST_CHANGES",
        "Please fix",
        [InlineComment(ENTRY, line, "this line")],
    )
    comment = gh.create_issue_comment(REPO, 1, "summary v1")
    gh.edit_issue_comment(REPO, comment, "summary v2")
    gh.dismiss_review(REPO, 1, review, "superseded by a newer push")

    state = requests.get(f"{standin.url}/_standin/state", timeout=10).json()
    [posted] = state["check_runs"]
    assert (posted["status"], posted["conclusion"], posted["external_id"]) == (
        "completed",
        "neutral",
        "delivery-1",
    )
    assert [a["message"] for a in posted["annotations"]] == [f"warning {i}" for i in range(1, 121)]
    assert [r["annotations"] for r in posted["requests"]] == [0, 50, 50, 20]
    assert state["reviews"][0]["comments"][0]["line"] == line
    assert state["reviews"][0]["state"] == "DISMISSED"
    assert state["issue_comments"][0]["body"] == "summary v2"
    assert "this line" in requests.get(f"{standin.url}/_standin/render", timeout=10).text


def test_github_rules_come_back_as_422(standin: StandIn, factory: AppClientFactory):
    gh = gh_of(factory, standin)
    head = gh.get_pull_request(REPO, 1).head_sha
    run = gh.create_check_run(REPO, head, "registry-bot", "in_progress")
    with pytest.raises(GitHubError) as too_many:
        gh.update_check_run(
            REPO,
            run,
            output=CheckRunOutput(
                "t", "s", annotations=[Annotation(ENTRY, 1, 1, "notice", "n")] * 51
            ),
        )
    with pytest.raises(GitHubError) as off_diff:
        gh.create_review(REPO, 1, head, "COMMENT", "x", [InlineComment(ENTRY, 10_000, "off")])
    assert too_many.value.status == off_diff.value.status == 422
    assert "Line could not be resolved" in str(off_diff.value)


def test_faults_are_survived(standin: StandIn, factory: AppClientFactory, sleeps: FakeSleep):
    faults = [
        {"path": "/repos/*/pulls/1/files", "status": 502, "count": 2},
        {
            "path": "/repos/*/check-runs",
            "method": "POST",
            "status": 403,
            "retry_after": 3,
            "message": "You have exceeded a secondary rate limit.",
        },
        {"path": "/repos/*/issues/1/comments", "method": "POST", "status": 429, "reset_in": 20},
    ]
    assert requests.post(f"{standin.url}/_standin/faults", json=faults, timeout=10).ok
    gh = gh_of(factory, standin)

    files, _ = gh.list_pull_request_files(REPO, 1)
    gh.create_check_run(REPO, gh.get_pull_request(REPO, 1).head_sha, "registry-bot", "queued")
    gh.create_issue_comment(REPO, 1, "hello")

    assert len(files) == 3
    assert sleeps.waits[:3] == [1.0, 2.0, 3.0]  # backoff twice, then the retry-after header
    assert 19.0 <= sleeps.waits[3] <= 22.0  # until x-ratelimit-reset, plus a second
    hits = requests.get(f"{standin.url}/_standin/state", timeout=10).json()["fault_hits"]
    assert [h["status"] for h in hits] == [502, 502, 403, 429]


def test_a_graphql_rate_limit_on_a_mutation_is_rate_limited_not_refused(
    standin: StandIn, factory: AppClientFactory
):
    """GitHub answers a rate-limited mutation with 200 and ``errors`` (``RATE_LIMITED``): the client
    raises ``RateLimited`` at the reset, not a refusal; the fault spares the queries that read."""
    fault = {
        "path": "/graphql",
        "status": 200,
        "graphql": "RATE_LIMITED",
        "mutations": True,
        "reset_in": 1800,
        "message": "API rate limit already exceeded for installation ID 1.",
    }
    assert requests.post(f"{standin.url}/_standin/faults", json=fault, timeout=10).ok
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, 1)

    assert ENTRY in gh.read_files(REPO, pr.head_sha, [ENTRY])
    with pytest.raises(RateLimited) as caught:
        gh.disable_auto_merge(REPO, 1, pr.node_id)

    assert not is_refusal(caught.value) and not caught.value.secondary
    assert caught.value.reset_at > time.time() + 1000
    gh.disable_auto_merge(REPO, 1, pr.node_id)  # the fault answered once
    hits = requests.get(f"{standin.url}/_standin/state", timeout=10).json()["fault_hits"]
    assert [(h["path"], h["status"]) for h in hits] == [("/graphql", 200)]


def test_a_check_run_creation_that_github_did_but_answered_502_is_not_made_twice(
    standin: StandIn, factory: AppClientFactory, sleeps: FakeSleep
):
    """GitHub created the run and answered 502: before sending the POST again, the client lists the
    commit's runs and adopts its own (same name, head and ``external_id``, still open)."""
    fault = {"path": "/repos/*/check-runs", "method": "POST", "status": 502, "written": True}
    assert requests.post(f"{standin.url}/_standin/faults", json=fault, timeout=10).ok
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, 1)

    assert review_pull_request(gh, pr, "delivery-1", checks=FAKE_CHECKS) == "failure"

    state = requests.get(f"{standin.url}/_standin/state", timeout=10).json()
    [run] = [r for r in state["check_runs"] if r["head_sha"] == pr.head_sha]
    assert (run["status"], run["conclusion"], run["external_id"]) == (
        "completed",
        "failure",
        "delivery-1",
    )
    assert [(h["method"], h["status"]) for h in state["fault_hits"]] == [("POST", 502)]
    assert sleeps.waits == [1.0]  # one back-off, then the listing instead of a second POST


@pytest.mark.parametrize(
    ("path", "listed"),
    [("/repos/*/pulls/*/reviews", "reviews"), ("/repos/*/issues/*/comments", "issue_comments")],
)
def test_a_review_or_comment_github_posted_but_answered_502_is_not_posted_twice(
    standin: StandIn, factory: AppClientFactory, sleeps: FakeSleep, path: str, listed: str
):
    """GitHub posted it and answered 502: before sending the POST again, the client lists the pull
    request's reviews (comments) and adopts the App's own, word for word."""
    fault = {"path": path, "method": "POST", "status": 502, "written": True}
    assert requests.post(f"{standin.url}/_standin/faults", json=fault, timeout=10).ok
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, 1)

    assert review_pull_request(gh, pr, "delivery-1", checks=FAKE_CHECKS) == "failure"

    state = requests.get(f"{standin.url}/_standin/state", timeout=10).json()
    assert len(state[listed]) == 1
    assert [(h["method"], h["status"]) for h in state["fault_hits"]] == [("POST", 502)]
    assert sleeps.waits == [1.0]


def test_an_issue_github_opened_but_answered_502_is_not_opened_twice(
    standin: StandIn, factory: AppClientFactory, sleeps: FakeSleep
):
    fault = {"path": "/repos/*/issues", "method": "POST", "status": 502, "written": True}
    assert requests.post(f"{standin.url}/_standin/faults", json=fault, timeout=10).ok
    gh = gh_of(factory, standin)

    number = gh.create_issue(REPO, "Registry dashboard", "<!-- marker -->\nbody")

    issues = gh.list_issues(REPO, gh.bot_login())
    assert [(i.number, i.title) for i in issues] == [(number, "Registry dashboard")]
    assert sleeps.waits == [1.0]


def test_expired_tokens_are_refreshed(standin: StandIn, factory: AppClientFactory):
    gh = gh_of(factory, standin)
    gh.get_pull_request(REPO, 1)
    assert requests.post(f"{standin.url}/_standin/expire-tokens", timeout=10).json()["expired"] == 1
    assert gh.get_pull_request(REPO, 1).number == 1
    calls = [(r["path"], r["status"]) for r in standin.state.requests]
    assert calls.count(("/app/installations/1/access_tokens", 201)) == 2
    assert ("/repos/owner/repo/pulls/1", 401) in calls


def test_app_auth_is_checked(standin: StandIn):
    other_key = generate_private_key_pem()
    now = int(time.time())
    forged = jwt.encode(
        {"iat": now - 60, "exp": now + 300, "iss": "1"}, other_key, algorithm="RS256"
    )
    too_long = jwt.encode(
        {"iat": now, "exp": now + 3600, "iss": "1"},
        standin.state.private_key_pem,
        algorithm="RS256",
    )
    url = f"{standin.url}/app/installations/1/access_tokens"
    assert (
        requests.post(url, headers={"Authorization": f"Bearer {forged}"}, timeout=10).status_code
        == 401
    )
    assert (
        requests.post(url, headers={"Authorization": f"Bearer {too_long}"}, timeout=10).status_code
        == 401
    )
    assert requests.get(f"{standin.url}/repos/{REPO}/pulls/1", timeout=10).status_code == 401
    wrong = AppClientFactory(1, other_key, standin.url, seconds_between_requests=0)
    with pytest.raises(GitHubError) as caught:
        wrong.for_installation(1).get_pull_request(REPO, 1)
    assert caught.value.status == 401


def test_runs_as_a_process_and_moves_the_head(corpus_pr_repo: Path, tmp_path: Path):
    repo = tmp_path / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(corpus_pr_repo), str(repo)], check=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.standin",
            "--repo",
            str(repo),
            "--port",
            "0",
            "--pr-base",
            "main",
            "--pr-head",
            "pr",
            "--permission",
            "carol=write",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        app = requests.get(f"{url}/_standin/app", timeout=10).json()
        gh = AppClientFactory(
            app["app_id"],
            app["private_key_pem"],
            url,
            seconds_between_requests=0,
            seconds_between_writes=0,
        ).for_installation(app["installation_id"])
        before = gh.get_pull_request(REPO, 1)
        assert gh.get_permission(REPO, "carol") == "write"
        moved = requests.post(f"{url}/_standin/push", json={"head": "main"}, timeout=10).json()[
            "head_sha"
        ]
        assert moved == before.base_sha and gh.get_pull_request(REPO, 1).head_sha == moved
        assert gh.list_pull_request_files(REPO, 1) == ([], False)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert json.dumps(app)  # the app info is plain JSON


def test_graphql_reads_every_blob_in_one_query_exactly_or_leaves_it_to_rest(tmp_path: Path):
    source = tmp_path / "source"
    for path, content in {
        "spec/a.json": b"{}\n",
        "spec/deep/b.json": "\u00e9t\u00e9\n".encode(),
        "spec/latin.json": b"caf\xe9\n",
        "spec/bin.dat": b"\x00\x01\x02",
        ".github/registry-bot.yml": b"review:\n  max_inline_comments: 3\n",
    }.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_bytes(content)
    repo = Repo.from_folder(source, tmp_path / "repo")
    (repo.path / ".github" / "link.yml").symlink_to("registry-bot.yml")
    repo.commit("a symlink")
    local = LocalGitHub(repo.path, "main", "pr", repo=REPO)
    with StandIn(local) as server:
        gh = AppClientFactory(
            server.state.app_id,
            server.state.private_key_pem,
            server.url,
            seconds_between_requests=0,
            seconds_between_writes=0,
        ).for_installation(server.state.installation_id)
        tree = gh.read_tree(REPO, "pr", ["spec", ".github"])
        with GitSnapshot(repo.path, "pr") as snap:
            assert {p: tree[p] for p in tree} == {
                p: snap.read(p) for p in snap.files() if p != ".github/link.yml"
            }
        found = gh.read_files(
            REPO, "pr", [".github/registry-bot.yml", ".github/link.yml", ".github/none.yml"]
        )
        paths = [r["path"] for r in server.state.requests]
    local.close()
    assert ".github/link.yml" in tree.skipped  # type: ignore[attr-defined]
    # no symlink followed
    assert found == {".github/registry-bot.yml": b"review:\n  max_inline_comments: 3\n"}
    blobs = sorted(p.rsplit("/", 1)[1] for p in paths if "/git/blobs/" in p)
    with GitSnapshot(repo.path, "pr") as snap:
        by_sha = {run_git_sha(repo.path, f"pr:{p}"): p for p in ("spec/latin.json", "spec/bin.dat")}
    assert [by_sha[sha] for sha in blobs] == sorted(
        by_sha.values(), key=lambda p: run_git_sha(repo.path, f"pr:{p}")
    )
    # the blobs, then the files; over REST only what is not UTF-8 text
    assert paths.count("/graphql") == 2


def run_git_sha(repo: Path, expression: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", expression],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_graphql_answers_like_github(standin: StandIn, factory: AppClientFactory):
    gh_of(factory, standin).get_pull_request(REPO, 1)  # an installation token
    [token] = list(standin.state.tokens)
    headers = {"Authorization": f"token {token}"}
    query = (
        'query($e: String!) { repository(owner: "owner", name: "repo") { f: object(expression: $e) '
        '{ __typename ... on Blob { byteSize } } d: object(expression: "main:spec") { ... on Tree '
        '{ entries { name mode type } } } none: object(expression: "main:nope") { oid } } }'
    )
    answer = requests.post(
        f"{standin.url}/graphql",
        json={"query": query, "variables": {"e": "main:CODEOWNERS"}},
        headers=headers,
        timeout=10,
    ).json()["data"]["repository"]
    assert (
        answer["f"]["__typename"] == "Blob"
        and answer["f"]["byteSize"] > 0
        and answer["none"] is None
    )
    assert {"name": "facets", "mode": 0o40000, "type": "tree"} in answer["d"]["entries"]
    other = requests.post(
        f"{standin.url}/graphql",
        headers=headers,
        timeout=10,
        json={"query": '{ repository(owner: "x", name: "y") { nameWithOwner } }'},
    ).json()
    assert (
        other["data"]["repository"] is None
        and other["errors"][0]["extensions"]["type"] == "NOT_FOUND"
    )
    invalid = requests.post(
        f"{standin.url}/graphql",
        headers=headers,
        timeout=10,
        json={"query": '{ repository(owner: "owner", name: "repo") { files } }'},
    ).json()
    assert "Cannot query field 'files'" in invalid["errors"][0]["message"]
    assert (
        requests.post(f"{standin.url}/graphql", json={"query": query}, timeout=10).status_code
        == 401
    )


def test_latency_and_writes_that_break_githubs_pacing_are_flagged(
    standin: StandIn, factory: AppClientFactory
):
    settings = requests.post(
        f"{standin.url}/_standin/settings", json={"latency": 0.1, "write_pause": 0.5}, timeout=10
    ).json()
    assert (settings["latency"], settings["write_pause"]) == (0.1, 0.5)
    unpaced = gh_of(factory, standin)
    started = time.monotonic()
    unpaced.create_issue_comment(REPO, 1, "one")
    assert time.monotonic() - started >= 0.2  # the token call and the write, 0.1 s each
    unpaced.read_files(REPO, "main", ["CODEOWNERS"])  # a GraphQL query is a POST, not a write
    unpaced.create_issue_comment(REPO, 1, "two")
    time.sleep(0.5)  # then another process, pacing its writes
    paced = AppClientFactory(
        standin.state.app_id,
        standin.state.private_key_pem,
        standin.url,
        seconds_between_requests=0,
        seconds_between_writes=0.5,
    ).for_installation(1)
    third = paced.create_issue_comment(REPO, 1, "three")
    paced.edit_issue_comment(REPO, third, "three, edited")

    pacing = requests.get(f"{standin.url}/_standin/state", timeout=10).json()["pacing"]
    assert [w["method"] for w in pacing["writes"]] == ["POST", "POST", "POST", "PATCH"]
    # the unpaced second write came sooner than 0.5 s after the first
    [broken] = pacing["violations"]
    assert broken["path"] == "/repos/owner/repo/issues/1/comments" and 0 <= broken["gap"] < 0.5
    assert pacing["writes"][3]["gap"] >= 0.5


def test_the_contents_api_follows_a_symlink_to_a_file_as_github_does_and_the_client_does_not_read_it(  # noqa: E501
    tmp_path: Path,
):
    source = tmp_path / "source"
    (source / ".github").mkdir(parents=True)
    (source / ".github" / "registry-bot.yml").write_bytes(b"review: {}\n")
    repo = Repo.from_folder(source, tmp_path / "repo")
    (repo.path / ".github" / "link.yml").symlink_to("registry-bot.yml")
    (repo.path / ".github" / "out.yml").symlink_to("../../outside.yml")
    repo.commit("symlinks")
    local = LocalGitHub(repo.path, "main", "pr", repo=REPO)
    with StandIn(local) as server:
        token = server.state.issue_token()[0]
        headers = {"Authorization": f"token {token}"}
        followed = requests.get(
            f"{server.url}/repos/{REPO}/contents/.github/link.yml?ref=pr",
            headers=headers,
            timeout=10,
        ).json()
        outside = requests.get(
            f"{server.url}/repos/{REPO}/contents/.github/out.yml?ref=pr",
            headers=headers,
            timeout=10,
        ).json()
        gh = AppClientFactory(
            server.state.app_id,
            server.state.private_key_pem,
            server.url,
            seconds_between_requests=0,
            seconds_between_writes=0,
        ).for_installation(server.state.installation_id)
        link, real = (
            gh.read_file(REPO, "pr", ".github/link.yml"),
            gh.read_file(REPO, "pr", ".github/registry-bot.yml"),
        )
        # the client's, after the two above
        versions = {r["api_version"] for r in server.state.requests[2:]}
    local.close()
    assert (followed["type"], followed["path"]) == ("file", ".github/registry-bot.yml")
    assert (outside["type"], outside["target"]) == ("symlink", "../../outside.yml")
    # the bot never follows a symlink, on GitHub either
    assert link is None and real == b"review: {}\n"
    assert versions == {"2022-11-28"}


def test_an_administrator_changes_the_branch_protection(standin: StandIn):
    def settings(body: dict[str, object]) -> requests.Response:
        return requests.post(f"{standin.url}/_standin/settings", json=body, timeout=10)

    unprotected = settings({"protection": {"required_approvals": 0}})
    assert unprotected.status_code == 400 and "not protected" in unprotected.json()["message"]
    standin.state.local.protection = BranchProtection(required_checks=("ci",))
    answer = settings({"protection": {"required_approvals": 0, "dismissal_actors": ["app[bot]"]}})
    assert answer.json()["protection"]["required_approvals"] == 0
    assert standin.state.local.protection == BranchProtection(
        required_approvals=0, required_checks=("ci",), dismissal_actors=("app[bot]",)
    )
    assert settings({"protection": {"no_such_rule": True}}).status_code == 400
    assert standin.state.local.protection.required_approvals == 0


def test_check_runs_are_paged_as_github_pages_them_and_the_app_finds_its_run_past_the_first_page(
    standin: StandIn, factory: AppClientFactory
):
    """GitHub's "List check runs for a Git reference" answers at most ``per_page`` (100) runs a
    page. A job resumed after more runs of the App's name were made on its head (re-runs, review
    events) finds the run it journalled past the first page, not a second run beside one left
    open."""
    from bot.github.publish import CHECK_NAME
    from bot.service.worker import journalled_run

    local = standin.state.local
    head = local.get_pull_request(REPO, local.number).head_sha
    mine = local.create_check_run(REPO, head, CHECK_NAME, "in_progress", external_id="d-old")
    for i in range(130):
        local.create_check_run(
            REPO, head, CHECK_NAME, "completed", conclusion="success", external_id=f"d{i}"
        )
    gh = gh_of(factory, standin)
    token = gh._token.get()
    page = requests.get(
        f"{standin.url}/repos/{REPO}/commits/{head}/check-runs",
        params={"per_page": "100", "check_name": CHECK_NAME, "filter": "all"},
        headers={"Authorization": f"token {token}"},
        timeout=10,
    )
    assert page.json()["total_count"] == 131 and len(page.json()["check_runs"]) == 100
    assert 'rel="next"' in page.headers["Link"]

    pr = gh.get_pull_request(REPO, local.number)
    assert journalled_run(gh, pr, "d-old", (head, 0))[1] == mine
    assert len(gh.list_check_runs(REPO, head, CHECK_NAME)) == 131


def test_auto_merge_is_refused_where_the_repository_does_not_allow_it(
    standin: StandIn, factory: AppClientFactory
):
    """GitHub's "Allow auto-merge" is off until an administrator turns it on: the mutation is
    answered 200 with an ``UNPROCESSABLE`` error naming it (a refusal, never retried)."""
    local = standin.state.local
    local.protection = BranchProtection(required_approvals=0, required_checks=("ci",))
    answer = requests.post(
        f"{standin.url}/_standin/settings", json={"allow_auto_merge": False}, timeout=10
    )
    assert answer.json()["allow_auto_merge"] is False
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, local.number)

    with pytest.raises(GitHubError) as refused:
        gh.enable_auto_merge(REPO, local.number, pr.node_id, pr.head_sha, "SQUASH")
    assert refused.value.status == 422 and is_refusal(refused.value)
    assert "Auto merge is not allowed for this repository" in str(refused.value)
    assert local.auto_merge is None

    requests.post(f"{standin.url}/_standin/settings", json={"allow_auto_merge": True}, timeout=10)
    gh.enable_auto_merge(REPO, local.number, pr.node_id, pr.head_sha, "SQUASH")
    assert local.auto_merge == "SQUASH"


def test_another_apps_run_of_the_apps_name_is_not_its_verdict(
    standin: StandIn, factory: AppClientFactory
):
    """A workflow job (or another App) may name its check run as the App names its own: GitHub
    lists both by that name. The App's run left in progress (its job lost) is still owed its
    review: the reconciliation reads the App's own runs (``app_id``), not the other's `success`."""
    from bot.github.publish import CHECK_NAME
    from bot.service import reconcile

    local = standin.state.local
    head = local.get_pull_request(REPO, local.number).head_sha
    mine = local.create_check_run(REPO, head, CHECK_NAME, "in_progress", external_id="lost")
    requests.post(
        f"{standin.url}/_standin/check-runs",
        json={"name": CHECK_NAME, "conclusion": "success"},
        timeout=10,
    )
    gh = gh_of(factory, standin)
    token = gh._token.get()
    everyone = requests.get(
        f"{standin.url}/repos/{REPO}/commits/{head}/check-runs",
        params={"check_name": CHECK_NAME},
        headers={"Authorization": f"token {token}"},
        timeout=10,
    ).json()["check_runs"]
    assert len({r["app"]["id"] for r in everyone}) == 2  # GitHub lists every App's by name

    assert [r.id for r in gh.list_check_runs(REPO, head, CHECK_NAME)] == [mine]
    [job] = reconcile.unreviewed(gh, standin.state.installation_id, REPO)
    assert job.check_run_id == mine


def test_more_checks_than_one_rollup_page_are_not_said_to_have_passed(
    standin: StandIn, factory: AppClientFactory
):
    """GraphQL's ``statusCheckRollup`` gives one page of contexts (100): a required check past it
    is unknown, so the Merge section never says "no required check is red" from that page; it lists
    the check runs instead (every page)."""
    from bot.github.delegation import check_lines

    local = standin.state.local
    local.protection = BranchProtection(required_approvals=0, required_checks=("ci",))
    for i in range(100):
        local.add_check_run(f"lint-{i:03}", "completed", "success")
    local.add_check_run("ci", "completed", "failure")
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, local.number)

    assert gh.check_states(REPO, local.number, pr.head_sha) is None
    lines = check_lines(gh, pr)
    assert "- `ci`: `failure`" in lines
    assert not any("No required check" in line for line in lines)


def test_a_red_required_commit_status_is_read_red_through_graphql(
    standin: StandIn, factory: AppClientFactory
):
    """GitHub's ``statusCheckRollup`` holds the commit statuses (``StatusContext``) beside the
    check runs, and branch protection requires either by name: a red required status blocks the
    merge and the Merge section reads it as a required check failing through GraphQL (before: the
    stand-in's rollup held check runs only, so a red required status was unseen there and did not
    block)."""
    from bot.github.delegation import check_lines
    from bot.github.required_checks import CheckState

    local = standin.state.local
    local.protection = BranchProtection(required_approvals=0, required_checks=("ci/jenkins",))
    local.add_check_run("lint", "completed", "success")
    local.add_status("ci/jenkins", "pending")
    local.add_status("ci/jenkins", "failure")  # its latest state
    local.add_status("docs/preview", "error")
    assert local.mergeable_state() == "blocked"
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, local.number)

    assert sorted(gh.check_states(REPO, local.number, pr.head_sha) or [], key=str) == sorted(
        [
            CheckState("ci/jenkins", "failure", True, "failing"),
            CheckState("docs/preview", "error", False, "failing"),
            CheckState("lint", "success", False, "passed"),
        ],
        key=str,
    )
    lines = check_lines(gh, pr)
    failing = lines.index("Required checks failing (they block the merge):")
    assert lines[failing + 2] == "- `ci/jenkins`: `failure`"
    local.add_status("ci/jenkins", "success")
    assert local.mergeable_state() == "unstable"  # only a status that is not required is red


def test_the_repositorys_settings_and_a_lock_are_refused_as_github_refuses_them(
    standin: StandIn, factory: AppClientFactory
):
    """What a repository's administrators and maintainers choose, answered over HTTP with GitHub's
    status and words: a merge method turned off (merge 405), the conversation locked (a comment
    403, a review 422), Issues turned off (the issues API 410 Gone), and a file over the size the
    contents API serves (403, ``code: too_large``), which the client reads as there but not read
    (its 413), never as absent (before: none of these was modelled; the client raised the 403 as
    it came)."""
    gh = gh_of(factory, standin)
    pr = gh.get_pull_request(REPO, 1)

    def settings(**body: object) -> None:
        answer = requests.post(f"{standin.url}/_standin/settings", json=body, timeout=10)
        assert answer.status_code == 200, answer.text

    settings(merge_methods=["MERGE"])
    with pytest.raises(GitHubError) as merge:
        gh.merge_pull_request(REPO, 1, pr.head_sha, "SQUASH")
    assert merge.value.status == 405
    assert str(merge.value).endswith("405 Squash merges are not allowed on this repository.")
    assert is_refusal(merge.value)

    settings(locked=True)
    with pytest.raises(GitHubError) as comment:
        gh.create_issue_comment(REPO, 1, "x")
    assert comment.value.status == 403 and "issue is locked" in str(comment.value)
    assert is_refusal(comment.value)  # not a rate limit: never waited out
    with pytest.raises(GitHubError) as review:
        gh.create_review(REPO, 1, pr.head_sha, "COMMENT", "x")
    assert review.value.status == 422 and "lock prevents review" in str(review.value)
    settings(locked=False)
    gh.create_issue_comment(REPO, 1, "x")  # a pull request's comment: Issues off or not

    settings(has_issues=False)
    for call in (
        lambda: gh.list_issues(REPO, gh.bot_login()),
        lambda: gh.create_issue(REPO, "t", "b"),
    ):
        with pytest.raises(GitHubError) as gone:
            call()
        assert gone.value.status == 410 and "Issues are disabled" in str(gone.value)

    settings(contents_limit=100)
    raw = requests.get(
        f"{standin.url}/repos/{REPO}/contents/{ENTRY}",
        params={"ref": pr.head_sha},
        headers={"Authorization": f"token {gh._token.get()}"},
        timeout=10,
    )
    assert raw.status_code == 403 and raw.json()["errors"][0]["code"] == "too_large"
    with pytest.raises(GitHubError) as big:
        gh.read_file(REPO, pr.head_sha, ENTRY)
    assert big.value.status == 413 and "over the size GitHub serves" in str(big.value)
    assert not is_refusal(big.value) and not isinstance(big.value, RateLimited)


def test_refusals_carry_githubs_body_the_operations_documentation_and_its_errors(
    standin: StandIn, factory: AppClientFactory
):
    """GitHub's error body names the refused operation's documentation; a 422 gives its
    ``message`` and its ``errors`` apart (strings for "Validation Error Simple" operations such as
    reviews, objects with a ``code`` for the others); a secondary limit names its document."""
    gh = gh_of(factory, standin)
    token = gh._token.get()
    head = gh.get_pull_request(REPO, 1).head_sha
    run = gh.create_check_run(REPO, head, "registry-bot", "in_progress")

    def send(method: str, path: str, body: dict[str, object]) -> requests.Response:
        return requests.request(
            method,
            f"{standin.url}/repos/{REPO}/{path}",
            json=body,
            headers={"Authorization": f"token {token}"},
            timeout=10,
        )

    docs = "https://docs.github.com/rest/"
    review = send(
        "POST",
        "pulls/1/reviews",
        {
            "commit_id": head,
            "event": "COMMENT",
            "body": "x",
            "comments": [{"path": ENTRY, "line": 10_000, "body": "off"}],
        },
    )
    assert review.status_code == 422
    assert review.json()["documentation_url"] == (
        docs + "pulls/reviews#create-a-review-for-a-pull-request"
    )
    assert all(isinstance(e, str) for e in review.json()["errors"])
    annotation = {
        "path": ENTRY,
        "start_line": 1,
        "end_line": 1,
        "annotation_level": "notice",
        "message": "n",
    }
    output = {"title": "t", "summary": "s", "annotations": [annotation] * 51}
    too_many = send("PATCH", f"check-runs/{run}", {"output": output})
    assert too_many.status_code == 422
    assert too_many.json()["documentation_url"] == docs + "checks/runs#update-a-check-run"
    assert too_many.json()["errors"][0]["code"] == "custom"
    merge = send("PUT", "pulls/1/merge", {"sha": "0" * 40})
    assert merge.status_code in (403, 405, 409)
    assert merge.json()["documentation_url"] == docs + "pulls/pulls#merge-a-pull-request"

    standin.state.content_limit = ContentLimit(1, 60.0)
    assert send("POST", "issues/1/comments", {"body": "x"}).status_code == 201
    limited = send("POST", "issues/1/comments", {"body": "y"})
    assert limited.status_code == 403 and "retry-after" in limited.headers
    assert limited.json()["documentation_url"] == (
        docs + "overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
    )


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_limit_answered_403_or_429_is_the_same_limit_to_the_app(
    standin: StandIn, factory: AppClientFactory, status: int
):
    """GitHub answers a secondary rate limit "with a 403 or 429" and ``retry-after``: either is
    waited out, then raised as a secondary limit on content creation only (the job waits, reads
    go on), never a refusal."""
    from tests.standin.__main__ import content_limit

    standin.state.content_limit = content_limit(f"1/60/{status}")
    gh = gh_of(factory, standin)
    gh.create_issue_comment(REPO, 1, "first")
    with pytest.raises(RateLimited) as limited:
        gh.create_issue_comment(REPO, 1, "second")
    assert limited.value.status == status and limited.value.secondary
    assert limited.value.creation_only and not is_refusal(limited.value)
    assert gh.get_pull_request(REPO, 1).number == 1  # reads go on


def test_commit_statuses_are_the_combined_status_paged_and_the_app_reads_every_page(
    standin: StandIn, factory: AppClientFactory
):
    """ "Get the combined status for a specific reference": the latest status of each context,
    at most ``per_page`` (100) a page, ``total_count`` every context, the combined ``state``
    failure when one is red. The App reads every page: a red context past the first is seen."""
    local = standin.state.local
    head = local.get_pull_request(REPO, local.number).head_sha
    local.add_status("ci/red", "failure")
    for i in range(130):
        local.add_status(f"ci/{i}", "success")
    local.add_status("ci/0", "pending")
    local.add_status("ci/0", "success")  # its latest state
    gh = gh_of(factory, standin)
    page = requests.get(
        f"{standin.url}/repos/{REPO}/commits/{head}/status",
        params={"per_page": "100"},
        headers={"Authorization": f"token {gh._token.get()}"},
        timeout=10,
    )
    body = page.json()
    assert body["total_count"] == 131 and len(body["statuses"]) == 100
    assert body["state"] == "failure" and 'rel="next"' in page.headers["Link"]
    statuses = gh.list_commit_statuses(REPO, head)
    assert len(statuses) == 131 and len({s.context for s in statuses}) == 131
    assert {s.state for s in statuses if s.context in ("ci/red", "ci/0")} == {"failure", "success"}


def test_a_draft_closing_and_a_new_base_are_answered_as_github_answers_them(
    standin: StandIn, factory: AppClientFactory
):
    """A draft reads ``draft: true`` and ``mergeable_state: draft``; GitHub merges none (405 "Pull
    Request is still a draft") nor enables auto-merge on one, and turns auto-merge off when a pull
    request becomes a draft or is closed, or when someone without write access changes its base
    (before: the stand-in had no drafts and merged one; a closed pull request kept its auto-merge,
    which merged it once reopened; a base change by anyone kept it)."""
    local = standin.state.local
    local.protection = BranchProtection(required_approvals=0, required_checks=("ci",))
    local.permissions["maintainer"] = "write"
    gh = gh_of(factory, standin)
    head = local.resolve("pr")

    def enable() -> None:
        gh.enable_auto_merge(REPO, local.number, local.node_id, head, "MERGE")

    enable()
    local.convert_to_draft()
    pr = gh.get_pull_request(REPO, local.number)
    assert pr.draft and not pr.auto_merge
    assert local.mergeable_state() == "draft"
    with pytest.raises(GitHubError, match="still a draft") as merge:
        gh.merge_pull_request(REPO, local.number, head, "MERGE")
    assert merge.value.status == 405
    with pytest.raises(GitHubError, match="still a draft"):
        enable()
    local.mark_ready()
    enable()
    local.close_pull_request()
    local.reopen()
    assert not gh.get_pull_request(REPO, local.number).auto_merge
    enable()
    local.retarget("main", by="maintainer")  # a writer: auto-merge stays
    assert gh.get_pull_request(REPO, local.number).auto_merge
    local.retarget("main")  # the author, without write access: auto-merge off
    assert not gh.get_pull_request(REPO, local.number).auto_merge
    local.add_check_run("ci", "completed", "success")
    assert local.merged is None


def test_a_pull_request_from_a_fork_is_reviewed_and_a_re_run_finds_it(
    standin: StandIn, factory: AppClientFactory
):
    """A pull request from a fork: ``head.repo`` is the fork and the head commit is read from the
    base repository alone; the App reviews and concludes the run, and a re-run finds the pull
    request by its head (``commits/{sha}/pulls`` lists none for a fork's commit). Before, the
    stand-in could not serve a fork: every pull request came from a branch of the base
    repository. (A fork deleted since, ``head.repo: null`` as public clients report it, is not
    served: GitHub's OpenAPI description does not allow it in this answer.)"""
    from bot.service.worker import pull_requests_of

    local = standin.state.local
    local.fork = "alice/OpenLineage"
    gh = gh_of(factory, standin)
    raw = requests.get(
        f"{standin.url}/repos/{REPO}/pulls/1",
        headers={"Authorization": f"token {gh._token.get()}"},
        timeout=10,
    ).json()
    assert raw["head"]["repo"]["full_name"] == "alice/OpenLineage"
    assert raw["base"]["repo"]["full_name"] == REPO
    pr = gh.get_pull_request(REPO, 1)
    assert pr.head_repo == "alice/OpenLineage"
    assert review_pull_request(gh, pr, "delivery-1", checks=FAKE_CHECKS) == "failure"
    [run] = local.runs_for(pr.head_sha)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert gh.list_open_pull_requests_for_sha(REPO, pr.head_sha) == []
    assert pull_requests_of(gh, REPO, pr.head_sha) == [1]
