"""A regression stage for the end-to-end tests that never finishes on a change with sample events.

``python -m bot.app.worker --regression-module tests.slow_stage``: stands in for a Spark regression run
past its budget (an exponential schema branch that only a sample event reaches), without a JVM.
"""

from __future__ import annotations

import time
from typing import Any


class SlowStage:
    def __call__(self, base: Any, head: Any, changes: Any, config: Any) -> tuple[None, list[Any]]:
        if changes is not None and any("/samples/" in f.path for f in changes.files):
            time.sleep(config.regression.time_budget_seconds + 5)
        return None, []


def review_stage() -> SlowStage:
    return SlowStage()
