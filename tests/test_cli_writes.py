"""Nothing written unless asked and valid: every command that writes refuses a missing repository, a
folder without a registry and input with nothing in it (one line, exit 2) before it creates any
file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from bot.cli import COMMANDS, main
from tests.conftest import PAYLOADS, ROOT
from tests.gitrepo import Repo, git

# every command that writes a file, with the arguments that would make it write into OUT (a folder
# that does not exist yet) from REPO; init also needs an EVENT
WRITING = {
    "init": ["init", "acme", "{EVENT}", "--owner", "@a", "--repo", "{REPO}"],
    "fix": ["fix", "{REPO}", "--write", "--allow-dirty"],
    "publish": ["publish", "{REPO}", "{OUT}"],
    "check": ["check", "{REPO}", "--all", "-o", "{OUT}.txt"],
    "action": ["action", "{REPO}", "--sarif", "{OUT}.sarif"],
    "naming": ["naming", "docs", "--dir", "{REPO}"],
    # writes nothing itself, but runs the whole App
    "replay": ["replay", "{DELIVERY}", "--repo", "{REPO}"],
    "regress": ["regress", "{REPO}", "--base", "main", "--engine", "python", "--parquet", "{OUT}"],
}
# read no repository: demo writes its own temporary folder, or with --keep a new folder it is named
# (an existing one is refused: tests/test_cli_contract.py); app register its credentials' folder
NOT_WRITING = {"demo", "rules", "app", "dashboard"}
CASES = ["missing repository", "folder without a registry"]
REFERENCE = ROOT / "registry" / "reference"  # the bundled reference registry

EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2024-01-01T00:00:00Z",
    "producer": "https://github.com/acme/acme",
    "run": {"runId": "0190c6d8-0b5c-7cc2-a8d0-5e3f1d4a2b6c", "facets": {"acme_stats": {"rows": 1}}},
    "job": {"namespace": "ns", "name": "j"},
}


def test_every_command_is_classified() -> None:
    assert set(WRITING) | NOT_WRITING == set(COMMANDS)


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def refusal(command: str, case: str, tmp_path: Path) -> list[str]:
    """The arguments that would make ``command`` write into ``tmp_path/work/out`` from a repository
    that is ``case``: a missing one, or a git repository with a commit and files but no registry."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "event.json").write_text(json.dumps(EVENT))
    shutil.copy(PAYLOADS / "pull_request.opened.json", inputs / "delivery.json")
    repo = tmp_path / "work" / "repo"
    if case == "folder without a registry":
        repo.mkdir(parents=True)
        (repo / "README.md").write_text("not a registry\n")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "readme")
    return [
        a.replace("{REPO}", str(repo))
        .replace("{OUT}", str(tmp_path / "work" / "out"))
        .replace("{EVENT}", str(inputs / "event.json"))
        .replace("{DELIVERY}", str(inputs / "delivery.json"))
        for a in WRITING[command]
    ]


@pytest.mark.parametrize("command", sorted(WRITING))
@pytest.mark.parametrize("case", CASES)
def test_a_writing_command_refuses_before_writing(
    command: str, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = refusal(command, case, tmp_path)
    before = files_under(tmp_path)
    env = os.environ.pop("GITHUB_STEP_SUMMARY", None)
    try:
        code = main(argv)
    finally:
        if env is not None:
            os.environ["GITHUB_STEP_SUMMARY"] = env
    captured = capsys.readouterr()
    assert code == 2, (argv, captured.out, captured.err)
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err, (
        captured.err
    )
    # nothing created: no repository, no entry, no output file
    assert files_under(tmp_path) == before


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{EMPTY}", "--repo", "{REPO}"],
        ["replay", "{DELIVERY}", "--repo", "{REPO}", "--checks", "no.such:CHECKS"],
        ["replay", "{DELIVERY}", "--repo", "{REPO}/missing"],
        ["fix"],
        ["action", "{REPO}"],
        ["action", "{REPO}", "--sarif", "{REPO}/no/such/out.sarif"],
    ],
)
def test_usage_errors_are_one_line_naming_what_is_wrong(
    argv: list[str], tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty.json").write_text("{}")
    args = [
        a.replace("{REPO}", str(corpus))
        .replace("{EMPTY}", str(tmp_path / "empty.json"))
        .replace("{DELIVERY}", str(PAYLOADS / "pull_request.opened.json"))
        for a in argv
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    # fix's PATH is optional; action's output is --sarif
    assert "PATH" not in err and "-o " not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "registry-bot 0.1.0"


def test_naming_docs_on_a_folder_without_naming_files_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["naming", "docs", "--check", "--dir", str(tmp_path)]) == 2
    assert "no naming files" in capsys.readouterr().err


def test_fix_outside_git_writes_nothing_and_names_the_schema_url_fixes(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/fixes.md: fix refuses to write files git does not track (a folder without git: all of
    them), and the examples' _schemaURL rules have a fix (the real registry's stale example
    URLs)."""
    shutil.copytree(corpus / "spec", tmp_path / "repo" / "spec")
    before = {p: p.read_bytes() for p in (tmp_path / "repo").rglob("*") if p.is_file()}
    assert main(["fix", str(tmp_path / "repo"), "--write"]) == 2
    err = capsys.readouterr().err
    assert "not in a git repository" in err and len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in (tmp_path / "repo").rglob("*") if p.is_file()} == before
    assert main(["fix", str(tmp_path / "repo"), "--rule", "examples/stale-schema-url"]) == 0
    diff = capsys.readouterr().out
    assert (
        '-    "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/DatasourceDatasetFacet.json"'
        in diff
    )
    assert (
        '+    "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json"'
        in diff
    )
    # the real tree is laid out as prettier does
    assert main(["fix", str(tmp_path / "repo"), "--only-layout"]) == 0
    assert capsys.readouterr().out == ""


def snapshot_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (git's own excepted) with its bytes, symlinks as their target."""
    return {
        p.relative_to(folder).as_posix(): (
            str(p.readlink()).encode() if p.is_symlink() else p.read_bytes()
        )
        for p in folder.rglob("*")
        if (p.is_file() or p.is_symlink()) and ".git" not in p.relative_to(folder).parts
    }


def test_fix_write_checks_every_file_before_writing_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two files to lay out, the second a symlink (inside the repository): the refusal comes before
    the first file is written, not after it."""
    repo = Repo.from_folder(REFERENCE, tmp_path / "repo")
    first, second = "spec/registry/airflow/registry.json", "spec/registry/marquez/registry.json"
    for path in (first, second):
        repo.write(path, json.dumps(json.loads((repo.path / path).read_text(encoding="utf-8"))))
    (repo.path / "docs").mkdir()
    (repo.path / second).rename(repo.path / "docs/marquez-registry.json")
    (repo.path / second).symlink_to("../../../docs/marquez-registry.json")
    repo.commit("minified, marquez's registry.json a symlink", branch="main")
    before = snapshot_of(repo.path)
    assert main(["fix", str(repo.path)]) == 0
    assert f"+++ b/{first}" in capsys.readouterr().out  # there is something to write
    assert main(["fix", str(repo.path), "--write"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"registry-bot fix: {second} is a symlink"), err
    assert len(err.strip().splitlines()) == 1
    assert snapshot_of(repo.path) == before


def test_regress_refuses_a_parquet_folder_spark_would_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark writes ``--parquet DIR`` in overwrite mode: it deletes DIR with what it holds.
    ``--parquet .`` in the checkout, a folder of one's notes and a file are refused (one line,
    exit 2) before Spark starts, and each is left as it was; the command's own earlier output is
    replaced (``tests/test_regress_spark.py``)."""
    repo = Repo.from_folder(REFERENCE, tmp_path / "repo")
    notes = tmp_path / "notes"
    (notes / "thesis").mkdir(parents=True)
    (notes / "thesis" / "draft.txt").write_text("my thesis\n")
    (notes / "keep.txt").write_text("precious\n")
    before = snapshot_of(tmp_path)
    monkeypatch.chdir(repo.path)
    for target, said in (
        (".", "a folder with files and no .registry-regress"),
        (str(notes), "a folder with files and no .registry-regress"),
        (f"file://{notes}", "a folder with files and no .registry-regress"),
        (str(notes / "keep.txt"), "a file"),
    ):
        argv = ["regress", str(repo.path), "--base", "main", "--parquet", target]
        assert main(argv) == 2, target
        err = capsys.readouterr().err
        assert err == (
            f"registry-bot regress: --parquet {target}: {said}, not an earlier output of regress "
            "--parquet; Spark would delete it: name a new or empty folder\n"
        )
    assert snapshot_of(tmp_path) == before
