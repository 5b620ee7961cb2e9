"""The real git history of OpenLineage's spec and registry (141 merged pull requests), for replaying
them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Report
from bot.core.snapshot import GitSnapshot
from bot.review.engine import ReviewContext, review
from tests.conftest import SHARED
from tests.gitrepo import GIT_ENV

# beside the repository or a worktree
BUNDLE = SHARED / "corpus/openlineage-history/openlineage-spec-history.bundle"


def clone(target: Path) -> Path:
    """A bare clone of the history bundle at ``target``."""
    if not BUNDLE.is_file():
        raise RuntimeError(f"the history bundle is missing at {BUNDLE}")
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(BUNDLE), str(target)], check=True, env=GIT_ENV
    )
    return target


def commit_of(repo: Path, pr: str) -> str:
    """The one commit whose subject names pull request ``pr`` (``"#2987"``)."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H %s", "--fixed-strings", f"--grep=({pr})"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    found = [line.split(" ", 1)[0] for line in out if line.endswith(f"({pr})")]
    if len(found) != 1:
        raise LookupError(f"{len(found)} commits for {pr}")
    return found[0]


def replay(repo: Path, commit: str, config: Config | None = None) -> Report:
    """Review ``commit`` against its parent, as its pull request was."""
    with GitSnapshot(repo, f"{commit}^") as base, GitSnapshot(repo, commit) as head:
        changes = ChangeSet.from_git(repo, base.commit, head.commit)
        return review(head=head, base=base, changes=changes, context=ReviewContext(), config=config)


def review_branch(repo: Path, base: str, head: str = "pr", config: Config | None = None) -> Report:
    """Review the ``head`` branch of a repository against ``base``, as its pull request."""
    with GitSnapshot(repo, base) as b, GitSnapshot(repo, head) as h:
        return review(
            head=h,
            base=b,
            changes=ChangeSet.from_git(repo, b.commit, h.commit),
            context=ReviewContext(),
            config=config,
        )


def with_events(history: Path, commit: str, events: Path, target: Path) -> Path:
    """A repository shaped like the real one at ``commit``: ``main`` holds the parent's tree and
    ``pr`` the commit's, each with the folder ``events`` (the integrations' test events) at its own
    path."""
    from tests.gitrepo import git

    target.mkdir(parents=True)
    git(target, "init", "-q", "-b", "main")
    for rev, branch in ((f"{commit}^", "main"), (commit, "pr")):
        if branch == "pr":
            git(target, "checkout", "-q", "-b", "pr")
            git(target, "rm", "-rq", "--cached", ".")
            subprocess.run(["git", "-C", str(target), "clean", "-qfdx"], check=True, env=GIT_ENV)
        archive = subprocess.run(
            ["git", "-C", str(history), "archive", rev], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        shutil.copytree(events, target / events.name, dirs_exist_ok=True)
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", f"{rev} with the integrations' events")
    return target


def newest_passing_registry_change(repo: Path, author: str, approvers: frozenset[str]) -> str:
    """The newest commit changing the registry that passes review, as its pull request approved by
    ``approvers``: real changes whose verdict the engine decides (history defects,
    tests/test_history.py, are found and skipped by the same engine rather than named)."""
    from bot.core.findings import Verdict
    from tests.planting import review_pr

    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H", "--", "spec/registry"],
        capture_output=True,
        text=True,
        check=True,
        env=GIT_ENV,
    ).stdout.split()
    context = ReviewContext(author=author, approvers=approvers)
    return next(c for c in log if review_pr(repo, c, context).verdict is Verdict.SUCCESS)
