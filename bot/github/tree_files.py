"""What ``GitHubAPI.read_tree`` returns: the files read, and the ones deliberately not read.

More in docs/module-notes.md (bot/github/tree_files.py).
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_BLOB_BYTES = 10 * 1024 * 1024


class TreeFiles(dict[str, bytes]):
    """path -> content, plus ``skipped``: path -> why it was not read (``skipped_ids``: its object
    id)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: dict[str, str] = {}
        self.skipped_ids: dict[str, str] = {}
        self.cut = ""


def under_prefixes(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``prefixes`` or inside one of them (an empty prefix is the
    root)."""
    return any(not prefix or path == prefix or path.startswith(prefix + "/") for prefix in prefixes)


def normalise_prefixes(prefixes: Sequence[str] | str) -> tuple[str, ...]:
    """Strip slashes; a bare string is one prefix (not a sequence of characters)."""
    items = [prefixes] if isinstance(prefixes, str) else list(prefixes)
    return tuple(p.strip("/") for p in items)


def too_large(size: int) -> str:
    return f"{size} bytes, over the {MAX_BLOB_BYTES} byte limit"
