"""``registry-bot``: the command line. Each subcommand lives in its own module.

A command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``;
heavy imports happen inside ``run`` so that ``--help`` stays fast.
Exit codes: 0 no errors, 1 errors found, 2 usage errors or unreadable input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

COMMANDS: dict[str, str] = {
    "check": "bot.commands.check",
    "demo": "bot.commands.demo",
    "replay": "bot.commands.replay",
    "regress": "bot.commands.regress",
    "naming": "bot.naming.cli",
    "rules": "bot.commands.rules",
    "publish": "bot.commands.publish",
}

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments or unreadable input: exit code 2 with a one-line message."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="registry-bot",
        description="Review changes to an OpenLineage registry.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors and 0 on --help
        return int(exc.code or 0)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return int(args._module.run(args))
    except UsageError as exc:
        print(f"registry-bot {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
