"""The bot as its users install it: a wheel in a fresh virtual environment outside the checkout, and
this repository as a git repository that pre-commit (``language: python``) and the Action install
from.

Both install with pip from the wheelhouse ``make wheelhouse`` fills from the hashed lock
(``requirements/web.txt``), never from an index: tests do not reach the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT
from tests.gitrepo import GIT_ENV, git

WHEELHOUSE = ROOT / ".wheelhouse"


def offline_pip_env() -> dict[str, str]:
    """pip (and pre-commit's pip) resolves everything from the wheelhouse, never from an index."""
    if not (WHEELHOUSE / ".filled").exists():
        raise RuntimeError(
            f"the wheelhouse {WHEELHOUSE} is empty: run `make wheelhouse` (`make test` does)"
        )
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no virtual environment, no PYTHONPATH pointing at the
    checkout."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
        and not k.startswith(("PIP_", "PYTEST_"))
    }
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if p and not p.startswith(str(ROOT)) and p != str(Path(sys.executable).parent)
    )
    return {**env, **offline_pip_env(), **extra}


@dataclass(frozen=True)
class Installed:
    venv: Path
    workdir: Path  # outside the checkout: commands run from here

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def run(
        self, *args: str, cwd: Path | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "registry-bot"), *args],
            cwd=cwd or self.workdir,
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=timeout,
            check=False,
        )


def install_wheel(folder: Path) -> Installed:
    """Build the project's wheel (no index: the build backend is the venv's) and pip-install it,
    with its dependencies from the wheelhouse, into a new virtual environment under ``folder``."""
    dist = folder / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        env=clean_env(),
    )
    [wheel] = dist.glob("*.whl")
    venv = folder / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        env=clean_env(),
    )
    workdir = folder / "work"
    workdir.mkdir()
    return Installed(venv=venv, workdir=workdir)


def project_repo(target: Path) -> str:
    """This repository as it is now (tracked and new files, uncommitted edits included) committed
    into a git repository at ``target``: what pre-commit and the Action clone. Returns the commit
    id."""
    listed = (
        subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source, dest = ROOT / name, target / name
        if not source.is_symlink() and not source.is_file():
            continue  # deleted in the work tree
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest, follow_symlinks=False)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "registry-bot as it is being tested")
    return git(target, "rev-parse", "HEAD")


__all__ = [
    "GIT_ENV",
    "WHEELHOUSE",
    "Installed",
    "clean_env",
    "install_wheel",
    "offline_pip_env",
    "project_repo",
]
