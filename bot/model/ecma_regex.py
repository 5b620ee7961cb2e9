"""A JSON Schema ``pattern`` (ECMA-262) rewritten so that Python's ``regex`` engine means by it what
jsonschema-rs means.

The verdicts come from jsonschema-rs; the pure-Python validator decides where jsonschema-rs cannot
(a schema over its work limit) and explains its failures. Where the two read a pattern
differently, one string was judged two ways: ``"a\\n"`` against ``"^[a-z]+$"`` (Python's ``$``
also matches before a final newline), ``"\u0663"`` against ``"^\\d$"`` (Python's ``\\d`` is every
Unicode digit). The rewrite gives the shorthand classes ECMA-262's ASCII and whitespace sets, the
ones jsonschema-rs uses (``tests/test_ecma_regex.py`` measures them), ``\\cX`` its control
character, the regex crate's ``\\x{...}`` a code point, and spells ``^`` and ``$`` out by the
flags in force where they stand (``$`` the end of input; in multi-line mode before a ``\\n`` too).
One scan finds those flags as the regex crate does: an escaped ``\\(`` or a ``(`` in a class opens
no group, a flag holds to the end of its group, a verbose-mode comment is text; the crate's ``R``
(CRLF mode; Python's ``(?R)`` recurses) and ``U`` are spelled out or dropped. Everything else is
left as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.small_cache import small_cache

WHITESPACE = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
# what each shorthand holds, as the inside of a character class
SHORTHANDS = {"d": "0-9", "w": "A-Za-z0-9_", "s": WHITESPACE}
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@small_cache(maxsize=1024)
def python_pattern(pattern: str) -> str:
    """``pattern`` as Python's ``regex`` module must read it to match what ECMA-262 matches."""
    out: list[str] = []
    scopes: list[Flags] = []  # the flags in force outside each open group
    flags = Flags()
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            text, length = _escape(pattern, i, in_class=False)
            out.append(text)
            i += length
        elif char == "[":
            end = _class_end(pattern, i)
            if end is None:  # unterminated: left for the engine to refuse
                out.append(pattern[i:])
                break
            out.append(_class(pattern[i : end + 1]))
            i = end + 1
        elif char == "(":
            group = _flag_group(pattern, i)
            if group is None or group[1] == ":":  # a group: its flags end with it
                scopes.append(flags)
            if group is None:
                out.append(char)
                i += 1
                continue
            flags = flags.turned(group[0])
            out.append(_python_flags(*group[:2]))
            i = group[2]
        elif char == ")":
            flags = scopes.pop() if scopes else flags
            out.append(char)
            i += 1
        elif char == "#" and flags.verbose:  # a comment, to the end of the line
            end = pattern.find("\n", i)
            end = len(pattern) if end == -1 else end
            out.append(pattern[i:end])
            i = end
        elif char in "^$":
            out.append(_ANCHORS[char, flags.multiline, flags.crlf and flags.multiline])
            i += 1
        elif char == "." and flags.crlf and not flags.dotall:
            out.append("[^\\r\\n]")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


# ``^`` and ``$`` as the rewrite spells them (by multi-line mode, then CRLF mode), whatever flags
# Python's ``regex`` holds there: ECMA's (and jsonschema-rs') ``$`` is the end of input; multi-line
# mode adds the places after (``^``) or before (``$``) a ``\n``, CRLF mode a ``\r`` too, never
# between ``\r`` and ``\n``
_ANCHORS = {
    ("^", False, False): "(?:\\A)",
    ("^", True, False): "(?:\\A|(?<=\\n))",
    ("^", True, True): "(?:\\A|(?<=\\n)|(?<=\\r)(?!\\n))",
    ("$", False, False): "(?:\\Z)",
    ("$", True, False): "(?:\\Z|(?=\\n))",
    ("$", True, True): "(?:\\Z|(?=\\r)|(?<!\\r)(?=\\n))",
}


@dataclass(frozen=True)
class Flags:
    """The inline flags in force at a point of a pattern that change how it is scanned or read:
    ``m``, ``x``, ``s`` and the regex crate's CRLF mode ``R``."""

    multiline: bool = False
    verbose: bool = False
    dotall: bool = False
    crlf: bool = False

    def turned(self, text: str) -> Flags:
        """These flags after an inline flag group's letters (``im``, ``x-m``)."""
        on, _, off = text.partition("-")
        return Flags(
            *(
                (letter in on or held) and letter not in off
                for letter, held in zip(
                    "mxsR", (self.multiline, self.verbose, self.dotall, self.crlf), strict=True
                )
            )
        )


def _python_flags(letters: str, ends: str) -> str:
    """An inline flag group as Python's ``regex`` reads it: without the regex crate's ``R`` (which
    the anchors and ``.`` spell out; Python's ``(?R)`` recurses into the whole pattern) and ``U``
    (which swaps greediness: whether a match exists does not change)."""
    kept = "".join(c for c in letters if c not in "RU")
    if kept.strip("-") == "":
        return "(?:" if ends == ":" else ""
    return f"(?{kept.rstrip('-')}{ends}"


_FLAG_GROUP = re.compile(r"\(\?([A-Za-z]*(?:-[A-Za-z]*)?)([:)])")


def _flag_group(pattern: str, at: int) -> tuple[str, str, int] | None:
    """An inline flag group at ``at``: its letters, ``)`` (the flags hold to the end of the
    enclosing group) or ``:`` (they hold inside this group), and where what follows it starts.
    None for any other ``(``."""
    match = _FLAG_GROUP.match(pattern, at)
    if match is None or not match[1]:
        return None
    return match[1], match[2], match.end()


def _escape(pattern: str, at: int, *, in_class: bool) -> tuple[str, int]:
    """The escape at ``at`` as Python reads it, and how many characters of ``pattern`` it takes."""
    letter = pattern[at + 1]
    if letter.lower() in SHORTHANDS:
        inside = SHORTHANDS[letter.lower()]
        if letter.islower():
            return (inside if in_class else f"[{inside}]"), 2
        return f"[^{inside}]", 2  # in a class, only after ``_class`` took the negated ones out
    if letter == "c" and at + 2 < len(pattern) and pattern[at + 2] in LETTERS:
        return f"\\x{ord(pattern[at + 2]) % 32:02x}", 3
    braced = _BRACED.match(pattern, at) if letter in "xu" else None
    if braced is not None and int(braced[1], 16) <= 0x10FFFF:  # the regex crate's \x{...}
        return f"\\U{int(braced[1], 16):08x}", braced.end() - at
    return pattern[at : at + 2], 2


_BRACED = re.compile(r"\\[xu]\{([0-9A-Fa-f]{1,8})\}")


def _class_end(pattern: str, start: int) -> int | None:
    """The index of the ``]`` closing the class opened at ``start``, as Python reads it (a ``]``
    first in the class is a literal there; ECMA-262's empty class is refused by jsonschema-rs)."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return None


def _class(text: str) -> str:
    """A character class (``[...]`` with its brackets) rewritten; a class holding ``\\D``, ``\\W``
    or ``\\S`` becomes an alternation, since a negated set cannot sit inside another here."""
    negated = text.startswith("[^")
    body = text[2 if negated else 1 : -1]
    kept: list[str] = []
    outside: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            letter = body[i + 1]
            if letter in "DWS":
                outside.append(f"[^{SHORTHANDS[letter.lower()]}]")
                i += 2
                continue
            text, length = _escape(body, i, in_class=True)
            kept.append(text)
            i += length
        else:
            kept.append(body[i])
            i += 1
    inner = "".join(kept)
    if not outside:
        return f"[{'^' if negated else ''}{inner}]"
    alternatives = "|".join([f"[{inner}]", *outside] if inner else outside)
    # one group either way: a quantifier after the class repeats the whole of it
    return f"(?:(?!{alternatives})[\\s\\S])" if negated else f"(?:{alternatives})"
