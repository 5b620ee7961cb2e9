"""Many files in one GitHub request: GraphQL ``repository { object(...) { ... on Blob { text } }
}``, aliased.

REST gives one blob per request; a review reads about 50 (``docs/github.md``). GraphQL's
``Repository.object`` takes a blob's ``oid`` or a ``REV:PATH`` expression, and one query may carry
many such fields under aliases. Only what GraphQL returns exactly is used: a blob whose ``text`` is
null (binary), truncated, or whose UTF-8 length differs from ``byteSize`` (bytes that are not UTF-8,
replaced) is left out, and the caller reads it over REST.

GitHub's limits: the node limit (500,000) counts connections only, and these fields are none, so a
query costs one rate-limit point; GitHub stops a query after 10 seconds. A batch therefore stays
small: at most ``MAX_OBJECTS`` fields and ``MAX_BYTES`` of blob content (sizes from the tree
listing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from bot.github import graphql_errors

MAX_OBJECTS = 200
MIN_OBJECTS = 10  # batches are halved down to this when GitHub finds a query too big or too slow
MAX_BYTES = 2 * 1024 * 1024
BLOB_FIELDS = "__typename ... on Blob { byteSize isBinary isTruncated text }"
TREE_FIELDS = " ... on Tree { entries { name mode } }"
SYMLINK_MODE = 0o120000
# an object GraphQL failed to give (an error names its field): not an absent one
FAILED: Mapping[str, Any] = MappingProxyType({"__typename": "GraphQLError"})


def objects_query(
    fields: Sequence[tuple[str, str]], trees: bool = False
) -> tuple[str, dict[str, Any]]:
    """Query text and variables for ``[(argument, value)]`` (argument ``oid`` or ``expression``):
    field ``o<i>`` of the answer is the object of the i-th pair, a blob's content (and with
    ``trees`` a folder's entries), spelled once in a fragment."""
    params = ", ".join(
        f"$v{i}: {'GitObjectID' if arg == 'oid' else 'String'}!"
        for i, (arg, _) in enumerate(fields)
    )
    body = " ".join(f"o{i}: object({arg}: $v{i}) {{ ...f }}" for i, (arg, _) in enumerate(fields))
    query = (
        f"query($owner: String!, $name: String!, {params}) "
        f"{{ repository(owner: $owner, name: $name) {{ {body} }} }} "
        f"fragment f on GitObject {{ {BLOB_FIELDS}{TREE_FIELDS if trees else ''} }}"
    )
    return query, {f"v{i}": value for i, (_, value) in enumerate(fields)}


def blob_bytes(node: Mapping[str, Any] | None) -> bytes | None:
    """The exact content of a ``Blob`` answer, or None when GraphQL could not give it exactly."""
    if (
        not node
        or node.get("__typename") != "Blob"
        or node.get("isTruncated")
        or node.get("isBinary")
    ):
        return None
    text = node.get("text")
    if not isinstance(text, str):
        return None
    data = text.encode("utf-8")
    return data if len(data) == node.get("byteSize") else None


def answers(data: Any, count: int) -> list[Mapping[str, Any] | None]:
    """The ``o<i>`` objects of a response: None where missing, ``FAILED`` where an error's ``path``
    names the field (GraphQL's partial answer: the field null, not absent). ``ValueError`` for a
    response without a repository, or with an error that names none of the fields (GraphQL errors,
    not an answer to this query)."""
    repo = ((data or {}).get("data") or {}).get("repository") if isinstance(data, dict) else None
    errors = data.get("errors") if isinstance(data, dict) else None
    errors = errors if isinstance(errors, list) else []
    fields = {f"o{i}" for i in range(count)}
    failed = graphql_errors.aliases(errors)
    if not isinstance(repo, dict) or failed is None or not failed <= fields:
        raise ValueError(
            graphql_errors.message(errors) if errors else "no repository in the answer"
        )
    return [
        FAILED
        if f"o{i}" in failed
        else node
        if isinstance(node := repo.get(f"o{i}"), dict)
        else None
        for i in range(count)
    ]


def failed(*nodes: Mapping[str, Any] | None) -> bool:
    """Whether GraphQL failed any of ``nodes`` (``FAILED``): REST must read what they tell."""
    return any(node is FAILED for node in nodes)


def entry_mode(folder: Mapping[str, Any] | None, name: str) -> int | None:
    """The git mode of ``name`` in a ``Tree`` answer (None when it is not listed)."""
    for entry in (folder or {}).get("entries") or ():
        if isinstance(entry, dict) and entry.get("name") == name:
            return int(entry.get("mode") or 0)
    return None


class QueryTooBig(Exception):
    """GitHub stopped the query for its resource limits, or it timed out: a smaller batch may
    pass."""


def too_big(exc: BaseException) -> bool:
    """Whether a failed query says it was too big or too slow: GraphQL's
    ``RESOURCE_LIMITS_EXCEEDED``, a 504, or a request that timed out."""
    text = str(exc).lower()
    status = getattr(exc, "status", None)
    return (
        "resource limits" in text
        or "resource_limits" in text
        or status == 504
        or (status == 0 and ("timed out" in text or "timeout" in text))
    )


def nearest_first(
    wanted: str,
    path_of: Mapping[str, str],
    size_of: Mapping[str, int],
    candidates: Iterable[str],
    limit: int = MAX_OBJECTS,
) -> list[str]:
    """``wanted`` and then the candidates whose paths lie nearest to its path (the same folder
    first), as many as one batch holds (``limit`` objects, ``MAX_BYTES``)."""
    home = path_of.get(wanted, "").split("/")[:-1]

    def distance(sha: str) -> tuple[int, str]:
        folder = path_of.get(sha, "").split("/")[:-1]
        shared = next(
            (i for i, (a, b) in enumerate(zip(home, folder, strict=False)) if a != b),
            min(len(home), len(folder)),
        )
        return (len(home) - shared) + (len(folder) - shared), path_of.get(sha, "")

    batch, total = [wanted], size_of.get(wanted, 0)
    for sha in sorted((c for c in candidates if c != wanted), key=distance):
        if len(batch) >= limit:
            break
        if total + size_of.get(sha, 0) > MAX_BYTES:
            continue
        batch.append(sha)
        total += size_of.get(sha, 0)
    return batch
