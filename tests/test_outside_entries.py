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


ICEBERG_README = "spec/registry/iceberg/README.md"


def test_a_file_the_root_codeowners_un_owns_falls_back_to_its_owners(
    tmp_path: Path, corpus: Path
) -> None:
    """A root line with no owner (``spec/registry/``) left the file with no one to approve it: the
    finding named no owner, no approval passed it and no waiver applies (red forever), while a
    steering file, or an entry without a CODEOWNERS of its own, un-owned the same way asked no one
    (a stranger's edit of iceberg passed). All now ask the owners of the root CODEOWNERS, who
    decide who owns what, and say so."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    root = (repo.path / "CODEOWNERS").read_text()
    repo.write("CODEOWNERS", root + "spec/registry/\n.github/registry-bot.yml\n")
    repo.commit("the root CODEOWNERS un-owns the registry folder", branch="main")
    repo.change(
        {
            "spec/registry/README.md": "# the registry\n",
            ".github/registry-bot.yml": "delegation:\n  approve: false\n",
            ICEBERG_README: "# Iceberg\n",
        }
    )
    owner = root_owner(repo)
    report = review(repo, frozenset())
    rules = (
        "ownership/outside-entry",
        "ownership/steering-file-change",
        "owners/approval-required",
    )
    asked = {f.rule: f for f in report.findings if f.rule in rules}
    assert set(asked) == set(rules)
    assert all(f.owners == (owner,) and "no line gives" in f.message for f in asked.values())
    assert report.verdict is Verdict.FAILURE
    passed = review(repo, frozenset({owner.removeprefix("@")}))
    assert not [f for f in passed.findings if f.rule.startswith("ownership/")]
    assert passed.verdict is Verdict.SUCCESS


def test_with_no_owner_anywhere_no_one_is_asked(tmp_path: Path, corpus: Path) -> None:
    """No root CODEOWNERS at all: the repository delegates nothing, so no one is asked, as on
    GitHub (before: a finding no one could ever satisfy)."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    repo.delete("CODEOWNERS")
    repo.commit("no CODEOWNERS", branch="main")
    repo.change({"spec/registry/README.md": "# the registry\n"})
    report = review(repo, frozenset())
    assert not [f for f in report.findings if f.rule == "ownership/outside-entry"]
