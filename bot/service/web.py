"""The webhook service: verify, dedupe, enqueue, answer in milliseconds. No GitHub call, no review
here.

Run it with ``gunicorn 'bot.service.wsgi:create_app()'`` (see ``gunicorn.conf.py``).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any
from urllib.parse import parse_qs

import orjson
from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from bot.github import metrics
from bot.github.events import decide
from bot.service.logs import log_context
from bot.service.queue import JobQueue
from bot.service.settings import Settings
from bot.service.signature import verify

log = logging.getLogger("bot.service.wsgi")
MAX_BODY = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB


def _answer(status: int, message: str, **extra: Any) -> tuple[Response, int]:
    return jsonify({"message": message, **extra}), status


def _parse(body: bytes, content_type: str) -> Any:
    """The JSON payload (orjson: about 2.5x faster than ``json`` on a 28 KB delivery; nesting over
    1024 levels, invalid UTF-8 and integers over 64 bits raise ``ValueError``)."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        form = parse_qs(body.decode("utf-8", "replace"))
        body = form.get("payload", [""])[0].encode()
    return orjson.loads(body)


ADMIN_PATHS = frozenset({"/metrics", "/readyz"})


def create_app(settings: Settings | None = None, queue: JobQueue | None = None) -> Flask:
    """The Flask application. Without arguments, settings come from the environment (refusing to
    start when one is missing) and the queue from ``BOT_QUEUE_URL``."""
    settings = settings or Settings.from_env(need_app=False)
    queue = queue or JobQueue.from_url(settings.queue_url)
    app = Flask("registry_bot")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    secrets = settings.webhook_secrets
    admin_port = os.environ.get("WEB_ADMIN_PORT", "").strip()

    def admin_only() -> tuple[Response, int] | None:
        """With ``WEB_ADMIN_PORT`` set, ``/metrics`` and ``/readyz`` answer only on that port
        (gunicorn binds it beside ``$PORT``; publish only ``$PORT`` to the internet), a 404
        elsewhere."""
        if admin_port and request.environ.get("SERVER_PORT") != admin_port:
            return _answer(404, "Not Found")
        return None

    @app.before_request
    def admin_port_serves_only_admin() -> tuple[Response, int] | None:
        """The admin port serves ``/metrics`` and ``/readyz`` and nothing else (no webhook, no
        health)."""
        if (
            admin_port
            and request.environ.get("SERVER_PORT") == admin_port
            and request.path not in ADMIN_PATHS
        ):
            return _answer(404, "Not Found")
        return None

    @app.post("/webhook")
    def webhook() -> tuple[Response, int]:
        started = time.perf_counter()
        delivery = request.headers.get("X-GitHub-Delivery", "")
        event = request.headers.get("X-GitHub-Event", "")
        with log_context(delivery=delivery, event=event):
            status, message, extra, verified = _handle(delivery, event)
            # labels from fixed sets only, and the event only once the signature proved who sent it
            metrics.DELIVERIES.labels(
                event=metrics.event_label(event) if verified else metrics.UNVERIFIED,
                outcome=str(status),
            ).inc()
            log.info(
                "webhook %s: %s",
                status,
                message,
                extra={"ms": round((time.perf_counter() - started) * 1000, 2)},
            )
            return _answer(status, message, **extra)

    def _handle(delivery: str, event: str) -> tuple[int, str, dict[str, Any], bool]:
        """(status, message, extra answer fields, whether the signature was verified)."""
        if (request.content_length or 0) > MAX_BODY:
            return 413, f"body over {MAX_BODY:,} bytes", {}, False
        try:
            body = request.get_data(cache=False)
        except RequestEntityTooLarge:
            return 413, f"body over {MAX_BODY:,} bytes", {}, False
        if not verify(body, request.headers.get("X-Hub-Signature-256"), secrets):
            return 401, "missing or bad X-Hub-Signature-256", {}, False
        return (*_verified(body, delivery, event), True)

    def _verified(body: bytes, delivery: str, event: str) -> tuple[int, str, dict[str, Any]]:
        if not event or not delivery:
            return 400, "missing X-GitHub-Event or X-GitHub-Delivery header", {}
        try:
            payload = _parse(body, request.content_type or "")
        except (ValueError, RecursionError):
            return 400, "the body is not JSON", {}
        if not isinstance(payload, dict):
            return 400, "the body is not a JSON object", {}
        decision = decide(event, delivery, payload)
        if decision.job is None:
            return decision.status, decision.reason, {}
        job = decision.job
        with log_context(repo=job.repo, pr=job.number or None, head_sha=job.head_sha):
            try:
                accepted = queue.accept(job, body)
            except Exception:
                log.exception("could not enqueue")
                return 503, "the queue is not available; redeliver later", {}
            if not accepted:  # this delivery id, or this very body under another one
                return 200, "duplicate delivery; already accepted", {}
            log.info("queued review of %s", job.pr_key)
            return 202, "queued", {"job": job.pr_key}

    @app.get("/healthz")
    def healthz() -> tuple[Response, int]:
        return _answer(200, "alive")

    @app.get("/readyz")
    def readyz() -> tuple[Response, int]:
        """200 only when the queue can take a write (judged by reading: see ``JobQueue.ready``)."""
        refused = admin_only()
        if refused:
            return refused
        if queue.ready():
            return _answer(200, "ready", pending=queue.pending())
        return _answer(503, "the queue does not accept writes (unreachable, or its disk is full)")

    @app.get("/metrics")
    def prometheus() -> Response | tuple[Response, int]:
        refused = admin_only()
        if refused:
            return refused
        body, content_type = metrics.render()
        return Response(body, content_type=content_type)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        return _answer(exc.code or 500, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> tuple[Response, int]:
        """A bug the request met: logged once with its traceback, answered 500 without it (the
        answer goes to whoever sent the request)."""
        log.error("%s %s failed", request.method, request.path, exc_info=exc)
        return _answer(500, "internal error")

    return app
