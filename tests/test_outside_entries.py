"""Files under the registry folder that belong to no entry are approved by their owners.

No check judged ``spec/registry/loose.json`` or ``spec/registry/newthing/samples/x.json`` (a folder
with no registry.json, CODEOWNERS or facets/): a pull request adding them, malformed, passed with no
approval at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.changes import ChangeSet
from bot.core.findings import Report, State, Verdict
from bot.core.snapshot import GitSnapshot
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo
from tests.test_waivers import root_owner

LOOSE = {
    "spec/registry/loose.json": '{"this is": not json',
    "spec/registry/newthing/samples/x.json": '{"this is": not json',
    "spec/registry/README.md": "<script>alert(1)</script>\n",
}


def review(repo: Repo, approvers: frozenset[str]) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        return run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author="nobody",
                approvers=approvers,
            )
        )


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    repo.change(dict(LOOSE))
    return repo


def test_files_outside_every_entry_need_their_owners_approval(repo: Repo) -> None:
    report = review(repo, frozenset())
    outside = [f for f in report.findings if f.rule == "ownership/outside-entry"]
    assert sorted(f.path for f in outside) == sorted(LOOSE)
    assert all(f.state is State.NEW and root_owner(repo) in f.owners for f in outside)
    assert report.verdict is Verdict.FAILURE


def test_the_root_owners_approval_passes_them(repo: Repo) -> None:
    report = review(repo, frozenset({root_owner(repo).removeprefix("@")}))
    assert not [f for f in report.findings if f.rule == "ownership/outside-entry"]
    assert report.verdict is Verdict.SUCCESS


def test_an_entrys_own_files_are_not_outside_it(repo: Repo) -> None:
    """A file of a real entry (iceberg's registry.json) is judged by the entry's checks."""
    repo.edit_json(
        "spec/registry/iceberg/registry.json", lambda r: r.setdefault("producer", {}).update()
    )
    repo.write("spec/registry/iceberg/notes.txt", "a note\n")
    repo.commit("a file of an entry")
    report = review(repo, frozenset())
    outside = {f.path for f in report.findings if f.rule == "ownership/outside-entry"}
    assert outside == set(LOOSE)


@pytest.mark.parametrize("reindent", [False, True], ids=["git-rename", "unpaired-move"])
def test_moving_a_file_out_of_no_entry_needs_its_owners_approval_for_where_it_was(
    tmp_path: Path, corpus: Path, reindent: bool
) -> None:
    """A move is the deletion of its old path too: a loose file moved into an entry's folder (as
    git pairs it, or re-indented, as the engine pairs it) is gone from where its owners had it."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    loose = '{"name": "a loose file", "kept": [1, 2, 3]}\n'
    repo.write("spec/registry/loose.json", loose)
    repo.commit("a loose file", branch="main")
    moved = '{\n    "name": "a loose file",\n    "kept": [1, 2, 3]\n}\n' if reindent else loose
    repo.change({"spec/registry/loose.json": None, "spec/registry/iceberg/loose.json": moved})
    report = review(repo, frozenset())
    outside = {f.path for f in report.findings if f.rule == "ownership/outside-entry"}
    assert outside == {"spec/registry/loose.json"}
    assert report.verdict is Verdict.FAILURE
