"""A steering file renamed away is a change of it, reviewed: never ``neutral``.

GitHub lists ``git mv CODEOWNERS CODEOWNERS.disabled`` as one ``renamed`` file with
``previous_filename``; the App compared only the new path with the files it reviews, so the pull
request changed "none of the registry's files" and its required check passed (``neutral``) while
the deletion of the same file failed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.commands.replay import _Single
from bot.github.events import Job
from bot.service.worker import Worker
from tests.delegation_repo import build
from tests.gitrepo import git
from tests.test_delegation import REPO, pull


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build(corpus, tmp_path_factory.mktemp("renames") / "repo").path


@pytest.mark.parametrize("how", ["renamed", "deleted"])
@pytest.mark.parametrize("path", ["CODEOWNERS", ".github/registry-bot.yml"])
def test_a_steering_file_renamed_away_fails_as_its_deletion_does(
    repo: Path, path: str, how: str
) -> None:
    branch = f"{how}-{path.replace('/', '-').strip('.')}"
    git(repo, "checkout", "-q", "-B", branch, "main")
    if how == "renamed":
        git(repo, "mv", path, path + ".disabled")
    else:
        git(repo, "rm", "-q", path)
    git(repo, "commit", "-qm", f"{path} {how}")
    git(repo, "checkout", "-q", "main")
    gh = pull(repo, branch)
    try:
        files, _ = gh.list_pull_request_files(REPO, 7)
        assert [(f.path, f.previous_path) for f in files] == (
            [(path + ".disabled", path)] if how == "renamed" else [(path, None)]
        )
        outcome = Worker(_Single(gh)).handle(Job("d", "pull_request", "synchronize", 1, REPO, 7))
        run = gh.check_runs[-1]
        assert outcome == "failure" and run.conclusion == "failure"
        assert "ownership/steering-file-change" in run.summary
    finally:
        gh.close()
