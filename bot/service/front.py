"""The webhook front door: a gunicorn worker that slow clients cannot hold.

More in docs/module-notes.md (bot/service/front.py).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import time
from typing import Any

import gevent
from gunicorn.http.body import Body
from gunicorn.workers.ggevent import GeventWorker

BODY_SECONDS = 10.0  # GitHub's own delivery timeout: a body slower than this is lost anyway
CHUNK = 64 * 1024  # bodies are read, and counted against the budget, in steps of this size
DEFAULT_BUDGET_MB = 256  # bodies held in memory at once by one worker (WEB_BODY_BUDGET_MB)
SHED_AT = 0.8  # share of the worker's connection slots open above which slow bodies are shed
SHED_AFTER = 0.5  # seconds a body may take to arrive while the worker is that busy
SHED_EVERY = 0.1  # seconds between two looks of the shedding watcher

log = logging.getLogger("bot.service.wsgi")


def _content_length(req: Any) -> int | None:
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _refuse(sock: Any, status: str, message: str) -> None:
    """Answer ``status`` with the app's JSON shape and ``Connection: close`` (the client may be
    gone)."""
    body = b'{"message": "' + message.encode() + b'"}'
    with contextlib.suppress(OSError):
        sock.sendall(
            f"HTTP/1.1 {status}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )


class Shed(Exception):
    """Raised in a connection's greenlet whose body is too slow while the worker is near
    capacity."""


class FrontDoorWorker(GeventWorker):
    """gevent worker that buffers each request body under a deadline and a memory budget before the
    app sees it, and sheds slow bodies when its connection slots run short."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.body_budget = (
            int(os.environ.get("WEB_BODY_BUDGET_MB", DEFAULT_BUDGET_MB)) * 1024 * 1024
        )
        self.buffered = 0  # bytes of request bodies this worker holds right now
        self.open = 0  # connections this worker holds right now
        self.waiting: dict[Any, float] = {}  # greenlet -> when it started waiting for its body
        self.watcher: Any = None

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        if self.watcher is None:
            self.watcher = gevent.spawn(self._watch)
        self.open += 1
        try:
            super().handle(listener, client, addr)
        finally:
            self.open -= 1

    def _watch(self) -> None:
        """Every ``SHED_EVERY`` s, when the open connections pass ``SHED_AT`` of the slots, shed the
        bodies that have been arriving for over ``SHED_AFTER`` s."""
        while self.alive:
            gevent.sleep(SHED_EVERY)
            if self.open > SHED_AT * self.worker_connections:
                now = time.monotonic()
                for glet, since in list(self.waiting.items()):
                    if now - since > SHED_AFTER:
                        self.waiting.pop(glet, None)
                        glet.kill(Shed, block=False)

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> bool:
        held = 0
        if req.body is not None:
            held = self._buffer_body(req, sock, addr)
            if held < 0:
                raise StopIteration  # gunicorn's signal to close this connection
        try:
            return bool(super().handle_request(listener_name, req, sock, addr))
        finally:
            self.buffered -= held

    def _buffer_body(self, req: Any, sock: Any, addr: Any) -> int:
        """Read the whole body within ``BODY_SECONDS`` and hand the app an in-memory copy. Returns
        the bytes now held (counted in ``buffered``), or -1 after answering 408 (too slow) or 503
        (the bodies in flight would pass the worker's budget: many large bodies at once are an
        attack)."""
        from bot.github import metrics
        from bot.service.web import MAX_BODY

        length = _content_length(req)
        if length is not None and length > MAX_BODY:
            return 0  # the app answers 413 from the header without reading the body
        client = addr[0] if isinstance(addr, tuple) else addr
        chunks: list[bytes] = []
        size = 0
        over_budget = False
        me = gevent.getcurrent()
        self.waiting[me] = time.monotonic()
        try:
            with gevent.Timeout(BODY_SECONDS):
                while size <= MAX_BODY and (chunk := req.body.read(CHUNK)):
                    chunks.append(chunk)
                    size += len(chunk)
                    self.buffered += len(chunk)
                    if self.buffered > self.body_budget:
                        over_budget = True
                        break
        except (gevent.Timeout, Shed) as exc:
            self.buffered -= size
            shed = isinstance(exc, Shed)
            metrics.FRONT_DOOR_REFUSED.labels(reason="shed" if shed else "slow_body").inc()
            log.info(
                "closed a connection from %s: %s",
                client,
                "its body was too slow while the worker's connections ran short"
                if shed
                else f"the request body did not arrive within {BODY_SECONDS:g} s",
            )
            _refuse(
                sock,
                "408 Request Timeout",
                "the request body was too slow; retry"
                if shed
                else f"the request body did not arrive within {BODY_SECONDS:g} s",
            )
            return -1
        except BaseException:
            self.buffered -= size
            raise
        finally:
            self.waiting.pop(me, None)
        if over_budget:
            metrics.FRONT_DOOR_REFUSED.labels(reason="memory").inc()
            log.warning(
                "refused a body from %s: the worker holds %d bytes of bodies, over its budget of "
                "%d",
                client,
                self.buffered,
                self.body_budget,
            )
            self.buffered -= size
            _refuse(sock, "503 Service Unavailable", "too many large requests at once; retry later")
            return -1
        req.body = Body(io.BytesIO(b"".join(chunks)))
        if size > MAX_BODY:  # the rest is still on the socket: never reuse this connection
            req.must_close = True
        return size
