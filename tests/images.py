"""The container images of the Dockerfile, built in the background while the rest of the suite runs.

A cold build takes minutes (Debian packages, Java, PySpark): the ``image_build`` fixture
(conftest.py) starts ``deploy/build-images`` with the first test of a run that has the image tests,
at low CPU and I/O priority, and those tests (``tests/test_images.py``) run last and wait for it.
Layers are cached in ``.podman/``, so a second run rebuilds only what changed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import ROOT

PODMAN = ROOT / "deploy" / "podman"
TAG = "localhost/registry-bot"
STATE = Path(os.environ.get("REGISTRY_BOT_PODMAN_DIR", ROOT / ".podman"))
BUILD_LOG = STATE / "build.log"
BUILD_TIMEOUT = 900.0  # seconds, from the start of the build

_build: subprocess.Popen[bytes] | None = None
_started = 0.0


def start_build() -> None:
    """Start ``deploy/build-images`` once, in its own process group, logging to
    ``.podman/build.log``."""
    global _build, _started
    if _build is not None:
        return
    STATE.mkdir(parents=True, exist_ok=True)
    with BUILD_LOG.open("wb") as log:
        _build = subprocess.Popen(
            ["nice", "-n", "19", "ionice", "-c", "3", str(ROOT / "deploy" / "build-images")],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    _started = time.monotonic()


def wait_for_build() -> float:
    """Wait for the build started by ``start_build`` (starting it if needed); return its duration in
    seconds. A failed or overdue build is an AssertionError quoting the end of its log."""
    start_build()
    assert _build is not None
    try:
        code = _build.wait(timeout=max(1.0, BUILD_TIMEOUT - (time.monotonic() - _started)))
    except subprocess.TimeoutExpired:
        stop_build()
        code = -1
    if code != 0:
        tail = "\n".join(BUILD_LOG.read_text(errors="replace").splitlines()[-30:])
        raise AssertionError(f"deploy/build-images exited {code} (log: {BUILD_LOG}):\n{tail}")
    return time.monotonic() - _started


def stop_build() -> None:
    """Stop a build still running (the session ends early, or the build overran)."""
    if _build is not None and _build.poll() is None:
        os.killpg(_build.pid, signal.SIGTERM)
        try:
            _build.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(_build.pid, signal.SIGKILL)
            _build.wait()


def podman(
    *args: str, timeout: float = 300.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``deploy/podman`` (the project's own storage and configuration) and capture its
    output."""
    done = subprocess.run(
        [str(PODMAN), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"podman {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}"
        )
    return done
