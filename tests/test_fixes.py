"""Fixes on findings: each one, applied by ``registry-bot fix`` to a broken copy of the real corpus,
makes its finding disappear and changes nothing else; the format rule agrees with prettier."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.findings import Severity
from bot.core.jsonformat import format_json
from bot.core.snapshot import DirSnapshot
from bot.review.checks.format import common_ends, format_finding, line_edits
from bot.review.engine import review
from bot.review.fixes import apply_edits
from tests.conftest import CORPUS, ROOT
from tests.gitrepo import Repo

PRETTIER = ROOT / "tests" / "data" / "prettier"
DATAPROC = "spec/registry/gcp/dataproc"
COMPOSER_JSON = "spec/registry/gcp/composer/registry.json"
CORE_JSON = "spec/registry/core/registry.json"


def corpus_json(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "spec").rglob("*.json"))


def mangle(text: str) -> str:
    """The same JSON in a careless layout: 4-space indent, spaces around colons, trailing blanks,
    CRLF."""
    lines = [
        " " * (2 * (len(line) - len(line.lstrip()))) + line.lstrip() for line in text.splitlines()
    ]
    return "\r\n".join(re.sub(r'": ', '" :  ', line) + "  " for line in lines)


# -- the layout ------------------------------------------------------------------------------------
def test_every_corpus_json_file_is_accepted_and_formatting_twice_changes_nothing(
    corpus: Path,
) -> None:
    files = corpus_json(corpus)
    assert len(files) > 90
    for path in files:
        text = path.read_text(encoding="utf-8")
        # the real files (prettier's layout) pass as they are
        assert format_json(text) == text, path
        once = format_json(mangle(text))
        assert once == text and format_json(once) == once, path


# prettier 3's output of each careless input is, byte for byte, the corpus file it was made from
# (measured with prettier 3 when the inputs were written; the project keeps no copy of a corpus
# file).
PRETTIER_OUTPUT = {
    "column-lineage": CORPUS / "spec/facets/ColumnLineageDatasetFacet.json",
    "dataproc-registry": CORPUS / DATAPROC / "registry.json",
}


@pytest.mark.parametrize("name", sorted(PRETTIER_OUTPUT))
def test_the_layout_is_prettiers_own_output(name: str) -> None:
    """Golden files: prettier 3's output for a carelessly laid out corpus file (tabs, CRLF, blank
    lines)."""
    careless = (PRETTIER / f"{name}.input.json").read_bytes().decode("utf-8")
    prettier = PRETTIER_OUTPUT[name].read_bytes().decode("utf-8")
    assert careless != prettier and format_json(careless) == prettier
    finding = format_finding("f.json", careless, 2, Severity.WARNING, None)
    assert finding is not None and finding.fix is not None
    assert apply_edits(careless, finding.fix.edits) == prettier
    assert format_finding("f.json", prettier, 2, Severity.WARNING, None) is None


def test_indent_is_configurable_strings_are_verbatim_and_numbers_as_prettier_writes_them() -> None:
    text = '{\n"a": {"b": [1.50, "\\u00e9"]},\n "c": 1E+03}'
    assert (
        format_json(text, indent=4) == '{\n    "a": { "b": [1.5, "\\u00e9"] },\n    "c": 1e3\n}\n'
    )


def test_line_edits_are_minimal_and_exact() -> None:
    old = '{\n  "a": 1,\n    "b": 2,\n  "c": 3\n}'
    new = format_json(old)
    edits = line_edits("x.json", old, new)
    # line 3 and the missing final newline
    assert [(e.start_line, e.end_line) for e in edits] == [(3, 5)]
    assert apply_edits(old, edits) == new


def test_line_edits_compare_each_line_once_on_a_file_of_repeated_lines() -> None:
    """Linear, not difflib's O(n·m) alignment: prettier's layout of 16,000 equal array items with
    its first line spoiled (48 s of CPU before) is one edit of that line."""
    compared = 0

    class Line(str):
        def __ne__(self, other: object) -> bool:
            nonlocal compared
            compared += 1
            return str.__ne__(self, other)

    new = format_json(json.dumps({"airflow_task": {"tags": ["a"] * 16_000}}))
    old = new.replace('"airflow_task": {', '"airflow_task":{', 1)
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    assert len(a) > 16_000 and common_ends([Line(x) for x in a], b) == (1, len(a) - 2)
    assert compared <= len(a) + 1
    finding = format_finding("x.json", old, 2, Severity.WARNING, None)
    assert finding is not None and finding.fix is not None
    assert [(e.start_line, e.end_line) for e in finding.fix.edits] == [(2, 2)]
    assert apply_edits(old, finding.fix.edits) == new


@pytest.mark.parametrize(
    ("old", "new", "span"),
    [
        ("a\nb\n", "x\na\nb\n", (1, 1)),  # inserted first: the line after it is replaced too
        ("a\nb\n", "a\nx\nb\n", (1, 1)),  # inserted inside: the line before it
        ("a\nb\nc\n", "a\nc\n", (2, 2)),  # deleted
        ("a\na\na\n", "a\na\n", (3, 3)),  # repeated lines: the last one goes
    ],
)
def test_line_edits_on_insertions_and_deletions(old: str, new: str, span: tuple[int, int]) -> None:
    edits = line_edits("x.json", old, new)
    assert [(e.start_line, e.end_line) for e in edits] == [span]
    assert apply_edits(old, edits) == new


def test_the_rule_can_be_switched_off_and_made_an_error(corpus_copy: Path) -> None:
    path = corpus_copy / COMPOSER_JSON
    path.write_text(mangle(path.read_text(encoding="utf-8")), encoding="utf-8")

    def rules(config: str | None) -> dict[str, str]:
        if config is not None:
            (corpus_copy / ".github").mkdir(exist_ok=True)
            (corpus_copy / ".github" / "registry-bot.yml").write_text(config, encoding="utf-8")
        return {
            f.rule: f.severity.value
            for f in review(head=DirSnapshot(corpus_copy)).findings
            if f.rule.startswith(("format/", "config/"))
        }

    assert rules(None) == {"format/json": "warning"}
    assert rules("formatting: {severity: error, indent: 2}\n") == {"format/json": "error"}
    assert rules("formatting: {enabled: false}\n") == {}
    assert rules("formatting: {indent: 0}\n") == {
        "config/invalid": "error",
        "format/json": "warning",
    }


# -- each fix on a broken copy of the corpus ----------------------------------------------------
def _legacy_key(repo: Repo) -> dict[str, str]:
    text = (repo.path / COMPOSER_JSON).read_text(encoding="utf-8")
    return {COMPOSER_JSON: text.replace('"root_doc_URL"', '"root_doc_url"')}


def _layout(repo: Repo) -> dict[str, str]:
    path = f"{DATAPROC}/facets/GcpDataprocRunFacet.json"
    return {path: mangle((repo.path / path).read_text(encoding="utf-8"))}


def _undeclared_one_line(repo: Repo) -> dict[str, str]:
    text = (repo.path / COMPOSER_JSON).read_text(encoding="utf-8")
    return {COMPOSER_JSON: text.replace(', "ol:gcp:composer:GcpComposerRunFacet.json"', "")}


def _undeclared_per_line(repo: Repo) -> dict[str, str]:
    text = (repo.path / CORE_JSON).read_text(encoding="utf-8")
    broken = re.sub(r',\n\s*"ol:core:SymlinksDatasetFacet.json"', "", text)
    assert broken != text
    return {CORE_JSON: broken}


BREAKS: dict[str, tuple[str, Callable[[Repo], dict[str, str]]]] = {
    "legacy-key": ("entry/legacy-key", _legacy_key),
    "layout": ("format/json", _layout),
    "undeclared-one-line": ("uris/undeclared", _undeclared_one_line),
    "undeclared-per-line": ("uris/undeclared", _undeclared_per_line),
}


def tree(path: Path) -> dict[str, bytes]:
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in path.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(path).parts
    }


def check_json(repo: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capsys.readouterr()
    main(["check", str(repo), "--format", "json", *args])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", list(BREAKS))
def test_a_fix_restores_exactly_what_was_broken_and_nothing_else(
    case: str, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule, breaks = BREAKS[case]
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    original = tree(repo.path)
    repo.change(breaks(repo))
    found = [
        f
        for f in check_json(repo.path, capsys, "--base", "main")["findings"]  # type: ignore[union-attr]
        # core has pre-existing undeclared facets
        if f["rule"] == rule and f["state"] == "new"
    ]
    assert len(found) == 1 and "fix" in found[0]

    assert main(["fix", str(repo.path), "--base", "main", "--rule", rule, "--check"]) == 1
    diff = capsys.readouterr().out
    # the diff alone writes nothing
    assert diff.startswith("--- a/") and tree(repo.path) != original
    assert main(["fix", str(repo.path), "--base", "main", "--rule", rule, "--write"]) == 0
    # byte for byte: the broken lines restored, every other file untouched
    assert tree(repo.path) == original
    repo.commit("fixed")
    after = check_json(repo.path, capsys, "--base", "main")
    assert [f for f in after["findings"] if f["rule"] == rule and f["state"] == "new"] == []  # type: ignore[union-attr]


def test_a_version_bump_fix_sets_the_version_the_change_needs(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = f"{DATAPROC}/facets/GcpDataprocRunFacet.json"
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    text = (repo.path / path).read_text(encoding="utf-8")
    indent = re.search(r'\n( *)"properties": \{', text)
    assert indent is not None
    changed = text.replace(
        '"properties": {', f'"properties": {{\n{indent[1]}  "zone": {{ "type": "string" }},', 1
    )
    assert changed != text
    repo.change({path: changed})
    [finding] = [
        f
        for f in check_json(repo.path, capsys, "--base", "main")["findings"]  # type: ignore[union-attr]
        if f["rule"].startswith("versions/")
    ]
    assert finding["rule"] == "versions/not-bumped"
    before = tree(repo.path)
    assert main(["fix", str(repo.path), "--base", "main", "--write"]) == 0
    after = tree(repo.path)
    assert {p for p in after if after[p] != before.get(p)} == {path}
    wanted = re.search(r"Bump to (\d+-\d+-\d+)", finding["hint"])
    assert wanted is not None
    assert after[path].decode() == changed.replace("/facets/1-0-0/", f"/facets/{wanted[1]}/", 1)
    repo.commit("bumped")
    rules = {f["rule"] for f in check_json(repo.path, capsys, "--base", "main")["findings"]}  # type: ignore[union-attr]
    assert not any(r.startswith("versions/") for r in rules)


def test_a_new_entry_gets_a_codeowners_naming_its_author(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.change(
        {
            "spec/registry/acme/registry.json": json.dumps(
                {"producer": {"root_doc_URL": "https://acme.example.com/lineage"}}, indent=2
            )
            + "\n"
        }
    )
    args = ("--base", "main", "--author", "alice")
    found = {f["rule"] for f in check_json(repo.path, capsys, *args)["findings"]}  # type: ignore[union-attr]
    assert "owners/missing-codeowners" in found
    assert main(["fix", str(repo.path), *args, "--write"]) == 0
    assert (repo.path / "spec/registry/acme/CODEOWNERS").read_text() == (
        "# Owners of the acme registry entry.\n* @alice\n"
    )
    repo.commit("owners")
    found = {f["rule"] for f in check_json(repo.path, capsys, *args)["findings"]}  # type: ignore[union-attr]
    assert "owners/missing-codeowners" not in found


# -- the command's guards -----------------------------------------------------------------------
def test_fix_refuses_a_dirty_file_unless_told_and_never_leaves_the_repository(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    repo.change(_legacy_key(repo))
    (repo.path / COMPOSER_JSON).write_text(
        (repo.path / COMPOSER_JSON).read_text() + " ", encoding="utf-8"
    )
    dirty = tree(repo.path)
    capsys.readouterr()
    assert main(["fix", str(repo.path), "--write"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0
        and "uncommitted changes in spec/registry/gcp/composer/registry.json" in err
    )
    assert tree(repo.path) == dirty
    assert main(["fix", str(repo.path), "/etc"]) == 2
    assert "is not inside" in capsys.readouterr().err
    # out of scope: nothing
    assert main(["fix", str(repo.path), "spec/registry/gcp/dataproc", "--write"]) == 0
    assert tree(repo.path) == dirty
    assert (
        main(["fix", str(repo.path), "spec/registry/gcp/composer", "--write", "--allow-dirty"]) == 0
    )
    fixed = (repo.path / COMPOSER_JSON).read_text()
    # the legacy key and the trailing blank
    assert '"root_doc_URL"' in fixed and fixed.endswith("}\n")


def test_fixes_only_inside_the_registry_paths(
    corpus_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON file the configuration does not name as a registry path is never edited."""
    (corpus_copy / ".github").mkdir()
    (corpus_copy / ".github" / "registry-bot.yml").write_text("paths: {registry: spec/registry}\n")
    outside = corpus_copy / "client" / "x.json"
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text('{"a" :1}')
    before = tree(corpus_copy)
    assert main(["fix", str(corpus_copy), "--write", "--allow-dirty"]) == 0  # not a git repository
    after = tree(corpus_copy)
    changed = {p for p in after if after[p] != before[p]}
    # the legacy key and the undeclared core facets, and the core examples' wrong _schemaURLs;
    # nothing else
    assert CORE_JSON in changed and {p for p in changed if p != CORE_JSON} == {
        p for p in changed if p.startswith("spec/tests/") and b"_schemaURL" in before[p]
    }
    assert after["client/x.json"] == before["client/x.json"]
