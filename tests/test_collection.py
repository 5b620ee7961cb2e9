"""Collecting the tests starts nothing: the image build begins with the first test that runs, not at
collection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_collect_only_starts_no_image_build(tmp_path: Path) -> None:
    state = tmp_path / "podman"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_images.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "REGISTRY_BOT_PODMAN_DIR": str(state)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_images.py::" in proc.stdout  # the image tests were collected
    assert not state.exists()  # and no build was started (it writes its log there)
