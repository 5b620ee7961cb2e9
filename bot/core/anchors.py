"""Where a finding inside a list item is matched across a change: at the item's identity, not its
index.

An item inserted before another shifts the other's index, not its problems: a finding pointed at
``/forms/2/name`` is matched at ``/forms/[{"name":...,"namespace":...}]/name`` (``Finding.anchor``),
the identity being the item's own naming members (``IDENTITY_KEYS``) or, for a scalar, its value.
An item with neither (an inline ``allOf`` object branch) is named by a digest of its content
(``CONTENT``), and matched at its index only where its content changed (``at_place``, the engine's
later pass): an insert before it leaves it as it was; an edit inside it alone too; both make it new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from bot.core.jsondoc import escape_pointer_token

# members that name an item of a list (a naming form or example, a dataset, a URI, a pattern, a
# schema's branch that is a reference)
IDENTITY_KEYS = (
    "$ref",
    "id",
    "runId",
    "eventType",
    "namespace",
    "name",
    "field",
    "uri",
    "url",
    "scheme",
    "namespacePattern",
    "pattern",
)
MAX_IDENTITY_CHARS = 200  # longer identities are compared by digest
CONTENT = "[="  # how a token naming an item by its content starts

Identity = Callable[[Any], str | None]


def identity(item: Any) -> str | None:
    """What names ``item`` among its siblings: its scalar ``IDENTITY_KEYS`` members (an object),
    its value (a scalar), or None (nothing names it)."""
    if isinstance(item, dict):
        named = {k: item[k] for k in IDENTITY_KEYS if _scalar(item.get(k))}
        return bounded(named) if named else None
    if _scalar(item) or item is None:
        return bounded(item)
    return None


def token(key: str) -> str:
    """The pointer token an item with identity ``key`` is matched at."""
    return escape_pointer_token(f"[{key}]")


def content(item: Any) -> str:
    """What names an item without an identity: a digest of its content."""
    text = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "=" + digest(text)


def keyed_pointer(document: Any, pointer: str, name: Identity = identity) -> str | None:
    """``pointer`` with each array index replaced by ``[identity]`` of the item it names (by
    ``[=digest]`` of its content without one), or None when no index is replaced (the pointer is
    its own anchor)."""
    if not pointer:
        return None
    node = document
    out: list[str] = []
    for part in pointer.split("/")[1:]:
        if isinstance(node, list) and part.isascii() and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            key = name(node)
            out.append(token(content(node) if key is None else key))
        else:
            plain = part.replace("~1", "/").replace("~0", "~")
            node = node.get(plain) if isinstance(node, dict) else None
            out.append(part)
    keyed = "/" + "/".join(out)
    return None if keyed == pointer else keyed


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def bounded(value: Any) -> str:
    """``value`` as canonical JSON, or its digest past ``MAX_IDENTITY_CHARS``."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= MAX_IDENTITY_CHARS else digest(text)


def digest(text: str) -> str:
    """What stands for a long ``text`` in an identity or a subject."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def at_place(anchor: str, pointer: str) -> str:
    """``anchor`` with each item named by its content (``CONTENT``) named by its index in
    ``pointer`` instead: where a finding is matched once its item's content changed."""
    keyed, plain = anchor.split("/"), pointer.split("/")
    if len(keyed) != len(plain):
        return anchor
    return "/".join(p if k.startswith(CONTENT) else k for k, p in zip(keyed, plain, strict=True))
