"""A command in its own session, and what of that session is left when it returns."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path


def session_processes(session: int) -> list[str]:
    """``pid (name) state`` of every process left in the session ``session`` (its leader's pid)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if int(fields[3]) == session and int(stat.parent.name) != os.getpid():
            left.append(text[: text.rfind(")") + 3])
    return left


def running_in_session(session: int) -> list[str]:
    """The processes of ``session`` that still run (a zombie, ended and waiting for init to
    collect it, does not)."""
    return [line for line in session_processes(session) if not line.endswith(" Z")]


def run_to_the_end(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``command`` in its own session, which must hold no running process once it returns (those
    are killed, and the test fails). Output goes to files, not pipes: reading a pipe to its end
    would wait for every process that inherited it (Spark's JVM does)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            command, stdout=out, stderr=err, cwd=cwd, env=env, start_new_session=True
        )
        try:
            proc.wait(timeout=timeout)
        finally:
            left = running_in_session(proc.pid)
            for line in left:
                os.kill(int(line.split()[0]), signal.SIGKILL)
        assert left == [], f"{left} still running after the command returned {proc.returncode}"
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, proc.returncode, out.read(), err.read())
