"""Webhook signature verification: the one place that decides whether a delivery came from
GitHub."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

PREFIX = "sha256="


def sign(body: bytes, secret: str) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(body: bytes, header: str | None, secrets: Iterable[str]) -> bool:
    """True when ``header`` is the HMAC-SHA256 of ``body`` under one of ``secrets`` (constant
    time)."""
    if not header or not header.startswith(PREFIX):
        return False
    given = header.encode("ascii", "replace")
    ok = False
    for secret in secrets:  # compare against every secret, so timing does not reveal which matched
        ok |= hmac.compare_digest(sign(body, secret).encode(), given)
    return ok
