"""``registry-bot naming``: its arguments here, its work in ``bot.cli.naming`` (imported only to
run, since the naming package loads jsonschema)."""

from __future__ import annotations

import argparse

HELP = (
    "naming conventions: 'docs [--check]' regenerates Naming.md, 'check PATH...' validates event "
    "identifiers"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="naming_command", required=True, metavar="SUBCOMMAND")
    docs = sub.add_parser("docs", help="write Naming.md from the naming files")
    docs.add_argument(
        "--check", action="store_true", help="exit 1 when the committed Naming.md is out of date"
    )
    docs.add_argument("--dir", help="a naming folder (default: the project's own naming/)")
    check = sub.add_parser(
        "check", help="validate dataset and job identifiers of OpenLineage events"
    )
    check.add_argument(
        "paths", nargs="+", metavar="PATH", help="event files (JSON, JSON lines, arrays) or folders"
    )
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument(
        "--rules", help="a naming folder to judge by (default: the project's own naming/)"
    )
    check.add_argument(
        "--quiet", "-q", action="store_true", help="text: show only invalid identifiers"
    )


def run(args: argparse.Namespace) -> int:
    from bot.cli.naming import run as run_naming

    return run_naming(args)
