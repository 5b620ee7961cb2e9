"""Whether an exception is a Ctrl-C that Python wrapped on its way up.

A ``KeyboardInterrupt`` does not always arrive as itself: Python 3.11 wraps an exception raised in a
descriptor's ``__set_name__`` (which a dataclass's ``field`` has) in ``RuntimeError("Error calling
__set_name__ ...")``, so a Ctrl-C landing while a module defines a dataclass surfaces as that
``RuntimeError`` with the interrupt as its cause.
"""

from __future__ import annotations


def is_interruption(exc: BaseException) -> bool:
    """True for a ``KeyboardInterrupt``, or an exception whose cause or context chain holds one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
