"""A ``Snapshot`` of a commit on GitHub that downloads a file only when a check reads it.

Reading a pull request used to download every blob under the watched folders, including the whole
published mirror (``website/static/spec``) that the checks only look up by URL: about 200 blob
requests per review where the checks read about 50. Here one recursive tree listing gives every
path and size (so ``files()`` and ``size()`` cost nothing), and ``read()`` fetches the blob on first
use, cached by sha (base and head share most blobs).

A failed download surfaces twice: ``read()`` raises (the check that asked gets no content), and
``failure`` keeps it, so the pipeline raises it after the review (``raise_read_failure``) and the
worker treats it as the GitHub failure it is (check run failed, job retried) rather than
publishing a verdict made without the file.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping

from bot.core.snapshot import MemorySnapshot, SnapshotError, check_relative, paths_under


class LazyTree(Mapping[str, bytes]):
    """path -> content of one tree listing; content downloaded by ``fetch(sha)`` on first access.

    What ``GitHubClient.read_tree`` returns. ``skipped`` names the files deliberately left out
    (symlinks, submodules, blobs over the size limit), as in ``tree_files.TreeFiles``.
    """

    def __init__(
        self,
        entries: Mapping[str, tuple[str, int]],
        fetch: Callable[[str], bytes],
        skipped: Mapping[str, str] | None = None,
        skipped_ids: Mapping[str, str] | None = None,
        cut: str = "",
    ) -> None:
        self._entries = dict(entries)  # path -> (blob sha, size)
        self._fetch = fetch
        self._lock = threading.Lock()
        self.skipped: dict[str, str] = dict(skipped or {})
        self.skipped_ids: dict[str, str] = dict(skipped_ids or {})
        self.cut = cut

    def __getitem__(self, path: str) -> bytes:
        sha, _ = self._entries[path]
        with self._lock:  # one download per blob even when two checks ask at once
            return self._fetch(sha)

    def __contains__(self, path: object) -> bool:
        return path in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def size(self, path: str) -> int | None:
        entry = self._entries.get(path)
        return None if entry is None else entry[1]

    def sha(self, path: str) -> str:
        """The blob sha of ``path`` (no download)."""
        return self._entries[path][0]


class TreeSnapshot:
    """A ``Snapshot`` over what ``GitHubAPI.read_tree`` returned: lazy for a ``LazyTree``, plain for
    a dict."""

    def __init__(self, tree: Mapping[str, bytes], label: str) -> None:
        self._tree = tree
        self._paths = {check_relative(p): p for p in tree}
        self._sorted = sorted(self._paths)
        self.label = label
        self.failure: Exception | None = None

    def files(self, prefix: str = "") -> list[str]:
        return paths_under(self._sorted, prefix)

    @property
    def skipped(self) -> Mapping[str, str]:
        """The listed paths not read as files (symlinks, submodules, blobs over the limit): path ->
        why."""
        return getattr(self._tree, "skipped", {})

    def object_ids(self) -> dict[str, str]:
        """Every listed path, files and skipped ones, with what identifies its content (nothing
        downloaded)."""
        ids = {path: self.blob_id(path) for path in self._sorted}
        skipped_ids: Mapping[str, str] = getattr(self._tree, "skipped_ids", {})
        ids.update(
            {path: f"{why} {skipped_ids.get(path, '')}" for path, why in self.skipped.items()}
        )
        return ids

    def git_ids(self) -> dict[str, str]:
        """Every listed path with its git object id, as GitHub names it (a blob's; a submodule's
        commit): read from the listing when lazy, else hashed from the content."""
        skipped_ids: Mapping[str, str] = getattr(self._tree, "skipped_ids", {})
        ids = {path: skipped_ids.get(path, "") for path in self.skipped}
        for path in self._tree:
            if isinstance(self._tree, LazyTree):
                ids[path] = self._tree.sha(path)
            else:
                data = self._content(path)
                header = b"blob %d\x00" % len(data)
                ids[path] = hashlib.sha1(header + data, usedforsecurity=False).hexdigest()
        return ids

    @property
    def cut(self) -> str:
        """Why this listing is not the whole tree (empty when it is)."""
        return str(getattr(self._tree, "cut", ""))

    def size(self, path: str) -> int | None:
        key = self._paths.get(check_relative(path))
        if key is None:
            return None
        if isinstance(self._tree, LazyTree):
            return self._tree.size(key)
        return len(self._content(key))

    def blob_id(self, path: str) -> str:
        """What identifies ``path``'s content: its blob sha when listed lazily (nothing downloaded),
        else a hash of the content."""
        key = self._paths[check_relative(path)]
        if isinstance(self._tree, LazyTree):
            return self._tree.sha(key)
        return hashlib.sha256(self._content(key)).hexdigest()

    def read(self, path: str) -> bytes | None:
        key = self._paths.get(check_relative(path))
        return None if key is None else self._content(key)

    def _content(self, key: str) -> bytes:
        """The content of a listed path; a failure to get it is kept (``raise_read_failure``),
        whichever question needed it (a plain mapping's size or id too)."""
        try:
            return self._tree[key]
        except Exception as exc:
            self.failure = self.failure or exc
            raise


def raise_read_failure(*snapshots: object) -> None:
    """Raise the first download failure of a ``TreeSnapshot`` (a review that missed a file is
    void)."""
    for snapshot in snapshots:
        failure = getattr(snapshot, "failure", None)
        if failure is not None:
            raise failure


class FilesSnapshot(MemorySnapshot):
    """What ``GitHubAPI.read_files`` returned, as a snapshot: a file it did not read (``skipped``:
    over the size GitHub serves) is there but unreadable, its ``size`` and ``read`` raise
    ``SnapshotError`` with why; never taken for an absent file."""

    def __init__(self, files: Mapping[str, bytes], label: str) -> None:
        super().__init__(files, label)
        skipped: Mapping[str, str] = getattr(files, "skipped", {})
        self.unread = {check_relative(path): why for path, why in skipped.items()}

    def size(self, path: str) -> int | None:
        self._refuse(path)
        return super().size(path)

    def read(self, path: str) -> bytes | None:
        self._refuse(path)
        return super().read(path)

    def _refuse(self, path: str) -> None:
        why = self.unread.get(check_relative(path))
        if why is not None:
            raise SnapshotError(f"GitHub does not serve it: {why}")
