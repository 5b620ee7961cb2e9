"""Renames and moves in a change review: what the judge follows, who approves, what is compared.

Pull requests on a git repository of the real corpus with two entries owned by people without
write access (``tests/delegation_repo.py``: ``@dataproc-owner``, ``@iceberg-owner``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.core.changes import ChangeSet, Status, _file_changes, _parse_raw
from bot.core.findings import Report, State
from bot.core.snapshot import GitSnapshot, run_git
from bot.github.api import ChangedFile
from bot.github.pipeline import to_changeset
from bot.review.engine import ReviewContext, review
from tests.delegation_repo import DATAPROC, DATAPROC_OWNER, ICEBERG, ICEBERG_OWNER, build
from tests.gitrepo import Repo, git

SOURCE = f"{ICEBERG}/facets/IcebergScanReportInputDatasetFacet.json"


@pytest.fixture(scope="module")
def owned(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Repo:
    return build(corpus, tmp_path_factory.mktemp("rename-audit") / "repo")


def branch(repo: Repo, name: str, files: dict[str, bytes | None]) -> str:
    """A pull request branch ``name`` on ``main`` writing (``None``: deleting) ``files``."""
    git(repo.path, "checkout", "-q", "-B", name, "main")
    for path, content in files.items():
        if content is None:
            repo.delete(path)
        else:
            repo.write(path, content)
    repo.commit(name, branch=name)
    git(repo.path, "checkout", "-q", "main")
    return name


def judged(repo: Repo, head: str, changes: ChangeSet, author: str) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, head) as tip:
        return review(head=tip, base=base, changes=changes, context=ReviewContext(author=author))


def states(report: Report, path: str) -> dict[str, State | None]:
    return {f.rule: f.state for f in report.findings if f.path == path}


def facet_copy(repo: Repo, source: str, folder: str, name: str, key: str) -> dict[str, bytes]:
    """A new facet file ``name`` in ``folder``, copied from ``source`` (``$id``, ``$defs`` name and
    facet key its own)."""
    value: Any = json.loads((repo.path / source).read_text(encoding="utf-8"))
    old = next(iter(value["$defs"]))
    value["$id"] = value["$id"].rsplit("/", 1)[0] + f"/{name}.json"
    value["$defs"][name] = value["$defs"].pop(old)
    value["properties"] = {key: {"$ref": f"#/$defs/{name}"}}
    return {f"{folder}/facets/{name}.json": (json.dumps(value, indent=2) + "\n").encode()}


# -- a copy is an addition -------------------------------------------------------------------------


def test_a_copy_github_lists_is_an_addition_and_its_source_is_left_alone(owned: Repo) -> None:
    """GitHub lists a file copied from another as ``copied`` with ``previous_filename``. Taken as a
    rename, the source's problems were followed to the copy: the new facet's missing example was
    pre-existing (hidden) and the untouched source's blamed on the change (new), its owners asked to
    approve a change that left their file alone, and the copy "became" a new facet."""
    copy = facet_copy(owned, SOURCE, ICEBERG, "IcebergPlantedInputDatasetFacet", "x")
    [added] = copy
    head = branch(owned, "copied", dict(copy))
    listed = ChangeSet.from_git(owned.path, "main", head)
    assert [(f.path, f.status) for f in listed.files] == [(added, Status.ADDED)]
    files = [ChangedFile(f.path, "copied", SOURCE, f.patch) for f in listed.files]
    report = judged(owned, head, to_changeset(files), ICEBERG_OWNER)
    assert states(report, SOURCE).get("examples/missing") is State.UNCHANGED
    assert states(report, added).get("examples/missing") is State.NEW
    assert "versions/codegen" not in states(report, added)
    # a copy from another entry: that entry's owners are not asked, its file is unchanged
    other = f"{DATAPROC}/facets/GcpDataprocRunFacet.json"
    copy = facet_copy(owned, other, ICEBERG, "IcebergCopiedRunFacet", "iceberg_copied")
    head = branch(owned, "copied-across", dict(copy))
    files = [ChangedFile(p, "copied", other) for p in copy]
    report = judged(owned, head, to_changeset(files), ICEBERG_OWNER)
    assert not [f for f in report.findings if DATAPROC_OWNER in "".join(f.owners)]


def test_a_copy_git_lists_is_an_addition(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.json").write_text("\n".join(f'"line {i}"' for i in range(40)), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "b.json").write_text((repo / "a.json").read_text(encoding="utf-8"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "copy")
    raw = run_git(repo, "diff", "--raw", "-C", "--find-copies-harder", "-z", "HEAD~", "HEAD")
    [record] = _parse_raw(raw)
    assert (record.code[0], record.old_path) == ("C", "a.json")
    assert [(f.path, f.status, f.old_path) for f in _file_changes([record], {})] == [
        ("b.json", Status.ADDED, None)
    ]
