"""``registry-bot``: the command line. Each subcommand lives in its own module.

A command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``;
heavy imports happen inside ``run`` so that ``--help`` stays fast.
Exit codes: 0 no errors, 1 errors found, 2 usage errors or unreadable input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from bot.core.causes import is_interruption

COMMANDS: dict[str, str] = {
    "check": "bot.cli.commands.check",
    "fix": "bot.cli.commands.fix",
    "demo": "bot.cli.commands.demo",
    "replay": "bot.cli.commands.replay",
    "regress": "bot.cli.commands.regress",
    "naming": "bot.cli.commands.naming",
    "rules": "bot.cli.commands.rules",
    "publish": "bot.cli.commands.publish",
    "init": "bot.cli.commands.init",
    "app": "bot.cli.commands.app",
    "action": "bot.cli.commands.action",
    "dashboard": "bot.cli.commands.dashboard",
}

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2

# the exit code the running command decided before writing its output (see ``verdict``)
_decided: list[int] = []


def verdict(code: int) -> int:
    """Record ``code`` as the command's exit code before it writes its output, so that a reader that
    stops early (``registry-bot check ... | head -1``: a closed pipe) leaves the verdict as it is;
    returns ``code``. A pipe closed before a command decided exits 1, never 0."""
    _decided[:] = [code]
    return code


COLOR_CHOICES = ("auto", "always", "never")


class UsageError(Exception):
    """Bad arguments or unreadable input: exit code 2 with a one-line message."""


def add_color_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour severities: auto (a terminal, unless NO_COLOR is set or TERM=dumb), "
        "always or never",
    )


def use_color(choice: str, stream: TextIO) -> bool:
    """``--color``: ``auto`` colours a terminal unless ``NO_COLOR`` is set (no-color.org) or
    ``TERM=dumb``."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def writable_output(path: str | None, option: str = "-o") -> None:
    """Refuse an output file (``option FILE``) that cannot be written before any work starts."""
    if path is None:
        return
    target = Path(path).absolute()
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a folder, expected a file name")
    if not target.parent.is_dir():
        raise UsageError(f"{option} {path}: the folder {target.parent} does not exist")
    if not os.access(target.parent, os.W_OK) or (
        target.exists() and not os.access(target, os.W_OK)
    ):
        raise UsageError(f"{option} {path}: not writable")


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (the usage itself is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        required = "the following arguments are required: "
        # argparse also lists positionals that may be left out (nargs '*', '?')
        if message.startswith(required):
            optional = {
                a.metavar or a.dest
                for a in self._actions
                if not a.option_strings and a.nargs in ("*", "?")
            }
            message = required + ", ".join(
                n for n in message[len(required) :].split(", ") if n not in optional
            )
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _version() -> str:
    """The installed distribution's version (the package's own when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openlineage-registry-bot")
    except PackageNotFoundError:
        from bot import __version__

        return __version__


class _Version(argparse.Action):
    """``--version``: the installed version, read (``importlib.metadata``) only when asked for."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str = "show program's version number and exit",
    ) -> None:
        super().__init__(
            option_strings=option_strings, dest=dest, default=default, nargs=0, help=help
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        formatter = parser._get_formatter()
        formatter.add_text(f"%(prog)s {_version()}")
        parser._print_message(formatter.format_help(), sys.stdout)
        parser.exit()


def _named_command(argv: Sequence[str] | None) -> str | None:
    """The command ``argv`` names when it is plain to see (its first argument, no option before it),
    so that only its module is imported; None: every command module (``--help``, a usage error)."""
    args = sys.argv[1:] if argv is None else argv
    first = args[0] if args else None
    return first if first in COMMANDS else None


def build_parser(argv: Sequence[str] | None = None, every: bool = True) -> argparse.ArgumentParser:
    """The parser; ``every`` False: only the command ``argv`` names gets its subparser (and its
    module imported) when it names one plainly."""
    parser = Parser(
        prog="registry-bot",
        description="Review changes to an OpenLineage registry.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = None if every else _named_command(argv)
    for name, module_name in COMMANDS.items():
        if named is not None and name != named:
            continue
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_module=module)
    return parser


# ``timeout``'s signal, a closed terminal's, a cancelled CI job's: ended like a Ctrl-C
TERMINATING = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
_received: list[int] = []  # the terminating signal the command was ended by


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the command is, so that it ends what it started as after
    Ctrl-C: by default Python dies at once, and Spark's JVM outlived it (an orphan, then a zombie
    until init collects it)."""


def _terminate(signum: int, frame: object) -> NoReturn:
    _received.append(signum)
    raise Terminated(signum)


def _on_termination() -> None:
    """End the command on a terminating signal as on Ctrl-C (where no handler is set already)."""
    _received.clear()
    for sig in TERMINATING:
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _terminate)


def _interrupted(command: str) -> int:
    """Ctrl-C, SIGTERM or SIGHUP: end what the command started (Spark's JVM ignores SIGINT), say
    so in one line, exit 130 (128 + the terminating signal)."""
    from bot.cli.commands._children import end_descendants

    # a second signal does not interrupt the clean-up
    for sig in (signal.SIGINT, *TERMINATING):
        signal.signal(sig, signal.SIG_IGN)
    # what the ended processes' clients log from here on (py4j's call to a JVM that is gone, with
    # its traceback) is the interruption itself, which the one line below says
    logging.disable(logging.CRITICAL)
    end_descendants()
    if _received:
        name = signal.Signals(_received[0]).name
        print(f"registry-bot {command}: terminated ({name})", file=sys.stderr)
        return 128 + _received[0]
    print(f"registry-bot {command}: interrupted", file=sys.stderr)
    return 130


def _interrupted_loading(argv: Sequence[str] | None) -> int:
    """Ctrl-C before the command was known: the one line, naming the command if one was typed."""
    words = sys.argv[1:] if argv is None else argv
    command = next((a for a in words if not a.startswith("-")), None)
    print(f"registry-bot{' ' + command if command else ''}: interrupted", file=sys.stderr)
    return 130


def _discard_stdout() -> None:
    """The reader is gone: what is still buffered for it goes nowhere, so that Python's flush at
    exit does not fail again (a second error and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file (a test's capture)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser(argv, every=False)
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors and 0 on --help
        return int(exc.code or 0)
    except BaseException as exc:  # Ctrl-C while the commands load, as itself or wrapped by Python
        if not is_interruption(exc):
            raise
        return _interrupted_loading(argv)
    _decided.clear()
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *TERMINATING)}
    _on_termination()
    try:
        return _run(args)
    finally:  # the caller's handlers back: a process going on (a test, an embedder) keeps them
        for sig, handler in saved.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(sig, handler)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command: its exit code, every interruption and unreadable input included."""
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        code = int(args._module.run(args))
        # what is still buffered (an output under the buffer's size) meets a closed pipe here,
        # where it is caught, not in Python's flush at exit (exit 120)
        sys.stdout.flush()
        return code
    except UsageError as exc:
        print(f"registry-bot {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        _discard_stdout()
        return _decided[0] if _decided else EXIT_ERRORS
    except KeyboardInterrupt:
        return _interrupted(args.command)
    except subprocess.CalledProcessError as exc:
        # a child (git) that Ctrl-C ended before Python saw the signal
        if exc.returncode != -signal.SIGINT:
            raise
        return _interrupted(args.command)
    # the last line of defence: unreadable input is a message, never a traceback
    except OSError as exc:
        if is_interruption(exc):
            return _interrupted(args.command)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"registry-bot {args.command}: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a Ctrl-C that Python wrapped (see bot.core.causes)
        if not is_interruption(exc):
            raise
        return _interrupted(args.command)
