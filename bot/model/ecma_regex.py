"""A JSON Schema ``pattern`` (ECMA-262) rewritten so that Python's ``regex`` engine means by it what
jsonschema-rs means.

The verdicts come from jsonschema-rs; the pure-Python validator decides where jsonschema-rs cannot
(a schema over its work limit) and explains its failures. Where the two read a pattern
differently, one string was judged two ways: ``"a\\n"`` against ``"^[a-z]+$"`` (Python's ``$``
also matches before a final newline), ``"\u0663"`` against ``"^\\d$"`` (Python's ``\\d`` is every
Unicode digit). The rewrite gives the shorthand classes ECMA-262's ASCII and whitespace sets, the
ones jsonschema-rs uses (``tests/test_ecma_regex.py`` measures them), ``$`` the end of input and
``\\cX`` its control character; everything else is left as written.
"""

from __future__ import annotations

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
    multiline = _has_multiline_flag(pattern)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(_escape(pattern, i, in_class=False))
            i += 3 if pattern[i + 1] == "c" and _control_letter(pattern, i) else 2
        elif char == "[":
            end = _class_end(pattern, i)
            if end is None:  # unterminated: left for the engine to refuse
                out.append(pattern[i:])
                break
            out.append(_class(pattern[i : end + 1]))
            i = end + 1
        elif char == "$" and not multiline:
            out.append("\\Z")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _escape(pattern: str, at: int, *, in_class: bool) -> str:
    letter = pattern[at + 1]
    if letter.lower() in SHORTHANDS:
        inside = SHORTHANDS[letter.lower()]
        if letter.islower():
            return inside if in_class else f"[{inside}]"
        return f"[^{inside}]"  # in a class, only after ``_class`` took the negated ones out
    if letter == "c" and _control_letter(pattern, at):
        return f"\\x{ord(pattern[at + 2]) % 32:02x}"
    return pattern[at : at + 2]


def _control_letter(pattern: str, at: int) -> bool:
    return at + 2 < len(pattern) and pattern[at + 2] in LETTERS


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
            kept.append(_escape(body, i, in_class=True))
            i += 3 if letter == "c" and _control_letter(body, i) else 2
        else:
            kept.append(body[i])
            i += 1
    inner = "".join(kept)
    if not outside:
        return f"[{'^' if negated else ''}{inner}]"
    alternatives = "|".join([f"[{inner}]", *outside] if inner else outside)
    # one group either way: a quantifier after the class repeats the whole of it
    return f"(?:(?!{alternatives})[\\s\\S])" if negated else f"(?:{alternatives})"


def _has_multiline_flag(pattern: str) -> bool:
    """Whether an inline flag group turns on multi-line mode (``$`` then ends lines too, on both
    engines)."""
    at = pattern.find("(?")
    while at != -1:
        j = at + 2
        while j < len(pattern) and pattern[j].isalpha():
            if pattern[j] == "m":
                return True
            j += 1
        at = pattern.find("(?", at + 2)
    return False
