"""Write a whole site to a folder: HTML, assets, schemas, the discovery index and the Docusaurus Markdown."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bot.outputs.site.index import INDEX_FILE, INDEX_SCHEMA, SCHEMA_FILE, discovery_index
from bot.outputs.site.markdown import render_markdown
from bot.outputs.site.model import Site
from bot.outputs.site.pages import render_pages

MARKER = ".registry-site"
WRITERS = 4  # threads writing files: enough to overlap the disk's latency, few enough for 2 cores


def site_files(site: Site, markdown: bool = True) -> dict[str, bytes]:
    """Every file of the published output, by relative path (the Markdown under ``docusaurus/``)."""
    files = render_pages(site)
    files[INDEX_FILE] = (json.dumps(discovery_index(site), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    files[SCHEMA_FILE] = (json.dumps(INDEX_SCHEMA, indent=2) + "\n").encode("utf-8")
    if markdown:
        files.update({f"docusaurus/{path}": data for path, data in render_markdown(site).items()})
    return files


def write_site(site: Site, out: Path, markdown: bool = True) -> int:
    """Replace ``out`` with the site; returns the number of files written.

    ``out`` must be absent, empty or an earlier output (it holds ``MARKER``): nothing else is deleted.
    """
    return write_files(site_files(site, markdown), out)


def write_files(files: dict[str, bytes], out: Path) -> int:
    """Replace ``out`` (absent, empty or an earlier output) with ``files``, by relative path.

    Batched: every folder is made once, then the files are written by a few threads with plain ``os``
    calls, so the disk's latency per file (open, write, close) overlaps instead of adding up; on a shared
    disk that is most of the time of 15,000 small files.
    """
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise FileExistsError(f"{out} exists and is not an earlier site (no {MARKER}); choose an empty folder")
    files = {**files, MARKER: b"written by registry-bot publish; the folder is replaced on the next run\n"}
    if out.exists():
        shutil.rmtree(out)
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
