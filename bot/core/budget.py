"""One time budget for a whole review (all checks, both sides, every match) and one for a job.

Each regular-expression match from a pull request is bounded on its own (0.25 s), but not their
number: ten naming files of forty examples each, every one a slow match, ran a review for 24
minutes. A budget set with ``within(seconds)`` holds for the thread's block (a ``contextvars``
deadline; nested budgets keep the earlier end). Bounded matches take at most what is left
(``timeout``), and the engine stops running checks once it is spent (``BudgetSpent``), so a review
ends with what it found and a blocking "could not finish" finding, within its budget.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

_END: contextvars.ContextVar[tuple[float, float, str] | None] = contextvars.ContextVar(
    "budget", default=None
)


class BudgetSpent(Exception):
    """The review's (or the job's) time budget ran out."""

    def __init__(self, seconds: float, what: str = "review") -> None:
        super().__init__(f"the {what}'s time budget of {seconds:g} s ran out")
        self.seconds = seconds


@contextlib.contextmanager
def within(seconds: float, what: str = "review") -> Iterator[None]:
    """Bound the block by ``seconds`` (and by any budget already running in this thread, when it
    ends sooner); ``what`` names the budget in the reason (``review``, ``job``)."""
    end = time.monotonic() + seconds
    outer = _END.get()
    token = _END.set(outer if outer is not None and outer[0] <= end else (end, seconds, what))
    try:
        yield
    finally:
        _END.reset(token)


def left() -> float | None:
    """Seconds left in this thread's budget (negative once spent), or None without one."""
    current = _END.get()
    return None if current is None else current[0] - time.monotonic()


def spent() -> BudgetSpent | None:
    """The ``BudgetSpent`` to raise when the budget is spent, else None."""
    current = _END.get()
    if current is not None and time.monotonic() >= current[0]:
        return BudgetSpent(current[1], current[2])
    return None


def check() -> None:
    """Raise ``BudgetSpent`` when this thread's budget is spent."""
    exc = spent()
    if exc is not None:
        raise exc


def timeout(limit: float) -> float:
    """A match's time limit: ``limit``, or what is left of the budget when less; raises when
    spent."""
    check()
    remaining = left()
    return limit if remaining is None else max(min(limit, remaining), 0.001)
