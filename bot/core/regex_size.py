"""How large a pattern's compiled program gets, estimated before compiling it.

More in docs/module-notes.md (bot/core/regex_size.py).
"""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex

MAX_UNITS = 100_000
BYTES_PER_UNIT = 290  # measured: memory of one unrolled unit of a compiled ``regex`` program
# the measuring child's address space (Python and ``regex``: ~18 MB)
CHILD_MEMORY_BYTES = 256 * 1024 * 1024
CHILD_SECONDS = 10.0
# regex's own cache keeps 500 programs of any size for the life of the process (20 distinct patterns
# of 90,000 units searched once each: 300 MB, kept): ``compile_unkept`` keeps only programs this
# small
KEPT_UNITS = 256
_CHILD = """
import resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import regex
def peak():
    # VmHWM, this program's own peak: ru_maxrss starts at the parent's (it survives exec), and a
    # worker whose peak was over the child's had every pattern measured as 0
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
pattern = sys.stdin.read()
before = peak()
try:
    regex.compile(pattern)
except MemoryError:
    sys.exit(3)
except Exception:
    print(0)  # not a valid pattern: the caller's own compile says why
    sys.exit(0)
print((peak() - before) * 1024)
"""

_sre_parse: Any = importlib.import_module("re._parser")
_MAXREPEAT: int = importlib.import_module("re._constants").MAXREPEAT
_UNICODE_PROPERTY = re.compile(r"\\[pP](?:\{[^}]*\}|[A-Za-z])")
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


class PatternTooLarge(ValueError):
    """A pattern whose compiled program would be over ``MAX_UNITS``."""


def units(pattern: str) -> int | None:
    """The estimated size of ``pattern``'s compiled program (counted repetitions unrolled), or None
    when Python's parser cannot read it (the real compile then says why)."""
    try:  # ``regex`` knows Unicode properties (\p{L}): any one-character class has the same size
        tree = _sre_parse.parse(_UNICODE_PROPERTY.sub(r"\\w", pattern))
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    return _size(list(tree))


def _size(items: list[Any]) -> int:
    total = 0
    for op, arg in items:
        name = str(op)
        if name in _REPEATS:
            low, high, sub = arg
            total += _size(list(sub)) * max(1, low if high == _MAXREPEAT else high)
        elif name == "SUBPATTERN":
            total += _size(list(arg[-1]))
        elif name == "BRANCH":
            total += sum(_size(list(branch)) for branch in arg[1])
        elif name in ("ASSERT", "ASSERT_NOT"):
            total += _size(list(arg[1]))
        elif name == "ATOMIC_GROUP":
            total += _size(list(arg))
        elif name == "GROUPREF_EXISTS":
            total += sum(_size(list(part)) for part in arg[1:] if part is not None)
        else:
            total += 1
        if total > MAX_UNITS:  # stop early: the estimate itself may be astronomical
            return total
    return total


def check_size(pattern: str, limit: int = MAX_UNITS) -> int:
    """The estimated size of ``pattern``'s compiled program; ``PatternTooLarge`` when it is over
    ``limit`` units."""
    size = units(pattern)
    if size is None:
        size = measured_units(pattern)
    if size > limit:
        raise PatternTooLarge(
            f"the pattern's counted repetitions unroll to over {limit:,} units when "
            "compiled (nested counts such as (a{64}){64} multiply); not compiled"
        )
    return size


@functools.lru_cache(maxsize=256)
def measured_units(pattern: str) -> int:
    """The size of ``pattern``'s compiled program as a child process with capped memory measures it;
    a child that runs out of memory or time counts as over any limit."""
    over = sys.maxsize
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD, str(CHILD_MEMORY_BYTES)],
            input=pattern,
            capture_output=True,
            text=True,
            timeout=CHILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return over
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        return over
    return int(done.stdout) // BYTES_PER_UNIT


def compile_unkept(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """``pattern`` compiled by ``regex`` (its size checked by the caller) outside regex's cache: a
    program of at most ``KEPT_UNITS`` is kept for reuse (512 of them, at most about 38 MB), a larger
    one is compiled at each use, so that a pull request's patterns never stay in a long-lived
    worker."""
    size = _kept_size(pattern)
    if size is not None and size <= KEPT_UNITS:
        return _kept(pattern, flags)
    import regex

    return regex.compile(pattern, flags, cache_pattern=False)


_kept_size = functools.lru_cache(maxsize=1024)(units)


@functools.lru_cache(maxsize=512)
def _kept(pattern: str, flags: int) -> regex.Pattern[str]:
    import regex

    return regex.compile(pattern, flags, cache_pattern=False)
