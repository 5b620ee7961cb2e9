"""Benchmark the published ecosystem at scale: build, output size, page weight and search in
headless Chromium.

For each size a generated registry (``registry_gen``: N entries x 5 facets, no examples, so
generating it stays short) is published (``build_site`` + ``write_site``, timed), then the first
ecosystem page is opened in Debian's Chromium from ``file://``: time to the page's load event, time
from the first keystroke to the first result (the search index script is loaded on that keystroke),
and the search's own time per keystroke over a typed word (the page records it in
``data-search-ms``), with a broad query (every entry matches) and a narrow one, and the facet
filter's time for a substring of facet URIs. Usage: python benchmarks/bench_site_scale.py [--sizes
1000,5000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.registry_gen import generate  # noqa: E402 - after the path above
from bot.core.config import load_config  # noqa: E402
from bot.core.snapshot import DirSnapshot  # noqa: E402
from bot.outputs.site import build_site  # noqa: E402
from bot.outputs.site.build import write_site  # noqa: E402
from bot.outputs.site.pages import SEARCH_INDEX  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def folder_bytes(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def typed(page: object, query: str) -> tuple[float, list[float]]:
    """Type ``query`` key by key: ms to the first result, and the search's ms per keystroke."""
    first, per_key = 0.0, []
    page.fill("#q", "")  # type: ignore[attr-defined]
    for i, char in enumerate(query):
        start = time.perf_counter()
        page.type("#q", char)  # type: ignore[attr-defined]
        while page.evaluate("!!document.querySelector('#filters[data-pending]')"):  # type: ignore[attr-defined]
            page.wait_for_timeout(2)  # type: ignore[attr-defined]
        if i == 0:
            first = (time.perf_counter() - start) * 1000
        per_key.append(float(page.get_attribute("#filters", "data-search-ms") or "nan"))  # type: ignore[attr-defined]
    return first, per_key


def browse(site: Path) -> dict[str, float]:
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        page = browser.new_page()
        start = time.perf_counter()
        page.goto((site / "index.html").as_uri(), wait_until="load")
        load_ms = (time.perf_counter() - start) * 1000
        first_ms, broad = typed(page, "vendor")
        _, narrow = typed(page, "vendor0042")
        page.fill("#q", "")
        page.fill("#facet", "thing3")
        facet_ms = float(page.get_attribute("#filters", "data-search-ms") or "nan")
        browser.close()
    return {
        "load_ms": load_ms,
        "first_result_ms": first_ms,
        "broad_key_ms": max(broad),
        "narrow_key_ms": statistics.median(narrow),
        "facet_ms": facet_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000")
    args = parser.parse_args()
    print(
        "| entries | build s | files | output MB | index.html KB | search index KB | load ms | "
        "first result ms | search ms/key, broad (max) | narrow (median) | facet filter ms |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as scratch:
            tree = generate(Path(scratch) / "repo", size, facets=5, examples=0)
            start = time.perf_counter()
            snapshot = DirSnapshot(tree)
            site = build_site(snapshot, load_config(snapshot)[0])
            out = Path(scratch) / "site"
            write_site(site, out)
            build_s = time.perf_counter() - start
            files, total = folder_bytes(out)
            seen = browse(out)
            page_kb, index_kb = (
                (out / name).stat().st_size / 1024 for name in ("index.html", SEARCH_INDEX)
            )
            print(
                f"| {size:,} | {build_s:.1f} | {files:,} | {total / 1e6:.1f} | {page_kb:.0f} | "
                f"{index_kb:.0f} | {seen['load_ms']:.0f} | {seen['first_result_ms']:.0f} | "
                f"{seen['broad_key_ms']:.1f} | {seen['narrow_key_ms']:.1f} | "
                f"{seen['facet_ms']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
