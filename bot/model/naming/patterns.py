"""Component patterns from naming files: checked for dangerous constructs, compiled with ``regex``.

Patterns come from pull requests, so they are hostile until proven otherwise. ``check_pattern``
rejects what can make a backtracking engine run for ages (nested unbounded quantifiers,
backreferences, named groups that would clash with the template's own groups, huge patterns);
``MATCH_TIMEOUT`` bounds every match made while reviewing a change, so a pattern that slips
through still cannot hang the bot. ``UnitBudget`` bounds what one set of naming files compiles
together (a form joins any number of components; a file declares any number of forms), and nothing
is kept in ``regex``'s own cache, which would hold a pull request's programs for the life of the
process.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import regex

from bot.core import budget as review_budget
from bot.core.regex_size import MAX_UNITS, PatternTooLarge, check_size

MAX_PATTERN_CHARS = 512
# the compiled size of all patterns of one set of naming files together (each form counted three
# times: namespace, name and both are compiled apart): about 87 MB at ``BYTES_PER_UNIT``; the
# bundled files take about 45,000
MAX_TOTAL_UNITS = 3 * MAX_UNITS
MATCH_TIMEOUT = 0.25  # seconds, per match, when checking files from a pull request

# The stdlib parser gives a syntax tree to inspect; the pattern itself runs on ``regex``.
_sre_parse: Any = importlib.import_module("re._parser")
MAXREPEAT: int = importlib.import_module("re._constants").MAXREPEAT

_UNICODE_PROPERTY = re.compile(r"\\[pP](?:\{[^}]*\}|[A-Za-z])")


class PatternProblem(ValueError):
    """A pattern the bot refuses to run."""

    @property
    def subject(self) -> str:
        """What the problem is about (``Finding.subject``): "" where the message says only that."""
        return ""


class BudgetSpent(PatternProblem):
    """A pattern that does not fit what is left of a ``UnitBudget``."""

    def __init__(self, message: str, subject: str) -> None:
        super().__init__(message)
        self._subject = subject

    @property
    def subject(self) -> str:
        """The message without what other files' patterns took: a pattern added in another file
        leaves the finding as it was."""
        return self._subject


class UnitBudget:
    """What the patterns of one set of naming files may compile to together, in units of
    ``bot.core.regex_size``; taken before anything is compiled."""

    def __init__(self, total: int = MAX_TOTAL_UNITS) -> None:
        self.total = total
        self.left = total

    def take(self, units: int, what: str) -> None:
        """Count ``units`` against the budget; ``BudgetSpent`` (nothing taken) when they do not
        fit."""
        if units > self.left:
            over = (
                f"{what} would take the naming files' patterns over {self.total:,} compiled units"
            )
            raise BudgetSpent(
                f"{over} together ({units:,} more with {self.total - self.left:,} taken); not "
                f"compiled",
                f"{over} together; not compiled",
            )
        self.left -= units


def check_pattern(pattern: str, budget: UnitBudget | None = None) -> regex.Pattern[str]:
    """The compiled ``pattern``; ``PatternProblem`` when it is unusable, can backtrack
    catastrophically or does not fit ``budget``."""
    if not isinstance(pattern, str) or not pattern:
        raise PatternProblem("a pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternProblem(
            f"pattern is {len(pattern)} characters, over the {MAX_PATTERN_CHARS}-character limit"
        )
    # ``regex`` knows Unicode properties (\p{L}); for the shape check any one-character class will
    # do
    try:
        tree = _sre_parse.parse(_UNICODE_PROPERTY.sub(r"\\w", pattern))
    except (re.error, RecursionError, OverflowError) as exc:
        raise PatternProblem(f"not a valid regular expression: {exc}") from None
    if tree.state.groupdict:
        raise PatternProblem(
            "named groups are not allowed in component patterns (the template names them)"
        )
    _walk(list(tree), inside_repeat=False)
    # a form joins its components: each gets a tenth of the compiled size any one pattern may have
    try:
        size = check_size(pattern, MAX_UNITS // 10)
    except PatternTooLarge as exc:
        raise PatternProblem(str(exc)) from None
    if budget is not None:
        budget.take(size, "this pattern")
    try:
        return compile_full(pattern)
    except (regex.error, RecursionError, OverflowError) as exc:
        raise PatternProblem(f"not a valid regular expression: {exc}") from None


def _walk(items: list[Any], inside_repeat: bool) -> None:
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _low, high, sub = arg
            unbounded = high == MAXREPEAT or high > 64
            if unbounded and inside_repeat:
                raise PatternProblem(
                    "nested unbounded quantifiers (like (a+)+) can backtrack catastrophically; "
                    "write a single quantifier over a character class instead"
                )
            _walk(list(sub), inside_repeat or unbounded)
        elif name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise PatternProblem("backreferences are not allowed in component patterns")
        elif name == "SUBPATTERN":
            _walk(list(arg[-1]), inside_repeat)
        elif name == "BRANCH":
            for branch in arg[1]:
                _walk(list(branch), inside_repeat)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _walk(list(arg[1]), inside_repeat)
        elif name == "ATOMIC_GROUP":
            _walk(list(arg), inside_repeat)


class Bounded:
    """A checked pattern from a pull request whose every ``fullmatch`` has a time limit (and stays
    within the review's budget, ``bot.core.budget``): ``TimeoutError`` past it. For the patterns
    matched outside a form's joined pattern (quoting's ``unquoted``, a decision's
    ``namespacePattern``): ``check_pattern`` passes some catastrophic ones (``(?:[a-z]|a)+``)."""

    __slots__ = ("_compiled", "_limit")

    def __init__(self, compiled: regex.Pattern[str], limit: float) -> None:
        self._compiled = compiled
        self._limit = limit

    @property
    def pattern(self) -> str:
        source: str = self._compiled.pattern
        return source

    def fullmatch(self, text: str, limit: float | None = None) -> Any:
        """``fullmatch`` within ``limit`` seconds (its own limit by default)."""
        bound = self._limit if limit is None else limit
        return self._compiled.fullmatch(text, timeout=review_budget.timeout(bound))


class DecidedSlow(TimeoutError):
    """A match of a pattern ``Decided`` too slow: raised at once."""


class Decided:
    """A pattern decided too slow once, by probing (``bot.model.naming.slow``): every match raises
    ``DecidedSlow`` at once, so its verdict is the same on every engine and machine."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def fullmatch(self, text: str, *args: Any, **kwargs: Any) -> Any:
        raise DecidedSlow(f"pattern decided too slow when the rules were built: {self.pattern!r}")


def compile_full(pattern: str) -> regex.Pattern[str]:
    """Compile an already checked pattern built by the bot (templates joined from checked parts),
    outside ``regex``'s process-wide cache."""
    return regex.compile(pattern, regex.V0, cache_pattern=False)


def compile_hot(pattern: str) -> re.Pattern[str] | regex.Pattern[str]:
    """Compile the one joined pattern a form is matched with on the hot path (``parse_*``).

    The standard library's ``re`` is 2-3 times faster than ``regex`` here and no less safe: this
    path passes no timeout to either engine, and rests on ``check_pattern`` having rejected nested
    unbounded repeats and backreferences, and on the identifier length limit. Syntax that only
    ``regex`` knows keeps the ``regex`` engine, and so does syntax both engines accept but read
    differently: POSIX classes and nested sets (``[[:alpha:]]`` is a class in ``regex``, a set of
    characters in ``re``).
    """
    if "[[" in pattern or "[:" in pattern:
        return compile_full(pattern)
    try:
        return re.compile(pattern)
    except re.error:
        return compile_full(pattern)


# any (?...) but named and non-capturing groups: flags, lookarounds
_GROUP_SYNTAX = re.compile(r"\(\?(?!P<|:)")


def compile_ascii(pattern: str) -> re.Pattern[str] | None:
    """The stdlib equivalent of a ``regex``-only pattern on ASCII input, when there is one.

    A Unicode property (``\\p{L}``) becomes the ASCII characters it matches (found by asking
    ``regex``), so on a string that ``str.isascii()`` the two patterns match alike, and the hot path
    keeps the fast engine for the common case. None when the pattern uses anything else only
    ``regex`` knows, or flags.
    """
    if _GROUP_SYNTAX.search(pattern) or "[:" in pattern:  # flags, lookarounds, POSIX classes
        return None
    out: list[str] = []
    i, in_class, class_start = 0, False, 0
    while i < len(pattern):
        c = pattern[i]
        prop = _UNICODE_PROPERTY.match(pattern, i) if c == "\\" else None
        if prop is not None:
            members = "".join(
                re.escape(chr(x)) for x in range(128) if regex.fullmatch(prop.group(), chr(x))
            )
            out.append(members if in_class else f"[{members}]" if members else "(?!)")
            i = prop.end()
            continue
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if not in_class and c == "[":
            in_class, class_start = True, i + 1 + (pattern[i + 1 : i + 2] == "^")
        elif in_class and c == "]" and i > class_start:
            in_class = False
        out.append(c)
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return None
