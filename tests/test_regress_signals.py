"""A Spark regression ended by a signal (Ctrl-C, ``timeout``'s SIGTERM) leaves no process behind:
not Spark's JVM, running or as a zombie."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli.sample import build_sample_repo
from tests.sessions import session_processes

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_repo(tmp_path_factory.mktemp("sample") / "registry").path


@pytest.mark.spark
@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [(signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted")],
)
def test_a_regression_ended_by_a_signal_leaves_no_jvm_not_even_a_zombie(
    sample: Path, sig: int, code: int, said: str
) -> None:
    """Findings: SIGTERM (``timeout``, a cancelled CI job) killed the command at once: Spark's JVM
    ran on, an orphan, then a zombie until init collected it. On Ctrl-C while the JVM started, the
    command killed it but never collected it: the JVM outlived the command as a zombie (never
    collected under a PID 1 that does not reap). The signal goes to the command alone, as
    ``timeout`` sends it, once its JVM runs; the session must be empty when the command returns."""
    command = ["regress", str(sample), "--base", "main", "--head", "add-dagster"]
    with subprocess.Popen(
        [sys.executable, "-m", "bot", *command, "--master", "local[2]"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as started:
        try:
            assert started.stderr is not None
            while "on Spark" not in started.stderr.readline():
                assert started.poll() is None
            deadline = time.monotonic() + 120
            while not any("(java)" in p for p in session_processes(started.pid)):
                assert started.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
            started.send_signal(sig)
            assert started.wait(timeout=60) == code
            left = session_processes(started.pid)
            err = started.stderr.read()
        finally:
            for line in session_processes(started.pid):
                os.kill(int(line.split()[0]), signal.SIGKILL)
    assert left == [], left
    assert err.strip().splitlines()[-1] == f"registry-bot regress: {said}", err
    assert "Traceback" not in err


def test_a_command_run_in_process_gives_the_callers_signal_handlers_back() -> None:
    """Finding: `main()` set SIGTERM and SIGHUP to raise where the command is and left them so
    after it returned: a test (or a program embedding the command line) went on with them, and the
    processes it forked inherited them (the site's writers then outlived their pool's SIGTERM). The
    caller's handlers are back when the command returns."""
    from bot.cli import main

    ending = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved = {s: signal.getsignal(s) for s in ending}
    mine = (lambda _signum, _frame: None, signal.SIG_DFL, signal.SIG_DFL)
    try:
        for s, handler in zip(ending, mine, strict=True):
            signal.signal(s, handler)
        assert main(["rules"]) == 0
        assert tuple(signal.getsignal(s) for s in ending) == mine
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
