"""``scripts/relayout.py`` (the layer layout, run once on the merged main) places every module of
``bot/``: a module it does not know would stay outside the layers, where the contract cannot see
it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
# the package, ``python -m bot``, and the console script (it imports nothing before it handles
# Ctrl-C)
OUTSIDE_LAYERS = ("bot", "bot.__main__", "bot.entry")


def relayout() -> ModuleType:
    spec = importlib.util.spec_from_file_location("relayout", ROOT / "scripts" / "relayout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def modules() -> list[str]:
    found = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "bundled" in parts:  # data, read through importlib.resources
            continue
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_every_module_has_a_layer() -> None:
    script = relayout()
    layers = tuple(f"bot.{layer}" for layer in script.LAYERS)
    unplaced = [
        m
        for m in modules()
        if m not in OUTSIDE_LAYERS and m != "bot.app" and not script.new_name(m).startswith(layers)
    ]
    assert unplaced == []


def test_the_plan_moves_only_what_exists_and_collides_nowhere() -> None:
    script = relayout()
    moves = script.plan_moves()
    targets = [dst for _, dst in moves]
    assert len(targets) == len(set(targets))
    assert all(src.exists() and not dst.exists() for src, dst in moves)


def test_paths_of_moved_modules_are_rewritten_and_rule_ids_are_not() -> None:
    """A rule id such as ``bot/incomplete-review`` starts like the path of the module
    ``bot.incomplete`` (before the layout): a user's configuration names it, so the layout must not
    rename it. (The old paths are joined at run time, or the layout would have rewritten this test's
    own text.)"""
    script = relayout()
    module, package = "/".join(("bot", "incomplete.py")), "/".join(("bot", "regression", ""))
    text = f"see {module} and {package}; rules bot/incomplete-review, bot/regression-did-not-finish"
    assert script.rewrite_slashed(text) == (
        "see bot/core/incomplete.py and bot/review/regression/; rules "
        "bot/incomplete-review, bot/regression-did-not-finish"
    )


def test_the_readme_module_table_is_the_one_the_layout_writes() -> None:
    """README's module table is generated (``relayout.readme_table``, from each module's
    docstring): a module added, moved or removed since shows here first."""
    layout = relayout()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    written = readme.split(layout.START, 1)[1].split(layout.END, 1)[0].strip()
    assert written == layout.readme_table(), "run: python scripts/relayout.py --readme"
