"""A memo for functions of untrusted text: only small arguments are kept.

A cache bounded by its number of entries keeps whatever those entries hold: 2,000 distinct 100 KB
descriptions a pull request's site preview rendered stayed as 445 MB of a long-lived worker.
``small_cache`` keeps a result only when its arguments hold at most ``largest`` characters of text
(measured on a miss, so a hit costs one dictionary lookup); a larger call is computed and not kept,
so what the memo holds stays under ``maxsize`` entries of that size and their results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
LARGEST = 2_000  # characters: every description of the real registry is under 1,100
_KEYWORDS = object()  # separates positional from keyword arguments in a key


def text_size(*args: Any) -> int:
    """The characters of the arguments' text: strings, and the strings of a dataclass's or a
    tuple's fields, one level deep."""
    total = 0
    for arg in args:
        if isinstance(arg, str):
            total += len(arg)
        elif isinstance(arg, tuple):
            total += text_size(*arg)
        elif hasattr(arg, "__dataclass_fields__"):
            for name in arg.__dataclass_fields__:
                value = getattr(arg, name)
                if isinstance(value, str):
                    total += len(value)
                elif isinstance(value, tuple):
                    total += sum(len(v) for v in value if isinstance(v, str))
    return total


def small_cache(maxsize: int, largest: int = LARGEST) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Memoise calls whose arguments hold at most ``largest`` characters of text (``text_size``);
    past ``maxsize`` entries the memo starts afresh. Other calls run and are not kept."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        memo: dict[Any, R] = {}

        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            key = (*args, _KEYWORDS, *kwargs.items()) if kwargs else args
            try:
                return memo[key]
            except KeyError:
                pass
            result = function(*args, **kwargs)
            if text_size(*args, *kwargs.values()) <= largest:
                if len(memo) >= maxsize:
                    memo.clear()
                memo[key] = result
            return result

        call.cache_clear = memo.clear  # type: ignore[attr-defined]
        call.memo = memo  # type: ignore[attr-defined]
        return call

    return wrap
