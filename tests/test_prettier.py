"""format/json is prettier's layout, byte for byte, whatever the input's layout: the real prettier
3.5.2 (npm, ``make node-deps``) with OpenLineage's print width, run once over every JSON file of the
corpus's spec/ folder rewritten in several layouts, against ``format_json`` on the same inputs. The
rule reports exactly the files prettier would change."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.core.findings import Severity
from bot.core.jsonformat import PRINT_WIDTH, format_json
from bot.review.checks.format import format_finding
from bot.review.fixes import apply_edits
from tests.conftest import ROOT

PRETTIER = ROOT / "tests" / "node" / "node_modules" / ".bin" / "prettier"
VERSION = "3.5.2"


def _dumps(indent: int | None, ascii_only: bool = False) -> Callable[[str], str]:
    separators = (",", ":") if indent is None else None
    return lambda text: json.dumps(
        json.loads(text), indent=indent, separators=separators, ensure_ascii=ascii_only
    )


LAYOUTS: dict[str, Callable[[str], str]] = {
    "as-written": lambda text: text,
    "minified": _dumps(None),
    "four-spaces": lambda text: _dumps(4, ascii_only=True)(text) + "\n",
    "json-dumps-indent-2": _dumps(2),
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "trailing-spaces": lambda text: "\n".join(line + "  \t" for line in text.split("\n")),
    "blank-lines": lambda text: text.replace(",\n", ",\n\n\n"),
}


@pytest.fixture(scope="module")
def prettier_outputs(
    corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[str, str]]:
    """name -> (input, prettier's output) for every corpus spec/ JSON file in every layout."""
    if not PRETTIER.exists():
        pytest.fail(
            f"prettier is not installed at {PRETTIER}: run `make node-deps` (`make test` does)"
        )
    version = subprocess.run(
        [str(PRETTIER), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert version == VERSION, f"tests/node/package.json pins prettier {VERSION}, found {version}"
    folder = tmp_path_factory.mktemp("prettier")
    inputs: dict[str, str] = {}
    for i, path in enumerate(sorted((corpus / "spec").rglob("*.json"))):
        text = path.read_text(encoding="utf-8")
        for layout, make in LAYOUTS.items():
            inputs[f"{i:03d}-{layout}-{path.name}"] = make(text)
    source, out = folder / "in", folder / "out"
    source.mkdir()
    for name, text in inputs.items():
        (source / name).write_bytes(text.encode("utf-8"))
    shutil.copytree(source, out)
    subprocess.run(
        [str(PRETTIER), f"--print-width={PRINT_WIDTH}", "--no-config", "--write", str(out)],
        capture_output=True,
        check=True,
        timeout=300,
    )
    return {
        name: (text, (out / name).read_bytes().decode("utf-8")) for name, text in inputs.items()
    }


def test_prettier_and_format_json_agree_on_every_layout(
    prettier_outputs: dict[str, tuple[str, str]],
) -> None:
    assert len(prettier_outputs) > 90 * len(LAYOUTS)
    differ = [
        name for name, (text, prettier) in prettier_outputs.items() if format_json(text) != prettier
    ]
    assert differ == []
    changed = {
        layout
        for layout in LAYOUTS
        for name, (text, prettier) in prettier_outputs.items()
        if name[4:].startswith(f"{layout}-") and text != prettier
    }
    # every careless layout is one prettier rewrites
    assert changed >= set(LAYOUTS) - {"as-written"}


def test_the_rule_reports_exactly_what_prettier_changes_and_its_fix_is_prettiers_output(
    prettier_outputs: dict[str, tuple[str, str]],
) -> None:
    for name, (text, prettier) in prettier_outputs.items():
        finding = format_finding(name, text, 2, Severity.WARNING, None)
        if text == prettier:
            assert finding is None, name
        else:
            assert finding is not None and finding.fix is not None, name
            assert apply_edits(text, finding.fix.edits) == prettier, name
