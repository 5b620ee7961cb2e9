"""The files a worker's health check reads: its heartbeat, and a problem it cannot cure by itself.

Written by the worker and by what it uses (the App's clock marks a skew GitHub refuses), read by
``bot.service.health``; plain files, so any layer may mark a problem without importing the service.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

DEFAULT_HEARTBEAT = "/tmp/registry-bot-worker.heartbeat"


def heartbeat_path() -> Path:
    return Path(os.environ.get("WORKER_HEARTBEAT", DEFAULT_HEARTBEAT))


def beat(path: Path | None = None) -> None:
    """Record that the worker is alive and reaches its queue (best effort: a read-only disk is not
    fatal)."""
    target = path or heartbeat_path()
    with contextlib.suppress(OSError):
        target.write_text(f"{time.time():.0f}\n", encoding="utf-8")


def problem(reason: str | None, path: Path | None = None) -> None:
    """Record (or, with None, clear) a problem that fails the worker's health check whatever its
    heartbeat."""
    target = (path or heartbeat_path()).with_suffix(".problem")
    with contextlib.suppress(OSError):
        if reason is None:
            target.unlink(missing_ok=True)
        else:
            target.write_text(reason + "\n", encoding="utf-8")
