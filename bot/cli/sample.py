"""The embedded default: a git repository built from the bundled reference registry, with a sample
pull request (``registry/demo-pr``) that adds a participant and has a few mistakes."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bot import bundled

REFERENCE = bundled.path("registry", "reference")
DEMO_PR = bundled.path("registry", "demo-pr")
AUTHOR = "dagster-dev"
BASE_BRANCH, PR_BRANCH = "main", "add-dagster"
_ENV = {
    "GIT_AUTHOR_NAME": "registry-bot demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "registry-bot demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


@dataclass(frozen=True)
class SampleRepo:
    path: Path
    base: str = BASE_BRANCH
    head: str = PR_BRANCH
    author: str = AUTHOR


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **_ENV}
    )


def build_sample_repo(target: Path, pr_overlay: Path = DEMO_PR) -> SampleRepo:
    """Create ``target`` as a git repository: ``main`` is the reference registry, ``add-dagster``
    the PR."""
    if not REFERENCE.is_dir():
        raise FileNotFoundError(f"the bundled reference registry is missing at {REFERENCE}")
    shutil.copytree(REFERENCE, target)
    _git(target, "init", "-q", "-b", BASE_BRANCH)
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "Reference registry")
    _git(target, "checkout", "-q", "-b", PR_BRANCH)
    shutil.copytree(pr_overlay, target, dirs_exist_ok=True)
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "Register dagster as a producer")
    _git(target, "checkout", "-q", BASE_BRANCH)
    return SampleRepo(path=target)
