"""The ``registry-bot`` console script: Ctrl-C while the command line loads is one line, never a
traceback.

Importing ``bot.cli`` (argparse, typing, the command modules) takes a noticeable part of a second on
a busy machine; a SIGINT then would print a traceback from the import. This module imports nothing
until called.
"""


def main() -> int:
    import os
    import sys

    try:
        from bot.cli import main as command_line
        from bot.cli.commands._children import adopt_orphans

        adopt_orphans()  # what a Ctrl-C orphans is still ended (see _children)
    except BaseException as exc:  # a Ctrl-C, also as Python may wrap it (bot.core.causes)
        from bot.core.causes import is_interruption

        if not is_interruption(exc):
            raise
        command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
        # as cli.main says it
        sys.stderr.write(f"registry-bot{' ' + command if command else ''}: interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # see below
    code = command_line()
    # interrupted (or terminated) and cleaned up: the interpreter, which saw the KeyboardInterrupt,
    if code >= 128:
        # could still end itself by SIGINT at exit instead of returning the exit code 130
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
