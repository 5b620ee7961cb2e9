"""Ownership and steering files are reviewed files (issue 19, attacks 1c and 1d), on the real corpus
in git.

A pull request that only edits ``.github/CODEOWNERS`` or the root CODEOWNERS used to pass on the
command line (no check looked at it); one that replaced ``NamingBase.json`` with ``{}`` silenced the
naming errors it brought along. Both now block, through ``registry-bot check`` itself, naming whose
ownership moves where.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from bot.model.naming import bundled_folder
from tests.gitrepo import Repo, git

COMMITTERS = "@OpenLineage/committers"  # the real root CODEOWNERS's owner of everything


@pytest.fixture(scope="module")
def spec_base(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus's ``spec/`` and root CODEOWNERS, with the bundled naming files, as ``main``."""
    staging = tmp_path_factory.mktemp("staging") / "openlineage"
    shutil.copytree(corpus / "spec", staging / "spec")
    shutil.copytree(bundled_folder(), staging / "spec" / "naming")
    shutil.copy(corpus / "CODEOWNERS", staging / "CODEOWNERS")
    return Repo.from_folder(staging, tmp_path_factory.mktemp("base") / "repo").path


@pytest.fixture
def repo(spec_base: Path, tmp_path: Path) -> Repo:
    target = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(spec_base), str(target))
    return Repo(target)


def check(repo: Repo, tmp_path: Path, *extra: str) -> tuple[int, dict[str, object]]:
    out = tmp_path / "report.json"
    code = main(
        [
            "check",
            str(repo.path),
            "--base",
            "main",
            "--head",
            "pr",
            "--format",
            "json",
            "--output",
            str(out),
            *extra,
        ]
    )
    return code, json.loads(out.read_text(encoding="utf-8"))


def rules_of(report: dict[str, object]) -> list[str]:
    return [f["rule"] for f in report["findings"]]  # type: ignore[index, union-attr]


@pytest.mark.parametrize(
    ("path", "text", "moved"),
    [
        (".github/CODEOWNERS", "* @contributor\n", "to @contributor"),
        (
            "CODEOWNERS",
            None,
            "files under spec/registry/: from @OpenLineage/committers to @mallory",
        ),
    ],
)
def test_a_codeowners_only_change_needs_the_base_owners_and_says_what_moves(
    repo: Repo, tmp_path: Path, path: str, text: str | None, moved: str
) -> None:
    if text is None:  # the root file GitHub reads, with a line handing the registry to someone else
        text = (repo.path / "CODEOWNERS").read_text(encoding="utf-8") + "/spec/registry/ @mallory\n"
    repo.change({path: text}, "take ownership")
    code, report = check(repo, tmp_path, "--author", "mallory")
    assert code == 1 and report["summary"]["verdict"] == "failure"  # type: ignore[index]
    [finding] = [f for f in report["findings"] if f["rule"] == "ownership/steering-file-change"]  # type: ignore[union-attr]
    assert finding["path"] == path and finding["owners"] == [COMMITTERS]
    assert (
        moved in finding["message"]
        and "approval needed from @OpenLineage/committers" in finding["message"]
    )
    code, report = check(
        repo, tmp_path, "--author", "mallory", "--approved-by", "OpenLineage/committers"
    )
    assert code == 0 and "ownership/steering-file-change" not in rules_of(report)
    code, report = check(repo, tmp_path)  # without an author the change still never passes
    assert code == 1 and "ownership/steering-file-change" in rules_of(report)


def test_the_bots_configuration_is_a_reviewed_file(repo: Repo, tmp_path: Path) -> None:
    repo.change(
        {".github/registry-bot.yml": "verdict:\n  adoption_gaps_in_changes: warning\n"},
        "relax the bot",
    )
    code, report = check(repo, tmp_path, "--author", "mallory")
    assert code == 1 and rules_of(report).count("ownership/steering-file-change") == 1


def test_emptying_the_naming_base_schema_does_not_silence_the_naming_errors(
    repo: Repo, tmp_path: Path
) -> None:
    trino = "spec/naming/datasets/trino/trino.json"
    broken = json.loads((repo.path / trino).read_text(encoding="utf-8"))
    broken.update(scheme="Trino!", undeclared=True)  # both break the base schema
    repo.change({trino: json.dumps(broken, indent=2) + "\n"}, "a broken naming file")
    _, plain = check(repo, tmp_path, "--author", "mallory")
    expected = sorted(f["message"] for f in plain["findings"] if f["rule"] == "naming/schema")  # type: ignore[union-attr]
    assert len(expected) >= 2, (
        "the broken naming file has naming/schema errors against the base schema"
    )
    repo.change({"spec/naming/NamingBase.json": "{}\n"}, "and no base schema")
    code, report = check(repo, tmp_path, "--author", "mallory")
    assert code == 1
    got = sorted(f["message"] for f in report["findings"] if f["rule"] == "naming/schema")  # type: ignore[union-attr]
    assert got == expected  # judged by the base branch's schema, not the emptied one
    assert "ownership/steering-file-change" in rules_of(report)


def test_deleting_naming_files_needs_their_base_owners(repo: Repo, tmp_path: Path) -> None:
    """Before, a change deleting the naming conventions (NamingBase.json kept) had no finding: the
    naming checks had no file left to judge. Each deleted naming file is a steering change, approved
    by its base-side owners (the root CODEOWNERS)."""
    trino = "spec/naming/datasets/trino/trino.json"
    repo.change({trino: None}, "delete a convention")
    code, report = check(repo, tmp_path, "--author", "mallory")
    assert code == 1
    [finding] = [f for f in report["findings"] if f["rule"] == "ownership/steering-file-change"]  # type: ignore[union-attr]
    assert finding["path"] == trino and finding["owners"] == [COMMITTERS]
    assert finding["message"].startswith(f"this change deletes {trino}, which is a naming")
    code, report = check(
        repo, tmp_path, "--author", "mallory", "--approved-by", "OpenLineage/committers"
    )
    assert "ownership/steering-file-change" not in rules_of(report)


def test_deleting_the_naming_folder_is_one_finding_naming_its_files(
    repo: Repo, tmp_path: Path
) -> None:
    """Before, deleting the whole naming folder gave one steering finding per file (43 on the
    bundled layout, a review nobody reads). The deleted naming files that need the same approvers
    are one finding, on their folder, counting and naming them, beside the base schema's own;
    approving clears both."""
    files = list((repo.path / "spec/naming").rglob("*.json"))
    repo.change({"spec/naming": None}, "delete the naming conventions")
    code, report = check(repo, tmp_path, "--author", "mallory")
    assert code == 1
    steering = {
        f["path"]: f["message"]  # type: ignore[index]
        for f in report["findings"]  # type: ignore[union-attr]
        if f["rule"] == "ownership/steering-file-change"  # type: ignore[index]
    }
    assert sorted(steering) == ["spec/naming", "spec/naming/NamingBase.json"]
    message = steering["spec/naming"]
    assert message.startswith(f"this change deletes {len(files) - 1} naming files under spec/")
    assert "(datasets/abfss/abfss.json, " in message and "NamingBase" not in message
    assert steering["spec/naming/NamingBase.json"].startswith("this change deletes spec/naming/Nam")
    code, report = check(
        repo, tmp_path, "--author", "mallory", "--approved-by", "OpenLineage/committers"
    )
    assert "ownership/steering-file-change" not in rules_of(report)
