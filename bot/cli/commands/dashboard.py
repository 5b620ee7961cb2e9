"""``registry-bot dashboard``: per entry, its owners and what they should fix, and by when."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bot.cli import EXIT_OK, UsageError, verdict
from bot.cli.commands import _inputs

if TYPE_CHECKING:
    from bot.core.snapshot import Snapshot

HELP = (
    "print the registry dashboard: per entry, its owners, open findings, waivers and future lints"
)
FORMATS = ("text", "markdown", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="a folder or git repository holding the registry")
    parser.add_argument("--rev", help="a git revision to read instead of the folder as it is")
    parser.add_argument("--format", choices=FORMATS, default="text")


def run(args: argparse.Namespace) -> int:
    import datetime

    from bot.core.config import load_config
    from bot.core.snapshot import DirSnapshot, GitError
    from bot.outputs.dashboard import for_tree
    from bot.outputs.render import dashboard as show

    repo = _inputs.folder(args.repo)
    try:
        head: Snapshot = (
            _inputs.revision(_inputs.git_repository(args.repo), args.rev, "--rev")
            if args.rev
            else DirSnapshot(repo)
        )
        today = datetime.datetime.now(datetime.UTC).date()
        config, _ = load_config(head)
        _inputs.registry_folder([head], str(repo), config)
        board = for_tree(head, None, today)
    except GitError as exc:
        raise UsageError(exc.reason) from None
    render = {"text": show.render_text, "markdown": show.render_markdown, "json": show.render_json}[
        args.format
    ]
    verdict(EXIT_OK)  # a listing: a reader that stops early changes nothing
    sys.stdout.write(render(board))
    return EXIT_OK
