"""``registry-bot demo``: review a bundled sample pull request (being written)."""

from __future__ import annotations

import argparse

HELP = "review a bundled sample pull request against the bundled reference registry"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", default="text")


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError("the demo is being written")
