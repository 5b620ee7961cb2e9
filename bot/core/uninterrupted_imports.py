"""Native modules that must load whole: a Ctrl-C while one initialises is delivered once it has.

Some extension modules' initialisation imports standard modules and assumes they load: an exception
in between, such as the ``KeyboardInterrupt`` of a Ctrl-C that lands in that moment, is not passed
on. orjson then dereferences NULL and the process dies of SIGSEGV (exit -11, no message;
ijl/orjson#310 is the same assumption); jsonschema-rs and rpds (PyO3) panic (exit 1, a Rust
panic's message); numpy reports an ``ImportError`` of ``datetime``. ``install`` puts a finder
first on ``sys.meta_path`` that loads those modules with Python's SIGINT handler deferred; a Ctrl-C
meanwhile is held and raises ``KeyboardInterrupt`` in the importer right after, where the command
line turns it into its one line and exit 130. Nothing else is imported differently, and nothing is
imported early.
"""

from __future__ import annotations

import importlib.machinery
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc costs 10 ms at start-up (importlib.resources)
    from importlib.abc import Loader

# extension modules whose initialisation does not pass on an exception raised in its imports
# (tests/test_uninterrupted_imports.py finds them among every module the bot imports)
UNINTERRUPTIBLE = frozenset(
    {"orjson.orjson", "jsonschema_rs.jsonschema_rs", "rpds.rpds", "numpy._core._multiarray_umath"}
)


def install() -> None:
    """Load ``UNINTERRUPTIBLE`` with Ctrl-C deferred, from now on (once per process)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


class _Finder:
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in UNINTERRUPTIBLE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)  # type: ignore[assignment]
        return spec


class _Loader:
    """The module's own loader, run with Ctrl-C deferred (an extension module's initialisation runs
    in ``create_module``, a multi-phase one also in ``exec_module``)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        with _sigint_deferred():
            return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        with _sigint_deferred():
            self.loader.exec_module(module)


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold what Python's SIGINT handler would do until the block ends, then do it.

    Not a blocked signal mask: any thread may receive the signal, and Python runs the handler in
    the main thread wherever it was received. Python sets handlers from the main thread only; a
    module imported in another thread is never where the ``KeyboardInterrupt`` is raised.
    """
    handler = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(handler):
        yield  # SIG_DFL ends the process outright, SIG_IGN does nothing: nothing to hold
        return
    held: list[FrameType | None] = []
    signal.signal(signal.SIGINT, lambda _signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        if held:
            handler(signal.SIGINT, held[0])
