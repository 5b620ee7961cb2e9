"""What ``GitHubAPI.read_tree`` returns: the files read, and the ones deliberately not read.

Both implementations (``github_client`` over HTTP, ``local_github`` over git) return a ``TreeFiles``.
A file is left out of the mapping, and named in ``skipped`` with the reason, when it is

- larger than ``MAX_BLOB_BYTES`` (10 MB: no registry file is anywhere near that, and reading it
  would cost memory and a slow request for nothing a check can use), or
- a symbolic link (the bot never follows symlinks; ``GitSnapshot`` refuses them the same way), or
- a submodule (a commit, not a file).

A missing file and a skipped file are therefore different: ``"path" in tree.skipped`` lets the
pipeline report "too large to review" instead of "missing". ``skipped_ids`` keeps each skipped entry's
object id (so a diff of two trees sees a changed symlink target), and ``cut`` says why a listing is not
whole (GitHub stops a recursive tree listing at 100,000 entries).
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_BLOB_BYTES = 10 * 1024 * 1024


class TreeFiles(dict[str, bytes]):
    """path -> content, plus ``skipped``: path -> why it was not read (``skipped_ids``: its object id)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: dict[str, str] = {}
        self.skipped_ids: dict[str, str] = {}
        self.cut = ""


def under_prefixes(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``prefixes`` or inside one of them (an empty prefix is the root)."""
    return any(not prefix or path == prefix or path.startswith(prefix + "/") for prefix in prefixes)


def normalise_prefixes(prefixes: Sequence[str] | str) -> tuple[str, ...]:
    """Strip slashes; a bare string is one prefix (not a sequence of characters)."""
    items = [prefixes] if isinstance(prefixes, str) else list(prefixes)
    return tuple(p.strip("/") for p in items)


def too_large(size: int) -> str:
    return f"{size} bytes, over the {MAX_BLOB_BYTES} byte limit"
