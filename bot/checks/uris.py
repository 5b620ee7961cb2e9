"""Placeholder for the uris rule family (being written); yields no findings yet."""

from __future__ import annotations

from collections.abc import Iterator

from bot.engine import ReviewInput
from bot.findings import Finding

RULES: dict[str, str] = {}


def check(review: ReviewInput) -> Iterator[Finding]:
    return iter(())
