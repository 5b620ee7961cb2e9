"""The published mirror has one definition: the checks list the versions publish serves."""

from __future__ import annotations

from bot.core.config import Config, Paths
from bot.core.snapshot import MemorySnapshot
from bot.model.sides import side_model
from bot.outputs.site import build_site
from bot.review.checks._example_facets import mirrored

MIRROR = "website/static/spec/facets"


def test_the_checks_list_every_version_publish_serves() -> None:
    """A mirror file whose name a URL can hold but that is no ``[A-Za-z0-9_]`` stem (a ``-`` or a
    ``.``) is served by publish; the version rules used to read another index that skipped it, so
    they judged it unpublished."""
    snapshot = MemorySnapshot(
        {
            f"{MIRROR}/1-0-0/Plain.json": b"{}",
            f"{MIRROR}/1-0-1/Plain.json": b"{}",
            f"{MIRROR}/1-0-0/Dashed-Name.json": b"{}",
            f"{MIRROR}/2-0-0/Dotted.Name.json": b"{}",
            f"{MIRROR}/latest/Plain.json": b"{}",  # no version folder
            f"{MIRROR}/1-0-0/notes.txt": b"",
            f"{MIRROR}/1-0-0/sub/Deep.json": b"{}",
        }
    )
    config = Config()
    served = {
        path
        for path in build_site(snapshot, config).schema_files
        if path.startswith("spec/facets/")
    }
    listed = {
        f"spec/facets/{version}/{file}"
        for file, versions in mirrored(side_model(snapshot, config).schemas).items()
        for version in versions
    }
    assert (
        listed
        == served
        == {
            "spec/facets/1-0-0/Plain.json",
            "spec/facets/1-0-1/Plain.json",
            "spec/facets/1-0-0/Dashed-Name.json",
            "spec/facets/2-0-0/Dotted.Name.json",
        }
    )


def test_one_prefix_however_the_folder_is_written() -> None:
    paths = Paths(mirror="/website/static/spec/")
    assert paths.mirror_prefix == "website/static/spec/"
    assert paths.mirrored("facets/1-0-0/X.json") == "website/static/spec/facets/1-0-0/X.json"
