"""``bot.github.object_cache``: bounded, least recently used out first, keyed by installation and
sha."""

from __future__ import annotations

from bot.github.object_cache import LISTING_ENTRIES, ObjectCache, is_sha


def test_blobs_past_the_bound_go_least_recently_used_first() -> None:
    cache = ObjectCache(blob_bytes=10, listings=2)
    cache.add_blob(1, "a", b"1234")
    cache.add_blob(1, "b", b"1234")
    assert cache.blob(1, "a") == b"1234"  # used: "b" is now the oldest
    cache.add_blob(1, "c", b"1234")
    assert (cache.has_blob(1, "a"), cache.has_blob(1, "b"), cache.has_blob(1, "c")) == (
        True,
        False,
        True,
    )
    assert cache.blob(2, "a") is None  # another installation's


def test_only_a_commit_shas_listing_is_kept_and_only_so_many() -> None:
    cache = ObjectCache(listings=2)
    entry = {"path": "a", "type": "blob", "sha": "s", "size": 1}
    for commit in ("a" * 40, "b" * 40, "main", "c" * 64):
        cache.add_listing(1, "o/r", commit, ("spec",), [entry], False)
    assert cache.listing(1, "o/r", "main", ("spec",)) is None  # a branch moves
    assert cache.listing(1, "o/r", "a" * 40, ("spec",)) is None  # the oldest of three went
    assert cache.listing(1, "o/r", "b" * 40, ("spec",)) == ((entry,), False)
    assert cache.listing(1, "o/r", "b" * 40, ("other",)) is None  # other folders
    assert cache.listing(2, "o/r", "b" * 40, ("spec",)) is None  # another installation
    cache.add_listing(1, "o/r", "d" * 40, ("spec",), [entry] * (LISTING_ENTRIES + 1), False)
    assert cache.listing(1, "o/r", "d" * 40, ("spec",)) is None  # too big to keep
    assert is_sha("0" * 40) and not is_sha("A" * 40) and not is_sha("h" * 40)
