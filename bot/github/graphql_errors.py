"""What GitHub's GraphQL ``errors`` say. GraphQL answers them with HTTP 200, so the HTTP status
does not tell a rate limit, GitHub's "no" and GitHub failing apart; their ``type`` and message do.

- A rate limit: ``type`` ``RATE_LIMITED`` ("Rate limits and query limits for the GraphQL API";
  some clients see ``RATE_LIMIT``, code ``graphql_rate_limit``), or a message that says so.
- A refusal: ``FORBIDDEN``, ``INSUFFICIENT_SCOPES``, ``NOT_FOUND``, ``UNPROCESSABLE``, or an error
  in the query itself (no type; a validation ``extensions.code``): retrying changes nothing.
- Anything else (no type, "Something went wrong while executing your query", ``INTERNAL``,
  ``SERVICE_UNAVAILABLE``, a timeout): GitHub failing, worth trying again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

RATE_LIMIT_TYPES = frozenset({"RATE_LIMITED", "RATE_LIMIT"})
# the HTTP status REST answers for the same "no"
REFUSALS: Mapping[str, int] = {
    "FORBIDDEN": 403,
    "INSUFFICIENT_SCOPES": 403,
    "NOT_FOUND": 404,
    "UNPROCESSABLE": 422,
}
RATE_LIMITED = 429
FAILED = 502


def _fields(error: Any) -> tuple[str, str, str]:
    """``(type, extensions code, message)`` of one error ("" where absent)."""
    if not isinstance(error, Mapping):
        return "", "", str(error)
    extensions = error.get("extensions")
    extensions = extensions if isinstance(extensions, Mapping) else {}
    kind = error.get("type") or extensions.get("type") or ""
    code = error.get("code") or extensions.get("code") or ""
    return str(kind).upper(), str(code), str(error.get("message") or "")


def _status(error: Any) -> int:
    """The HTTP status REST would answer for one error."""
    kind, code, message = _fields(error)
    if kind in RATE_LIMIT_TYPES or code == "graphql_rate_limit" or "rate limit" in message.lower():
        return RATE_LIMITED
    if kind in REFUSALS:
        return REFUSALS[kind]
    return 422 if not kind and code else FAILED


def status(errors: Sequence[Any]) -> int:
    """The HTTP status REST would answer for ``errors``: 429 when any is a rate limit, 502 when
    any is GitHub failing, else the refusal's (403 before the others)."""
    found = {_status(e) for e in errors} or {FAILED}
    for first in (RATE_LIMITED, FAILED, 403):
        if first in found:
            return first
    return min(found)


def message(errors: Sequence[Any]) -> str:
    """The errors' messages, in one line."""
    return "; ".join(_fields(e)[2] or str(e) for e in errors) or "GraphQL errors"


def aliases(errors: Sequence[Any]) -> set[str] | None:
    """The fields under ``repository`` that ``errors`` name in their ``path`` (an alias such as
    ``o0``); None when one names none of them (an error the caller cannot attribute)."""
    named: set[str] = set()
    for error in errors:
        path = error.get("path") if isinstance(error, Mapping) else None
        if not isinstance(path, list) or len(path) < 2 or path[0] != "repository":
            return None
        named.add(str(path[1]))
    return named
