"""The PyGithub adapter against GitHub's REST API replaced by ``responses`` (no network, no real
sleeps)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import jwt
import pytest
import requests
import responses
from cryptography.hazmat.primitives import serialization
from responses import matchers

from bot.github.api import (
    Annotation,
    CheckRunInfo,
    CheckRunOutput,
    GitHubError,
    InlineComment,
    NotFound,
    PullRequest,
    RateLimited,
)
from bot.github.client import AppClientFactory, GitHubClient, RetryPolicy
from bot.github.delegation import enable_merge
from bot.github.graphql_reads import MAX_BYTES, MAX_OBJECTS, nearest_first
from bot.github.refusals import Refusals, is_refusal, is_retryable
from bot.github.required_checks import CheckState
from bot.github.tree_files import MAX_BLOB_BYTES
from tests.standin import generate_private_key_pem

API = "https://api.github.com:443"  # PyGithub names the port, so responses sees it
REPO = "owner/repo"
NOW = 1_800_000_000.0


class FakeTime:
    """A clock that only moves when the client sleeps."""

    def __init__(self) -> None:
        self.now = NOW
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture(scope="module")
def app_key() -> str:
    return generate_private_key_pem()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


def token_endpoint(
    rsps: responses.RequestsMock, app_key: str, fake_time: FakeTime, *tokens: str, api: str = API
) -> list[str]:
    """Installation tokens handed out in turn; each request must carry a JWT signed with the App
    key."""
    public = serialization.load_pem_private_key(app_key.encode(), password=None).public_key()
    issued: list[str] = []

    def answer(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        scheme, _, token = str(request.headers["Authorization"]).partition(" ")
        claims = jwt.decode(token, public, algorithms=["RS256"], options={"verify_exp": False})
        assert scheme == "Bearer" and claims["iss"] == "7"
        issued.append(tokens[len(issued)])
        expires = datetime.fromtimestamp(fake_time.now + 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return 201, {}, json.dumps({"token": issued[-1], "expires_at": expires})

    rsps.add_callback(responses.POST, f"{api}/app/installations/42/access_tokens", callback=answer)
    return issued


def client(
    app_key: str,
    fake_time: FakeTime,
    base_url: str = "https://api.github.com",
    policy: RetryPolicy | None = None,
) -> tuple[AppClientFactory, GitHubClient]:
    factory = AppClientFactory(
        7,
        app_key,
        base_url,
        policy=policy,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        slug="registry-bot",
        seconds_between_requests=0,
        seconds_between_writes=0,
    )
    return factory, factory.for_installation(42)


def pr_json(changed_files: int = 3) -> dict[str, object]:
    repo = {"full_name": REPO, "default_branch": "main"}
    return {
        "number": 5,
        "state": "open",
        "draft": False,
        "user": {"login": "alice"},
        "changed_files": changed_files,
        "head": {"sha": "h" * 40, "ref": "feature", "repo": {"full_name": "alice/repo"}},
        "base": {"sha": "b" * 40, "ref": "main", "repo": repo},
    }


def add_pages(
    rsps: responses.RequestsMock,
    url: str,
    items: list[dict[str, object]],
    per_page: int = 100,
    stop_after: int | None = None,
) -> None:
    """Serve ``items`` in pages linked with ``Link: rel="next"`` (GitHub's style)."""
    pages = [items[i : i + per_page] for i in range(0, len(items), per_page)] or [[]]
    for number, page in enumerate(pages, start=1):
        headers = {"x-ratelimit-remaining": str(4000 - number)}
        if number < len(pages) and (stop_after is None or number < stop_after):
            public = url.replace(":443/", "/")  # GitHub's links carry no port
            headers["Link"] = f'<{public}?per_page={per_page}&page={number + 1}>; rel="next"'
        query = (
            {"per_page": str(per_page)}
            if number == 1
            else {"per_page": str(per_page), "page": str(number)}
        )
        rsps.get(url, json=page, headers=headers, match=[matchers.query_param_matcher(query)])


def test_reads_the_pull_request_and_every_page_of_files(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(
        f"{API}/repos/{REPO}/pulls/5",
        json=pr_json(250),
        match=[matchers.header_matcher({"Authorization": "token ghs_1"})],
    )
    files = [
        {
            "filename": f"spec/registry/x/f{i}.json",
            "status": "modified",
            "patch": "@@ -1 +1 @@\n-a\n+b",
        }
        for i in range(250)
    ]
    # no patch
    files[3] = {"filename": "big.json", "status": "renamed", "previous_filename": "old.json"}
    add_pages(mocked, f"{API}/repos/{REPO}/pulls/5/files", files)
    factory, gh = client(app_key, fake_time)

    pr = gh.get_pull_request(REPO, 5)
    listed, truncated = gh.list_pull_request_files(REPO, 5)

    assert (pr.head_sha, pr.base_ref, pr.author, pr.head_repo) == (
        "h" * 40,
        "main",
        "alice",
        "alice/repo",
    )
    assert len(listed) == 250 and not truncated
    assert [f.path for f in listed] == [f["filename"] for f in files]
    assert (listed[3].previous_path, listed[3].patch, listed[4].patch) == (
        "old.json",
        None,
        "@@ -1 +1 @@\n-a\n+b",
    )
    assert factory.stats.requests == 5  # token, PR, three pages
    assert gh.rate_limit_remaining() == 3997  # from the last page's header


def test_reviews_and_comments_follow_pagination(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    reviews = [
        {"id": i, "user": {"login": f"u{i}"}, "state": "APPROVED", "commit_id": "c", "body": ""}
        for i in range(130)
    ]
    reviews[-1]["user"] = None  # a deleted account
    add_pages(mocked, f"{API}/repos/{REPO}/pulls/5/reviews", reviews)
    # outdated: no line (GitHub's is an integer or absent)
    add_pages(
        mocked,
        f"{API}/repos/{REPO}/pulls/5/comments",
        [{"id": 1, "user": {"login": "bot"}, "path": "a.json", "body": "outdated"}],
    )
    _, gh = client(app_key, fake_time)

    found = gh.list_reviews(REPO, 5)
    comments = gh.list_review_comments(REPO, 5)

    assert [r.id for r in found] == list(range(130))
    assert found[-1].user == "ghost"
    assert comments[0].line is None and comments[0].path == "a.json"


def test_past_3000_files_the_list_is_flagged_truncated(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(f"{API}/repos/{REPO}/pulls/5", json=pr_json(3500))
    files = [{"filename": f"f{i}", "status": "added"} for i in range(3000)]
    add_pages(mocked, f"{API}/repos/{REPO}/pulls/5/files", files)  # GitHub stops after 30 pages
    _, gh = client(app_key, fake_time)

    gh.get_pull_request(REPO, 5)
    listed, truncated = gh.list_pull_request_files(REPO, 5)

    assert len(listed) == 3000 and truncated


def test_exactly_3000_files_is_not_truncated_when_the_pr_says_so(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(f"{API}/repos/{REPO}/pulls/5", json=pr_json(3000))
    add_pages(
        mocked,
        f"{API}/repos/{REPO}/pulls/5/files",
        [{"filename": f"f{i}", "status": "added"} for i in range(3000)],
    )
    _, gh = client(app_key, fake_time)
    gh.get_pull_request(REPO, 5)
    assert gh.list_pull_request_files(REPO, 5)[1] is False


def test_review_comment_off_the_diff_is_a_clear_422_and_not_retried(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    review = mocked.post(
        f"{API}/repos/{REPO}/pulls/5/reviews",
        status=422,
        json={"message": "Unprocessable Entity", "errors": ["Line could not be resolved"]},
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(GitHubError) as caught:
        gh.create_review(
            REPO, 5, "h" * 40, "REQUEST_CHANGES", "body", [InlineComment("a.json", 99, "no")]
        )

    assert caught.value.status == 422
    assert "Line could not be resolved" in str(caught.value)
    assert review.call_count == 1 and fake_time.sleeps == []
    sent = json.loads(review.calls[0].request.body)
    assert sent["comments"] == [{"path": "a.json", "line": 99, "side": "RIGHT", "body": "no"}]


def test_secondary_rate_limit_403_waits_for_retry_after(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    url = f"{API}/repos/{REPO}/pulls/5"
    mocked.get(
        url,
        status=403,
        headers={"retry-after": "7"},
        json={"message": "You have exceeded a secondary rate limit."},
    )
    mocked.get(url, json=pr_json())
    _, gh = client(app_key, fake_time)

    assert gh.get_pull_request(REPO, 5).number == 5
    assert fake_time.sleeps == [7.0]


def test_429_waits_until_the_rate_limit_resets(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    url = f"{API}/repos/{REPO}/issues/5/comments"
    mocked.post(
        url,
        status=429,
        json={"message": "API rate limit exceeded"},
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)},
    )
    mocked.post(url, status=201, json={"id": 77}, headers={"x-ratelimit-remaining": "4999"})
    _, gh = client(app_key, fake_time)

    assert gh.create_issue_comment(REPO, 5, "hello") == 77
    assert fake_time.sleeps == [31.0]  # until the reset, plus a second of margin
    assert gh.rate_limit_remaining() == 4999


def test_502_then_success(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    url = f"{API}/repos/{REPO}/collaborators/alice/permission"
    mocked.get(url, status=502, body="Bad Gateway")
    mocked.get(url, json={"permission": "write"})
    factory, gh = client(app_key, fake_time)

    assert gh.get_permission(REPO, "alice") == "write"
    assert fake_time.sleeps == [1.0]
    assert factory.stats.retries == 1


def test_network_error_is_retried(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    url = f"{API}/repos/{REPO}/commits/{'h' * 40}/pulls"
    mocked.get(url, body=requests.ConnectionError("connection reset"))
    add_pages(mocked, url, [{"number": 5, "state": "open"}, {"number": 4, "state": "closed"}])
    _, gh = client(app_key, fake_time)

    assert gh.list_open_pull_requests_for_sha(REPO, "h" * 40) == [5]
    assert len(fake_time.sleeps) == 1


def test_expired_installation_token_is_refreshed_once(mocked, app_key, fake_time):
    issued = token_endpoint(mocked, app_key, fake_time, "ghs_old", "ghs_new")
    url = f"{API}/repos/{REPO}/pulls/5"
    mocked.get(
        url,
        status=401,
        json={"message": "Bad credentials"},
        match=[matchers.header_matcher({"Authorization": "token ghs_old"})],
    )
    mocked.get(
        url, json=pr_json(), match=[matchers.header_matcher({"Authorization": "token ghs_new"})]
    )
    factory, gh = client(app_key, fake_time)

    assert gh.get_pull_request(REPO, 5).number == 5
    assert issued == ["ghs_old", "ghs_new"] and fake_time.sleeps == []
    assert factory.stats.token_refreshes == 2


def test_a_second_401_fails_instead_of_looping(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1", "ghs_2", "ghs_3")
    mocked.get(f"{API}/repos/{REPO}/pulls/5", status=401, json={"message": "Bad credentials"})
    _, gh = client(app_key, fake_time)

    with pytest.raises(GitHubError) as caught:
        gh.get_pull_request(REPO, 5)
    assert caught.value.status == 401 and "Bad credentials" in str(caught.value)


def test_token_is_cached_until_shortly_before_expiry(mocked, app_key, fake_time):
    issued = token_endpoint(mocked, app_key, fake_time, "ghs_1", "ghs_2")
    mocked.get(f"{API}/repos/{REPO}/pulls/5", json=pr_json())
    _, gh = client(app_key, fake_time)

    gh.get_pull_request(REPO, 5)
    fake_time.now += 3000  # 50 minutes: still more than 5 minutes left
    gh.get_pull_request(REPO, 5)
    assert issued == ["ghs_1"]
    fake_time.now += 400  # less than 5 minutes left
    gh.get_pull_request(REPO, 5)
    assert issued == ["ghs_1", "ghs_2"]


def test_enterprise_base_url(mocked, app_key, fake_time):
    ghe = "https://ghe.example.com:443/api/v3"
    token_endpoint(mocked, app_key, fake_time, "ghs_1", api=ghe)
    mocked.get(f"{ghe}/repos/{REPO}/pulls/5", json=pr_json(150))
    add_pages(
        mocked,
        f"{ghe}/repos/{REPO}/pulls/5/files",
        [{"filename": f"f{i}", "status": "added"} for i in range(150)],
    )
    mocked.get(f"{ghe}/app", json={"id": 7, "slug": "ghe-bot"})
    factory = AppClientFactory(
        7,
        app_key,
        "https://ghe.example.com/api/v3",
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )
    gh = factory.for_installation(42)

    graphql_endpoint(
        mocked,
        {"main:a.yml": blob("a: 1"), "main:": {"__typename": "Tree", "entries": []}},
        # GitHub Enterprise Server: /api/graphql, not /api/v3
        api="https://ghe.example.com:443/api",
    )

    assert gh.get_pull_request(REPO, 5).number == 5
    assert len(gh.list_pull_request_files(REPO, 5)[0]) == 150
    assert gh.bot_login() == "ghe-bot[bot]"
    assert gh.read_files(REPO, "main", ["a.yml"]) == {"a.yml": b"a: 1"}


def test_total_retry_time_is_bounded(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(f"{API}/repos/{REPO}/pulls/5", status=503, body="unavailable")
    policy = RetryPolicy(attempts=100, base_delay=1.0, max_delay=8.0, max_wait=20.0)
    _, gh = client(app_key, fake_time, policy=policy)

    with pytest.raises(GitHubError) as caught:
        gh.get_pull_request(REPO, 5)

    assert caught.value.status == 503 and "gave up" in str(caught.value)
    assert sum(fake_time.sleeps) <= 20.0
    assert fake_time.sleeps == [1.0, 2.0, 4.0, 8.0]  # the next 8 s would pass the 20 s budget


def test_a_wait_longer_than_the_budget_fails_at_once(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(
        f"{API}/repos/{REPO}/pulls/5",
        status=429,
        headers={"retry-after": "3600"},
        json={"message": "API rate limit exceeded"},
    )
    _, gh = client(app_key, fake_time, policy=RetryPolicy(max_wait=60.0))

    with pytest.raises(GitHubError) as caught:
        gh.get_pull_request(REPO, 5)
    assert caught.value.status == 429 and fake_time.sleeps == []


def test_a_rate_limit_an_hour_away_is_raised_at_once_with_its_reset(mocked, app_key, fake_time):
    """The primary limit: 403, nothing left, reset in an hour. No waiting: the job is rescheduled at
    the reset."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(
        f"{API}/repos/{REPO}/pulls/5",
        status=403,
        json={"message": "API rate limit exceeded for installation"},
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)},
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(RateLimited) as caught:
        gh.get_pull_request(REPO, 5)
    assert caught.value.status == 403 and caught.value.reset_at == NOW + 3601
    assert fake_time.sleeps == []


def test_check_runs_of_a_commit_are_listed_with_their_external_id(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(
        f"{API}/repos/{REPO}/commits/{'a' * 40}/check-runs",
        json={
            "total_count": 1,
            "check_runs": [
                {
                    "id": 9,
                    "head_sha": "a" * 40,
                    "name": "OpenLineage registry",
                    "status": "in_progress",
                    "conclusion": None,
                    "external_id": "d-1",
                }
            ],
        },
    )
    _, gh = client(app_key, fake_time)

    assert gh.list_check_runs(REPO, "a" * 40, "OpenLineage registry") == [
        CheckRunInfo(9, "a" * 40, "OpenLineage registry", "in_progress", None, "d-1")
    ]
    query = mocked.calls[-1].request.url
    assert "check_name=OpenLineage+registry" in query and "filter=all" in query


def test_403_that_is_not_a_rate_limit_is_not_retried(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.post(
        f"{API}/repos/{REPO}/check-runs",
        status=403,
        json={"message": "Resource not accessible by integration"},
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(GitHubError) as caught:
        gh.create_check_run(REPO, "h" * 40, "registry-bot", "in_progress")
    assert caught.value.status == 403 and fake_time.sleeps == []


def test_missing_things_are_not_found(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(f"{API}/repos/{REPO}/pulls/9", status=404, json={"message": "Not Found"})
    mocked.get(
        f"{API}/repos/{REPO}/contents/.github/registry-bot.yml",
        status=404,
        json={"message": "Not Found"},
        match=[matchers.query_param_matcher({"ref": "main"})],
    )
    mocked.get(
        f"{API}/repos/{REPO}/collaborators/nobody/permission",
        status=404,
        json={"message": "Not Found"},
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(NotFound) as caught:
        gh.get_pull_request(REPO, 9)
    assert caught.value.status == 404
    assert gh.read_file(REPO, "main", ".github/registry-bot.yml") is None
    assert gh.get_permission(REPO, "nobody") == "none"


def test_read_file_decodes_inline_content_and_fetches_large_files_as_blobs(
    mocked, app_key, fake_time
):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.get(
        f"{API}/repos/{REPO}/contents/CODEOWNERS",
        json={
            "type": "file",
            "encoding": "base64",
            "content": "KiBAb3duZXJz\n",
            "sha": "s1",
            "size": 9,
        },
    )
    mocked.get(
        f"{API}/repos/{REPO}/contents/big.json",
        json={"type": "file", "encoding": "none", "content": "", "sha": "s2", "size": 2_000_000},
    )
    mocked.get(
        f"{API}/repos/{REPO}/git/blobs/s2",
        json={"encoding": "base64", "content": "e30=", "sha": "s2"},
    )
    _, gh = client(app_key, fake_time)

    assert gh.read_file(REPO, "b" * 40, "CODEOWNERS") == b"* @owners"
    assert gh.read_file(REPO, "b" * 40, "big.json") == b"{}"


def graphql_endpoint(
    rsps: responses.RequestsMock, objects: dict[str, dict[str, object] | None], api: str = API
) -> list[list[str]]:
    """GitHub's GraphQL endpoint answering ``o<i>: object(oid|expression: $v<i>)`` from ``objects``
    (value -> object); returns the values asked, one list per query."""
    asked: list[list[str]] = []

    def answer(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        headers = {"x-ratelimit-remaining": "4999", "x-ratelimit-resource": "graphql"}
        body = json.loads(request.body or b"{}")
        variables = body["variables"]
        assert (
            "repository(owner: $owner, name: $name)" in body["query"]
            and variables["owner"] == "owner"
        )
        values = [variables[f"v{i}"] for i in range(len(variables) - 2)]
        asked.append(values)
        found = {f"o{i}": objects.get(v) for i, v in enumerate(values)}
        return 200, headers, json.dumps({"data": {"repository": found}})

    rsps.add_callback(responses.POST, f"{api}/graphql", callback=answer)
    return asked


def blob(content: str, **fields: object) -> dict[str, object]:
    return {
        "__typename": "Blob",
        "byteSize": len(content.encode()),
        "isBinary": False,
        "isTruncated": False,
        "text": content,
        **fields,
    }


TREE = [
    {"path": "spec", "type": "tree", "mode": "040000", "sha": "t1"},
    {
        "path": "spec/registry/gcp/registry.json",
        "type": "blob",
        "mode": "100644",
        "sha": "a1",
        "size": 2,
    },
    {
        "path": "spec/registry/gcp/link.json",
        "type": "blob",
        "mode": "120000",
        "sha": "a2",
        "size": 9,
    },
    {
        "path": "spec/registry/huge.json",
        "type": "blob",
        "mode": "100644",
        "sha": "a3",
        "size": MAX_BLOB_BYTES + 1,
    },
    {"path": "spec/registry/vendored", "type": "commit", "mode": "160000", "sha": "a4"},
    {"path": "spec/registryx/other.json", "type": "blob", "mode": "100644", "sha": "a5", "size": 2},
    {"path": "CODEOWNERS", "type": "blob", "mode": "100644", "sha": "a6", "size": 3},
]


def trees_endpoint(rsps: responses.RequestsMock, tree: list[dict[str, object]] = TREE) -> None:
    for ref in ("b" * 40, "h" * 40):
        rsps.get(
            f"{API}/repos/{REPO}/git/trees/{ref}",
            json={"sha": "root", "tree": tree, "truncated": False},
            match=[matchers.query_param_matcher({"recursive": "1"})],
        )


def test_read_tree_reads_the_listed_blobs_in_one_graphql_query_and_skips_what_it_must(
    mocked, app_key, fake_time
):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    trees_endpoint(mocked)
    asked = graphql_endpoint(mocked, {"a1": blob("{}"), "a6": blob("* @")})
    rest = mocked.get(
        f"{API}/repos/{REPO}/git/blobs/a1",
        json={"encoding": "base64", "content": "e30=", "sha": "a1"},
    )
    factory, gh = client(app_key, fake_time)

    base = gh.read_tree(REPO, "b" * 40, ["spec/registry/", "CODEOWNERS"])
    head = gh.read_tree(REPO, "h" * 40, ["spec/registry"])

    assert dict(base) == {"spec/registry/gcp/registry.json": b"{}", "CODEOWNERS": b"* @"}
    assert dict(head) == {"spec/registry/gcp/registry.json": b"{}"}
    assert set(head.skipped) == {
        "spec/registry/gcp/link.json",
        "spec/registry/huge.json",
        "spec/registry/vendored",
    }
    assert "limit" in head.skipped["spec/registry/huge.json"]
    # the first read brings every listed blob (same sha: once); none left out
    assert asked == [["a1", "a6"]]
    assert rest.call_count == 0 and factory.stats.requests == 4  # token, two trees, one query
    assert gh.rate_limit_remaining() is None  # GraphQL's points are not the REST limit


def test_a_later_job_of_the_installation_lists_no_commit_and_reads_no_blob_it_read_before(
    mocked, app_key, fake_time
):
    """The review that an owner's approval starts listed the head's trees and read its files again,
    a moment after the review of the same head: what a sha names is kept per installation, across
    jobs; a branch is listed again."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    expires = datetime.fromtimestamp(fake_time.now + 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    mocked.post(
        f"{API}/app/installations/43/access_tokens",
        status=201,
        json={"token": "ghs_43", "expires_at": expires},
    )
    commit = "b" * 40
    listings = {
        ref: mocked.get(
            f"{API}/repos/{REPO}/git/trees/{ref}",
            json={"sha": "root", "tree": TREE, "truncated": False},
            match=[matchers.query_param_matcher({"recursive": "1"})],
        )
        for ref in (commit, "main")
    }
    asked = graphql_endpoint(mocked, {"a1": blob("{}"), "a6": blob("* @")})
    factory, gh = client(app_key, fake_time)
    first = gh.read_tree(REPO, commit, ["spec/registry/", "CODEOWNERS"])
    assert dict(first) == {"spec/registry/gcp/registry.json": b"{}", "CODEOWNERS": b"* @"}

    # the next job
    later = factory.for_installation(42).read_tree(REPO, commit, ["spec/registry/", "CODEOWNERS"])
    assert dict(later) == dict(first) and later.skipped == first.skipped
    assert listings[commit].call_count == 1 and len(asked) == 1  # nothing asked again
    assert dict(factory.for_installation(42).read_tree(REPO, commit, ["CODEOWNERS"])) == {
        "CODEOWNERS": b"* @"
    }
    # other folders: listed; the blob is known
    assert listings[commit].call_count == 2 and len(asked) == 1
    for _ in range(2):  # a branch can move: listed every time
        assert dict(factory.for_installation(42).read_tree(REPO, "main", ["CODEOWNERS"])) == {
            "CODEOWNERS": b"* @"
        }
    assert listings["main"].call_count == 2
    other = factory.for_installation(43).read_tree(REPO, commit, ["spec/registry/", "CODEOWNERS"])
    assert dict(other) == dict(first)  # another installation reads for itself
    assert listings[commit].call_count == 3 and len(asked) == 2


def test_what_graphql_cannot_give_exactly_is_read_over_rest(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    tree = [
        {"path": f"spec/{name}.json", "type": "blob", "mode": "100644", "sha": name, "size": 4}
        for name in ("ok", "cut", "bin", "latin", "gone")
    ]
    trees_endpoint(mocked, tree)
    asked = graphql_endpoint(
        mocked,
        {
            "ok": blob("{}"),
            "cut": blob("{", isTruncated=True, byteSize=4),
            "bin": blob("", isBinary=True, text=None),
            # not UTF-8: replaced, so the length differs
            "latin": blob("caf\ufffd", byteSize=4),
            "gone": None,
        },
    )
    rest = {
        name: mocked.get(
            f"{API}/repos/{REPO}/git/blobs/{name}",
            json={"encoding": "base64", "content": base64.b64encode(content).decode(), "sha": name},
        )
        for name, content in (
            ("cut", b"{\n}\n"),
            ("bin", b"\x00\x01"),
            ("latin", b"caf\xe9"),
            ("gone", b"[]"),
        )
    }
    _, gh = client(app_key, fake_time)

    files = gh.read_tree(REPO, "h" * 40, ["spec"])

    assert {path: files[path] for path in files} == {
        "spec/ok.json": b"{}",
        "spec/cut.json": b"{\n}\n",
        "spec/bin.json": b"\x00\x01",
        "spec/latin.json": b"caf\xe9",
        "spec/gone.json": b"[]",
    }
    assert len(asked) == 1  # one query; each blob it could not give exactly is one REST read, once
    assert [r.call_count for r in rest.values()] == [1, 1, 1, 1]


def test_graphql_refused_means_rest_from_then_on(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    trees_endpoint(mocked)
    query = mocked.post(
        f"{API}/graphql", json={"errors": [{"type": "RATE_LIMITED", "message": "API rate limit"}]}
    )
    for sha, content in (("a1", "e30="), ("a6", "KiBA")):
        mocked.get(
            f"{API}/repos/{REPO}/git/blobs/{sha}",
            json={"encoding": "base64", "content": content, "sha": sha},
        )
    _, gh = client(app_key, fake_time)

    base = gh.read_tree(REPO, "b" * 40, ["spec/registry/", "CODEOWNERS"])

    assert dict(base) == {"spec/registry/gcp/registry.json": b"{}", "CODEOWNERS": b"* @"}
    assert query.call_count == 1


def test_a_graphql_server_error_is_retried_like_any_request(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    trees_endpoint(mocked)
    mocked.post(f"{API}/graphql", status=502, json={"message": "Server Error"})
    asked = graphql_endpoint(mocked, {"a1": blob("{}"), "a6": blob("* @")})
    factory, gh = client(app_key, fake_time)

    assert gh.read_tree(REPO, "h" * 40, ["CODEOWNERS"])["CODEOWNERS"] == b"* @"
    assert len(asked) == 1 and factory.stats.retries == 1 and fake_time.sleeps == [1.0]


def test_read_files_asks_once_and_leaves_out_what_is_not_a_file(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    folder = {
        "__typename": "Tree",
        "entries": [{"name": "bot.yml", "mode": 0o100644}, {"name": "link.yml", "mode": 0o120000}],
    }
    root = {"__typename": "Tree", "entries": [{"name": "big.yml", "mode": 0o100644}]}
    asked = graphql_endpoint(
        mocked,
        {
            "main:.github/bot.yml": blob("a: 1\n"),
            "main:.github/link.yml": blob("bot.yml"),
            "main:.github": folder,
            "main:big.yml": blob("x", isTruncated=True, byteSize=9),
            "main:": root,
        },
    )
    mocked.get(
        f"{API}/repos/{REPO}/contents/big.yml",
        json={
            "type": "file",
            "encoding": "base64",
            "content": "eHh4eHh4eHh4",
            "sha": "s",
            "size": 9,
        },
    )
    _, gh = client(app_key, fake_time)

    found = gh.read_files(
        REPO, "main", [".github/bot.yml", ".github/link.yml", ".github/none.yml", "big.yml"]
    )

    # a symlink is not followed
    assert found == {".github/bot.yml": b"a: 1\n", "big.yml": b"xxxxxxxxx"}
    assert asked == [
        [
            "main:.github/bot.yml",
            "main:.github/link.yml",
            "main:.github/none.yml",
            "main:big.yml",
            "main:",
            "main:.github",
        ]
    ]


CONFIG_YML = b"delegation:\n  approve: false\n"
FAILING = "Something went wrong while executing your query. This may be the result of a timeout."


@pytest.mark.parametrize(
    "path",
    [["repository", "o0"], ["repository", "o2", "entries"], None],
    ids=["the file", "its folder", "unattributed"],
)
def test_a_field_graphql_failed_in_a_partial_answer_is_read_over_rest_not_absent(
    mocked, app_key, fake_time, path
):
    """GraphQL's partial answer: ``data`` with the field null and an ``errors`` entry whose
    ``path`` names it. Was: read as "no such file", so the bot's configuration fell back to the
    defaults (``delegation.approve: true`` where the repository says ``false``)."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    folder = {"__typename": "Tree", "entries": [{"name": "registry-bot.yml", "mode": 0o100644}]}
    fields: dict[str, object] = {"o0": blob(CONFIG_YML.decode()), "o1": None, "o2": folder}
    error: dict[str, object] = {"message": FAILING, "locations": [{"line": 1, "column": 120}]}
    if path is not None:
        fields[str(path[1])], error["path"] = None, path
    query = mocked.post(f"{API}/graphql", json={"data": {"repository": fields}, "errors": [error]})
    rest = mocked.get(
        f"{API}/repos/{REPO}/contents/.github/registry-bot.yml",
        json={
            "type": "file",
            "encoding": "base64",
            "path": ".github/registry-bot.yml",
            "content": base64.b64encode(CONFIG_YML).decode(),
            "sha": "s",
            "size": len(CONFIG_YML),
        },
    )
    absent = mocked.get(
        f"{API}/repos/{REPO}/contents/.github/registry-bot.yaml", status=404, json={}
    )
    _, gh = client(app_key, fake_time)

    found = gh.read_files(REPO, "main", [".github/registry-bot.yml", ".github/registry-bot.yaml"])

    assert found == {".github/registry-bot.yml": CONFIG_YML}
    assert query.call_count == 1 and rest.call_count == 1
    # the folder's listing failed, or an error names no field: each file of it over REST; else
    # the absent one (null, no error) stays absent
    assert absent.call_count == (0 if path == ["repository", "o0"] else 1)


def test_a_configuration_over_the_size_github_serves_is_named_unread_not_an_error(
    mocked, app_key, fake_time
):
    """A configuration file over 10 MB: GraphQL truncates it and the contents API sends its size
    alone. ``read_files`` names it in ``skipped``, and the configuration is one the bot cannot use
    (``config/invalid``, the defaults, no delegation); was: the client's own 413, so every review
    ended "internal error"."""
    from bot.github.pipeline import config_at

    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    size = 11 * 1024 * 1024
    folder = {"__typename": "Tree", "entries": [{"name": "registry-bot.yml", "mode": 0o100644}]}
    huge = blob("", byteSize=size, isTruncated=True)
    mocked.post(
        f"{API}/graphql", json={"data": {"repository": {"o0": huge, "o1": None, "o2": folder}}}
    )
    rest = mocked.get(
        f"{API}/repos/{REPO}/contents/.github/registry-bot.yml",
        json={"type": "file", "path": ".github/registry-bot.yml", "sha": "s", "size": size},
    )
    _, gh = client(app_key, fake_time)

    found = gh.read_files(REPO, "main", [".github/registry-bot.yml", ".github/registry-bot.yaml"])
    assert found == {} and rest.call_count == 1
    assert "over the 10485760 byte limit" in found.skipped[".github/registry-bot.yml"]  # type: ignore[attr-defined]
    config, findings = config_at(gh, REPO, "main")
    assert config.unusable and [f.rule for f in findings] == ["config/invalid"]
    assert "over the 10485760 byte limit" in findings[0].message


RATE_HEADERS = {
    "x-ratelimit-remaining": "0",
    "x-ratelimit-reset": str(int(NOW) + 1800),
    "x-ratelimit-resource": "graphql",
}


def graphql_error(kind: str | None, message: str) -> dict[str, object]:
    """A GraphQL ``errors`` answer (HTTP 200), of ``kind`` (its ``type``) when given."""
    return {"errors": [{"message": message, **({"type": kind} if kind else {})}]}


@pytest.mark.parametrize("kind", ["RATE_LIMITED", "RATE_LIMIT"])
def test_a_graphql_rate_limit_on_a_mutation_is_rate_limited_not_refused(
    mocked, app_key, fake_time, kind
):
    """GitHub answers a rate-limited mutation with 200 and ``errors`` (was: a 422 refusal, never
    retried, the App's auto-merge left on)."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    query = mocked.post(
        f"{API}/graphql",
        json=graphql_error(kind, "API rate limit already exceeded for installation ID 42."),
        headers=RATE_HEADERS,
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(RateLimited) as caught:
        gh.disable_auto_merge(REPO, 7, "PR_node")

    assert caught.value.reset_at == NOW + 1800 + 1 and not caught.value.secondary
    assert not is_refusal(caught.value) and query.call_count == 1
    with pytest.raises(RateLimited):
        gh.enable_auto_merge(REPO, 7, "PR_node", "h" * 40, "SQUASH")


def test_a_graphql_error_on_a_mutation_is_retried_like_a_5xx(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    failing = graphql_error(None, "Something went wrong while executing your query.")
    mocked.post(f"{API}/graphql", json=failing)
    mocked.post(f"{API}/graphql", json={"data": {"disablePullRequestAutoMerge": {}}})
    factory, gh = client(app_key, fake_time)

    gh.disable_auto_merge(REPO, 7, "PR_node")

    assert factory.stats.retries == 1 and fake_time.sleeps == [1.0]
    mocked.replace(responses.POST, f"{API}/graphql", json=failing)
    with pytest.raises(GitHubError) as caught:
        gh.disable_auto_merge(REPO, 7, "PR_node")
    assert caught.value.status == 502 and is_retryable(caught.value)
    assert not is_refusal(caught.value)


@pytest.mark.parametrize(
    ("kind", "status"), [("FORBIDDEN", 403), ("UNPROCESSABLE", 422), ("NOT_FOUND", 404)]
)
def test_a_graphql_refusal_of_a_mutation_stays_a_refusal(mocked, app_key, fake_time, kind, status):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    query = mocked.post(
        f"{API}/graphql", json=graphql_error(kind, "Pull request is in clean status")
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(GitHubError) as caught:
        gh.enable_auto_merge(REPO, 7, "PR_node", "h" * 40, "SQUASH")

    assert caught.value.status == status and is_refusal(caught.value)
    assert "clean status" in str(caught.value) and query.call_count == 1


def test_enabling_auto_merge_under_a_graphql_rate_limit_is_not_reported_refused(
    mocked, app_key, fake_time
):
    """The delegation lets the rate limit through (the worker runs the job again at the reset);
    was: "auto-merge refused (API rate limit ...)"."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.post(
        f"{API}/graphql", json=graphql_error("RATE_LIMITED", "API rate limit"), headers=RATE_HEADERS
    )
    _, gh = client(app_key, fake_time)
    pr = PullRequest(REPO, 7, "h" * 40, "b" * 40, "main", "pr", "a", "open", node_id="PR_node")

    with pytest.raises(RateLimited):
        enable_merge(gh, pr, "SQUASH", Refusals())


@pytest.mark.parametrize("by", ["registry-bot[bot]", "carol", None])
def test_auto_merge_github_enabled_before_failing_is_not_reported_refused(
    mocked, app_key, fake_time, by
):
    """Finding: GitHub enabled auto-merge and answered the mutation with a 502; the client sent
    it again and GitHub refused it as "Pull request Auto merge is already enabled" (the
    ``UNPROCESSABLE`` answer clients report for it): the summary said "auto-merge refused" while
    auto-merge was on. Now a refusal is checked against the pull request's ``auto_merge`` (one
    more read): on for this head, it is reported enabled; off, still refused."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.post(f"{API}/graphql", status=502, json={"message": "Server Error"})
    mocked.post(
        f"{API}/graphql",
        json=graphql_error("UNPROCESSABLE", "Pull request Auto merge is already enabled"),
    )
    state = {**pr_json(), "number": 7, "node_id": "PR_node"}
    if by is not None:
        state["auto_merge"] = {"enabled_by": {"login": by}, "merge_method": "squash"}
    read = mocked.get(f"{API}/repos/{REPO}/pulls/7", json=state)
    _, gh = client(app_key, fake_time)
    pr = PullRequest(REPO, 7, "h" * 40, "b" * 40, "main", "pr", "a", "open", node_id="PR_node")
    refusals = Refusals()

    outcome = enable_merge(gh, pr, "SQUASH", refusals)

    if by is None:
        assert outcome.startswith("auto-merge refused") and "already enabled" in outcome
    elif by == "carol":
        assert outcome == "auto-merge already enabled by carol", outcome
    else:
        assert outcome == "auto-merge enabled", outcome
    assert read.call_count == 1 and not refusals.found


def test_writes_are_paced_one_at_a_time_and_graphql_queries_are_not(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.post(f"{API}/repos/{REPO}/issues/5/comments", json={"id": 1})
    mocked.patch(f"{API}/repos/{REPO}/issues/comments/1", json={"id": 1})
    graphql_endpoint(
        mocked,
        {
            "main:a": blob("x"),
            "main:": {"__typename": "Tree", "entries": [{"name": "a", "mode": 0o100644}]},
        },
    )
    factory = AppClientFactory(
        7,
        app_key,
        "https://api.github.com",
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        slug="registry-bot",
        seconds_between_requests=0,
        seconds_between_writes=1.0,
    )
    # two jobs of one installation
    first, second = factory.for_installation(42), factory.for_installation(42)

    first.create_issue_comment(REPO, 5, "one")
    assert first.read_files(REPO, "main", ["a"]) == {"a": b"x"}  # a read, sent at once
    assert fake_time.sleeps == []
    second.edit_issue_comment(REPO, 1, "two")
    first.create_issue_comment(REPO, 5, "three")

    # each write a second after the previous one ended, across clients
    assert fake_time.sleeps == [1.0, 1.0]


def test_read_tree_walks_down_when_the_recursive_listing_is_truncated(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    trees = f"{API}/repos/{REPO}/git/trees"
    mocked.get(
        f"{trees}/main",
        json={"sha": "root", "tree": [], "truncated": True},
        match=[matchers.query_param_matcher({"recursive": "1"})],
    )
    mocked.get(
        f"{trees}/root",
        json={"sha": "root", "tree": [{"path": "spec", "type": "tree", "sha": "t-spec"}]},
        match=[matchers.query_param_matcher({})],
    )
    mocked.get(
        f"{trees}/t-spec",
        json={"sha": "t-spec", "tree": [{"path": "registry", "type": "tree", "sha": "t-reg"}]},
        match=[matchers.query_param_matcher({})],
    )
    mocked.get(
        f"{trees}/t-reg",
        json={
            "sha": "t-reg",
            "truncated": False,
            "tree": [
                {"path": "core", "type": "tree", "sha": "t-core"},
                {
                    "path": "core/registry.json",
                    "type": "blob",
                    "mode": "100644",
                    "sha": "c1",
                    "size": 2,
                },
            ],
        },
        match=[matchers.query_param_matcher({"recursive": "1"})],
    )
    asked = graphql_endpoint(mocked, {"c1": blob("{}")})
    _, gh = client(app_key, fake_time)

    assert dict(gh.read_tree(REPO, "main", ["spec/registry"])) == {
        "spec/registry/core/registry.json": b"{}"
    }
    assert asked == [["c1"]]


def test_check_run_payloads(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    create = mocked.post(f"{API}/repos/{REPO}/check-runs", status=201, json={"id": 11})
    update = mocked.patch(f"{API}/repos/{REPO}/check-runs/11", json={"id": 11})
    dismiss = mocked.put(f"{API}/repos/{REPO}/pulls/5/reviews/3/dismissals", json={"id": 3})
    _, gh = client(app_key, fake_time)
    output = CheckRunOutput(
        "2 errors",
        "summary",
        annotations=(
            Annotation(
                "a.json", 3, 3, "failure", "bad", title="entry.name", start_column=2, end_column=4
            ),
        ),
    )

    run_id = gh.create_check_run(REPO, "h" * 40, "registry-bot", "in_progress", external_id="d-1")
    gh.update_check_run(
        REPO,
        run_id,
        conclusion="failure",
        output=output,
        actions=[{"label": "Re-run", "description": "Run again", "identifier": "rerun"}],
    )
    gh.dismiss_review(REPO, 5, 3, "superseded")

    assert json.loads(create.calls[0].request.body) == {
        "name": "registry-bot",
        "head_sha": "h" * 40,
        "status": "in_progress",
        "external_id": "d-1",
    }
    sent = json.loads(update.calls[0].request.body)
    assert sent["status"] == "completed" and sent["conclusion"] == "failure"
    assert sent["output"]["annotations"] == [
        {
            "path": "a.json",
            "start_line": 3,
            "end_line": 3,
            "message": "bad",
            "title": "entry.name",
            "start_column": 2,
            "end_column": 4,
            "annotation_level": "failure",
        }
    ]
    assert sent["actions"][0]["identifier"] == "rerun"
    assert json.loads(dismiss.calls[0].request.body) == {
        "message": "superseded",
        "event": "DISMISS",
    }


def test_team_membership_active_pending_absent_and_forbidden(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1", "ghs_2")  # the second an hour later
    teams = f"{API}/orgs/OpenLineage/teams/committers/memberships"
    mocked.get(
        f"{teams}/carol", json={"state": "active", "role": "member", "url": f"{teams}/carol"}
    )
    mocked.get(f"{teams}/dave", json={"state": "pending", "role": "member"})
    mocked.get(f"{teams}/erin", status=404, json={"message": "Not Found"})
    mocked.get(f"{teams}/frank", status=404, json={"message": "Not Found"})
    team = mocked.get(
        f"{API}/orgs/OpenLineage/teams/committers", json={"slug": "committers", "id": 1}
    )
    mocked.get(
        f"{API}/orgs/Other/teams/devs/memberships/carol",
        status=403,
        json={"message": "Resource not accessible by integration"},
    )
    mocked.get(
        f"{API}/orgs/Hidden/teams/devs/memberships/carol", status=404, json={"message": "Not Found"}
    )
    mocked.get(f"{API}/orgs/Hidden/teams/devs", status=404, json={"message": "Not Found"})
    factory, gh = client(app_key, fake_time)

    assert gh.get_team_membership("OpenLineage", "committers", "carol") == "active"
    assert gh.get_team_membership("OpenLineage", "committers", "dave") == "pending"
    # a visible team: not a member
    assert gh.get_team_membership("OpenLineage", "committers", "erin") is None
    assert gh.get_team_membership("OpenLineage", "committers", "frank") is None
    assert team.call_count == 1  # the team's visibility is asked once
    assert (
        factory.for_installation(42).get_team_membership("OpenLineage", "committers", "erin")
        is None
    )
    assert team.call_count == 1  # and kept for the installation, across clients (jobs), for an hour
    fake_time.now += 3601
    assert (
        factory.for_installation(42).get_team_membership("OpenLineage", "committers", "erin")
        is None
    )
    assert team.call_count == 2
    fake_time.sleeps.clear()
    with pytest.raises(GitHubError) as forbidden:
        gh.get_team_membership("Other", "devs", "carol")
    assert forbidden.value.status == 403 and "not accessible" in str(forbidden.value)
    with pytest.raises(NotFound):  # a hidden team: the 404 says nothing about carol
        gh.get_team_membership("Hidden", "devs", "carol")
    # a missing permission is not retried
    assert fake_time.sleeps == [] and factory.stats.retries == 0


def test_a_team_github_would_not_show_is_asked_about_again_only_after_ten_minutes(
    mocked, app_key, fake_time
):
    """The hidden team's 404s (membership, then the team) and the 403 of an App without Members:
    read were asked in every review; the refusal is now kept per installation for
    ``TEAM_REFUSAL_TTL``, across jobs."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1", "ghs_2")
    hidden = mocked.get(
        f"{API}/orgs/Hidden/teams/devs/memberships/carol", status=404, json={"message": "Not Found"}
    )
    hidden_team = mocked.get(
        f"{API}/orgs/Hidden/teams/devs", status=404, json={"message": "Not Found"}
    )
    forbidden = mocked.get(
        f"{API}/orgs/Other/teams/devs/memberships/carol",
        status=403,
        json={"message": "Resource not accessible by integration"},
    )
    expires = datetime.fromtimestamp(fake_time.now + 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    mocked.post(
        f"{API}/app/installations/43/access_tokens",
        status=201,
        json={"token": "ghs_43", "expires_at": expires},
    )
    factory, _ = client(app_key, fake_time)

    def outcome(org: str) -> tuple[type[GitHubError], int, str]:
        with pytest.raises(GitHubError) as refused:
            # a new client: another job
            factory.for_installation(42).get_team_membership(org, "devs", "carol")
        return type(refused.value), refused.value.status, str(refused.value)

    first = outcome("Hidden"), outcome("Other")
    assert first[0][:2] == (NotFound, 404) and first[1][:2] == (GitHubError, 403)
    fake_time.now += 599
    assert (outcome("Hidden"), outcome("Other")) == first  # the same answer, not asked again
    assert (hidden.call_count, hidden_team.call_count, forbidden.call_count) == (1, 1, 1)
    with pytest.raises(NotFound):  # kept per installation: another one asks GitHub itself
        factory.for_installation(43).get_team_membership("Hidden", "devs", "carol")
    assert (hidden.call_count, hidden_team.call_count) == (2, 2)
    fake_time.now += 1
    assert (outcome("Hidden"), outcome("Other")) == first  # ten minutes on: asked again
    assert (hidden.call_count, hidden_team.call_count, forbidden.call_count) == (3, 3, 2)


def test_a_batch_takes_the_nearest_blobs_first_within_githubs_limits():
    paths = {
        "w": "spec/registry/gcp/registry.json",
        "sib": "spec/registry/gcp/facets/F.json",
        "same": "spec/registry/gcp/other.json",
        "far": "website/static/spec/1-0-0/x.json",
        "up": "spec/OpenLineage.json",
        "huge": "spec/registry/gcp/big.json",
    }
    sizes = dict.fromkeys(paths, 10) | {"huge": MAX_BYTES}
    # no room for "huge"
    assert nearest_first("w", paths, sizes, list(paths)) == ["w", "same", "sib", "up", "far"]
    many = {f"b{i:04}": f"spec/f{i:04}.json" for i in range(MAX_OBJECTS + 50)}
    batch = nearest_first("b0100", many, dict.fromkeys(many, 1), list(many))
    assert len(batch) == MAX_OBJECTS and batch[0] == "b0100" and len(set(batch)) == MAX_OBJECTS


def test_graphql_failing_twice_falls_back_to_rest_for_the_rest_of_the_job(
    mocked, app_key, fake_time
):
    """Finding: with GraphQL answering 502 to every query, every attempt of the review ended
    "internal error"."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    trees_endpoint(mocked)
    query = mocked.post(f"{API}/graphql", status=502, json={"message": "Server Error"})
    for sha, content in (("a1", "e30="), ("a6", "KiBA")):
        mocked.get(
            f"{API}/repos/{REPO}/git/blobs/{sha}",
            json={"encoding": "base64", "content": content, "sha": sha},
        )
    _, gh = client(app_key, fake_time)

    base = gh.read_tree(REPO, "b" * 40, ["spec/registry/", "CODEOWNERS"])

    assert dict(base) == {"spec/registry/gcp/registry.json": b"{}", "CODEOWNERS": b"* @"}
    # the query and one retry, then REST for every later read of this client
    assert query.call_count == 2


def test_graphql_batches_shrink_when_github_finds_a_query_too_big(mocked, app_key, fake_time):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    tree = [
        {
            "path": f"spec/f{i:03d}.json",
            "type": "blob",
            "mode": "100644",
            "sha": f"s{i:03d}",
            "size": 2,
        }
        for i in range(MAX_OBJECTS + 50)
    ]
    trees_endpoint(mocked, tree)
    sizes: list[int] = []

    def answer(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        variables = json.loads(request.body or b"{}")["variables"]
        values = [variables[f"v{i}"] for i in range(len(variables) - 2)]
        sizes.append(len(values))
        if len(values) > 60:
            return (
                200,
                {},
                json.dumps(
                    {
                        "errors": [
                            {
                                "type": "RESOURCE_LIMITS_EXCEEDED",
                                "message": "Resource limits for this query exceeded.",
                            }
                        ]
                    }
                ),
            )
        return (
            200,
            {},
            json.dumps({"data": {"repository": {f"o{i}": blob("{}") for i in range(len(values))}}}),
        )

    mocked.add_callback(responses.POST, f"{API}/graphql", callback=answer)
    _, gh = client(app_key, fake_time)

    files = gh.read_tree(REPO, "h" * 40, ["spec"])

    assert all(files[f"spec/f{i:03d}.json"] == b"{}" for i in range(MAX_OBJECTS + 50))
    # halved until GitHub takes it
    assert sizes[:3] == [MAX_OBJECTS, MAX_OBJECTS // 2, MAX_OBJECTS // 4]
    assert set(sizes[3:]) <= {MAX_OBJECTS // 4}  # and kept that small for the rest of the job


def test_check_states_say_which_checks_are_required_for_the_pull_request(
    mocked, app_key, fake_time
):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    query = mocked.post(
        f"{API}/graphql",
        json={
            "data": {
                "repository": {
                    "object": {
                        "statusCheckRollup": {
                            "contexts": {
                                "totalCount": 4,
                                "nodes": [
                                    {
                                        "__typename": "CheckRun",
                                        "name": "ci",
                                        "status": "COMPLETED",
                                        "conclusion": "FAILURE",
                                        "isRequired": True,
                                    },
                                    {
                                        "__typename": "CheckRun",
                                        "name": "lint",
                                        "status": "IN_PROGRESS",
                                        "conclusion": None,
                                        "isRequired": True,
                                    },
                                    {
                                        "__typename": "StatusContext",
                                        "context": "docs/preview",
                                        "state": "ERROR",
                                        "isRequired": False,
                                    },
                                    {
                                        "__typename": "CheckRun",
                                        "name": "spell",
                                        "status": "COMPLETED",
                                        "conclusion": "SKIPPED",
                                        "isRequired": False,
                                    },
                                ],
                            }
                        }
                    }
                }
            }
        },
    )
    _, gh = client(app_key, fake_time)

    assert gh.check_states(REPO, 7, "a" * 40) == [
        CheckState("ci", "failure", True, "failing"),
        CheckState("lint", "in_progress", True, "pending"),
        CheckState("docs/preview", "error", False, "failing"),
        CheckState("spell", "skipped", False, "passed"),
    ]
    sent = json.loads(query.calls[0].request.body)
    assert sent["variables"] == {"owner": "owner", "name": "repo", "head": "a" * 40, "number": 7}
    assert "isRequired(pullRequestNumber: $number)" in sent["query"]


@pytest.mark.parametrize(
    "answer",
    [
        {
            "status": 200,
            "json": {
                "data": {"repository": None},
                "errors": [{"message": "Resource not accessible"}],
            },
        },
        {"status": 404, "json": {"message": "Not Found"}},
        {
            "status": 200,
            "json": {"data": {"repository": {"object": {"statusCheckRollup": {"contexts": {}}}}}},
        },
    ],
)
def test_check_states_are_none_when_graphql_cannot_tell(mocked, app_key, fake_time, answer):
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    mocked.post(f"{API}/graphql", **answer)
    _, gh = client(app_key, fake_time)

    assert gh.check_states(REPO, 7, "a" * 40) is None


def test_the_default_branch_head_is_one_request(mocked, app_key, fake_time):  # type: ignore[no-untyped-def]
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    listed = mocked.get(
        f"{API}/repos/{REPO}/commits",
        json=[{"sha": "c" * 40}],
        match=[matchers.query_param_matcher({"per_page": "1"})],
    )
    _, gh = client(app_key, fake_time)
    assert gh.default_branch_head(REPO) == "c" * 40 and listed.call_count == 1


def test_a_cut_folder_listing_on_the_walk_down_is_not_an_absent_folder(mocked, app_key, fake_time):
    """GitHub cuts a folder's listing (``truncated: true``); a name past the cut is unknown, not
    absent: read as absent, the whole watched folder would be missing from the review."""
    token_endpoint(mocked, app_key, fake_time, "ghs_1")
    trees = f"{API}/repos/{REPO}/git/trees"
    mocked.get(
        f"{trees}/main",
        json={"sha": "root", "tree": [], "truncated": True},
        match=[matchers.query_param_matcher({"recursive": "1"})],
    )
    mocked.get(
        f"{trees}/root",
        json={
            "sha": "root",
            "truncated": True,
            "tree": [{"path": "a", "type": "tree", "sha": "t"}],
        },
        match=[matchers.query_param_matcher({})],
    )
    _, gh = client(app_key, fake_time)

    with pytest.raises(GitHubError, match="too many entries"):
        gh.read_tree(REPO, "main", ["spec/registry"])
