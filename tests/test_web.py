"""The webhook contract: every recorded GitHub payload, and every kind of bad request."""

from __future__ import annotations

import json
import logging
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from bot.service.queue import JobQueue
from bot.service.settings import Settings, SettingsError
from bot.service.signature import sign
from bot.service.web import MAX_BODY, create_app
from tests.conftest import PAYLOADS

SECRETS = ("old-secret", "new-secret")
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----"

# payload file -> (status, queued?)
EXPECTED = {
    "ping.json": (200, False),
    "ping.with-app_id.json": (200, False),
    "pull_request.opened.json": (202, True),
    "pull_request.opened.with-null-body.json": (202, True),
    "pull_request.opened.ghes-3.5.json": (202, True),
    "pull_request.synchronize.json": (202, True),
    "pull_request.reopened.json": (202, True),
    "pull_request.ready_for_review.json": (202, True),
    "pull_request.closed.json": (202, False),
    "pull_request.edited.json": (202, False),  # body edited, no installation: nothing to review
    "pull_request_review.submitted.json": (202, True),
    "check_suite.requested.json": (202, False),
    "check_suite.rerequested.json": (202, True),
    "check_run.rerequested.json": (202, True),
    "check_run.requested_action.json": (202, True),
    "issue_comment.created.json": (202, False),  # on a plain issue
    "issue_comment.created.on-pull-request.json": (202, False),  # no recheck command in it
    "installation.created.json": (200, False),
    "installation_repositories.added.json": (200, False),
}


def settings(tmp_path: Path) -> Settings:
    return Settings(
        app_id=1, private_key=KEY, webhook_secrets=SECRETS, queue_url=str(tmp_path / "q.sqlite3")
    )


@pytest.fixture
def queue(tmp_path: Path) -> JobQueue:
    return JobQueue.from_url(str(tmp_path / "q.sqlite3"))


@pytest.fixture
def client(tmp_path: Path, queue: JobQueue) -> FlaskClient:
    return create_app(settings(tmp_path), queue).test_client()


def post(
    client: FlaskClient,
    body: bytes,
    event: str,
    secret: str | None = "new-secret",
    delivery: str | None = None,
    **headers: str,
) -> Any:
    h = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "Content-Type": "application/json",
        **headers,
    }
    if secret is not None:
        h["X-Hub-Signature-256"] = sign(body, secret)
    return client.post("/webhook", data=body, headers=h)


def test_every_recorded_payload_is_covered() -> None:
    assert sorted(p.name for p in PAYLOADS.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_payload(client: FlaskClient, queue: JobQueue, name: str) -> None:
    body = (PAYLOADS / name).read_bytes()
    response = post(client, body, name.split(".")[0])
    status, queued = EXPECTED[name]
    assert response.status_code == status, response.json
    assert queue.pending() == (1 if queued else 0)


def test_queued_job_carries_the_pull_request(client: FlaskClient, queue: JobQueue) -> None:
    body = (PAYLOADS / "pull_request.synchronize.json").read_bytes()
    response = post(client, body, "pull_request", delivery="d-1")
    assert response.json == {"message": "queued", "job": "Codertocat/Hello-World#2"}
    job = queue.job("d-1")
    assert job is not None
    assert (job.installation, job.head_sha) == (1, "ec26c3e57ca3a959ca5aad62de7213c562f8c821")


def test_recheck_command_from_a_comment_is_queued_with_its_author(
    client: FlaskClient, queue: JobQueue
) -> None:
    payload = json.loads((PAYLOADS / "issue_comment.created.on-pull-request.json").read_bytes())
    payload["comment"]["body"] = "Thanks!\n/registry-bot recheck"
    response = post(client, json.dumps(payload).encode(), "issue_comment", delivery="d-2")
    assert response.status_code == 202
    job = queue.job("d-2")
    assert job is not None and (job.number, job.requester) == (31, "zhouzhuojie")


@pytest.mark.parametrize("link", ["absent", None])
def test_a_command_on_a_plain_issue_is_ignored(
    client: FlaskClient, queue: JobQueue, link: str | None
) -> None:
    """Finding: a plain issue whose payload says ``"pull_request": null`` was taken for a pull
    request (the key was there): the job asked GitHub for pull request N, got 404 three times with
    tracebacks and was given up. Only an issue with a ``pull_request`` object is one."""
    payload = json.loads((PAYLOADS / "issue_comment.created.json").read_bytes())
    payload["comment"]["body"] = "/registry-bot recheck"
    if link is None:
        payload["issue"]["pull_request"] = None
    response = post(client, json.dumps(payload).encode(), "issue_comment")
    assert response.status_code == 202 and "not on a pull request" in response.json["message"]
    assert queue.pending() == 0


def test_base_change_is_queued_but_a_title_edit_is_not(
    client: FlaskClient, queue: JobQueue
) -> None:
    payload = json.loads((PAYLOADS / "pull_request.opened.json").read_bytes())
    payload["action"] = "edited"
    payload["changes"] = {"title": {"from": "x"}}
    assert post(client, json.dumps(payload).encode(), "pull_request").status_code == 202
    assert queue.pending() == 0
    payload["changes"] = {"base": {"ref": {"from": "old"}, "sha": {"from": "0" * 40}}}
    assert post(client, json.dumps(payload).encode(), "pull_request").status_code == 202
    assert queue.pending() == 1


def test_redelivery_is_deduplicated(client: FlaskClient, queue: JobQueue) -> None:
    body = (PAYLOADS / "pull_request.opened.json").read_bytes()
    first = post(client, body, "pull_request", delivery="same")
    second = post(client, body, "pull_request", delivery="same")
    assert (first.status_code, second.status_code) == (202, 200)
    assert "duplicate" in second.json["message"]
    assert queue.pending() == 1


def test_a_signed_body_replayed_under_fresh_delivery_ids_is_one_job(
    client: FlaskClient, queue: JobQueue
) -> None:
    """Finding: the signature covers the body, the dedupe keyed on the X-GitHub-Delivery header
    only, so a captured delivery replayed under new ids was a new job each time (each a reply to a
    waive command, or a review). A body already accepted is refused under any other id too."""
    payload = json.loads((PAYLOADS / "issue_comment.created.on-pull-request.json").read_bytes())
    payload["comment"]["body"] = "/registry-bot waive examples/missing spec/x/facets/A.json# later"
    body = json.dumps(payload).encode()
    answers = [post(client, body, "issue_comment") for _ in range(5)]  # a fresh id each time
    assert [a.status_code for a in answers] == [202, 200, 200, 200, 200]
    assert all("duplicate" in a.json["message"] for a in answers[1:])
    assert queue.pending() == 1
    # another comment (another body) is a job of its own
    payload["comment"]["id"] += 1
    assert post(client, json.dumps(payload).encode(), "issue_comment").status_code == 202
    assert queue.pending() == 2


@pytest.mark.parametrize(
    ("event", "name"),
    [("check_run", "check_run.rerequested.json"), ("check_suite", "check_suite.rerequested.json")],
)
def test_a_re_run_clicked_again_later_with_the_same_body_is_reviewed(
    client: FlaskClient, queue: JobQueue, event: str, name: str
) -> None:
    """GitHub does not update the run a Re-run re-requests, so a second Re-run of a run the first
    one left as it was sends the same body (GitHub's own example payload here, twice). Replays and
    double clicks within ``REREQUEST_WINDOW`` are still one job; after it, the Re-run is reviewed
    (before: refused as a replay for 7 days)."""
    from bot.service.done_marks import REREQUEST_WINDOW

    payload = json.loads((PAYLOADS / name).read_bytes())
    payload["installation"] = {"id": 1}
    body = json.dumps(payload).encode()
    answers = [post(client, body, event) for _ in range(3)]  # a fresh id each time
    assert [a.status_code for a in answers] == [202, 200, 200]
    start = time.time()
    queue.clock = lambda: start + REREQUEST_WINDOW + 1  # the first one's job ran meanwhile
    assert post(client, body, event).status_code == 202
    assert post(client, body, event).status_code == 200  # and its replay is refused


@pytest.mark.parametrize("secret", ["old-secret", "new-secret"])
def test_every_configured_secret_is_accepted(client: FlaskClient, secret: str) -> None:
    assert (
        post(client, (PAYLOADS / "ping.json").read_bytes(), "ping", secret=secret).status_code
        == 200
    )


@pytest.mark.parametrize(
    "header", [None, "", "sha256=", "sha1=abc", "sha256=" + "0" * 64, "sha256=zz"]
)
def test_missing_or_bad_signature_is_refused(
    client: FlaskClient, queue: JobQueue, header: str | None
) -> None:
    body = (PAYLOADS / "pull_request.opened.json").read_bytes()
    headers = {} if header is None else {"X-Hub-Signature-256": header}
    response = post(client, body, "pull_request", secret=None, **headers)
    assert response.status_code == 401
    assert queue.pending() == 0


def test_signature_of_another_secret_or_body_is_refused(client: FlaskClient) -> None:
    body = (PAYLOADS / "ping.json").read_bytes()
    assert post(client, body, "ping", secret="wrong").status_code == 401
    response = client.post(
        "/webhook",
        data=body + b" ",
        headers={
            "X-GitHub-Event": "ping",
            "X-GitHub-Delivery": "x",
            "X-Hub-Signature-256": sign(body, "new-secret"),
        },
    )
    assert response.status_code == 401


@pytest.mark.parametrize(
    "body", [b"", b"not json", b"{", b"[1, 2]", b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000]
)
def test_body_that_is_not_a_json_object_is_400(client: FlaskClient, body: bytes) -> None:
    assert post(client, body, "pull_request").status_code == 400


def test_form_encoded_payload_is_accepted(client: FlaskClient, queue: JobQueue) -> None:
    from urllib.parse import urlencode

    body = urlencode({"payload": (PAYLOADS / "pull_request.opened.json").read_text()}).encode()
    response = post(
        client, body, "pull_request", **{"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 202
    assert queue.pending() == 1


def test_body_over_25_mb_is_413(client: FlaskClient) -> None:
    body = b"{" + b" " * MAX_BODY + b"}"
    assert post(client, body, "pull_request").status_code == 413


def test_unknown_event_is_ignored(client: FlaskClient, queue: JobQueue) -> None:
    response = post(client, b'{"action": "created"}', "star")
    assert response.status_code == 202 and "ignored" in response.json["message"]
    assert queue.pending() == 0


def test_missing_delivery_header_is_400(client: FlaskClient) -> None:
    body = b"{}"
    response = client.post(
        "/webhook",
        data=body,
        headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(body, "new-secret")},
    )
    assert response.status_code == 400


def test_queue_failure_answers_503(tmp_path: Path) -> None:
    broken = JobQueue.from_url("redis://127.0.0.1:1/0")  # nothing listens there
    client = create_app(settings(tmp_path), broken).test_client()
    assert (
        post(
            client, (PAYLOADS / "pull_request.opened.json").read_bytes(), "pull_request"
        ).status_code
        == 503
    )
    assert client.get("/readyz").status_code == 503


def test_health_ready_and_metrics(client: FlaskClient) -> None:
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["pending"] == 0
    post(client, (PAYLOADS / "ping.json").read_bytes(), "ping")
    text = client.get("/metrics").get_data(as_text=True)
    assert 'registry_bot_deliveries_total{event="ping",outcome="200"}' in text


def test_get_on_webhook_is_405(client: FlaskClient) -> None:
    assert client.get("/webhook").status_code == 405


# -- configuration --------------------------------------------------------------------------------
def test_the_web_needs_the_webhook_secret_and_nothing_of_the_app(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Finding: the internet-facing web refused to start without the App's private key, which it
    never uses."""
    for name in (
        "GITHUB_WEBHOOK_SECRET",
        "GITHUB_WEBHOOK_SECRET_PATH",
        "GITHUB_APP_ID",
        "GITHUB_APP_PRIVATE_KEY",
        "GITHUB_APP_PRIVATE_KEY_PATH",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BOT_QUEUE_URL", str(tmp_path / "q.sqlite3"))
    with pytest.raises(SettingsError) as info:
        create_app()
    message = str(info.value)
    assert (
        "GITHUB_WEBHOOK_SECRET" in message
        and "GITHUB_APP_ID" not in message
        and "PRIVATE_KEY" not in message
    )
    secret = tmp_path / "webhook-secret"
    secret.write_text("from-a-file\n")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET_PATH", str(secret))
    app = create_app()  # no App id, no key: starts
    body = b'{"zen": "z", "hook_id": 1}'
    answer = app.test_client().post(
        "/webhook",
        data=body,
        headers={
            "X-GitHub-Event": "ping",
            "X-GitHub-Delivery": "d",
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(body, "from-a-file"),
        },
    )
    assert answer.status_code == 200


def test_the_worker_needs_the_app_and_not_the_webhook_secret() -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env({}, need_webhook=False)
    assert "GITHUB_APP_ID" in str(info.value) and "WEBHOOK" not in str(info.value)
    s = Settings.from_env({"GITHUB_APP_ID": "7", "GITHUB_APP_PRIVATE_KEY": KEY}, need_webhook=False)
    assert (s.app_id, s.webhook_secrets) == (7, ())


def test_settings_from_environment(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text(KEY)
    s = Settings.from_env(
        {
            "GITHUB_WEBHOOK_SECRET": "a, b",
            "GITHUB_APP_ID": "42",
            "GITHUB_APP_PRIVATE_KEY_PATH": str(key),
            "GITHUB_API_URL": "https://ghe.example/api/v3/",
            "BOT_QUEUE_URL": "redis://localhost:6379/0",
        }
    )
    assert (s.app_id, s.webhook_secrets, s.api_url, s.queue_url, s.private_key) == (
        42,
        ("a", "b"),
        "https://ghe.example/api/v3",
        "redis://localhost:6379/0",
        KEY,
    )


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"GITHUB_APP_ID": "abc"}, "must be a number"),
        (
            {"GITHUB_APP_PRIVATE_KEY": "", "GITHUB_APP_PRIVATE_KEY_PATH": "/nonexistent.pem"},
            "cannot be read",
        ),
        ({"GITHUB_APP_PRIVATE_KEY": "hello"}, "not a PEM key"),
        ({"GITHUB_API_URL": "ghe.example"}, "must be an http(s) URL"),
        (
            {"GITHUB_WEBHOOK_SECRET": " , "},
            "GITHUB_WEBHOOK_SECRET or GITHUB_WEBHOOK_SECRET_PATH is not set",
        ),
    ],
)
def test_bad_settings_are_named(env: dict[str, str], problem: str) -> None:
    base = {"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": KEY}
    with pytest.raises(SettingsError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        Settings.from_env({**base, **env})


# -- payload shapes and metric labels --------------------------------------------------------------
def test_every_recorded_payload_has_the_shape_the_bot_reads() -> None:
    from bot.github.payloads import problem

    for path in sorted(PAYLOADS.glob("*.json")):
        assert problem(path.name.split(".")[0], json.loads(path.read_bytes())) is None, path.name


def _set(path: str, value: Any) -> Any:
    def change(payload: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = payload
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[last] = value

    return change


# (payload file, change, the field the 400 names)
WRONG_TYPES = [
    ("pull_request.opened.json", _set("pull_request.number", "abc"), "pull_request.number"),
    ("pull_request.opened.json", _set("number", "abc"), "number"),
    ("pull_request.opened.json", _set("installation", 42), "installation"),
    ("pull_request.opened.json", _set("installation", {"id": "42"}), "installation.id"),
    # beyond 64 bits
    ("pull_request.opened.json", _set("pull_request.number", 10**30), "pull_request.number"),
    ("pull_request.opened.json", _set("number", 2**64 - 1), "number"),
    ("pull_request.opened.json", _set("number", True), "number"),
    ("pull_request.opened.json", _set("number", -3), "number"),
    ("pull_request.opened.json", _set("pull_request.head", "main"), "pull_request.head"),
    (
        "pull_request.opened.json",
        _set("pull_request.head.sha", "../../etc"),
        "pull_request.head.sha",
    ),
    ("pull_request.opened.json", _set("repository.full_name", "../.."), "repository.full_name"),
    ("pull_request.opened.json", _set("action", ["opened"]), "action"),
    ("pull_request.opened.json", _set("changes", "base"), "changes"),
    ("pull_request_review.submitted.json", _set("pull_request", []), "pull_request"),
    (
        "check_suite.rerequested.json",
        _set("check_suite.pull_requests", {"number": 1}),
        "check_suite.pull_requests",
    ),
    (
        "check_suite.rerequested.json",
        _set("check_suite.pull_requests.0.number", "2"),
        "check_suite.pull_requests[0].number",
    ),
    ("check_run.rerequested.json", _set("check_run.head_sha", 12), "check_run.head_sha"),
    (
        "issue_comment.created.on-pull-request.json",
        _set("comment.body", {"text": "/registry-bot recheck"}),
        "comment.body",
    ),
    (
        "issue_comment.created.on-pull-request.json",
        _set("comment.user.login", 7),
        "comment.user.login",
    ),
    ("issue_comment.created.on-pull-request.json", _set("issue.number", 1.5), "issue.number"),
    (
        "issue_comment.created.on-pull-request.json",
        _set("comment.user.type", ["Bot"]),
        "comment.user.type",
    ),
    ("installation.created.json", _set("action", 1), "action"),
    # read by decide() (a review by a bot is ignored) without a type check: a 500 with a traceback
    ("pull_request_review.submitted.json", _set("sender", "octocat"), "sender"),
    ("pull_request_review.submitted.json", _set("sender", ["Bot"]), "sender"),
    ("pull_request_review.submitted.json", _set("sender.type", {"Bot": 1}), "sender.type"),
]


@pytest.mark.parametrize(
    ("name", "change", "field"), WRONG_TYPES, ids=[f"{n}:{f}" for n, _, f in WRONG_TYPES]
)
def test_wrong_types_are_400_naming_the_field(
    client: FlaskClient, queue: JobQueue, name: str, change: Any, field: str
) -> None:
    payload = json.loads((PAYLOADS / name).read_bytes())
    change(payload)
    response = post(client, json.dumps(payload).encode(), name.split(".")[0])
    assert response.status_code == 400, response.json
    assert response.json["message"].startswith(f"payload field {field} must be ")
    assert queue.pending() == 0


def test_a_bug_is_a_500_without_its_traceback_and_logged_once(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever a request meets that nothing expected is answered 500 with the app's JSON shape,
    never a traceback (Flask's debug page, or one in the body), and logged once with it."""
    from bot.service import web

    def broken(*args: Any) -> Any:
        raise KeyError("a field nobody checked")

    monkeypatch.setattr(web, "decide", broken)
    body = (PAYLOADS / "pull_request.opened.json").read_bytes()
    with caplog.at_level(logging.DEBUG):
        response = post(client, body, "pull_request")
    assert (response.status_code, response.json) == (500, {"message": "internal error"})
    assert b"Traceback" not in response.data and b"nobody checked" not in response.data
    logged = [r for r in caplog.records if r.exc_info]
    assert len(logged) == 1 and "KeyError" in caplog.text
    assert logged[0].getMessage() == "POST /webhook failed"


def test_metric_labels_come_from_a_fixed_set_after_the_signature(client: FlaskClient) -> None:
    from bot.github import metrics

    def count(event: str, outcome: str) -> float:
        return float(metrics.DELIVERIES.labels(event=event, outcome=outcome)._value.get())

    before = count("unverified", "401"), count("other", "202")
    body = (PAYLOADS / "ping.json").read_bytes()
    post(client, body, "made-up-event-1", secret=None)  # unsigned: its event header proves nothing
    post(client, body, "made-up-event-2", secret="wrong")
    # signed, but not an event the bot handles
    post(client, b'{"action": "created"}', "made-up-event-3")
    assert "made-up-event" not in client.get("/metrics").get_data(as_text=True)
    assert (count("unverified", "401"), count("other", "202")) == (before[0] + 2, before[1] + 1)


def test_metrics_and_readyz_answer_only_on_the_admin_port(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Finding: compose published /metrics and /readyz on the internet-facing port."""
    monkeypatch.setenv("WEB_ADMIN_PORT", "9000")
    app = create_app(Settings(0, "", ("s",), queue_url=str(tmp_path / "q.sqlite3")))
    client = app.test_client()
    public, admin = "http://bot.example:8000", "http://bot.example:9000"
    assert client.get("/metrics", base_url=public).status_code == 404
    assert client.get("/readyz", base_url=public).status_code == 404
    assert client.get("/healthz", base_url=public).status_code == 200
    assert client.get("/metrics", base_url=admin).status_code == 200
    assert client.get("/readyz", base_url=admin).status_code == 200
    body = (PAYLOADS / "ping.json").read_bytes()
    headers = {
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": "d1",
        "X-Hub-Signature-256": sign(body, "s"),
    }
    # issue 28
    assert client.post("/webhook", data=body, headers=headers, base_url=admin).status_code == 404
    assert client.get("/healthz", base_url=admin).status_code == 404
    assert client.post("/webhook", data=body, headers=headers, base_url=public).status_code == 200


def test_the_web_shows_no_worker_metrics_and_the_worker_serves_them() -> None:
    """Finding: the web's /metrics showed the worker's GitHub rate-limit gauge as 0 (it never calls
    GitHub), and the worker exposed no metrics at all in its container."""
    import socket
    import urllib.request

    from bot.github import metrics

    body = (
        create_app(Settings(0, "", ("s",), queue_url=":memory:"))
        .test_client()
        .get("/metrics")
        .get_data(True)
    )
    assert "registry_bot_deliveries_total" in body and "rate_limit_remaining" not in body
    metrics.RATE_LIMIT.set(4321)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    metrics.serve_worker(port)
    served = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert (
        "registry_bot_github_rate_limit_remaining 4321.0" in served
        and "registry_bot_jobs_total" in served
    )
