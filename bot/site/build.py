"""Write a whole site to a folder: HTML, assets, schemas, the discovery index and the Docusaurus Markdown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bot.site.index import INDEX_FILE, INDEX_SCHEMA, SCHEMA_FILE, discovery_index
from bot.site.markdown import render_markdown
from bot.site.model import Site
from bot.site.pages import render_pages

MARKER = ".registry-site"


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
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise FileExistsError(f"{out} exists and is not an earlier site (no {MARKER}); choose an empty folder")
    files = site_files(site, markdown)
    files[MARKER] = b"written by registry-bot publish; the folder is replaced on the next run\n"
    if out.exists():
        shutil.rmtree(out)
    for rel, data in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return len(files)
