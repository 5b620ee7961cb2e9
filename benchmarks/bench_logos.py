"""How many logos of a folder publish, and whether they look the same: every SVG, PNG, JPEG and WebP
is judged as ``entry/logo`` and the site judge it (``bot.model.logo.published_logo``); each SVG that
publishes is drawn in Debian's headless Chromium as it was and as published (400 x 300, opened
directly), and the screenshots are compared pixel for pixel; requests the published file makes are
counted (there must be none). Usage: python benchmarks/bench_logos.py FOLDER (for example
OpenLineage's ``website/static/img``)
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.model.logo import published_logo  # noqa: E402 - after the path above

CHROMIUM = "/usr/bin/chromium"
KINDS = (".svg", ".png", ".jpg", ".jpeg", ".webp")


def main(folder: Path) -> None:
    from playwright import sync_api

    logos = sorted(p for p in folder.iterdir() if p.suffix.lower() in KINDS)
    outcome: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        page = browser.new_page(viewport={"width": 400, "height": 300})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        for logo in logos:
            result = published_logo(logo.name, logo.read_bytes())
            if isinstance(result, str):
                outcome["refused"] += 1
                print(f"{logo.name}: refused: {result}")
                continue
            outcome["published"] += 1
            if logo.suffix.lower() != ".svg":
                continue
            clean = Path(scratch) / logo.name
            clean.write_bytes(result)
            shots = []
            for path in (logo, clean):
                requests.clear()
                page.goto(path.as_uri(), wait_until="load")
                page.wait_for_timeout(100)
                shots.append(page.screenshot())
            fetched = [u for u in requests if not u.startswith("file://")]
            same = shots[0] == shots[1]
            outcome["svg same pixels" if same else "svg drawn differently"] += 1
            outcome["published requests"] += len(fetched)
            print(
                f"{logo.name}: {logo.stat().st_size:,} -> {len(result):,} bytes, "
                f"{'same pixels' if same else 'DRAWN DIFFERENTLY'}, {len(fetched)} request(s)"
            )
        browser.close()
    print(f"{len(logos)} logos: " + ", ".join(f"{n} {what}" for what, n in sorted(outcome.items())))


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
