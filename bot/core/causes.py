"""What an exception was caused by, through its cause and context chain.

An exception does not always arrive as itself. Python 3.11 wraps an exception raised in a
descriptor's ``__set_name__`` (which a dataclass's ``field`` has) in ``RuntimeError("Error calling
__set_name__ ...")``, so a Ctrl-C landing while a module defines a dataclass surfaces as that
``RuntimeError`` with the ``KeyboardInterrupt`` as its cause; a library wraps a Redis failure in
its own error the same way.
"""

from __future__ import annotations

from collections.abc import Callable


def caused_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """True when ``exc``, or an exception in its cause or context chain, is one of ``kinds``."""
    return caused(exc, lambda e: isinstance(e, kinds))


def caused(exc: BaseException, test: Callable[[BaseException], bool]) -> bool:
    """True when ``test`` holds for ``exc`` or for an exception in its cause or context chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if test(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def is_interruption(exc: BaseException) -> bool:
    """A Ctrl-C, as itself or as Python wrapped it."""
    return caused_by(exc, (KeyboardInterrupt,))
