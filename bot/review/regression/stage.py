"""The regression as a stage of the App's review: one warm SparkSession, a time budget, never a
crash.

The worker creates one ``RegressionStage`` and passes it to the pipeline, which calls it as
``stage(base, head, changes, config) -> (Section | None, findings)``. The SparkSession starts on the
first call and is reused. When Spark cannot start, or the budget runs out, the review still
completes: the section is neutral and says why.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Finding, Section, Verdict
from bot.core.snapshot import Snapshot
from bot.review.regression.faults import one_line
from bot.review.regression.locations import LocationError
from bot.review.regression.runner import find_events, gather

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
TITLE = "Regression over sample events"


def _neutral(reason: str) -> Section:
    return Section(
        title=TITLE,
        markdown=f"The regression did not run: {reason}\n",
        data={"skipped": reason},
        verdict=Verdict.NEUTRAL,
    )


class RegressionStage:
    """Callable review stage holding one SparkSession, created lazily on first use."""

    def __init__(
        self, master: str = "local[*]", session_factory: Callable[[str], SparkSession] | None = None
    ) -> None:
        self.master = master
        self._factory = session_factory
        self._spark: SparkSession | None = None
        self._lock = threading.Lock()

    def session(self) -> SparkSession:
        with self._lock:
            if self._spark is None:
                if self._factory is not None:
                    self._spark = self._factory(self.master)
                else:
                    from bot.review.regression.spark_job import start_session

                    self._spark = start_session(self.master)
            return self._spark

    def __call__(
        self, base: Snapshot, head: Snapshot, changes: ChangeSet | None, config: Config
    ) -> tuple[Section | None, list[Finding]]:
        policy = config.regression
        if not policy.enabled:
            return None, []
        started = time.monotonic()
        try:  # the events first: without any, neither side's schemas are read
            events = find_events(head, config, base=base)
            if events.empty:
                return Section(
                    title=TITLE,
                    markdown="No sample events to check (no `samples/` folder, no "
                    "configured event locations).\n",
                    data={"events": 0},
                ), []
            inputs = gather(base, head, config, events)
        except Exception as exc:  # a bug reading the sides must not lose the rest of the review
            log.exception("the regression could not read its inputs")
            return _neutral(
                f"its inputs could not be read ({type(exc).__name__}: {str(exc)[:300]})."
            ), []
        try:
            spark = self.session()
        # any start-up failure (no Java, no memory) must not fail the review
        except Exception as exc:  # noqa: BLE001
            log.warning("Spark could not start: %s", exc)
            return _neutral(f"Spark could not start ({type(exc).__name__}: {str(exc)[:300]})."), []
        group = f"registry-bot-{uuid.uuid4().hex}"
        context = spark.sparkContext
        timer = threading.Timer(policy.time_budget_seconds, context.cancelJobGroup, args=(group,))
        context.setJobGroup(group, "registry-bot regression", interruptOnCancel=True)
        timer.start()
        try:
            from bot.review.regression.spark_job import run_spark

            result = run_spark(
                spark,
                inputs.base,
                inputs.head,
                inputs.records,
                inputs.locations,
                deadline=started + policy.time_budget_seconds,
            )
        except LocationError as exc:  # a configured location that names no event file
            return _neutral(f"an event location could not be read ({str(exc)[:300]})."), []
        # a cancelled or failed job: report it, keep the review
        except Exception as exc:  # noqa: BLE001
            expired = time.monotonic() >= started + policy.time_budget_seconds
            reason = (
                f"the time budget of {policy.time_budget_seconds:g} s ran out"
                if expired
                else f"the Spark job failed ({type(exc).__name__}: {one_line(exc)})"
            )
            return _neutral(reason + "."), []
        finally:
            timer.cancel()
        return result.section(), result.findings(policy, config.paths.registry)

    def close(self) -> None:
        """Stop the session; the JVM too when the stage started it (a factory's is the caller's)."""
        with self._lock:
            if self._spark is None:
                return
            if self._factory is None:
                from bot.review.regression.spark_job import stop_session

                stop_session(self._spark)
            else:
                self._spark.stop()
            self._spark = None

    def __enter__(self) -> RegressionStage:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
