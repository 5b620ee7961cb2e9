"""The checks, one module per rule family, combined in one place.

Each module exports ``RULES`` (rule id -> one-paragraph description, shown in the README and in
SARIF) and ``check(review) -> Iterable[Finding]``.
"""

from __future__ import annotations

from types import ModuleType

from bot.core import incomplete
from bot.review import engine
from bot.review.checks import (
    edge,
    entry,
    examples,
    facets,
    keys,
    lint,
    naming,
    owners,
    ownership,
    samples,
    spec,
    uris,
    versions,
)
from bot.review.checks import format as formatting  # the module is named by its rule family
from bot.review.input import Check

FAMILIES: tuple[ModuleType, ...] = (
    edge,
    entry,
    owners,
    ownership,
    uris,
    facets,
    keys,
    lint,
    examples,
    samples,
    versions,
    spec,
    naming,
    formatting,
)
CHECKS: tuple[Check, ...] = tuple(module.check for module in FAMILIES)

# Rules about the change itself, computed from the change set: never pre-existing, so the judge
# never matches them against the base side (which is reviewed with the same change set and can
# compute them too).
CHANGE_RULES: frozenset[str] = frozenset(
    {
        "versions/published-modified",  # a published copy the change edits, deletes or renames
        # base -> head versions
        "versions/not-bumped",
        "versions/insufficient-bump",
        "versions/not-increased",
        "entry/name-collision",  # a name the change claims
        # who must approve this change
        "owners/approval-required",
        "owners/codeowners-change-needs-approval",
        "spec/not-bumped",  # the specification changed without a new version
        "spec/removed",  # the specification deleted or moved
        # breaks against published versions that the base did not already have
        "versions/transitive-break",
        # who must approve a change of ownership or steering files
        "ownership/steering-file-change",
        "ownership/mirror-change",  # who must approve a change of the published mirror
        "ownership/spec-change",  # who must approve a change of the specification
        "bot/unread-path",
        "bot/change-not-listed",  # where the review's view of the change ends
    }
)


def all_rules() -> dict[str, str]:
    """Every rule id the checks can report, with its description."""
    rules: dict[str, str] = {**engine.RULES, **incomplete.RULES}
    for module in FAMILIES:
        rules.update(module.RULES)
    return rules
