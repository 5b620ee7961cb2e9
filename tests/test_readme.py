"""The README is exactly true: its generated blocks match the code, its links stay inside the
repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.outputs.readme import README, block

ROOT = README.parent
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# What differs between two real runs of the demo: the Spark master and time, nothing else (the
# sample's commits have fixed authors and dates, so their ids are stable).
VOLATILE = re.compile(r"\(Spark local\[[^\]]*\], \d+\.\d s\)")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_command_table_is_generated_from_the_parser() -> None:
    from bot.cli.commands.rules import commands_markdown

    assert block(readme(), "commands") == commands_markdown(), (
        "run: registry-bot rules --update-readme"
    )


def test_the_rules_all_downgrades_are_generated_from_the_configuration() -> None:
    from bot.cli.commands.rules import adoption_gaps_markdown
    from bot.core.config import ADOPTION_GAPS

    listed = block(readme(), "adoption-gaps")
    assert listed == adoption_gaps_markdown(), "run: registry-bot rules --update-readme"
    assert re.findall(r"`([^`]+)`", listed) == list(ADOPTION_GAPS)


def test_the_configuration_example_lists_the_default_adoption_gaps() -> None:
    import yaml

    from bot.core.config import ADOPTION_GAPS

    example = re.search(r"```yaml\n(paths:.*?)```", readme(), re.S)
    assert example is not None
    assert tuple(yaml.safe_load(example.group(1))["verdict"]["adoption_gaps"]) == ADOPTION_GAPS


def test_every_option_of_every_command_is_in_the_table() -> None:
    from bot.cli import build_parser

    table = block(readme(), "commands")
    options = {
        opt
        for action in build_parser()._subparsers._group_actions[0].choices.values()  # type: ignore[union-attr]
        for a in action._actions
        for opt in a.option_strings
        if opt.startswith("--") and opt != "--help"
    }
    assert {"--exit-code", "--no-regression", "--engine", "--keep", "--color"} <= options
    assert sorted(o for o in options if o not in table) == []


def test_the_rule_families_are_described_in_full() -> None:
    from bot.cli.commands.rules import rules_markdown

    assert "and published copies in the mirror are added, never edited" in rules_markdown()


def test_every_link_resolves_inside_the_repository() -> None:
    text = readme()
    local = [t for t in LINK.findall(text) if not t.startswith(("http://", "https://", "#"))]
    assert local, "the README links to its docs"
    for target in local:
        path = (ROOT / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT.resolve()), f"{target} leaves the repository"
        assert path.exists(), f"{target} does not exist"


@pytest.mark.spark
def test_the_sample_output_is_a_real_run_of_the_demo(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The README's sample is the demo's own text output (the regression on the warm session)."""
    from bot.cli.commands.demo import review_sample

    text = review_sample(tmp_path / "registry", session_factory=lambda master: spark)
    # plain text, not Markdown
    assert "**" not in text and "\\[" not in text and "| ---" not in text
    shown = block(readme(), "demo").removeprefix("```\n").removesuffix("```\n")
    assert VOLATILE.sub("(Spark)", shown) == VOLATILE.sub("(Spark)", text), (
        "paste the output of `registry-bot demo --color never` into the README's demo block"
    )
