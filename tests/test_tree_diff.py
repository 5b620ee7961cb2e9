"""The change of a pull request from its two whole trees (``bot/app/tree_diff.py``), past GitHub's listing."""

from __future__ import annotations

from bot.app.lazy_snapshot import TreeSnapshot
from bot.app.tree_diff import tree_changes
from bot.app.tree_files import TreeFiles
from bot.changes import Status


def tree(files: dict[str, bytes], skipped: dict[str, tuple[str, str]] | None = None, cut: str = "") -> TreeSnapshot:
    out = TreeFiles()
    out.update(files)
    for path, (why, object_id) in (skipped or {}).items():
        out.skipped[path], out.skipped_ids[path] = why, object_id
    out.cut = cut
    return TreeSnapshot(out, label="t")


BASE = {"spec/registry/x/registry.json": b"{}", "client/a.py": b"a", "old.txt": b"moved"}
HEAD = {"spec/registry/x/registry.json": b"{ }", "client/a.py": b"a", "new.txt": b"moved",
        ".github/workflows/pwn.yml": b"on: pull_request_target"}


def test_every_changed_path_of_the_whole_tree_is_in_the_change_and_unreadable_ones_are_marked() -> None:
    base = tree(BASE, {"spec/registry/x/link": ("a symlink", "s1"), "spec/registry/x/same": ("a symlink", "s0")})
    head = tree(HEAD, {"spec/registry/x/link": ("a symlink", "s2"), "spec/registry/x/same": ("a symlink", "s0"),
                       "spec/registry/x/sub": ("a submodule", "c1")})
    changes = tree_changes(base, head)
    by_path = {f.path: f for f in changes.files}
    assert set(by_path) == {"spec/registry/x/registry.json", "new.txt", ".github/workflows/pwn.yml",
                            "spec/registry/x/link", "spec/registry/x/sub"}
    assert by_path["new.txt"].status is Status.RENAMED and by_path["new.txt"].old_path == "old.txt"
    assert by_path["spec/registry/x/link"].unread == "a symlink"  # its target changed: the object id did
    assert by_path["spec/registry/x/sub"].unread == "a submodule"
    assert not by_path[".github/workflows/pwn.yml"].unread
    assert not changes.truncated and not changes.complete


def test_a_tree_listing_cut_short_is_a_truncated_change_without_phantom_deletions() -> None:
    head = tree({"spec/registry/x/registry.json": b"{ }"}, cut="GitHub's listing stops at 100,000 entries")
    changes = tree_changes(tree(BASE), head)
    assert [f.path for f in changes.files] == ["spec/registry/x/registry.json"]  # the rest lies past the cut
    assert changes.truncated and "100,000" in changes.cut and not changes.complete
