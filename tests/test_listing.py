"""``bot.github.listing``: GitHub's files listing held to the trees of the reviewed head."""

from __future__ import annotations

from bot.github.api import ChangedFile
from bot.github.listing import listed_paths, listed_wrong, unlisted

SCOPE = ("spec/registry", "CODEOWNERS")
HEAD = {"spec/registry/a.json": "a2", "spec/registry/b.json": "b1", "CODEOWNERS": "c1"}


def test_a_listing_that_agrees_with_the_head_is_right() -> None:
    files = [
        ChangedFile("spec/registry/a.json", "modified", sha="a2"),
        ChangedFile("spec/registry/b.json", "renamed", "spec/registry/old.json", sha="b1"),
        ChangedFile("spec/registry/gone.json", "removed", sha="0" * 40),
        ChangedFile("NOTES.md", "added", sha="elsewhere"),  # outside the scope: not held
    ]
    assert listed_wrong(files, HEAD, SCOPE) == []


def test_each_way_a_listing_can_disagree_with_the_head() -> None:
    files = [
        ChangedFile("spec/registry/a.json", "modified", sha="a1"),  # another blob
        ChangedFile("spec/registry/b.json", "removed"),  # still there
        ChangedFile("spec/registry/new.json", "added", sha="n1"),  # not there
        ChangedFile("spec/registry/c.json", "renamed", "CODEOWNERS"),  # old path still there
    ]
    assert listed_wrong(files, HEAD, SCOPE) == [
        "spec/registry/a.json",
        "spec/registry/b.json",
        "spec/registry/new.json",
        "spec/registry/c.json",
        "CODEOWNERS",
    ]


def test_an_unread_path_is_held_to_its_presence_only() -> None:
    files = [ChangedFile("spec/registry/a.json", "modified", sha="a submodule's commit")]
    assert listed_wrong(files, HEAD, SCOPE, unread={"spec/registry/a.json"}) == []
    assert listed_wrong(files, HEAD, SCOPE) == ["spec/registry/a.json"]


def test_every_path_that_differs_is_listed_old_paths_included() -> None:
    old = {"spec/registry/a.json": "a1", "spec/registry/old.json": "b1", "CODEOWNERS": "c0"}
    files = [
        ChangedFile("spec/registry/a.json", "modified", sha="a2"),
        ChangedFile("spec/registry/b.json", "renamed", "spec/registry/old.json", sha="b1"),
    ]
    assert listed_paths(files) == {
        "spec/registry/a.json",
        "spec/registry/b.json",
        "spec/registry/old.json",
    }
    assert unlisted(listed_paths(files), old, HEAD) == ["CODEOWNERS"]
