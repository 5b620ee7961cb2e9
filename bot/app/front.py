"""The webhook front door: a gunicorn worker that slow clients cannot hold.

gunicorn's ``gthread`` worker gives each connection a thread as soon as its first byte arrives, and the
thread then waits on the socket for as long as the client likes: 8 connections sending a byte a second
held every thread of 2 workers x 4 threads, and GitHub's deliveries (it gives up after 10 s and never
redelivers) timed out behind them. This worker is gunicorn's gevent worker (a connection costs a
greenlet, not a thread; up to ``worker_connections`` per worker) with two deadlines:

- the request line and headers must arrive within ``keepalive`` seconds (gunicorn's own timeout around
  the header parser of its async workers; ``gunicorn.conf.py`` keeps ``keepalive`` above 0);
- the body must arrive within ``BODY_SECONDS`` of the headers; it is read into memory before the app
  runs (at most the app's 25 MB limit plus one byte), so the app never waits on a client. Late bodies
  are answered ``408`` and the connection is closed.

Measured in ``benchmarks/bench_slow_clients.py`` (figures in ``docs/app.md``).
"""

from __future__ import annotations

import contextlib
import io
import logging
from typing import Any

import gevent
from gunicorn.http.body import Body
from gunicorn.workers.ggevent import GeventWorker

BODY_SECONDS = 10.0  # GitHub's own delivery timeout: a body slower than this is lost anyway

log = logging.getLogger("bot.web")


def _content_length(req: Any) -> int | None:
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class FrontDoorWorker(GeventWorker):
    """gevent worker that buffers each request body under a deadline before the app sees it."""

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> bool:
        if req.body is not None and not self._buffer_body(req, sock, addr):
            raise StopIteration  # gunicorn's signal to close this connection
        return bool(super().handle_request(listener_name, req, sock, addr))

    def _buffer_body(self, req: Any, sock: Any, addr: Any) -> bool:
        """Read the whole body within ``BODY_SECONDS`` and hand the app an in-memory copy; False
        (after answering 408) when the client is too slow."""
        from bot.app import metrics
        from bot.app.web import MAX_BODY

        length = _content_length(req)
        if length is not None and length > MAX_BODY:
            return True  # the app answers 413 from the header without reading the body
        try:
            with gevent.Timeout(BODY_SECONDS):
                data = req.body.read(MAX_BODY + 1)
        except gevent.Timeout:
            metrics.BODY_TIMEOUTS.inc()
            log.warning("closed a connection from %s: the request body did not arrive within %g s",
                        addr[0] if isinstance(addr, tuple) else addr, BODY_SECONDS)
            message = f'{{"message": "the request body did not arrive within {BODY_SECONDS:g} s"}}'.encode()
            with contextlib.suppress(OSError):  # the client may be gone already
                sock.sendall(b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                             b"Content-Type: application/json\r\n"
                             b"Content-Length: " + str(len(message)).encode() + b"\r\n\r\n" + message)
            return False
        req.body = Body(io.BytesIO(data))
        if len(data) > MAX_BODY:  # the rest is still on the socket: never reuse this connection
            req.must_close = True
        return True
