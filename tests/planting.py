"""Plant a change into a real commit of a (bare) git repository and review it as a pull request.

``plant(repo, commit, edits)`` writes a new commit whose tree is ``commit``'s with ``edits`` applied
(path -> new bytes, or ``None`` to delete) and whose parent is ``commit``'s parent: the pull request
``commit`` would have been with the edits in it. Git plumbing only, in a private index file, so the
repository's own refs and index are never touched and many mutants can share one clone.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bot.core.changes import ChangeSet
from bot.core.findings import Report
from bot.core.snapshot import GitSnapshot
from bot.review.engine import ReviewContext, review
from tests.gitrepo import GIT_ENV


def _git(
    repo: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        env={**GIT_ENV, **(env or {})},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().strip()


def read(repo: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit``, or ``None`` when the commit has no such file."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "blob", f"{commit}:{path}"],
        capture_output=True,
        env=GIT_ENV,
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else None


def read_json(repo: Path, commit: str, path: str) -> Any:
    data = read(repo, commit, path)
    if data is None:
        raise LookupError(f"{path} is not in {commit[:7]}")
    return json.loads(data)


def dump(value: Any) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def files(repo: Path, commit: str, prefix: str = "") -> list[str]:
    listing = _git(
        repo, "ls-tree", "-r", "--name-only", "--full-tree", commit, *([prefix] if prefix else [])
    )
    return [p for p in listing.splitlines() if p]


def changed_paths(repo: Path, commit: str) -> set[str]:
    """The paths ``commit`` changes against its first parent."""
    return set(_git(repo, "diff", "--name-only", f"{commit}^", commit).splitlines())


def plant(
    repo: Path, commit: str, edits: Mapping[str, bytes | None], message: str = "planted"
) -> str:
    """A commit with ``commit``'s tree plus ``edits``, on ``commit``'s parent; returns its sha."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "read-tree", commit, env=env)
        records = []
        for path, content in edits.items():
            if content is None:  # mode 0 removes the path from the index (no work tree needed)
                records.append(f"0 {'0' * 40}\t{path}\n")
            else:
                blob = _git(repo, "hash-object", "-w", "--stdin", stdin=content)
                records.append(f"100644 {blob}\t{path}\n")
        if records:
            _git(repo, "update-index", "--index-info", stdin="".join(records).encode(), env=env)
        tree = _git(repo, "write-tree", env=env)
    return _git(repo, "commit-tree", tree, "-p", f"{commit}^", "-m", message)


def review_pr(repo: Path, head: str, context: ReviewContext | None = None) -> Report:
    """Review ``head`` against its first parent, as the pull request it would be."""
    with GitSnapshot(repo, f"{head}^") as base_side, GitSnapshot(repo, head) as head_side:
        changes = ChangeSet.from_git(repo, base_side.commit, head_side.commit)
        return review(
            head=head_side, base=base_side, changes=changes, context=context or ReviewContext()
        )


def blocking_rules(report: Report) -> set[str]:
    return {f.rule for f in report.findings if report.is_blocking(f)}


Edit = Callable[[Any], None]


def edited(repo: Path, commit: str, path: str, edit: Edit) -> bytes:
    """``path`` at ``commit`` as JSON, changed in place by ``edit``, serialised again."""
    value = read_json(repo, commit, path)
    edit(value)
    return dump(value)
