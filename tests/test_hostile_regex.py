"""Every regular expression from a pull request runs bounded: no schema can freeze a review or its
process.

The poison of the issue: ``patternProperties`` ``^(a+)+$`` with ``additionalProperties: false`` and
a key of 40 ``a`` and a ``!`` (jsonschema's own ``additionalProperties`` ran ``re.search`` on it,
holding the GIL for good). Reviews that could hang run in a child process with a timeout, so a
regression fails instead of freezing the test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft202012Validator

from bot.core.config import Config
from bot.core.snapshot import DirSnapshot
from bot.model.schemas import (
    FORMAT_CHECKER,
    MAX_PATTERN_CHARS,
    HardenedValidator,
    PatternTimeout,
    SchemaStore,
    ValidationTimeout,
    deadline,
)
from bot.review.checks.examples import EXAMPLE_BUDGET_SECONDS, Budget, Stopped, Validators, _errors
from bot.review.regression.side import SideSpec
from bot.review.regression.side import Validators as SideValidators
from tests import registry_cases as rc
from tests.conftest import ROOT

POISON = "^(a+)+$"
POISON_KEY = "a" * 40 + "!"
# catastrophic on `regex` too, and with a lookahead the linear-time engine of jsonschema-rs refuses:
# the bounded pure-Python validator decides, and must stop it by the time limit (a pattern the
# linear engine takes is decided and worded by jsonschema-rs, tests/test_hostile.py)
SLOW = "^(?=a)(a|aa)+$"
SLOW_KEY = "a" * 60 + "!"


def settings_schema(settings: dict[str, Any]) -> dict[str, Any]:
    schema = json.loads(json.dumps(rc.FACET_SCHEMA))
    schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]["properties"]["settings"] = settings
    return schema


def example_with(settings: Any) -> dict[str, Any]:
    example = json.loads(json.dumps(rc.EXAMPLE_JSON))
    example["acme_widget"]["settings"] = settings
    return example


def write_case(tree: Path, schema: dict[str, Any], example: dict[str, Any]) -> Path:
    for path, content in rc.good_files().items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    for path, value in ((rc.FACET, schema), (rc.MIRROR, schema), (rc.EXAMPLE, example)):
        # prettier's layout
        (tree / path).write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return tree


CHILD = """
import json, sys, threading, time
from bot.review.engine import ReviewContext, review
from bot.core.snapshot import DirSnapshot

gaps, done = [], threading.Event()

# another thread of the process: it must keep running while the review works. Its gaps are counted
# in the process's CPU time, the work done while it could not run (the GIL held): a loaded machine
# that runs none of the process for a while adds nothing (in wall time a CI run at load 8 saw 2.4 s)
def tick():
    last = time.process_time()
    while not done.is_set():
        time.sleep(0.01)
        now = time.process_time()
        gaps.append(now - last)
        last = now

ticker = threading.Thread(target=tick)
ticker.start()
start = time.monotonic()
report = review(head=DirSnapshot(sys.argv[1]), context=ReviewContext(strict=True))
took = time.monotonic() - start
done.set()
ticker.join()
print(json.dumps({"seconds": took, "max_gap": max(gaps), "findings": [
    {"rule": f.rule, "path": f.path, "message": f.message} for f in report.findings]}))
"""


def review_in_child(tree: Path, timeout: float = 240) -> dict[str, Any]:
    """Review ``tree`` in a fresh process; a frozen review fails the test after ``timeout``
    seconds."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_the_poison_example_concludes_and_the_process_keeps_running(corpus_copy: Path) -> None:
    schema = settings_schema(
        {"type": "object", "patternProperties": {POISON: {}}, "additionalProperties": False}
    )
    tree = write_case(corpus_copy, schema, example_with({POISON_KEY: 1}))
    result = review_in_child(tree)
    found = [f for f in result["findings"] if f["path"] == rc.EXAMPLE]
    assert [f["rule"] for f in found] == ["examples/invalid"]
    assert "does not match any of the regexes" in found[0]["message"]
    assert result["seconds"] < 30, result["seconds"]  # a few hundred ms on an idle machine
    assert result["max_gap"] < 2.0, result["max_gap"]  # the GIL was never held for long


def test_a_pattern_catastrophic_for_regex_too_is_stopped_and_named(corpus_copy: Path) -> None:
    settings = {"type": "object", "patternProperties": {SLOW: {}}, "additionalProperties": False}
    # 200 keys: the budget, not 200 timeouts
    example = example_with({SLOW_KEY + str(i): 1 for i in range(200)})
    tree = write_case(corpus_copy, settings_schema(settings), example)
    result = review_in_child(tree)
    found = [f for f in result["findings"] if f["path"] == rc.EXAMPLE]
    assert [f["rule"] for f in found] == ["examples/timeout"]
    assert SLOW in found[0]["message"] and "did not finish" in found[0]["message"]
    assert result["seconds"] < 10 * EXAMPLE_BUDGET_SECONDS, result["seconds"]
    assert result["max_gap"] < 2.0, result["max_gap"]


# -- each keyword that takes a regex, on the bounded engine ----------------------------------------

KEYWORD_CASES = {
    "pattern": ({"type": "string", "pattern": SLOW}, SLOW_KEY),
    "patternProperties": ({"patternProperties": {SLOW: {"type": "string"}}}, {SLOW_KEY: 1}),
    "additionalProperties": (
        {"patternProperties": {SLOW: {}}, "additionalProperties": False},
        {SLOW_KEY: 1},
    ),
    "unevaluatedProperties": (
        {"patternProperties": {SLOW: {}}, "unevaluatedProperties": False},
        {SLOW_KEY: 1},
    ),
    "propertyNames": ({"propertyNames": {"pattern": SLOW}}, {SLOW_KEY: 1}),
    "nested unevaluatedProperties": (
        {"allOf": [{"patternProperties": {SLOW: {}}}], "unevaluatedProperties": False},
        {SLOW_KEY: 1},
    ),
}


@pytest.mark.parametrize("case", sorted(KEYWORD_CASES))
def test_every_regex_keyword_is_stopped_within_its_budget(case: str) -> None:
    schema, instance = KEYWORD_CASES[case]
    start = time.monotonic()
    with pytest.raises(PatternTimeout) as caught, deadline(EXAMPLE_BUDGET_SECONDS):
        list(HardenedValidator(schema).iter_errors(instance))
    assert time.monotonic() - start < 3 * EXAMPLE_BUDGET_SECONDS
    assert caught.value.pattern == SLOW


@pytest.fixture
def tripwire(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """jsonschema's own ``re`` calls, recorded and refused: the hardened validator must never reach
    them."""
    import re

    calls: list[str] = []

    def refuse(name: str) -> Any:
        def call(pattern: Any, *_: Any, **__: Any) -> Any:
            calls.append(f"{name}({pattern!r})")
            raise AssertionError(f"jsonschema called re.{name} on {pattern!r}")

        return call

    shim = SimpleNamespace(**{n: getattr(re, n) for n in dir(re) if not n.startswith("__")})
    for name in ("search", "match", "fullmatch", "compile", "finditer", "findall", "sub"):
        setattr(shim, name, refuse(name))
    for module in ("_keywords", "_utils", "_legacy_keywords", "_format"):
        monkeypatch.setattr(getattr(jsonschema, module), "re", shim)
    yield calls


AGREEMENT = [
    (
        {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
        {"xa": 1, "y": 2},
    ),
    (
        {
            "patternProperties": {"^x": {"type": "integer"}},
            "additionalProperties": {"type": "string"},
        },
        {"xa": 1, "y": 2},
    ),
    ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2, "c": 3}),
    ({"patternProperties": {"^x": {}}, "unevaluatedProperties": False}, {"xa": 1, "y": 2}),
    (
        {"allOf": [{"patternProperties": {"^x": {}}}], "unevaluatedProperties": {"type": "string"}},
        {"xa": 1, "y": 2, "z": "ok"},
    ),
    (
        {
            "$defs": {"d": {"patternProperties": {"^x": {}}}},
            "$ref": "#/$defs/d",
            "unevaluatedProperties": False,
        },
        {"xa": 1, "y": 2},
    ),
    (
        {
            "if": {"required": ["k"]},
            "then": {"patternProperties": {"^x": {}}},
            "else": {"properties": {"y": {}}},
            "dependentSchemas": {"k": {"properties": {"k": {}}}},
            "unevaluatedProperties": False,
        },
        {"k": 1, "xa": 1, "y": 2},
    ),
    (
        {
            "anyOf": [{"patternProperties": {"^x": {}}}, {"properties": {"y": {}}}],
            "unevaluatedProperties": False,
        },
        {"xa": 1, "y": 2, "w": 0},
    ),
    (
        {"propertyNames": {"pattern": "^[a-z]+$"}, "properties": {"s": {"pattern": "^a"}}},
        {"ok": 1, "NO": 2, "s": "b"},
    ),
    ({"type": "string", "format": "regex"}, "^(a|b)$"),
    ({"type": "string", "format": "regex"}, "(unclosed"),
]


@pytest.mark.parametrize(("schema", "instance"), AGREEMENT)
def test_hardened_keywords_agree_with_jsonschema_and_never_call_re(
    schema: dict[str, Any], instance: Any, tripwire: list[str]
) -> None:
    hardened = sorted(
        e.message
        for e in HardenedValidator(schema, format_checker=FORMAT_CHECKER).iter_errors(instance)
    )
    assert tripwire == []
    import re

    for module in ("_keywords", "_utils", "_legacy_keywords", "_format"):
        getattr(jsonschema, module).re = re
    plain = sorted(
        e.message
        for e in Draft202012Validator(
            schema, format_checker=Draft202012Validator.FORMAT_CHECKER
        ).iter_errors(instance)
    )
    assert hardened == plain


def test_the_regex_format_is_compiled_with_a_length_limit() -> None:
    slow_for_re = "[\u0100-\uffff]" * 2000  # re.compile: seconds, holding the GIL
    start = time.monotonic()
    errors = list(
        HardenedValidator({"format": "regex"}, format_checker=FORMAT_CHECKER).iter_errors(
            slow_for_re
        )
    )
    assert time.monotonic() - start < 1
    assert errors and f"{MAX_PATTERN_CHARS}-character limit" in str(errors[0].cause)


def test_a_pattern_over_the_length_limit_is_not_compiled() -> None:
    pattern = "(a|b)" * 20_000
    start = time.monotonic()
    errors = list(HardenedValidator({"pattern": pattern}).iter_errors("ab"))
    assert time.monotonic() - start < 1
    assert "over the 4096-character limit" in errors[0].message


def test_keywords_check_the_deadline_so_no_schema_outlives_it() -> None:
    """A combinatorial schema with no regex at all: 2^40 anyOf branches, stopped by the deadline."""
    defs = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(40)
    }
    defs["d40"] = {"type": "string"}
    start = time.monotonic()
    with pytest.raises(ValidationTimeout), deadline(0.5):
        list(HardenedValidator({"$defs": defs, "$ref": "#/$defs/d0"}).iter_errors(1))
    assert time.monotonic() - start < 3


def test_a_review_spends_a_bounded_time_on_all_its_slow_examples() -> None:
    explain = HardenedValidator({"patternProperties": {SLOW: {}}})
    validators = Validators(None, explain, Budget(1.0))
    schema = SimpleNamespace(filename="Slow.json")
    outcomes = [_errors(validators, {SLOW_KEY: 1}, schema) for _ in range(20)]  # type: ignore[arg-type]
    assert all(isinstance(o, Stopped) and o.rule == "examples/timeout" for o in outcomes)
    assert "already spent" in outcomes[-1].message  # type: ignore[union-attr]
    assert validators.budget.left <= 0


# -- jsonschema-rs never backtracks on a pull request's pattern ------------------------------------


def test_the_fast_validator_uses_the_linear_engine_and_falls_back_for_lookaround(
    corpus: Path,
) -> None:
    store = SchemaStore(DirSnapshot(corpus), Config())
    poison = settings_schema(
        {"type": "object", "patternProperties": {POISON: {}}, "additionalProperties": False}
    )
    fast = store.fast_validator(poison)
    assert fast is not None
    start = time.monotonic()
    assert not fast.is_valid(example_with({POISON_KEY * 1000: 1}))
    assert time.monotonic() - start < 1
    lookaround = settings_schema({"type": "string", "pattern": "^(?=(a|aa)+b)"})
    # the bounded pure-Python validator decides instead
    assert store.fast_validator(lookaround) is None


def test_the_regression_compiles_lookaround_with_a_backtrack_limit(corpus_copy: Path) -> None:
    schema = settings_schema(
        {"type": "object", "patternProperties": {r"^(a|aa)+\1b": {}}, "additionalProperties": False}
    )
    tree = write_case(corpus_copy, schema, example_with({}))
    validators = SideValidators(SideSpec.build(DirSnapshot(tree), Config(), "head"), {})
    compiled = validators.compiled(rc.SCHEMA_URL, "/$defs/AcmeWidgetRunFacet")
    assert compiled is not None
    start = time.monotonic()
    facet = example_with({SLOW_KEY: 1})["acme_widget"]
    assert not compiled.rs.is_valid(facet)
    assert time.monotonic() - start < 1


# -- naming patterns -------------------------------------------------------------------------------

NAMING_CHILD = """
import json, sys, time
from bot.model.naming import load_rules
from bot.core.snapshot import DirSnapshot

rules = load_rules(DirSnapshot(sys.argv[1]), "spec/naming")  # a repository's rules, as the regression loads them
start = time.monotonic()
result = rules.parse_dataset(sys.argv[2], sys.argv[3])
print(json.dumps({"seconds": time.monotonic() - start, "ok": result.ok, "reason": result.reason}))
"""  # noqa: E501


def naming_tree(tree: Path) -> tuple[Path, str, str]:
    """The bundled naming files with one component pattern that passes ``check_pattern`` yet
    backtracks."""
    import shutil

    from bot.model.naming import bundled_folder

    shutil.copytree(bundled_folder(), tree / "spec/naming")
    path = tree / "spec/naming/datasets/abfss/abfss.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["components"]["path"]["pattern"] = "/(a|aa)+"
    namespace = doc["examples"]["valid"][0]["namespace"]
    name = "/" + "a" * 60 + "!"
    doc["examples"]["valid"][0]["name"] = name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return tree, namespace, name


def test_a_naming_pattern_catastrophic_for_regex_is_stopped_in_the_check(tmp_path: Path) -> None:
    tree, _, name = naming_tree(tmp_path)
    result = review_in_child(tree)
    [found] = [
        f for f in result["findings"] if f["rule"] == "naming/round-trip" and name in f["message"]
    ]
    assert "took too long" in found["message"]
    assert result["seconds"] < 30 and result["max_gap"] < 2.0


def test_a_repositorys_naming_rules_parse_bounded(tmp_path: Path) -> None:
    tree, namespace, name = naming_tree(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", NAMING_CHILD, str(tree), namespace, name],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert not result["ok"] and "took too long" in result["reason"]
    assert result["seconds"] < 5


# -- no regex at all: exponential work in jsonschema-rs --------------------------------------------


def test_a_schema_exponential_for_jsonschema_rs_goes_to_the_bounded_validator(
    corpus_copy: Path,
) -> None:
    """2^40 anyOf branches through shared $refs: jsonschema-rs would hold the GIL for hours; the
    work bound sends the example to the pure-Python validator, which the deadline stops."""
    schema = settings_schema({"$ref": "#/$defs/d0"})
    schema["$defs"].update(
        {
            f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
            for i in range(40)
        }
    )
    schema["$defs"]["d40"] = {"type": "string"}
    tree = write_case(corpus_copy, schema, example_with(1))
    result = review_in_child(tree)
    found = [f for f in result["findings"] if f["path"] == rc.EXAMPLE]
    assert [f["rule"] for f in found] == ["examples/timeout"]
    assert result["seconds"] < 10 * EXAMPLE_BUDGET_SECONDS, result["seconds"]
    assert result["max_gap"] < 2.0, result["max_gap"]


def test_the_work_bound_keeps_the_fast_path_for_real_schemas(corpus: Path) -> None:
    from bot.model.registry import Registry
    from bot.model.schemas import WORK_LIMIT

    store = SchemaStore(DirSnapshot(corpus), Config())
    for entry in Registry(DirSnapshot(corpus), Config()).entries.values():
        for schema in entry.schemas:
            assert store.work_bound(schema.value, 8) <= WORK_LIMIT, schema.path
    recursive = {
        "$defs": {
            "A": {"anyOf": [{"items": {"$ref": "#/$defs/A"}}, {"items": {"$ref": "#/$defs/A"}}]}
        },
        "$ref": "#/$defs/A",
    }
    assert store.work_bound(recursive, 5) <= WORK_LIMIT < store.work_bound(recursive, 40)
    loop = {"$defs": {"L": {"$ref": "#/$defs/L"}}, "$ref": "#/$defs/L"}
    assert store.work_bound(loop, 1) > WORK_LIMIT


UNPARSEABLE_BOMBS = (
    "a(?i)((((a{64}){64}){64}){64})",
    r"\X((((a{64}){64}){64}){64})",
    r"\K((((a{64}){64}){64}){64})",
    r"((((\G{64}){64}){64}){64})",
    r"(?|((((a{64}){64}){64}){64}))",
)
MEASURE = """
import json, sys, threading, time
from bot.core.regex_size import PatternTooLarge, check_size

gaps, done = [], threading.Event()

def tick():  # the lease renewal's stand-in: another thread that must keep running meanwhile
    last = time.monotonic()
    while not done.is_set():
        time.sleep(0.01)
        now = time.monotonic()
        gaps.append(now - last)
        last = now

ticker = threading.Thread(target=tick)
ticker.start()
refused = []
for pattern in json.loads(sys.argv[1]):
    try:
        check_size(pattern)
    except PatternTooLarge:
        refused.append(pattern)
done.set()
ticker.join()
# VmHWM: this program's own peak; ru_maxrss also counts the parent's memory that a fork copied before exec
peak = int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")))
print(json.dumps({"refused": refused, "max_gap": max(gaps), "peak": peak}))
"""  # noqa: E501


def test_a_pattern_python_cannot_parse_is_measured_out_of_process_and_refused() -> None:
    """Issue 28: ``units()`` gave up on ``regex``-only syntax and the bomb compiled anyway (2.8
    GB)."""
    shapes = [r"a(?i)b", r"\X+", r"(?|(a)|(b))"]  # regex-only syntax, small: measured and allowed
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps([*UNPARSEABLE_BOMBS, *shapes])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.splitlines()[-1])
    print(
        f"\npeak {result['peak'] / 1024:.0f} MB, longest pause of another thread "
        f"{result['max_gap'] * 1000:.0f} ms"
    )
    assert result["refused"] == list(UNPARSEABLE_BOMBS)
    assert result["peak"] < 100 * 1024  # KB: nothing was compiled in this process
    assert result["max_gap"] < 0.5


AFTER_A_PEAK = """
import json, sys
from bot.core.regex_size import PatternTooLarge, check_size
held = bytearray(int(sys.argv[2]) << 20)
held[::4096] = bytes(len(held[::4096]))  # touched: resident, the process's peak
del held
try:
    print(json.dumps({"units": check_size(sys.argv[1])}))
except PatternTooLarge:
    print(json.dumps({"units": None}))
"""


@pytest.mark.parametrize("peak_mb", [0, 400])
def test_a_worker_s_past_peak_does_not_hide_a_measured_pattern(peak_mb: int) -> None:
    """The measuring child took its size from ``ru_maxrss``, which starts at the parent's peak: in a
    worker that had once held 400 MB, a 46 MB program (about 160,000 units, under the child's cap,
    over ``MAX_UNITS``) measured 0 and was compiled."""
    pattern = "(?:a{400}){400}(?|x|y)"  # regex-only syntax: measured out of process
    assert child_result(AFTER_A_PEAK, pattern, str(peak_mb)) == {"units": None}
    assert child_result(AFTER_A_PEAK, "(?:a{40}){40}(?|x|y)", str(peak_mb))["units"] > 0


# -- what patterns compile to together, and what the process keeps ---------------------------------

# writes naming folders of components that each pass check_pattern (7,200 units, a tenth of the
# bound is 10,000), loads each as a pull request's rules, drops it, and reports memory
LOAD_CHILD = """
import json, shutil, string, sys
from pathlib import Path
from bot.core.snapshot import DirSnapshot
from bot.model.naming import bundled_folder, load_rules

def kb(field):
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith(field + ":")))

spec = json.loads(sys.argv[1])
root = Path(sys.argv[2])
names = [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase]
out = []
for round_ in range(spec["rounds"]):
    tree = root / f"r{round_}"
    shutil.copytree(bundled_folder(), tree / "naming")
    base = json.loads((tree / "naming/datasets/abfss/abfss.json").read_text())
    used = names[: spec["components"]]
    # a different program each round (the trailing literal): nothing is shared between rounds
    pattern = "(?:(?:[a-z]{60}){60}){2}" + "z" * (round_ + 1)
    doc = dict(base, id="wide", scheme="wide", datasourceHierarchy=used[:1], namingHierarchy=used[1:2])
    doc["components"] = {n: {"description": "x", "pattern": pattern, "expect": "x"} for n in used}
    half = len(used) // 2
    doc["forms"] = [
        {"label": f"f{i}", "namespace": "wide://" + "".join("{%s}" % n for n in used[:half]),
         "name": "".join("{%s}" % n for n in used[half:])}
        for i in range(spec["forms"])
    ]
    doc["examples"] = {"valid": [{"namespace": "wide://a", "name": "b"}] * 2,
                       "invalid": [{"namespace": "x", "name": "y", "reason": "z"}]}
    (tree / "naming/datasets/wide").mkdir()
    (tree / "naming/datasets/wide/wide.json").write_text(json.dumps(doc))
    rules = load_rules(DirSnapshot(tree, label="pr"), "naming")
    rules_loaded, problems = list(rules.datasets), rules.problems
    for form in (f for s in rules.datasets.values() for f in s.forms):
        form.both_re, form.namespace_re, form.name_re  # what the checks compile
    del rules
    out.append({
        "rss_kb": kb("VmRSS"),
        "loaded": sorted(rules_loaded),
        "problems": [[p.rule, p.path, p.pointer, p.message] for p in problems],
    })
print(json.dumps({"rounds": out, "peak_kb": kb("VmHWM")}))
"""  # noqa: E501


def child_result(program: str, *args: str) -> dict[str, Any]:
    """The JSON last line of ``program`` run in a new interpreter: its memory is its own."""
    done = subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def load_wide_rules(tmp_path: Path, components: int, forms: int, rounds: int) -> dict[str, Any]:
    spec = {"components": components, "forms": forms, "rounds": rounds}
    result = child_result(LOAD_CHILD, json.dumps(spec), str(tmp_path))
    rss = [r["rss_kb"] // 1024 for r in result["rounds"]]
    print(f"\npeak {result['peak_kb'] / 1024:.0f} MB, resident after each round {rss} MB")
    return result


def test_a_naming_file_of_many_components_is_refused_within_the_budget(tmp_path: Path) -> None:
    """220 components, each within its own bound, two forms joining them all: a 20 KB file compiled
    to 873 MB before the budget (a review's worker is about 100 MB); 89 MB now."""
    result = load_wide_rules(tmp_path, components=220, forms=2, rounds=1)
    [found] = result["rounds"]
    assert "wide" not in found["loaded"] and "abfss" in found["loaded"]
    [problem, unchecked] = [
        p for p in found["problems"] if p[1] == "naming/datasets/wide/wide.json"
    ]
    assert problem[0] == "naming/unsafe-pattern" and problem[2].startswith("/components/")
    assert unchecked[0] == "naming/unchecked"  # the patterns after it: said, not silent
    assert "over 300,000 compiled units together" in problem[3]
    assert result["peak_kb"] < 200 * 1024


def test_a_form_joining_components_past_the_bound_is_refused_at_its_form(tmp_path: Path) -> None:
    """30 components of 7,200 units fit the budget one by one; joined by one form they are 216,000,
    over the 100,000 any one pattern may compile to."""
    result = load_wide_rules(tmp_path, components=30, forms=1, rounds=1)
    [found] = result["rounds"]
    [problem, unchecked] = [
        p for p in found["problems"] if p[1] == "naming/datasets/wide/wide.json"
    ]
    assert problem[0] == "naming/unsafe-pattern" and problem[2] == "/forms/0"
    assert unchecked[0] == "naming/unchecked"
    assert "30 components joined" in problem[3] and "over 100,000 units" in problem[3]
    assert "wide" not in found["loaded"]


def test_naming_rules_that_fit_are_compiled_and_not_kept_once_dropped(tmp_path: Path) -> None:
    """Six pull requests' rules, each 7 components joined by one form (50,400 units, the form
    counted three times: 201,600 with the bundled files' 45,000 fit the 300,000): all load, and what
    they compiled goes with them (resident 81-85 MB from the second round on). regex's own cache
    kept every program: 57, 82, 106, 130, 154, 178 MB."""
    result = load_wide_rules(tmp_path, components=7, forms=1, rounds=6)
    rounds = result["rounds"]
    assert all("wide" in r["loaded"] for r in rounds)
    assert all(not any(p[1].endswith("wide.json") for p in r["problems"]) for r in rounds)
    # the allocator settles after the first two rounds
    assert rounds[-1]["rss_kb"] - rounds[1]["rss_kb"] < 20 * 1024


KEPT_CHILD = """
import json, sys
from bot.model.schemas import bounded_search

def rss_kb():
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmRSS:")))

before = rss_kb()
# distinct schema patterns of 90,000 units, each under the 100,000 bound: searched once each
found = [bounded_search(f"(?:(?:a{{60}}){{60}}){{25}}x{i}", "b") for i in range(20)]
print(json.dumps({"found": found, "kept_kb": rss_kb() - before}))
"""


def test_schema_patterns_of_a_pull_request_are_not_kept_by_the_process() -> None:
    """regex's cache kept the 20 programs, 288 MB, in a worker that lives for many reviews (now
    about 2 MB)."""
    result = child_result(KEPT_CHILD)
    print(f"\nkept {result['kept_kb'] / 1024:.0f} MB")
    assert result["found"] == [False] * 20
    assert result["kept_kb"] < 40 * 1024


CODEOWNERS_CHILD = """
import json, random, string
from bot.model import codeowners

def rss_kb():
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmRSS:")))

rng = random.Random(7)
start, alive, after = rss_kb(), [], []
for round_ in range(3):
    # 300 lines of 4,000-character wildcard patterns (700 KB; GitHub loads up to 3 MB), new each round
    lines = [
        "/" + "/".join("*" + "".join(rng.choices(string.ascii_lowercase, k=5)) + "*" for _ in range(300))[:4000] + f" @o{i}"
        for i in range(300)
    ]
    owners = codeowners.parse("\\n".join(lines))
    owners.owners_of("a/b")  # every line that may match anywhere is compiled and run
    alive.append(rss_kb() - start)
    del owners
    after.append(rss_kb())
print(json.dumps({"alive": alive, "after": after}))
"""  # noqa: E501


def test_codeowners_programs_are_bounded_and_go_with_their_file() -> None:
    """Each line of a CODEOWNERS file that may match anywhere is compiled for every path: 300 lines
    of 4,000 characters held 100 MB while their file was read, and a module-wide cache of 4,096
    programs kept them after, 100 MB more for every such file. Now one file compiles at most
    ``MAX_COMPILED_CHARS`` (the rest of its lines are errors) and its programs go with it."""
    result = child_result(CODEOWNERS_CHILD)
    alive, after = result["alive"], result["after"]
    print(
        f"\nwhile read {[kb // 1024 for kb in alive]} MB more, resident after each file "
        f"{[kb // 1024 for kb in after]} MB"
    )
    assert max(alive) < 50 * 1024
    assert after[-1] - after[0] < 10 * 1024
