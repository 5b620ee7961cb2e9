"""Write a whole site to a folder: HTML, assets, schemas, the discovery index and the Docusaurus
Markdown."""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import os
import shutil
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson

from bot.core.output_folder import replaceable
from bot.outputs.site.index import INDEX_FILE, INDEX_SCHEMA, SCHEMA_FILE, discovery_index
from bot.outputs.site.markdown import render_markdown
from bot.outputs.site.model import Site
from bot.outputs.site.pages import Shard, render_pages

MARKER = ".registry-site"
WRITERS = 4  # threads writing files: enough to overlap the disk's latency, few enough for 2 cores
WORKERS = 2  # processes rendering and writing the facet pages, beside this one
PARALLEL_FACETS = 500  # below this, forking costs more than it saves


def site_files(
    site: Site, markdown: bool = True, common: bool = True, shard: Shard = (0, 1)
) -> dict[str, bytes]:
    """Every file of the published output, by relative path (the Markdown under ``docusaurus/``); in
    parts as ``render_pages``: ``common`` the files a site has once, ``shard`` its part of the
    per-facet files."""
    files = render_pages(site, common, shard)
    if common:
        files[INDEX_FILE] = _index_json(site)
        files[SCHEMA_FILE] = (json.dumps(INDEX_SCHEMA, indent=2) + "\n").encode("utf-8")
    if markdown:
        files.update(
            {
                f"docusaurus/{path}": data
                for path, data in render_markdown(site, common, shard).items()
            }
        )
    return files


def write_site(site: Site, out: Path, markdown: bool = True, workers: int | None = None) -> int:
    """Replace ``out`` with the site; returns the number of files it holds.

    ``out`` must be absent, empty or an earlier output (it holds ``MARKER``): nothing else is
    deleted. From ``PARALLEL_FACETS`` facet pages on, ``workers`` forked processes (default: one per
    core, at most ``WORKERS``) render and write the facet pages and schema files (most of the
    files), each its share, while this process renders and writes the rest: the site is rendered in
    parallel, each file written by the process that rendered it (nothing large crosses a pipe).
    """
    if workers is None:
        workers = min(WORKERS, os.cpu_count() or 1) if len(site.facets) >= PARALLEL_FACETS else 1
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return write_files(site_files(site, markdown), out)
    earlier = prepare(out)
    global _JOB  # read by the forked workers, which inherit it
    _JOB = (site, markdown, out, earlier)
    try:
        with multiprocessing.get_context("fork").Pool(workers, _default_signals) as pool:
            shards = pool.map_async(_write_shard, [(i, workers) for i in range(workers)])
            written = _write(site_files(site, markdown, shard=None), out, earlier)
            for part in shards.get():
                written += part
    finally:
        _JOB = None
    return finish(out, earlier, written)


_JOB: tuple[Site, bool, Path, frozenset[str]] | None = None
# ``timeout``'s signal and a closed terminal's: a forked writer ends at once on them
_ENDING = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def _default_signals() -> None:
    """A forked writer's start: SIGTERM and SIGHUP kill it, whatever handler the parent set (the
    command line's raises where the command is). The pool ends its writers with SIGTERM when it
    closes; a writer that raised instead, in the pool's own queue code, could wait for good on a
    lock another writer held when it died, and the parent with it."""
    for sig in _ENDING:
        signal.signal(sig, signal.SIG_DFL)


def _write_shard(shard: tuple[int, int]) -> list[str]:
    assert _JOB is not None
    site, markdown, out, earlier = _JOB
    return _write(site_files(site, markdown, common=False, shard=shard), out, earlier)


def _index_json(site: Site) -> bytes:
    """The discovery index, as ``json.dumps(indent=2, ensure_ascii=False)`` writes it; orjson writes
    the same bytes (two-space indent, ``": "``, UTF-8) about 20x faster than ``json``'s pure-Python
    indenting encoder."""
    return orjson.dumps(
        discovery_index(site), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    )


def write_files(files: dict[str, bytes], out: Path) -> int:
    """Replace ``out`` (absent, empty or an earlier output) with ``files``, by relative path; the
    number of files it holds."""
    earlier = prepare(out)
    return finish(out, earlier, _write(files, out, earlier))


def prepare(out: Path) -> frozenset[str]:
    """Check that ``out`` may be replaced (absent, empty or an earlier output) and mark it as ours;
    the files an earlier output holds, by relative path.

    An earlier output is updated in place, not deleted first: a file whose bytes did not change is
    left as it is, a changed one rewritten into the same inode, and only what the new site lacks is
    deleted (``finish``). Besides sparing the writes, this spares the file system: ext4 without a
    journal skips inodes deleted in the last half minute when it allocates one, so creating 15,000
    files right after deleting 15,000 others costs seconds of system time in that scan.
    """
    if not replaceable(out, MARKER):
        raise FileExistsError(
            f"{out} exists and is not an earlier site (no {MARKER}); choose an empty folder"
        )
    earlier = frozenset(_listing(str(out), "")) if out.exists() else frozenset()
    _write(
        {MARKER: b"written by registry-bot publish; the folder is replaced on the next run\n"},
        out,
        earlier,
    )
    return earlier


def _listing(root: str, prefix: str) -> list[str]:
    """The files under ``root`` by relative path; a symbolic link found there is removed (publish
    writes none, and a file is never written through one)."""
    out: list[str] = []
    with os.scandir(f"{root}/{prefix}" if prefix else root) as entries:
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if entry.is_symlink():
                Path(entry.path).unlink()
            elif entry.is_dir(follow_symlinks=False):
                out += _listing(root, f"{rel}/")
            else:
                out.append(rel)
    return out


def finish(out: Path, earlier: frozenset[str], written: list[str]) -> int:
    """Delete what an earlier output held and this one does not (files, then the folders left
    empty); the number of files the output holds."""
    keep = {*written, MARKER}
    stale = sorted(earlier - keep)
    for rel in stale:
        # a folder now, or in one
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, IsADirectoryError):
            (out / rel).unlink()
    folders = {parent for rel in stale for parent in _parents(rel)}
    for folder in sorted(folders, key=lambda f: -f.count("/")):  # the deepest first
        with contextlib.suppress(OSError):  # not empty: a file of this output is inside
            (out / folder).rmdir()
    return len(keep)


def _parents(rel: str) -> list[str]:
    """``a/b/c.html`` -> ``["a/b", "a"]``."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _write(files: dict[str, bytes], out: Path, earlier: frozenset[str]) -> list[str]:
    """Write ``files`` under ``out`` (those of ``earlier`` whose bytes are the same are left as they
    are); their paths.

    Batched: every folder is made once, then the files are written by a few threads with plain
    ``os`` calls, so the disk's latency per file (open, write, close) overlaps instead of adding up;
    on a shared disk that is most of the time of 15,000 small files.
    """
    root = str(out)
    for folder in sorted({rel.rpartition("/")[0] for rel in files}):
        _folder(out / folder)
    # each thread takes a contiguous run: its own folders, not its neighbours'
    items = sorted(files.items())
    cuts = [len(items) * i // WRITERS for i in range(WRITERS + 1)]
    with ThreadPoolExecutor(WRITERS) as pool:
        for _ in pool.map(
            _write_batch, [(root, items[a:b], earlier) for a, b in itertools.pairwise(cuts)]
        ):
            pass
    return list(files)


def _folder(path: Path) -> None:
    """Make ``path`` a folder; a file of an earlier output in its place (or its parents') is
    removed."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next(p for p in (*reversed(path.parents), path) if p.exists() and not p.is_dir())
        with contextlib.suppress(FileNotFoundError):
            blocker.unlink()
        path.mkdir(parents=True, exist_ok=True)


_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_WRITE = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_TRUNC
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _write_batch(job: tuple[str, list[tuple[str, bytes]], frozenset[str]]) -> None:
    root, items, earlier = job
    for rel, data in items:
        path = f"{root}/{rel}"
        if rel in earlier and _same(path, data):
            continue
        try:
            fd = os.open(path, _WRITE, 0o644)
        except IsADirectoryError:  # a folder of an earlier output where this output has a file
            shutil.rmtree(path)
            fd = os.open(path, _WRITE, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


def _same(path: str, data: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``data``."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return False
    try:
        return os.fstat(fd).st_size == len(data) and os.read(fd, len(data) + 1) == data
    finally:
        os.close(fd)
