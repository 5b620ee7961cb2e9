"""jsonschema's format libraries that the bot imports when first needed: the same verdicts as
jsonschema's own checks, and no import where no value of their format is checked."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.deferred_format_libraries import CHECKS, DEFERRED

ROOT = Path(__file__).parent.parent

SAMPLES: dict[str, list[object]] = {
    "duration": [
        "P1D", "PT1H", "P1Y2M3DT4H5M6S", "P1W", "P0D", "PT36H", "P1M", "PT0.5S", "P1.5D",
        "P", "PT", "1D", "P1H", "PT1D", "p1d", "P1DT", "P-1D", "", "PT1H ", "PT1H1", "P1",
        "P0001-02-03T04:05:06", 5, None,
    ],
    "uri": [
        "http://example.com", "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/Run",
        "urn:isbn:0451450523", "mailto:a@b.c", "http://user@host:80/p?q=1#f", "http://[::1]/x",
        "s3://bucket/key", "a:", "//host/path", "/relative", "#frag", "http://a b", "",
        "http://ex.com/%zz", "1http://x", "http://ex.com/ü", 7, ["http://x"],
    ],
}  # fmt: skip
SAMPLES["uri-reference"] = SAMPLES["uri"]

# the verdict of each sample, and the deferred libraries loaded before the first check
VERDICTS = """
import json, sys
{setup}
loaded = sorted(m for m in {libraries!r} if m in sys.modules)
verdicts = {{f: [checker.conforms(v, f) for v in vs] for f, vs in {samples!r}.items()}}
print(json.dumps([verdicts, loaded]))
"""


def verdicts(setup: str) -> tuple[dict[str, list[bool]], list[str]]:
    code = VERDICTS.format(setup=setup, libraries=sorted(DEFERRED), samples=SAMPLES)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    found, loaded = json.loads(out.stdout)
    return found, loaded


@pytest.mark.no_cover
def test_the_deferred_checks_give_jsonschemas_own_verdicts() -> None:
    assert set(CHECKS) == set(SAMPLES)
    # jsonschema alone, every library imported as it loads
    plain, plain_loaded = verdicts(
        "from jsonschema import Draft202012Validator\nchecker = Draft202012Validator.FORMAT_CHECKER"
    )
    deferred, deferred_loaded = verdicts(
        "import bot\nfrom bot.model.schemas_python import FORMAT_CHECKER as checker"
    )
    assert plain_loaded == sorted(DEFERRED) and deferred_loaded == []
    assert deferred == plain
    # jsonschema's own checker, in a process that loaded the bot first: what any other user of
    # jsonschema there gets (found by CI: a test's oracle had lost its ``uri`` check)
    theirs, theirs_loaded = verdicts(
        "import bot\nfrom jsonschema import Draft202012Validator\n"
        "checker = Draft202012Validator.FORMAT_CHECKER"
    )
    assert theirs == plain and theirs_loaded == []
    # the samples tell the checks apart: each format has values that pass and values that fail
    assert all(True in found and False in found for found in plain.values()), plain


def test_only_jsonschema_is_refused_the_libraries() -> None:
    code = (
        "import bot, sys, jsonschema\n"
        "assert 'isoduration' not in sys.modules\n"
        "import isoduration, rfc3986_validator\n"
        "print(isoduration.parse_duration('P1D'), rfc3986_validator.validate_rfc3986('a:'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == ["P1D", "<re.Match", "object;", "span=(0,", "2),", "match='a:'>"]


@pytest.mark.parametrize(("unworded", "imported"), [(False, []), (True, ["jsonschema"])])
def test_explaining_a_failing_example_imports_no_library_of_a_format_it_does_not_check(
    tmp_path: Path, unworded: bool, imported: list[str]
) -> None:
    """An example that fails (a required field missing) is explained by jsonschema-rs, in
    python-jsonschema's words, without importing the pure-Python stack. What jsonschema-rs cannot
    word (``dependentRequired``) the pure-Python validator explains, and its import no longer
    brings isoduration, arrow or rfc3986_validator with it."""
    registry = shutil.copytree(ROOT / "registry" / "reference", tmp_path / "r")
    examples = sorted(registry.glob("spec/registry/*/facets/examples/*/*.json"))
    example = examples[0]
    value = json.loads(example.read_text(encoding="utf-8"))
    facet = next(iter(value.values()))
    required = _required(registry, example)
    del facet[required]
    if unworded:
        schema_file = example.parent.parent.parent / f"{example.parent.name}.json"
        schema = json.loads(schema_file.read_text(encoding="utf-8"))
        for definition in schema["$defs"].values():
            definition["dependentRequired"] = {"notDeclaredAnywhere": ["alsoMissing"]}
        schema_file.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
        facet["notDeclaredAnywhere"] = 1
    example.write_text(json.dumps(value), encoding="utf-8")
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['registry-bot', 'check', {str(registry)!r}, '--all', '--format', 'json']\n"
        "try:\n    runpy.run_module('bot', run_name='__main__')\n"
        "except SystemExit as exit:\n    code = exit.code\n"
        "loaded = sorted(m for m in ('isoduration', 'arrow', 'rfc3986_validator', 'jsonschema') "
        "if m in sys.modules)\n"
        "print(code, loaded, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    report = json.loads(done.stdout)
    invalid = [f for f in report["findings"] if f["rule"] == "examples/invalid"]
    assert any(f"{required!r} is a required property" in f["message"] for f in invalid), invalid
    if unworded:
        dependency = "'alsoMissing' is a dependency of 'notDeclaredAnywhere'"
        assert any(dependency in f["message"] for f in invalid), invalid
    assert done.stderr.strip().splitlines()[-1] == f"1 {imported}", done.stderr


def _required(registry: Path, example: Path) -> str:
    """A field the example's facet requires (from its schema: ``<entry>/facets/<Facet>.json``)."""
    schema = json.loads(
        (example.parent.parent.parent / f"{example.parent.name}.json").read_text(encoding="utf-8")
    )
    for definition in schema.get("$defs", {}).values():
        for part in definition.get("allOf", [definition]):
            if part.get("required"):
                return str(part["required"][0])
    raise AssertionError(f"no required field in the schema of {example}")


def test_the_archive_shipped_to_spark_workers_carries_the_deferred_libraries() -> None:
    """Found by CI: the archive ships the distributions of what importing the worker's modules
    loads; once jsonschema stopped importing these, a worker with only PySpark could not check a
    ``uri`` outside the plain grammar (every cluster test failed in its Python worker)."""
    from importlib import metadata

    from bot.review.regression.ship import distributions

    shipped = {dist.metadata["Name"].lower().replace("_", "-") for dist in distributions()}
    owners = metadata.packages_distributions()
    wanted = {d.lower().replace("_", "-") for library in DEFERRED for d in owners[library]}
    assert wanted and wanted <= shipped, wanted - shipped


# every format each draft's checker (and the class-wide default) checks, and what it catches: each
# exception class with its bases
CHECKERS = """
import json
{setup}
import jsonschema
from jsonschema import _format
def described(checker):
    return {{
        f: [[c.__name__ for c in e.__mro__] for e in (r if isinstance(r, tuple) else (r,))]
        for f, (_, r) in checker.checkers.items()
    }}
drafts = {{d: described(c) for d, c in _format._draft_checkers.items()}}
print(json.dumps([drafts, described(jsonschema.FormatChecker())]))
"""


def test_every_draft_checker_is_the_one_jsonschema_builds_itself() -> None:
    """The same formats on every draft's checker and the class-wide default, each catching what
    jsonschema's own catches (a deferred check cannot name an exception class of a library not
    yet imported: it catches a base of it)."""

    def checkers(setup: str) -> list[dict[str, dict[str, list[list[str]]]]]:
        out = subprocess.run(
            [sys.executable, "-c", CHECKERS.format(setup=setup)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        drafts, default = json.loads(out.stdout)
        return [*drafts.values(), default]

    # the bot never imports rfc3987_syntax (bot/__init__.py): jsonschema without it, plainly
    plain = checkers("import sys\nsys.modules['rfc3987_syntax'] = None")
    deferred = set(CHECKS)
    for theirs, ours in zip(plain, checkers("import bot"), strict=True):
        assert set(ours) == set(theirs)
        for name, caught in theirs.items():
            if name in deferred:
                assert all(any(c[0] in t for c in ours[name]) for t in caught), (name, ours)
            else:
                assert ours[name] == caught, name
    assert deferred <= set(plain[-1])
