"""Write a whole site to a folder: HTML, assets, schemas, the discovery index and the Docusaurus Markdown."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson

from bot.outputs.site.index import INDEX_FILE, INDEX_SCHEMA, SCHEMA_FILE, discovery_index
from bot.outputs.site.markdown import render_markdown
from bot.outputs.site.model import Site
from bot.outputs.site.pages import Shard, render_pages

MARKER = ".registry-site"
WRITERS = 4  # threads writing files: enough to overlap the disk's latency, few enough for 2 cores
WORKERS = 2  # processes rendering and writing the facet pages, beside this one
PARALLEL_FACETS = 500  # below this, forking costs more than it saves


def site_files(site: Site, markdown: bool = True, common: bool = True, shard: Shard = (0, 1)) -> dict[str, bytes]:
    """Every file of the published output, by relative path (the Markdown under ``docusaurus/``); in parts
    as ``render_pages``: ``common`` the files a site has once, ``shard`` its part of the per-facet files."""
    files = render_pages(site, common, shard)
    if common:
        files[INDEX_FILE] = _index_json(site)
        files[SCHEMA_FILE] = (json.dumps(INDEX_SCHEMA, indent=2) + "\n").encode("utf-8")
    if markdown:
        files.update({f"docusaurus/{path}": data for path, data in render_markdown(site, common, shard).items()})
    return files


def write_site(site: Site, out: Path, markdown: bool = True, workers: int | None = None) -> int:
    """Replace ``out`` with the site; returns the number of files written.

    ``out`` must be absent, empty or an earlier output (it holds ``MARKER``): nothing else is deleted.
    From ``PARALLEL_FACETS`` facet pages on, ``workers`` forked processes (default: one per core, at most
    ``WORKERS``) render and write the facet pages and schema files (most of the files), each its share,
    while this process renders and writes the rest: the site is rendered in parallel, each file written by
    the process that rendered it (nothing large crosses a pipe).
    """
    if workers is None:
        workers = min(WORKERS, os.cpu_count() or 1) if len(site.facets) >= PARALLEL_FACETS else 1
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return write_files(site_files(site, markdown), out)
    prepare(out)
    global _JOB  # read by the forked workers, which inherit it
    _JOB = (site, markdown, out)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            shards = pool.map_async(_write_shard, [(i, workers) for i in range(workers)])
            count = _write(site_files(site, markdown, shard=None), out)
            return count + sum(shards.get()) + 1  # and the marker
    finally:
        _JOB = None


_JOB: tuple[Site, bool, Path] | None = None


def _write_shard(shard: tuple[int, int]) -> int:
    assert _JOB is not None
    site, markdown, out = _JOB
    return _write(site_files(site, markdown, common=False, shard=shard), out)


def _index_json(site: Site) -> bytes:
    """The discovery index, as ``json.dumps(indent=2, ensure_ascii=False)`` writes it; orjson writes the same
    bytes (two-space indent, ``": "``, UTF-8) about 20x faster than ``json``'s pure-Python indenting encoder."""
    return orjson.dumps(discovery_index(site), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def prepare(out: Path) -> None:
    """Make sure ``out`` may be replaced (absent, empty or an earlier output), remove it, mark it as ours."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise FileExistsError(f"{out} exists and is not an earlier site (no {MARKER}); choose an empty folder")
    if out.exists():
        shutil.rmtree(out)
    _write({MARKER: b"written by registry-bot publish; the folder is replaced on the next run\n"}, out)


def write_files(files: dict[str, bytes], out: Path) -> int:
    """Replace ``out`` (absent, empty or an earlier output) with ``files``, by relative path."""
    prepare(out)
    return _write(files, out) + 1


def _write(files: dict[str, bytes], out: Path) -> int:
    """Write ``files`` under ``out``; the number written.

    Batched: every folder is made once, then the files are written by a few threads with plain ``os``
    calls, so the disk's latency per file (open, write, close) overlaps instead of adding up; on a shared
    disk that is most of the time of 15,000 small files.
    """
    root = str(out)
    for folder in sorted({rel.rpartition("/")[0] for rel in files}):
        (out / folder).mkdir(parents=True, exist_ok=True)
    items = sorted(files.items())  # each thread takes a contiguous run: its own folders, not its neighbours'
    cuts = [len(items) * i // WRITERS for i in range(WRITERS + 1)]
    with ThreadPoolExecutor(WRITERS) as pool:
        for _ in pool.map(_write_batch, [(root, items[a:b]) for a, b in itertools.pairwise(cuts)]):
            pass
    return len(files)


def _write_batch(job: tuple[str, list[tuple[str, bytes]]]) -> None:
    root, items = job
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    for rel, data in items:
        fd = os.open(f"{root}/{rel}", flags, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
