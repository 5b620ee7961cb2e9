"""The ``registry-bot`` console script: Ctrl-C while the command line loads is one line, never a traceback.

Importing ``bot.cli`` (argparse, typing, the command modules) takes a noticeable part of a second on a busy
machine; a SIGINT then would print a traceback from the import. This module imports nothing until called.
"""


def main() -> int:
    import sys

    try:
        from bot.cli import main as command_line
    except KeyboardInterrupt:
        sys.stderr.write("registry-bot: interrupted\n")
        return 130
    return command_line()
