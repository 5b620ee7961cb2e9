"""Ending the processes a command started (Spark's JVM, git) when the command is interrupted.

Spark's launcher starts the JVM ignoring SIGINT (so that Ctrl-C in a notebook does not kill it), and
a JVM still starting has no gateway that ``SparkSession.stop()`` could reach: after Ctrl-C it would
outlive the command. Every descendant of this process is ended instead (SIGTERM, then SIGKILL after
a grace period). Linux's ``/proc`` lists them; elsewhere nothing is done.

A descendant whose parent ended first (PySpark's daemon ends on SIGINT before its forked workers do)
would be re-parented to init and escape that walk: the console script makes the command line a child
subreaper (``adopt_orphans``), so such orphans are re-parented to it and ended with the rest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

GRACE_SECONDS = 3.0
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def adopt_orphans() -> bool:
    """Make this process the child subreaper of its descendants (Linux 3.4+): an orphaned
    descendant is re-parented to it instead of init. False where the call is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _parents(zombies: bool = False) -> dict[int, int]:
    """Process id -> its parent's, of every process (the ended ones not yet collected with
    ``zombies``)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # ended meanwhile
        # the command name may hold spaces and parentheses: the fields after the last ')' are fixed
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 1 and (zombies or fields[0] != "Z"):
            parents[int(stat.parent.name)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[list[int]]:
    """The living descendants of ``pid``, one list per generation (children first)."""
    parents = _parents()
    generations: list[list[int]] = []
    wanted = [pid]
    while wanted:
        wanted = [child for child, ppid in parents.items() if ppid in wanted]
        if wanted:
            generations.append(wanted)
    return generations


def end_descendants(grace: float = GRACE_SECONDS, rounds: int = 5) -> None:
    """End every descendant of this process, the youngest generation first, so that each one's
    parent is still there to collect it (an orphan would wait for init as a zombie): SIGTERM, then
    SIGKILL for those still there after ``grace`` seconds. The tree is listed again after each
    round: a launcher that was still starting (Spark's ``spark-class`` runs one ``java`` to build
    the command of the next) may have started another process meanwhile."""
    for _ in range(rounds):
        tree = descendants(os.getpid())
        if not tree:
            break
        _end(tree, grace)
    _collect(grace)


def _collect(grace: float) -> None:
    """Collect this process's ended children, and those re-parented to it as their parent ends (a
    subreaper's), for up to ``grace`` seconds: one left uncollected (the JVM that Spark's launcher
    signalled before the command ended, its launcher's shell) outlived the command as a zombie until
    init collected it, never under a PID 1 that does not."""
    deadline = time.monotonic() + grace
    while True:
        _reap()
        if os.getpid() not in _parents(zombies=True).values() or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def _end(tree: list[list[int]], grace: float) -> None:
    for generation in reversed(tree):
        for pid in generation:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while generation and time.monotonic() < deadline:
            time.sleep(0.05)
            _reap()
            generation = [pid for pid in generation if _exists(pid)]
        for pid in generation:
            _signal(pid, signal.SIGKILL)
        while generation and time.monotonic() < deadline + grace:
            time.sleep(0.05)
            _reap()
            generation = [pid for pid in generation if _exists(pid)]


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _exists(pid: int) -> bool:
    """Running, or ended but not yet collected by its parent (a zombie)."""
    return Path(f"/proc/{pid}").exists()


def _reap() -> None:
    """Collect our own ended children, so that they do not linger as zombies."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
