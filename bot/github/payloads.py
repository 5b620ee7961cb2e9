"""The shape of a verified payload, checked at the door: the fields the bot reads, per event, and
their types.

A signed payload is GitHub's, but the code that reads it must not trust its shape: a pull request
number ``"abc"`` answered 500 with a traceback, and ``1e30`` (orjson reads a number over 64 bits as
a float) went through ``int()`` to SQLite's overflow and a misleading 503. ``problem()`` names the
first field of ``FIELDS`` that has the wrong type, so the web answers 400 with that reason before
``decide()`` runs.

A field that is absent or ``null`` is accepted here: ``decide()`` treats it as missing (for example
a pull request event without an installation is ignored). Only present values of the wrong type are
refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

# GitHub's ids and numbers are positive 64-bit integers (and SQLite's integers are)
MAX_ID = 2**63 - 1
SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories
# no "." or ".." part
REPO = re.compile(r"(?!\.+/)[A-Za-z0-9_.-]{1,100}/(?!\.+$)[A-Za-z0-9_.-]{1,100}")
# a comment body is at most 65,536 characters; anything far longer is not GitHub's
MAX_STRING = 1 << 20


def _id(value: Any) -> bool:
    return type(value) is int and 0 < value <= MAX_ID  # ``type``: a JSON true is not a number


def _string(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_STRING


# kind -> (test, what the answer says was expected)
KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "object": (lambda v: isinstance(v, dict), "an object"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "string": (_string, "a string"),
    "id": (_id, "a positive 64-bit integer"),
    "sha": (
        lambda v: isinstance(v, str) and SHA.fullmatch(v) is not None,
        "a commit SHA (40 or 64 hex digits)",
    ),
    "repo": (
        lambda v: isinstance(v, str) and REPO.fullmatch(v) is not None,
        "an owner/name repository name",
    ),
}

_COMMON = (
    ("action", "string"),
    ("installation", "object"),
    ("installation.id", "id"),
    ("repository", "object"),
    ("repository.full_name", "repo"),
)
_PULL = (
    ("pull_request", "object"),
    ("pull_request.number", "id"),
    ("pull_request.head", "object"),
    ("pull_request.head.sha", "sha"),
)


def _check(event: str) -> tuple[tuple[str, str], ...]:
    return (
        (event, "object"),
        (f"{event}.head_sha", "sha"),
        (f"{event}.pull_requests", "list"),
        (f"{event}.pull_requests[]", "object"),
        (f"{event}.pull_requests[].number", "id"),
    )


# event -> (dotted path, kind): every field events.decide() reads; ``[]`` is each element of a list
FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "pull_request": (*_COMMON, ("number", "id"), *_PULL, ("changes", "object")),
    # GitHub sends ``sender`` (who did it) with every event; only a review's is read (a bot's own)
    "pull_request_review": (*_COMMON, *_PULL, ("sender", "object"), ("sender.type", "string")),
    "check_suite": (*_COMMON, *_check("check_suite")),
    "check_run": (*_COMMON, *_check("check_run")),
    "issue_comment": (
        *_COMMON,
        ("issue", "object"),
        ("issue.number", "id"),
        ("issue.pull_request", "object"),
        ("comment", "object"),
        ("comment.body", "string"),
        ("comment.user", "object"),
        ("comment.user.login", "string"),
        ("comment.user.type", "string"),
    ),
    "push": (
        ("installation", "object"),
        ("installation.id", "id"),
        ("repository", "object"),
        ("repository.full_name", "repo"),
        ("repository.default_branch", "string"),
        ("ref", "string"),
        ("after", "sha"),
    ),
    "installation": (("action", "string"),),
    "installation_repositories": (("action", "string"),),
    "github_app_authorization": (("action", "string"),),
}


def _values(node: Any, parts: list[str], path: str) -> Iterator[tuple[str, Any]]:
    """(concrete path, value) of every value at ``parts`` under ``node``; nothing where a parent is
    absent, null or of the wrong type (that parent is reported on its own)."""
    if not parts:
        yield path, node
        return
    head, rest = parts[0], parts[1:]
    if head.endswith("[]"):
        items = node.get(head[:-2]) if isinstance(node, dict) else None
        if isinstance(items, list):
            for i, item in enumerate(items):
                yield from _values(item, rest, f"{path}{head[:-2]}[{i}].")
        return
    if isinstance(node, dict) and node.get(head) is not None:
        yield from _values(node[head], rest, f"{path}{head}.")


def _kind_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer out of range" if abs(value) > MAX_ID or value <= 0 else "an integer"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        float: "a number that is not a 64-bit integer",
    }.get(type(value), type(value).__name__)


def problem(event: str, payload: dict[str, Any]) -> str | None:
    """Why ``payload`` cannot be a well-formed ``event`` delivery, or None when every field the bot
    reads has its type. Events the bot does not handle have no fields to check."""
    for dotted, kind in FIELDS.get(event, ()):
        test, expected = KINDS[kind]
        for path, value in _values(payload, dotted.split("."), ""):
            if not test(value):
                got = _kind_name(value)
                if isinstance(value, str) and kind in ("sha", "repo") and len(value) <= 100:
                    got = f"{value!r}"
                return f"payload field {path.rstrip('.')} must be {expected}, got {got}"
    return None
