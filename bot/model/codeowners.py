"""GitHub CODEOWNERS files: parse them as GitHub reads them, with line numbers, and match paths.

More in docs/module-notes.md (bot/model/codeowners.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import regex

from bot.core.regex_size import compile_unkept
from bot.core.snapshot import Snapshot, SnapshotError

ROOT_LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
MAX_BYTES = 3 * 1024 * 1024  # GitHub does not load a larger CODEOWNERS file
MAX_PATTERN_CHARS = 4096
# what one file's compiled expressions may take together, counted in characters of pathspec's
# translations (it escapes every brace, so a program grows with its expression, never by a count;
# about 83 bytes a character): a root CODEOWNERS with a line per entry of a 1,000-entry registry
# compiles about 30,000 when every line is tried
MAX_COMPILED_CHARS = 300_000
TIMED_OUT = "could not be matched within the bot's time limit"
MATCH_TIMEOUT_SECONDS = 0.05

# an organization's or an App's name: letters, digits and hyphens, at most 39
NAME = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
# a user's login: a name, or an Enterprise Managed User's ``handle_shortcode`` (the enterprise's
# short code after an underscore), at most 39 characters either way
LOGIN = r"(?=[A-Za-z0-9_-]{1,39}(?![A-Za-z0-9_-]))[A-Za-z0-9][A-Za-z0-9-]*(?:_[A-Za-z0-9]+)?"
USER_OWNER = re.compile(rf"@{LOGIN}")
TEAM_OWNER = re.compile(rf"@{NAME}/[A-Za-z0-9_][A-Za-z0-9_.-]*")
# a GitHub App's account (``dependabot[bot]``): it authors and reviews pull requests, but is never a
# CODEOWNERS owner nor a team member
BOT_LOGIN = re.compile(rf"{NAME}\[bot\]")
EMAIL_OWNER = re.compile(r"[^@\s/]+@[^@\s/]+\.[^@\s/.]+")
_TOKEN = re.compile(r"(?:\\.|\\$|[^\s\\])+")


def owner_key(owner: str) -> str:
    """The form owners and identities are compared in: no leading ``@``, case-folded."""
    return owner.strip().removeprefix("@").casefold()


def owner_kind(owner: str) -> str | None:
    """``user``, ``team`` or ``email`` for an owner GitHub accepts; ``None`` otherwise."""
    if USER_OWNER.fullmatch(owner):
        return "user"
    if TEAM_OWNER.fullmatch(owner):
        return "team"
    if EMAIL_OWNER.fullmatch(owner):
        return "email"
    return None


@dataclass(frozen=True)
class Problem:
    """A line GitHub skips (or a file it cannot load), located on its line and column."""

    kind: str  # "owner", "pattern" or "file"
    line: int
    column: int
    message: str


@dataclass(frozen=True, eq=False)
class Rule:
    """One valid line: its pattern and owners (empty: the matched files have no owner)."""

    line: int
    pattern: str
    owners: tuple[str, ...]
    expression: str = field(repr=False)  # pathspec's translation of the pattern
    prefix: str = field(repr=False)  # a literal every matching path starts with ("" when none)

    def matches(self, path: str) -> bool:
        """Whether the pattern matches ``path``; raises ``TimeoutError`` on a pathological pattern.

        The expression is compiled on first use: a root CODEOWNERS with a line per entry mostly
        holds lines whose literal prefix already rules them out.
        """
        if not path.startswith(self.prefix):
            return False
        return self._compiled.search(path, timeout=MATCH_TIMEOUT_SECONDS) is not None

    @property
    def compiled(self) -> bool:
        """Whether ``matches`` compiled the expression already."""
        return "_compiled" in self.__dict__  # where functools.cached_property keeps it

    @functools.cached_property
    def _compiled(self) -> regex.Pattern[str]:
        """Held by the rule, so by its file's review only (a small program is also shared by the
        files that repeat it: ``compile_unkept``)."""
        return compile_unkept(self.expression)


@dataclass
class CodeOwners:
    """A parsed CODEOWNERS file: its valid rules and the lines GitHub would skip."""

    path: str
    rules: tuple[Rule, ...] = ()
    problems: tuple[Problem, ...] = ()
    # line -> why its rule was not used: it hit the time limit, did not compile, or did not fit
    # ``MAX_COMPILED_CHARS``
    failed_lines: dict[int, str] = field(default_factory=dict)
    compiled_chars: int = 0

    @functools.cached_property
    def _by_prefix(self) -> tuple[dict[str, list[Rule]], list[Rule]]:
        """Anchored rules indexed by their literal prefix, and the rules that may match anywhere.

        A root CODEOWNERS of a large registry has a line per entry; the index keeps a lookup
        proportional to the path's depth instead of the number of lines.
        """
        anchored: dict[str, list[Rule]] = {}
        anywhere: list[Rule] = []
        for rule in self.rules:
            if rule.prefix:
                anchored.setdefault(rule.prefix, []).append(rule)
            else:
                anywhere.append(rule)
        return anchored, anywhere

    def _candidates(self, path: str) -> list[Rule]:
        anchored, anywhere = self._by_prefix
        keys = {path}
        for i, char in enumerate(path):
            if char == "/":
                keys.update((path[:i], path[: i + 1]))
        found = [*anywhere, *(r for key in keys for r in anchored.get(key, ()))]
        return sorted(found, key=lambda r: r.line, reverse=True)

    def rule_for(self, path: str) -> Rule | None:
        """The last rule matching ``path`` (relative to the folder the file governs), or
        ``None``."""
        for rule in self._candidates(path):
            # (a rule past the budget stays uncompiled, so it is refused again on every path)
            if not rule.compiled:
                if self.compiled_chars + len(rule.expression) > MAX_COMPILED_CHARS:
                    self.failed_lines[rule.line] = (
                        f"would take this file's compiled patterns over the bot's limit of "
                        f"{MAX_COMPILED_CHARS:,} characters"
                    )
                    continue
                self.compiled_chars += len(rule.expression)
            try:
                if rule.matches(path):
                    return rule
            except (TimeoutError, regex.error):
                self.failed_lines[rule.line] = TIMED_OUT
        return None

    def owners_of(self, path: str) -> tuple[str, ...] | None:
        """Owners of ``path``: ``None`` when no rule matches, ``()`` when the matching rule un-owns
        it."""
        rule = self.rule_for(path)
        return None if rule is None else rule.owners

    def all_owners(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o for rule in self.rules for o in rule.owners))


def _literal_prefix(pattern: str) -> str:
    """A prefix every path matched by an anchored pattern starts with, to skip most regex runs."""
    body = pattern.removeprefix("/")
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    if not anchored:
        return ""
    cut = len(body)
    for i, char in enumerate(body):
        if char in "*?[\\":
            cut = i
            break
    prefix = body[:cut]
    return prefix[: prefix.rfind("/") + 1] if cut < len(body) else prefix


def _pattern_problem(pattern: str, column: int) -> Problem | None:
    if not pattern.replace("\\", "").strip():  # `\` alone, or escaping only a space: no path
        return Problem(
            "pattern",
            0,
            column,
            f"pattern `{pattern}` is a lone `\\`, which names no file (a "
            "backslash escapes the character after it); GitHub skips this line",
        )
    if pattern.startswith("!"):
        return Problem(
            "pattern",
            0,
            column,
            f"pattern `{pattern}` uses `!` negation, which CODEOWNERS "
            "does not support; GitHub skips this line",
        )
    if pattern.startswith("\\#"):
        return Problem(
            "pattern",
            0,
            column,
            f"pattern `{pattern}` escapes `#` with `\\`, which CODEOWNERS "
            "does not support; GitHub skips this line",
        )
    for i, char in enumerate(pattern):
        if char in "[]" and (i == 0 or pattern[i - 1] != "\\"):
            return Problem(
                "pattern",
                0,
                column + i,
                f"pattern `{pattern}` uses a `[ ]` character range, "
                "which CODEOWNERS does not support; GitHub skips this line",
            )
    if len(pattern) > MAX_PATTERN_CHARS:
        return Problem(
            "pattern",
            0,
            column,
            f"pattern is {len(pattern):,} characters long, over the "
            f"bot's limit of {MAX_PATTERN_CHARS:,}",
        )
    return None


def _translate(pattern: str) -> tuple[str | None, str | None]:
    """pathspec's gitignore translation of ``pattern`` into a regular expression, or an error
    message (pathspec is imported here: a review that reads no CODEOWNERS file never needs it)."""
    from pathspec.patterns.gitignore import GitIgnorePatternError
    from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern

    try:
        raw, include = GitIgnoreBasicPattern.pattern_to_regex(pattern)
    except (GitIgnorePatternError, ValueError) as exc:
        return None, f"pattern `{pattern}` is not a valid gitignore-style pattern ({exc})"
    if raw is None or include is None:
        return None, f"pattern `{pattern}` matches nothing"
    return raw, None


def _parse_line(number: int, text: str) -> Rule | Problem | None:
    tokens: list[tuple[int, str]] = []
    for match in _TOKEN.finditer(text):
        if match.group().startswith("#"):
            break  # a comment runs to the end of the line
        tokens.append((match.start() + 1, match.group()))
    if not tokens:
        return None
    (column, pattern), owners = tokens[0], tokens[1:]
    problem = _pattern_problem(pattern, column)
    if problem is not None:
        return Problem(problem.kind, number, problem.column, problem.message)
    for owner_column, owner in owners:
        if owner_kind(owner) is None:
            return Problem(
                "owner",
                number,
                owner_column,
                f"`{owner}` is not an owner GitHub accepts "
                "(`@user`, `@org/team` or an e-mail address); GitHub skips this line",
            )
    expression, error = _translate(pattern)
    if expression is None:
        return Problem("pattern", number, column, f"{error}; GitHub skips this line")
    return Rule(number, pattern, tuple(o for _, o in owners), expression, _literal_prefix(pattern))


def parse(text: str, path: str = "CODEOWNERS") -> CodeOwners:
    """Parse CODEOWNERS text; every line GitHub would skip becomes a ``Problem`` on its line."""
    rules: list[Rule] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        parsed = _parse_line(number, line)
        if isinstance(parsed, Rule):
            rules.append(parsed)
        elif isinstance(parsed, Problem):
            problems.append(parsed)
    return CodeOwners(path, tuple(rules), tuple(problems))


def load(snapshot: Snapshot, path: str) -> CodeOwners | None:
    """Read and parse one CODEOWNERS file; ``None`` when absent. A file GitHub would not load (too
    large, unreadable) comes back with no rules and one ``file`` problem."""
    try:
        size = snapshot.size(path)
        if size is None:
            return None
        if size > MAX_BYTES:
            return CodeOwners(
                path,
                problems=(
                    Problem(
                        "file",
                        1,
                        1,
                        f"file is {size:,} bytes; GitHub does "
                        f"not load a CODEOWNERS file over {MAX_BYTES:,} bytes",
                    ),
                ),
            )
        data = snapshot.read(path)
    except SnapshotError as exc:
        return CodeOwners(path, problems=(Problem("file", 1, 1, f"cannot be read: {exc}"),))
    if data is None:
        return None
    return parse(data.decode("utf-8", "replace"), path)


@dataclass(frozen=True)
class RootOwners:
    """The one CODEOWNERS file GitHub enforces for a snapshot (``file`` is ``None`` when there is
    none)."""

    file: CodeOwners | None

    @classmethod
    def of(cls, snapshot: Snapshot) -> RootOwners:
        for location in ROOT_LOCATIONS:
            found = load(snapshot, location)
            if found is not None:
                return cls(found)
        return cls(None)

    @property
    def path(self) -> str | None:
        return None if self.file is None else self.file.path

    def rule_for(self, path: str) -> Rule | None:
        return None if self.file is None else self.file.rule_for(path)

    def owners_of(self, path: str) -> tuple[str, ...]:
        """Who GitHub requests for ``path`` (empty when no line matches or the line names no
        one)."""
        rule = self.rule_for(path)
        return () if rule is None else rule.owners


def same_owners(left: Iterable[str], right: Iterable[str]) -> bool:
    """Whether two owner lists name the same owners, compared as GitHub does
    (case-insensitively)."""
    return {owner_key(o) for o in left} == {owner_key(o) for o in right}
