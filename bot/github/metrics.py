"""Prometheus metrics of the web and worker processes.

Metric objects are plain module constants (no I/O). With ``PROMETHEUS_MULTIPROC_DIR`` set, the
web's ``/metrics`` also aggregates what the worker and the other gunicorn workers recorded.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import REGISTRY as DEFAULT_REGISTRY

from bot.github.events import KNOWN_EVENTS

DELIVERIES = Counter(
    "registry_bot_deliveries_total",
    "Webhook deliveries by event and outcome",
    # event: event_label() or UNVERIFIED; outcome: the HTTP status
    ["event", "outcome"],
)
# the event of a delivery whose signature did not verify: its header proves nothing
UNVERIFIED = "unverified"
OTHER_EVENT = "other"  # a signed delivery of an event the bot does not handle
FRONT_DOOR_REFUSED = Counter(
    "registry_bot_front_door_refused_total",
    "Requests refused before the app: slow_body (408), shed (408), memory (503)",
    ["reason"],
)
# The worker's metrics live in a registry of their own, served by the worker (``serve_worker``): the
# web's /metrics showed them too, as zeros (a rate limit "remaining 0" read as an exhausted limit).
WORKER_REGISTRY = CollectorRegistry()
JOBS = Counter(
    "registry_bot_jobs_total", "Review jobs by outcome", ["outcome"], registry=WORKER_REGISTRY
)
JOB_SECONDS = Histogram(
    "registry_bot_job_seconds",
    "Time from job start to published verdict",
    buckets=(0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 120, 300, float("inf")),
    registry=WORKER_REGISTRY,
)
FAILURES = Counter(
    "registry_bot_failures_total",
    "Reviews that ended in an internal error",
    ["stage"],
    registry=WORKER_REGISTRY,
)
GITHUB_CALLS = Counter(
    "registry_bot_github_calls_total",
    "GitHub API calls made by the worker",
    ["method"],
    registry=WORKER_REGISTRY,
)
LEASE_TAKEOVERS = Counter(
    "registry_bot_lease_takeovers_total",
    "Jobs taken over from a worker whose pull-request lease expired (it died or stalled)",
    registry=WORKER_REGISTRY,
)
PACING_WAIT = Counter(
    "registry_bot_github_pacing_wait_seconds_total",
    "Seconds spent waiting for the installation's shared GitHub pacing",
    ["kind"],
    registry=WORKER_REGISTRY,
)
RATE_LIMIT = Gauge(
    "registry_bot_github_rate_limit_remaining",
    "Last x-ratelimit-remaining seen",
    multiprocess_mode="mostrecent",
    registry=WORKER_REGISTRY,
)


def event_label(event: str) -> str:
    """The ``event`` label of a verified delivery: one of the handled events, or ``other``. Labels
    come from this fixed set, so no request can add a time series (each costs memory and /metrics
    bytes)."""
    return event if event in KNOWN_EVENTS else OTHER_EVENT


def serve_worker(port: int) -> None:
    """Serve this process's metrics (jobs, durations, GitHub requests and rate limit, lease
    takeovers) on ``port`` from a daemon thread: the worker has no web server of its own."""
    from prometheus_client import start_http_server

    start_http_server(port, registry=WORKER_REGISTRY)


def render() -> tuple[bytes, str]:
    """The exposition text and its content type."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        # untyped upstream
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(DEFAULT_REGISTRY), CONTENT_TYPE_LATEST
