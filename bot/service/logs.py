"""JSON logs in which every line carries the delivery id, repository, pull request and head sha."""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

_CONTEXT: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "registry_bot_log_context"
)
FIELDS = ("delivery", "event", "repo", "pr", "head_sha")


FIELD_LIMIT = 100  # characters of a context field (a delivery id is 36): headers come from anyone


def clip(value: Any, limit: int = FIELD_LIMIT) -> Any:
    """``value``, a string cut to ``limit`` characters with a note of how much was cut: an
    unauthenticated 8,000-character header must not be written whole into every log line of its
    request."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}...(+{len(value) - limit} characters)"
    return value


@contextlib.contextmanager
def log_context(**values: Any) -> Iterator[None]:
    """Add fields to every log line written inside the block (thread- and task-local), each
    clipped."""
    token = _CONTEXT.set(
        {**_CONTEXT.get({}), **{k: clip(v) for k, v in values.items() if v not in (None, "")}}
    )
    try:
        yield
    finally:
        _CONTEXT.reset(token)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **_CONTEXT.get({}),
        }
        if hasattr(record, "ms"):
            data["ms"] = record.ms
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str)


def setup_json_logging(level: int = logging.INFO) -> None:
    """Send every log record to stderr as one JSON object per line (called at process start)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
