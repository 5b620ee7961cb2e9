"""Spark's environment failures as one line each: no Java, an unreachable file system, a missing
connector, a bad setting, a lost executor. The command line reports them with exit 2 (the regression
did not run), never a traceback and never exit 1 (which means the change broke events); the App's
stage reports them as the reason the regression did not run. Faults of single input files are not
here: they are per-file findings (``bot.review.regression.events``)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
from pathlib import Path

REASON_CHARS = 400
_JVM_FRAME = re.compile(r"\s+at [\w$.]+\(")
_NOISE = re.compile(r"^(?:An error occurred while calling [\w.]+\.\s*|\[[A-Z_]+\]\s*)")


def java_missing() -> str | None:
    """Why Spark cannot start a JVM here, or None: ``$JAVA_HOME/bin/java``, else ``java`` on
    ``PATH`` (what PySpark's launcher runs)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return (
            None
            if os.access(Path(home) / "bin" / "java", os.X_OK)
            else (f"JAVA_HOME={home} holds no bin/java: Spark needs a Java runtime (17 or 21)")
        )
    if shutil.which("java") is None:
        return "Spark needs a Java runtime (17 or 21): none is on PATH and JAVA_HOME is not set"
    return None


def is_spark_failure(exc: BaseException) -> bool:
    """An exception raised by Spark or its JVM bridge (not a bug of this program)."""
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError:
        return False
    return isinstance(exc, Py4JError | PySparkException)


def one_line(exc: BaseException) -> str:
    """The first meaningful line of a Spark failure: the Java exception's own message for a JVM
    error, without stack frames, call descriptions or repeated ``Caused by`` chains."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    lines = [
        line.strip() for line in text.splitlines() if line.strip() and not _JVM_FRAME.match(line)
    ]
    line = _NOISE.sub("", lines[0]) if lines else type(exc).__name__
    # a job failure names the task's own error at the end of its first line: that is the cause
    cause = line.rsplit("): ", 1)[-1] if "most recent failure" in line else line
    return cause[:REASON_CHARS]


def end_children() -> list[int]:
    """Kill this process's descendants (the JVM Spark is starting, its launcher): after Ctrl-C, a
    JVM still starting would outlive the command line for tens of seconds before it notices. Linux
    only (``/proc``); elsewhere nothing. Returns the process ids signalled."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    ended: list[int] = []
    pending = list(parents.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        pending += parents.get(pid, [])
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            ended.append(pid)
    return ended
