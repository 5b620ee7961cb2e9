"""Git objects named by a sha, kept across an installation's jobs: what a sha names never changes.

A blob (content by blob sha) and the listing of a commit's tree (by commit sha and folders) are the
same on every read, so the review that an owner's approval starts, right after the review of the
same head, or the next push's review, whose base and most blobs are the last one's, reads none of
them again. Keys carry the installation (and the repository, for listings): an installation gets
only what it read itself. Bounded: the least recently used goes first.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

BLOB_BYTES = 64 * 1024 * 1024  # blob content kept, all installations together
LISTINGS = 32  # tree listings kept
LISTING_ENTRIES = 20_000  # a listing with more entries than this is not kept
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

# the entries, and whether GitHub's listing was cut
Listing = tuple[tuple[dict[str, Any], ...], bool]


def is_sha(ref: str) -> bool:
    """Whether ``ref`` is a full commit sha (a branch name can move; a sha cannot)."""
    return _SHA.fullmatch(ref) is not None


class ObjectCache:
    """Blobs and tree listings by installation and sha, least recently used out first."""

    def __init__(self, blob_bytes: int = BLOB_BYTES, listings: int = LISTINGS) -> None:
        self.blob_bytes = blob_bytes
        self.listings = listings
        self._blobs: OrderedDict[tuple[int, str], bytes] = OrderedDict()
        self._bytes = 0
        self._listings: OrderedDict[tuple[int, str, str, tuple[str, ...]], Listing] = OrderedDict()
        self._lock = threading.Lock()

    def blob(self, installation: int, sha: str) -> bytes | None:
        with self._lock:
            content = self._blobs.get((installation, sha))
            if content is not None:
                self._blobs.move_to_end((installation, sha))
            return content

    def has_blob(self, installation: int, sha: str) -> bool:
        with self._lock:
            return (installation, sha) in self._blobs

    def add_blob(self, installation: int, sha: str, content: bytes) -> None:
        with self._lock:
            old = self._blobs.pop((installation, sha), None)
            self._bytes -= len(old) if old is not None else 0
            self._blobs[(installation, sha)] = content
            self._bytes += len(content)
            while self._bytes > self.blob_bytes and len(self._blobs) > 1:
                _, dropped = self._blobs.popitem(last=False)
                self._bytes -= len(dropped)

    def listing(
        self, installation: int, repo: str, commit: str, prefixes: Sequence[str]
    ) -> Listing | None:
        key = (installation, repo, commit, tuple(prefixes))
        with self._lock:
            found = self._listings.get(key)
            if found is not None:
                self._listings.move_to_end(key)
            return found

    def add_listing(
        self,
        installation: int,
        repo: str,
        commit: str,
        prefixes: Sequence[str],
        entries: Sequence[dict[str, Any]],
        cut: bool,
    ) -> None:
        if not is_sha(commit) or len(entries) > LISTING_ENTRIES:
            return
        with self._lock:
            self._listings[(installation, repo, commit, tuple(prefixes))] = (tuple(entries), cut)
            while len(self._listings) > self.listings:
                self._listings.popitem(last=False)
