"""gunicorn settings for the webhook service: ``gunicorn -c gunicorn.conf.py 'bot.service.wsgi:create_app()'``.

The web process only verifies, dedupes and enqueues, so a few workers answer hundreds of deliveries a
second. Command-line flags (``--bind``, ``--workers``) override these values.

The worker class is the front door of ``bot/service/front.py``: gevent (a connection costs a greenlet, not a
thread), headers within ``keepalive`` seconds, the body within 10 s, so slow clients cannot hold the
workers (``benchmarks/bench_slow_clients.py``).
"""

import os

bind = [os.environ.get("BIND", f"0.0.0.0:{os.environ.get('PORT', '8000')}")]
if os.environ.get("WEB_ADMIN_PORT"):  # only /metrics and /readyz answer there (bot/service/web.py): keep it private
    # on the address BIND names (127.0.0.1 when BIND is a unix socket), or WEB_ADMIN_BIND's own
    _host = bind[0].rpartition(":")[0] if ":" in bind[0] and not bind[0].startswith("unix:") else "127.0.0.1"
    bind.append(os.environ.get("WEB_ADMIN_BIND") or f"{_host}:{os.environ['WEB_ADMIN_PORT']}")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "bot.service.front.FrontDoorWorker"
worker_connections = int(os.environ.get("WEB_CONNECTIONS", "1000"))  # open connections per worker
timeout = 30
graceful_timeout = 10
keepalive = 5  # also the deadline for a request's headers (gevent workers): keep it above 0
backlog = 1024
accesslog = None  # the app logs every delivery as JSON with its delivery id
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
preload_app = False  # each worker builds its app (and its SQLite connections) after the fork
# No control socket (gunicornc, gunicorn 25.1+): nothing here uses it, and its default place ($HOME/.gunicorn)
# is not writable in the images (read-only root filesystem), where gunicorn 27 logged an error at start.
control_socket_disable = True


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    from bot.service.logs import setup_json_logging

    setup_json_logging()
