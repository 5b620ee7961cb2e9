"""``registry-bot rules``: every rule the checks can report, one paragraph each (the README's rule list)."""

from __future__ import annotations

import argparse
import sys

HELP = "list every rule id with its description (--format markdown prints the README section)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--update-readme", action="store_true", help="rewrite the rules block of README.md")


def rules_markdown() -> str:
    """The README's rule reference: one heading per family, one paragraph per rule."""
    from bot.checks import FAMILIES, all_rules

    lines: list[str] = []
    families = [("bot", "Rules about the bot's own configuration and its own failures.")]
    families += [(m.__name__.rsplit(".", 1)[-1], (m.__doc__ or "").strip().splitlines()[0]) for m in FAMILIES]
    rules = all_rules()
    for family, summary in families:
        ids = sorted(r for r in rules if r.split("/", 1)[0] == family
                     or (family == "bot" and r.split("/", 1)[0] in ("bot", "config")))
        if not ids:
            continue
        lines += [f"### {family}", "", summary, ""]
        lines += [f"- `{rule}`: {' '.join(rules[rule].split())}" for rule in ids]
        lines.append("")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.update_readme:
        from bot.readme import README, replace_block

        README.write_text(replace_block(README.read_text(encoding="utf-8"), "rules", rules_markdown()),
                          encoding="utf-8")
        return 0
    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return 0
    from bot.checks import all_rules

    for rule, text in sorted(all_rules().items()):
        print(f"{rule}\n    {' '.join(text.split())}")
    return 0
