"""Progress while Spark works: an elapsed-time line on a terminal (quiet when piped), and the JVM's
own stderr (log4j warnings, ``NativeCodeLoader``, the loopback-hostname notice) sent to an unnamed
temporary file unless ``-v``."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import TextIO


@contextlib.contextmanager
def elapsed(label: str, stream: TextIO) -> Iterator[None]:
    """``label... 12 s`` rewritten in place every second on a terminal; nothing when ``stream`` is
    not one."""
    if not stream.isatty():
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        while not done.wait(1.0):
            stream.write(f"\r{label}... {time.monotonic() - started:.0f} s")
            stream.flush()

    thread = threading.Thread(target=tick, name="progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        stream.write(f"\r{label}: done in {time.monotonic() - started:.0f} s\n")
        stream.flush()


@contextlib.contextmanager
def jvm_output(verbose: bool) -> Iterator[TextIO]:
    """Run the body with file descriptor 2 pointing at a log file, so that the JVM Spark starts
    (which inherits it) writes there; yields a stream on the real stderr for this process's own
    progress."""
    if verbose:
        yield sys.stderr
        return
    sys.stderr.flush()
    saved = os.dup(2)
    log = tempfile.TemporaryFile(prefix="registry-bot-spark-", suffix=".log")  # noqa: SIM115
    real = os.fdopen(os.dup(saved), "w", encoding="utf-8", errors="replace")
    try:
        os.dup2(log.fileno(), 2)
        yield real
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        log.close()
        real.close()
