"""Ctrl-C at a moment of a command's own run, not of the interpreter's start."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading

IMPORT_TIME = "import time:"


class Started:
    """``command`` (a script, or ``-m module``) under ``python -X importtime``, in its own process
    group, returned once the interpreter's own start is over and it imports the bot.

    A SIGINT before then lands in the interpreter's start (``site`` running the environment's
    ``.pth`` files, the editable install's finder among them), before any code of the bot runs:
    Python's own "Fatal Python error: init_import_site". That took over 100 ms at load 7 (a CI
    run), so moments are counted from here, not from the spawn. Standard error is read all along
    (the import times alone can fill a pipe); standard output is dropped.
    """

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(
            # faulthandler: a command still running when it should have ended says where (SIGABRT)
            [sys.executable, "-X", "importtime", "-X", "faulthandler", *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._err = bytearray()
        self._bot = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._bot.wait(60) or self.proc.poll() is not None:
            raise AssertionError(f"{command} never imported the bot: {self.err()}")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        with self.proc.stderr:
            for line in iter(self.proc.stderr.readline, b""):
                self._err += line
                if line.split(b"|")[-1].strip() == b"bot":
                    self._bot.set()
        self._bot.set()

    def wait(self, timeout: float) -> str:
        """Its exit, then what it wrote to standard error, without the import times. Still running
        ``timeout`` seconds later: an AssertionError with the stack of each of its threads."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            self._reader.join(5)
            raise AssertionError(
                f"still running {timeout:g} s later; where it was:\n{self.err()[-6000:]}"
            ) from None
        self._reader.join(10)
        return self.err()

    def err(self) -> str:
        text = bytes(self._err).decode(errors="replace")
        return "\n".join(line for line in text.splitlines() if not line.startswith(IMPORT_TIME))


def ctrl_c_inside_init(target: str, forget: str = "") -> str:
    """Python source that, run first in a fresh interpreter, makes the first import that the
    extension module ``target`` makes while it initialises send this process SIGINT, as a Ctrl-C
    landing in that moment would. The module ``forget``, which ``target``'s initialisation imports
    and which is usually loaded already, is forgotten then, so that there is an import to land
    in."""
    return f"""
import os, signal, sys
class CtrlCInsideInit:
    loading = False
    def find_spec(self, name, path=None, target=None):
        if self.loading:
            self.loading = False
            os.kill(os.getpid(), signal.SIGINT)
        elif name == {target!r}:
            self.loading = True
            sys.modules.pop({forget!r}, None)
sys.meta_path.insert(0, CtrlCInsideInit())
"""
