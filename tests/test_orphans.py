"""A process that a Ctrl-C orphans is still ended: the command line is its child subreaper.

Found by CI: after Ctrl-C in ``demo``, PySpark's daemon ended first and one of its forked workers,
re-parented to init, escaped the parent-pid walk of ``end_descendants`` and was left running.
Each case runs in its own interpreter so that pytest itself never becomes a subreaper.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")

# a shell that starts a sleeping grandchild and ends at once, orphaning it; the command line then
# ends its descendants and says whether the grandchild is still running
ORPHAN = """
import os, subprocess
from bot.cli.commands._children import adopt_orphans, end_descendants
{adopt}
shell = ["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"]
sleeper = int(subprocess.run(shell, capture_output=True, text=True, check=True).stdout)
end_descendants(grace=1.0)
try:
    state = open(f"/proc/{{sleeper}}/stat").read().rsplit(")", 1)[1].split()[0]
except FileNotFoundError:
    state = "gone"
if state not in ("gone", "Z"):
    os.kill(sleeper, 9)
print(state)
"""


def run_python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return proc.stdout.strip()


def test_an_orphaned_grandchild_is_ended_with_the_command_s_descendants() -> None:
    assert run_python(ORPHAN.format(adopt="assert adopt_orphans()")) in ("gone", "Z")


def test_without_the_subreaper_the_orphan_escapes_the_walk() -> None:
    """The mechanism the test above relies on: without adopt_orphans the orphan goes to init (or
    to whichever subreaper is above) and the walk does not see it."""
    assert run_python(ORPHAN.format(adopt="")) not in ("gone", "Z")


def test_the_console_script_adopts_orphans() -> None:
    code = """
    import ctypes, sys
    from bot.entry import main
    sys.argv = ["registry-bot", "--version"]
    main()
    flag = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    print(flag.value)
    """
    assert run_python(code).splitlines()[-1] == "1"
