"""Memos keyed by a pull request's text keep only small entries (``bot.core.small_cache``)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.core.small_cache import LARGEST, small_cache, text_size
from tests.conftest import ROOT


@dataclass(frozen=True)
class Row:
    path: str
    notes: tuple[str, ...] = ()
    required: bool = False


def test_small_calls_are_kept_and_large_ones_computed_each_time() -> None:
    calls: list[str] = []

    @small_cache(maxsize=3, largest=10)
    def upper(value: str, suffix: str = "") -> str:
        calls.append(value)
        return value.upper() + suffix

    assert [upper("abc"), upper("abc"), upper("abc", suffix="!")] == ["ABC", "ABC", "ABC!"]
    assert calls == ["abc", "abc"]  # the keyword call is its own entry
    large = "x" * 11
    assert upper(large) == upper(large) == large.upper()
    assert calls[2:] == [large, large] and len(upper.memo) == 2  # type: ignore[attr-defined]
    upper("d")
    upper("e")  # past maxsize: the memo starts afresh
    assert list(upper.memo) == [("e",)]  # type: ignore[attr-defined]


def test_the_text_of_a_dataclass_and_its_tuples_is_counted() -> None:
    assert text_size(Row("a.b", ("xy", "z")), "q", ("rs", 3)) == 3 + 3 + 1 + 2
    assert text_size(Row("", (), True), 12) == 0


def test_every_real_description_is_small_enough_to_be_cached(corpus: Path) -> None:
    """The cache still serves the real registry: its longest description is well under
    ``LARGEST``."""
    lengths: list[int] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                lengths.append(len(node["description"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in (corpus / "spec").rglob("*.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    assert len(lengths) > 300 and max(lengths) < LARGEST / 1.5


KEPT_CHILD = """
import json
from bot.outputs.site import markdown, pages

def rss_kb():
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmRSS:")))

before = rss_kb()
for i in range(400):  # a pull request's descriptions of 50 KB, rendered for its site preview
    markdown.text(f"description {i} " + "word {x} | y " * 4000)
    markdown.literal(f"name {i} " + "z" * 50_000)
print(json.dumps({"kept_kb": rss_kb() - before}))
"""


def test_a_pull_requests_long_texts_are_not_kept_by_the_renderer() -> None:
    """The renderer's caches hold 8,192 entries each: of any size, they kept 445 MB after 2,000
    descriptions of 100 KB."""
    assert kept_kb(KEPT_CHILD) < 20 * 1024


BASE_SCHEMAS_CHILD = """
import copy, gc, json
from bot.model.naming import loader

def rss_kb():
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmRSS:")))

shipped = loader._shipped_base()
assert loader.schema_problems(shipped, "datasets/a.json", {"kind": "dataset"})
assert len(loader._validator.memo) == 1  # the shipped base schema's explaining validator is kept
gc.collect()
before = rss_kb()
for i in range(8):  # eight pull requests' base schemas of 4 MB (a description as long as allowed)
    schema = copy.deepcopy(shipped)
    schema["description"] = f"base schema {i} " + "x" * 4_000_000
    problems = loader.schema_problems(schema, "datasets/a.json", {"kind": "dataset"})
    assert problems, "an entry without its fields fails the base schema"
    del schema, problems
gc.collect()
assert len(loader._validator.memo) == 1
print(json.dumps({"kept_kb": rss_kb() - before}))
"""


def test_a_pull_requests_naming_base_schemas_are_not_kept() -> None:
    """The naming loader's validators of a pull request's base schema were memoised by its text,
    eight of any size: 4 MB ones stayed in the worker after their reviews."""
    assert kept_kb(BASE_SCHEMAS_CHILD) < 10 * 1024


def kept_kb(child: str) -> int:
    """The resident memory the child script says it kept, in KB (printed too)."""
    done = subprocess.run(
        [sys.executable, "-c", child],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    kept: int = json.loads(done.stdout.splitlines()[-1])["kept_kb"]
    print(f"\nkept {kept / 1024:.0f} MB")
    return kept
