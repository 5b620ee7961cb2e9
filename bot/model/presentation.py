"""What one ``registry.json`` shows on the published site, bounded alike by the review
(``entry/use-cases``, ``entry/blank-name``) and by the site, which applies the same bounds when the
review was bypassed.

The same for the facets an entry lists and the versions it declares for them
(``registry.schema.json``: ``MAX_FACETS``, ``MAX_VERSIONS``).

Use cases: the real registry declares none and the proposal lists six, each id under 50 characters;
an entry may name ``MAX_USE_CASES`` distinct ones (more than three times the proposal's list) of up
to ``MAX_USE_CASE_LENGTH`` characters. Every undescribed use case is a page of its own, so without a
bound one entry's owners alone could publish thousands of pages.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from bot.model.registry import declared_facets

MAX_USE_CASES = 20
MAX_USE_CASE_LENGTH = 100
# a facet list (the real registry's longest, core's, has 30) and the versions declared for a facet
# (none declared in the real registry; its most published versions of one facet are 5): each is a
# chip of the card, a row of the explorer's data and of the discovery index
MAX_FACETS = 1000
MAX_VERSIONS = 100
ALIASES = {
    "discovery": "catalog",
    "data-catalog": "catalog",
    "data-discovery": "catalog",
    "data-lineage": "lineage",
    "data-governance": "governance",
    "quality": "data-quality",
    "data-reliability": "data-quality",
    "bcbs239": "bcbs-239",
    "gdpr": "privacy",
    "ccpa": "privacy",
}
# letters and symbols that draw nothing (Hangul fillers, the blank Braille pattern)
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# format, control, separator, combining, private-use, unassigned and surrogate code points
_UNSEEN = frozenset(("Cf", "Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"))


def case_id(text: str) -> str:
    """A use case as an id: lower case, spaces and ``_`` as ``-`` (``"Data quality"`` is
    ``data-quality``), at most ``MAX_USE_CASE_LENGTH`` characters."""
    cleaned = re.sub(r"[\s_]+", "-", text.strip().lower())[:MAX_USE_CASE_LENGTH]
    return ALIASES.get(cleaned, cleaned)


def declared_use_cases(doc: Any) -> dict[str, str]:
    """Each distinct use case id a ``registry.json`` value declares -> the JSON pointer of its
    first declaration, in the order of the file."""
    out: dict[str, str] = {}
    for declared in declared_facets(doc):
        _, block, written, token = declared.pointer.split("/", 3)
        details = doc[block].get(written)
        key = token.replace("~1", "/").replace("~0", "~")
        cases = details.get(key, {}) if isinstance(details, dict) else None
        cases = cases.get("use_cases") if isinstance(cases, dict) else None
        for i, case in enumerate(cases if isinstance(cases, list) else ()):
            if isinstance(case, str) and case:
                out.setdefault(case_id(case), f"{declared.pointer}/use_cases/{i}")
    return out


def visible(text: str) -> bool:
    """Whether ``text`` draws anything: a character that is not a space, an invisible (format,
    control), combining or unassigned one, nor a letter that draws nothing (Hangul filler)."""
    return any(unicodedata.category(c) not in _UNSEEN and c not in _BLANK for c in text)
