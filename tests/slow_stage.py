"""A regression stage for the end-to-end tests that never finishes on a change with sample events,
and kills its process (as the OOM killer would) on a change with ``samples/oom.json``.

``python -m bot.service.worker --regression-module tests.slow_stage``: stands in for a Spark
regression run past its budget (an exponential schema branch that only a sample event reaches),
without a JVM.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any


class SlowStage:
    def __call__(self, base: Any, head: Any, changes: Any, config: Any) -> tuple[None, list[Any]]:
        paths = [f.path for f in changes.files] if changes is not None else []
        if any(path.endswith("/samples/oom.json") for path in paths):
            os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does to the process
        if any("/samples/" in path for path in paths):
            time.sleep(config.regression.time_budget_seconds + 5)
        return None, []


def review_stage() -> SlowStage:
    return SlowStage()
