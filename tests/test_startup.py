"""Start-up work stays off the path: no Lark grammars at import, yet every format the schemas use is
checked; and the project ships only files it wrote (none identical to a file of the OpenLineage
corpus)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.model.schemas import FORMAT_CHECKER

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("uri", "https://openlineage.io/spec/facets/1-0-0/X.json", "not a uri"),
        ("uri-reference", "../x.json#/a", "\\\\bad"),
        ("uuid", "1f0e0000-0000-7000-8000-000000000000", "1f0e0000"),
        ("date-time", "2026-01-01T03:00:00Z", "2026-01-01 nonsense"),
    ],
)
def test_the_formats_real_schemas_use_are_checked(fmt: str, good: str, bad: str) -> None:
    assert FORMAT_CHECKER.conforms(good, fmt)
    assert not FORMAT_CHECKER.conforms(bad, fmt)


def test_no_command_imports_rfc3987_syntax_and_help_imports_no_jsonschema() -> None:
    probe = (
        "import sys; import bot.cli as c; c.build_parser().format_help(); "
        "print('jsonschema' in sys.modules, 'pyspark' in sys.modules); "
        "import bot.model.schemas; print(type(sys.modules.get('rfc3987_syntax')).__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=60,
    ).stdout.split()
    assert out == ["False", "False", "NoneType"]


def _digests(files: list[Path]) -> dict[str, Path]:
    return {
        hashlib.sha256(p.read_bytes()).hexdigest(): p
        for p in files
        if p.is_file() and p.stat().st_size
    }


def test_no_file_of_the_project_is_a_copy_of_a_corpus_file(corpus: Path) -> None:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
    )
    ours = (
        [ROOT / name for name in listed.stdout.decode().split("\0") if name]
        if listed.returncode == 0
        else [p for p in ROOT.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts]
    )
    theirs = _digests([p for p in corpus.parent.rglob("*") if ".git" not in p.parts])
    copies = sorted(
        str(p.relative_to(ROOT)) for digest, p in _digests(ours).items() if digest in theirs
    )
    assert copies == []
    assert (ROOT / "registry/reference/spec/OpenLineage.json").is_file()


def test_a_clean_registry_is_checked_without_the_pure_python_jsonschema_stack(corpus: Path) -> None:
    """jsonschema-rs decides what passes; the pure-Python stack and its format checkers only explain
    failures."""
    probe = (
        "import sys; from bot.cli import main; code = main(['check', sys.argv[1], '--all']); "
        "print(code, 'jsonschema' in sys.modules, 'bot.model.schemas_python' in sys.modules, "
        "file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(corpus)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )
    assert done.stderr.split()[-3:] == ["0", "False", "False"], done.stderr[-2000:]


@pytest.mark.parametrize(("output", "site"), [("json", False), ("text", True)])
def test_a_change_checked_for_a_machine_imports_no_site_model(
    tmp_path: Path, corpus: Path, output: str, site: bool
) -> None:
    """The "Published site" preview is for the formats a person reads: ``--format json`` (the
    benchmarks, scripts) neither runs it nor imports it."""
    from tests.gitrepo import Repo

    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    example = "spec/tests/DocumentationJobFacet/1.json"
    text = (repo.path / example).read_text(encoding="utf-8")
    repo.change({example: text.replace('"description": "', '"description": "Edited. ', 1)})
    probe = (
        "import sys; from bot.cli import main; "
        "code = main(['check', sys.argv[1], '--base', 'main', '--head', 'pr', '--format', "
        "sys.argv[2], '--output', sys.argv[3]]); "
        "print(code, 'bot.outputs.site.model' in sys.modules, file=sys.stderr)"
    )
    report = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-c", probe, str(repo.path), output, str(report)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )
    assert done.stderr.split()[-2:] == ["0", str(site)], done.stderr[-2000:]
    assert report.read_text().strip()


def test_the_shipped_naming_rules_load_on_jsonschema_rs_and_a_broken_file_is_still_explained(
    tmp_path: Path,
) -> None:
    """The bundled naming files pass their shipped base schema on jsonschema-rs (no pure-Python
    import); a file that breaks it still gets the pure-Python errors with their pointers."""
    probe = (
        "import sys; from bot.model.naming import load_rules; rules = load_rules(); "
        "print(len(rules.problems), 'jsonschema' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.stdout.split() == ["0", "False"], done.stderr[-2000:]
    from bot import bundled
    from bot.model.naming.loader import BASE_FILE, schema_problems

    base = json.loads(bundled.path("naming", BASE_FILE).read_text(encoding="utf-8"))
    problems = schema_problems(base, "naming/datasets/x.json", {"kind": "dataset", "unexpected": 1})
    assert problems and all(p.rule == "naming/schema" for p in problems)


def test_the_console_script_imports_nothing_of_the_bot_before_it_handles_ctrl_c() -> None:
    """``registry-bot`` runs ``from bot.entry import main`` before any handler is in place: a SIGINT
    during that import prints Python's traceback, so the import must be as short as the package
    allows: the package and its two finders, the one that keeps a Ctrl-C from crashing a native
    module's initialisation and the one that defers jsonschema's format libraries (standard modules
    only)."""
    script = (
        "import sys, bot.entry; print(sorted(m for m in sys.modules if m.split('.')[0] == 'bot'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.replace("'", '"')) == [
        "bot",
        "bot.core",
        "bot.core.deferred_format_libraries",
        "bot.core.uninterrupted_imports",
        "bot.entry",
    ]
