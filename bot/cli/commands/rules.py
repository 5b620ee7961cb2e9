"""``registry-bot rules``: every rule the checks can report, one paragraph each (the README's rule
list)."""

from __future__ import annotations

import argparse
import sys

from bot.cli import EXIT_OK, UsageError, verdict

HELP = "list every rule id with its description (--format markdown prints the README section)"
COMMAND_LIMIT = 100  # characters of a usage line per table row before it wraps


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the generated blocks of README.md (rules, the command table, the adoption "
        "gaps)",
    )


def rules_markdown() -> str:
    """The README's rule reference: one heading per family, one paragraph per rule."""
    from bot.review import waiving
    from bot.review.checks import FAMILIES, all_rules

    lines: list[str] = []
    families = [("bot", "Rules about the bot's own configuration and its own failures.")]
    families += [(m.__name__.rsplit(".", 1)[-1], _summary(m.__doc__ or "")) for m in FAMILIES]
    families.append(("waivers", _summary(waiving.__doc__ or "")))
    rules = all_rules()
    for family, summary in families:
        ids = sorted(
            r
            for r in rules
            if r.split("/", 1)[0] == family
            or (family == "bot" and r.split("/", 1)[0] in ("bot", "config"))
        )
        if not ids:
            continue
        lines += [f"### {family}", "", summary, ""]
        lines += [f"- `{rule}`: {' '.join(rules[rule].split())}" for rule in ids]
        lines.append("")
    return "\n".join(lines)


def _summary(doc: str) -> str:
    """A module docstring's first paragraph on one line, its reST code marks as Markdown's."""
    return " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "`")


def _usages(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, str]]:
    """``(usage, help)`` of ``name`` and of its own subcommands (``naming docs``, ``naming
    check``)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        usage = " ".join(parser.format_usage().split()).removeprefix("usage: ")
        return [(usage, parser.description or "")]
    helps = {a.dest: a.help or "" for a in subs[0]._choices_actions}
    out: list[tuple[str, str]] = []
    for sub_name, sub in subs[0].choices.items():
        for usage, text in _usages(sub, f"{name} {sub_name}"):
            out.append((usage, text or helps.get(sub_name, "")))
    return out


def commands_markdown() -> str:
    """The README's command table: every command's usage and help, from the parser itself."""
    from bot.cli import COMMANDS, build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["| command | does |", "| --- | --- |"]
    for name in COMMANDS:
        for usage, text in _usages(subs.choices[name], name):
            usage = usage.replace(" [-h]", "").replace("|", "\\|")
            lines.append(f"| `{usage}` | {' '.join(text.split())} |")
    return "\n".join(lines) + "\n"


def adoption_gaps_markdown(width: int = 110) -> str:
    """The README's list of the rules ``--all`` downgrades to warnings:
    ``bot.core.config.ADOPTION_GAPS``, wrapped."""
    from bot.core.config import ADOPTION_GAPS

    names = [f"`{rule}`" for rule in ADOPTION_GAPS]
    lines, line = [], ""
    for i, name in enumerate(names):
        item = name + ("." if i == len(names) - 1 else ",")
        if line and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    return "\n".join([*lines, line]) + "\n"


def update_readme() -> None:
    """Rewrite README.md's generated blocks."""
    from bot.outputs.readme import README, replace_block

    if not README.is_file():  # an installed package has no README beside it
        raise UsageError(
            "--update-readme rewrites README.md of a checkout of the project; there is none beside "
            f"this installation ({README.parent})"
        )
    text = README.read_text(encoding="utf-8")
    text = replace_block(text, "rules", rules_markdown())
    text = replace_block(text, "commands", commands_markdown())
    text = replace_block(text, "adoption-gaps", adoption_gaps_markdown())
    README.write_text(text, encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.update_readme:
        update_readme()
        return 0
    verdict(EXIT_OK)  # a listing: a reader that stops early changes nothing
    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return 0
    from bot.review.checks import all_rules

    for rule, text in sorted(all_rules().items()):
        print(f"{rule}\n    {' '.join(text.split())}")
    return 0
