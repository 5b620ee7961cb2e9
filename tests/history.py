"""The real git history of OpenLineage's spec and registry (141 merged pull requests), for replaying them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.changes import ChangeSet
from bot.config import Config
from bot.engine import ReviewContext, review
from bot.findings import Report
from bot.snapshot import GitSnapshot
from tests.conftest import SHARED
from tests.gitrepo import GIT_ENV

BUNDLE = SHARED / "corpus/openlineage-history/openlineage-spec-history.bundle"  # beside the repository or a worktree


def clone(target: Path) -> Path:
    """A bare clone of the history bundle at ``target``."""
    if not BUNDLE.is_file():
        raise RuntimeError(f"the history bundle is missing at {BUNDLE}")
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(target)], check=True, env=GIT_ENV)
    return target


def commit_of(repo: Path, pr: str) -> str:
    """The one commit whose subject names pull request ``pr`` (``"#2987"``)."""
    out = subprocess.run(["git", "-C", str(repo), "log", "--format=%H %s", "--fixed-strings", f"--grep=({pr})"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    found = [line.split(" ", 1)[0] for line in out if line.endswith(f"({pr})")]
    if len(found) != 1:
        raise LookupError(f"{len(found)} commits for {pr}")
    return found[0]


def replay(repo: Path, commit: str, config: Config | None = None) -> Report:
    """Review ``commit`` against its parent, as its pull request was."""
    with GitSnapshot(repo, f"{commit}^") as base, GitSnapshot(repo, commit) as head:
        changes = ChangeSet.from_git(repo, base.commit, head.commit)
        return review(head=head, base=base, changes=changes, context=ReviewContext(), config=config)
