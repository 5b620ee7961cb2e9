"""The built minimal Docusaurus site in Debian's headless Chromium (Playwright, as
tests/test_site_browser.py): no table of a published facet page scrolls sideways, nor the page, at
1280 and 400 px wide (`make docusaurus-check`, from check.sh, after the build). Exit 1 with the
tables that do."""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path
from typing import Any

from playwright import sync_api

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WIDTHS = (1280, 400)
# per table: how much wider its content is than its box, and its header
MEASURE = """() => [...document.querySelectorAll('article table')].map(t => [
  t.scrollWidth - t.clientWidth,
  [...t.querySelectorAll('th')].map(h => h.textContent).join('|')])"""


def main(build: Path) -> int:
    pages = sorted(
        "/" + p.parent.relative_to(build).as_posix() + "/"
        for p in (build / "docs/registry/facets").rglob("index.html")
    )
    if not pages:
        print(f"no facet page under {build}/docs/registry/facets", file=sys.stderr)
        return 1

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a prefetch the next navigation cancels

    httpd = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(build)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    bad: list[str] = []
    tables = 0
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": 900})
                for path in pages:
                    page.goto(base + path)
                    # measured once React has taken the page over (it sets <html>'s classes again)
                    page.wait_for_selector("html[data-has-hydrated=true]", state="attached")
                    found = page.evaluate(MEASURE)
                    tables += len(found)
                    bad += [
                        f"{path} @ {width} px: table {i + 1} ({head}) scrolls {over} px"
                        for i, (over, head) in enumerate(found)
                        if over > 1
                    ]
                    wide = page.evaluate("document.documentElement.scrollWidth")
                    if wide > width:
                        bad.append(f"{path} @ {width} px: the page is {wide} px wide")
                page.close()
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    print(f"{len(pages)} facet pages, {tables} tables at {', '.join(map(str, WIDTHS))} px")
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad or not tables else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
