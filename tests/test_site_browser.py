"""The published site in a real browser: Debian's headless Chromium driven by Playwright (never a
downloaded browser), the site served from a loopback HTTP server and from ``file://``."""

from __future__ import annotations

import functools
import http.server
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest
from playwright import sync_api

from bot.cli.sample import REFERENCE
from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.outputs.site import build_site
from bot.outputs.site.build import write_site

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


def publish(repo: Path, out: Path) -> Path:
    snapshot = DirSnapshot(repo, label=repo.name)
    write_site(build_site(snapshot, load_config(snapshot)[0]), out)
    return out


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sites")
    return {
        "corpus": publish(corpus, root / "corpus"),
        "reference": publish(REFERENCE, root / "reference"),
    }


@pytest.fixture(scope="module")
def server(sites: dict[str, Path]) -> Iterator[str]:
    """Both sites over loopback HTTP: ``<url>/corpus/`` and ``<url>/reference/``."""
    folder = next(iter(sites.values())).parent

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not CHROMIUM.exists():
        raise RuntimeError("Debian's chromium is missing: `make system-deps` installs it")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=ARGS, headless=True, viewport=DESKTOP
        )
        yield context
        context.close()


class Visit:
    """A page that records every console error, page error and failed request."""

    def __init__(self, context: Any, url: str, viewport: dict[str, int] = DESKTOP) -> None:
        self.page = context.new_page()
        self.page.set_viewport_size(viewport)
        self.errors: list[str] = []
        self.page.on(
            "console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}")
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url}"))
        response = self.page.goto(url)
        assert response is None or response.ok, url

    def links(self) -> list[str]:
        return list(self.page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)"))

    def visible_cards(self) -> list[str]:
        """The cards shown, once a search that loads the index has run."""
        # polled from here: wait_for_function evaluates strings, which the CSP forbids
        for _ in range(400):
            if self.page.evaluate("!document.querySelector('#filters[data-pending]')"):
                break
            self.page.wait_for_timeout(25)
        return list(
            self.page.eval_on_selector_all(
                ".card:not([hidden])", "els => els.map(e => e.dataset.name)"
            )
        )

    def __enter__(self) -> Visit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.page.close()


def test_every_page_loads_cleanly_and_every_internal_link_resolves(
    browser: Any, server: str, sites: dict[str, Path]
) -> None:
    for name, folder in sites.items():
        pages = sorted(
            p.relative_to(folder).as_posix()
            for p in folder.rglob("*.html")
            if "docusaurus" not in p.parts
        )
        checked: set[str] = set()
        for rel in pages:
            url = f"{server}/{name}/{rel}"
            with Visit(browser, url) as visit:
                assert visit.page.title().endswith("OpenLineage registry")
                ids = set(visit.page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
                for link in visit.links():
                    target, fragment = urldefrag(urljoin(url, link))
                    if not target.startswith(server):
                        continue
                    if target == urldefrag(url)[0] and fragment:
                        assert fragment in ids, f"{rel}: #{fragment}"
                    if target not in checked:
                        with urllib.request.urlopen(target) as reply:  # the loopback server
                            assert reply.status == 200, target
                        checked.add(target)
                assert not visit.errors, (rel, visit.errors)
        assert len(checked) >= len(pages)


def test_filters_and_search_narrow_the_ecosystem(browser: Any, server: str) -> None:
    with Visit(browser, f"{server}/reference/index.html") as visit:
        page, everyone = visit.page, visit.visible_cards()
        assert len(everyone) >= 3
        page.select_option("#role", "consumer")
        consumers = visit.visible_cards()
        assert consumers and len(consumers) < len(everyone)
        roles = page.eval_on_selector_all(
            ".card:not([hidden])", "els => els.map(e => e.dataset.roles)"
        )
        assert all("consumer" in r.split("\n") for r in roles)
        page.select_option("#role", "")
        use_cases = page.eval_on_selector_all(
            "#usecase option", "els => els.map(o => o.value).filter(Boolean)"
        )
        assert use_cases
        page.select_option("#usecase", use_cases[0])
        assert 0 < len(visit.visible_cards()) < len(everyone)
        page.select_option("#usecase", "")
        facet = page.eval_on_selector_all(
            ".card ul.chips a[title^='ol:']", "els => els.map(a => a.title)"
        )[0]
        page.fill("#facet", facet)
        with_facet = visit.visible_cards()
        assert with_facet and all(
            facet in page.get_attribute(f'[data-name="{n}"]', "data-facets").split("\n")
            for n in with_facet
        )
        page.fill("#facet", "")
        page.fill("#q", everyone[-1])
        assert visit.visible_cards() == [everyone[-1]]
        assert page.text_content("#shown") == "1"
        page.fill("#q", "no such thing anywhere")
        assert visit.visible_cards() == []
        assert not visit.errors


def test_compatibility_explorer_lists_what_each_consumer_reads(browser: Any, server: str) -> None:
    with Visit(browser, f"{server}/reference/compat.html") as visit:
        page = visit.page
        producers = page.eval_on_selector_all(
            "#pick-producer option", "els => els.map(o => o.value).filter(Boolean)"
        )
        shared = []
        for producer in producers:
            page.select_option("#pick-producer", producer)
            rows = page.eval_on_selector_all(
                "#out-producer tr", "els => els.map(r => r.dataset.shared)"
            )
            assert rows
            shared += [int(n) for n in rows]
        assert max(shared) > 0
        links = page.eval_on_selector_all(
            "#out-consumer a[href]", "els => els.map(a => a.getAttribute('href'))"
        )
        assert links and all(link.startswith("facets/") for link in links)
        assert not visit.errors


def test_the_site_works_from_file_urls(browser: Any, sites: dict[str, Path]) -> None:
    folder = sites["reference"]
    with Visit(browser, (folder / "index.html").as_uri()) as visit:
        everyone = visit.visible_cards()
        visit.page.select_option("#role", "producer")
        assert 0 < len(visit.visible_cards()) <= len(everyone)
        facet = next(link for link in visit.links() if "/facets/" in link)
        visit.page.goto(facet)
        assert visit.page.locator("table.fields tbody tr").count() > 0
        visit.page.goto((folder / "compat.html").as_uri())
        assert visit.page.locator("#out-producer tr").count() > 0
        assert not visit.errors, visit.errors


def test_screenshots_at_desktop_and_phone_widths(
    browser: Any, server: str, sites: dict[str, Path], tmp_path: Path
) -> None:
    """The ecosystem and the richest facet page, saved under the test's tmp dir (docs/ holds one of
    each)."""
    import json

    index = json.loads((sites["corpus"] / "registry-index.json").read_text(encoding="utf-8"))
    richest = max(index["facets"], key=lambda f: (len(f["versions"]), f["page"]))["page"]
    shots = []
    for label, url in (
        ("ecosystem", f"{server}/reference/index.html"),
        ("facet", f"{server}/corpus/{richest}"),
    ):
        for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            with Visit(browser, url, viewport) as visit:
                overflow = visit.page.evaluate(
                    "document.documentElement.scrollWidth - window.innerWidth"
                )
                assert overflow <= 0, f"{label} scrolls sideways at {width} width"
                path = tmp_path / f"{label}-{width}.png"
                visit.page.screenshot(path=str(path), full_page=True)
                shots.append(path)
    assert all(p.stat().st_size > 10_000 for p in shots)


SVG_LOGO = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" '
    b'fill="#136"/></svg>'
)


@pytest.fixture(scope="module")
def showcase(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference registry plus an entry with presentation fields and a logo, whose consumer
    declares a version of a facet that no producer emits, and one that one does."""
    import json
    import shutil

    root = tmp_path_factory.mktemp("showcase")
    repo = root / "repo"
    shutil.copytree(REFERENCE, repo)
    producer = next(
        p
        for p in sorted((repo / "spec/registry").glob("*/registry.json"))
        if isinstance(json.loads(p.read_text())["producer"].get("produced_facets"), dict)
    )
    doc = json.loads(producer.read_text())
    pinned = {uri: d["spec_versions"] for uri, d in doc["producer"]["produced_facets"].items()}
    (uri_ok, ok), (uri_bad, _) = list(pinned.items())[:2]
    entry = repo / "spec/registry/shiny"
    entry.mkdir()
    (entry / "CODEOWNERS").write_text("* @someone\n")
    (entry / "logo.svg").write_bytes(SVG_LOGO)
    (entry / "registry.json").write_text(
        json.dumps(
            {
                "display_name": "Shiny Catalog",
                "description": "Reads lineage.",
                "logo": "logo.svg",
                "categories": ["catalog"],
                "consumer": {
                    "root_doc_URL": "https://shiny.example/docs",
                    "consumed_facets": {
                        uri_ok: {"spec_versions": ok},
                        uri_bad: {"spec_versions": ["99-0-0"]},
                    },
                },
            }
        )
    )
    out = publish(repo, root / "site")
    (out / "expected.json").write_text(
        json.dumps({"producer": producer.parent.name, "ok": uri_ok, "bad": uri_bad})
    )
    return out


def test_a_card_shows_its_display_name_description_and_logo(browser: Any, showcase: Path) -> None:
    with Visit(browser, (showcase / "index.html").as_uri()) as visit:
        card = visit.page.locator('.card[data-name="shiny"]')
        assert card.locator("h2").text_content() == "Shiny Catalog"
        assert "Reads lineage." in (card.text_content() or "")
        width = card.locator("img.logo").evaluate("img => img.complete ? img.naturalWidth : 0")
        assert width > 0  # the logo file was published and the browser drew it under the page's CSP
        assert not visit.errors, visit.errors


def test_the_explorer_says_which_versions_match_per_pair(browser: Any, showcase: Path) -> None:
    import json

    expected = json.loads((showcase / "expected.json").read_text())
    with Visit(browser, (showcase / "compat.html").as_uri()) as visit:
        page = visit.page
        page.select_option("#pick-consumer", "shiny")
        row = page.locator(f'#out-consumer tr[data-name="{expected["producer"]}"]')
        assert row.get_attribute("data-shared") == "1" and row.get_attribute("data-mismatch") == "1"
        text = row.text_content() or ""
        assert "no common version: emits" in text and "reads 99-0-0" in text and "match: " in text
        assert row.locator(".match.bad").count() == 1
        page.select_option("#pick-producer", expected["producer"])
        mirrored = page.locator('#out-producer tr[data-name="shiny"]')
        assert mirrored.get_attribute("data-mismatch") == "1"
        assert not visit.errors, visit.errors


HOSTILE_LOGOS = {  # each fetched {evil} when opened directly, before logos were re-serialised
    "stylesheet-pi": '<?xml-stylesheet type="text/css" href="{evil}/pi.css"?>{svg}<rect '
    'class="a"/></svg>',
    "xsl-pi": '<?xml-stylesheet type="text/xsl" href="{evil}/pi.xsl"?>{svg}<rect class="a"/></svg>',
    "css-escape": '{svg}<style>rect{{fill:u\\72l({evil}/escape.png)}}</style><rect width="8" '
    'height="8"/></svg>',
    "image-set": '{svg}<style>rect{{mask-image:image-set("{evil}/set.png" 1x)}}</style><rect '
    'width="8"/></svg>',
    "import": "{svg}<style>@import '{evil}/import.css';</style><rect/></svg>",
    "font-face": "{svg}<style>@font-face{{font-family:f;src:url({evil}/f.woff)}}"
    "text{{font-family:f}}</style><text>x</text></svg>",
    "url-attribute": '{svg}<rect width="8" height="8" fill="URL({evil}/attr.svg#p)"/></svg>',
    "image": '{svg}<image href="{evil}/image.png" width="8" height="8"/></svg>',
    "use": '{svg}<use href="{evil}/use.svg#a"/></svg>',
    "fe-image": '{svg}<filter id="f"><feImage href="{evil}/fe.png"/></filter><rect '
    'filter="url(#f)" width="8"/></svg>',
}


@pytest.fixture()
def evil_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server standing for any outside host: it records every request it gets."""
    hits: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()
    httpd.server_close()


def test_published_logos_fetch_nothing_opened_directly_or_in_the_page(
    browser: Any, tmp_path: Path, evil_server: tuple[str, list[str]]
) -> None:
    import json
    import shutil

    evil, hits = evil_server
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8">'
    repo = tmp_path / "repo"
    shutil.copytree(REFERENCE, repo)
    for name, template in HOSTILE_LOGOS.items():
        entry = repo / "spec/registry" / name
        entry.mkdir()
        (entry / "CODEOWNERS").write_text("* @someone\n")
        (entry / "logo.svg").write_text(template.format(evil=evil, svg=svg))
        (entry / "registry.json").write_text(
            json.dumps(
                {
                    "logo": "logo.svg",
                    "consumer": {"root_doc_URL": "https://example.org/docs", "consumed_facets": []},
                }
            )
        )
    out = publish(repo, tmp_path / "site")

    def open_all(paths: list[Path]) -> list[str]:
        requested: list[str] = []
        for path in paths:
            page = browser.new_page()
            page.on("request", lambda r: requested.append(r.url))
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_timeout(300)
            page.close()
        return [url for url in requested if not url.startswith("file://")]

    raw = open_all([repo / "spec/registry" / name / "logo.svg" for name in HOSTILE_LOGOS])
    # each fetched before publishing
    assert len({urldefrag(u)[0] for u in raw}) == len(HOSTILE_LOGOS), raw
    hits.clear()
    published = sorted((out / "logos").glob("*.svg"))
    assert len(published) == len(HOSTILE_LOGOS)
    assert open_all([*published, out / "index.html"]) == [] and hits == []


AXE = Path(__file__).resolve().parent / "node/node_modules/axe-core/axe.min.js"
PAGE_TYPES = (
    "index.html",
    "compat.html",
    "facets.html",
    "use-cases.html",
    "use-cases/lineage.html",
    "naming.html",
    "promotion.html",
)
NARROW = {"width": 400, "height": 800}


def _page_types(folder: Path) -> list[str]:
    """One page of each kind: the fixed pages, a use case page, the facet pages with the most fields
    and with the longest name."""
    facets = list(folder.glob("facets/*/*.html"))
    chosen = {
        max(facets, key=lambda p: len(p.read_bytes())),
        max(facets, key=lambda p: len(p.name)),
    }
    return [*PAGE_TYPES, *sorted(p.relative_to(folder).as_posix() for p in chosen)]


def test_every_page_type_has_no_serious_axe_violation_and_fits_400_px(
    browser: Any, server: str, sites: dict[str, Path]
) -> None:
    """axe-core (npm, tests/node) in the page: no serious or critical violation; at 400 px nothing
    scrolls sideways; a skip link leads to the content; result counts are announced (aria-live)."""
    if not AXE.is_file():
        raise RuntimeError("axe-core is missing: `make node-deps` installs it")
    source = AXE.read_text(encoding="utf-8")
    found: dict[str, list[str]] = {}
    for rel in _page_types(sites["corpus"]):
        for viewport in (DESKTOP, NARROW):
            with Visit(browser, f"{server}/corpus/{rel}", viewport) as visit:
                page = visit.page
                # through the debugger: the page's CSP allows no inline script
                page.evaluate(source)
                result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
                bad = [
                    f"{v['id']} ({v['impact']}): {len(v['nodes'])} node(s), "
                    f"{v['nodes'][0]['target']}"
                    for v in result["violations"]
                    if v["impact"] in ("serious", "critical")
                ]
                width = page.evaluate("document.documentElement.scrollWidth")
                if width > viewport["width"]:
                    bad.append(f"{width} px wide at {viewport['width']} px")
                if (
                    not page.locator("a.skip[href='#main']").count()
                    or not page.locator("main#main").count()
                ):
                    bad.append("no skip link to #main")
                if bad:
                    found[f"{rel} @ {viewport['width']}"] = bad
    assert not found, "\n".join(f"{where}: {'; '.join(what)}" for where, what in found.items())
    with Visit(browser, f"{server}/corpus/index.html") as visit:
        assert (
            visit.page.locator("#shown").get_attribute("aria-live") == "polite"
            or visit.page.locator(".count[aria-live]").count()
        )


def test_a_paged_ecosystem_finds_entries_of_every_page_from_the_first(
    browser: Any, tmp_path: Path
) -> None:
    import json
    import shutil

    from bot.outputs.site.pages import PAGE_SIZE

    repo = tmp_path / "repo"
    shutil.copytree(REFERENCE, repo)
    extra = PAGE_SIZE + 20
    for i in range(extra):
        entry = repo / f"spec/registry/tool{i:04d}"
        entry.mkdir()
        (entry / "CODEOWNERS").write_text("* @someone\n")
        (entry / "registry.json").write_text(
            json.dumps(
                {
                    "display_name": f"Tool number {i}",
                    "consumer": {
                        "root_doc_URL": "https://example.org/docs",
                        "consumed_facets": ["ol:core:SchemaDatasetFacet.json"],
                    },
                }
            )
        )
    out = publish(repo, tmp_path / "site")
    assert (out / "ecosystem/2.html").is_file() and not (out / "ecosystem/3.html").exists()
    with Visit(browser, (out / "index.html").as_uri()) as visit:
        page = visit.page
        assert len(visit.visible_cards()) == PAGE_SIZE
        assert page.text_content("#shown") == str(
            len(list((repo / "spec/registry").glob("*/registry.json")))
        )
        last = f"Tool number {extra - 1}"
        page.fill("#q", last.lower())
        assert visit.visible_cards() == [] and page.text_content("#shown") == "1"
        link = page.locator("#elsewhere a")
        assert link.text_content() == last
        target = link.evaluate("a => a.href")
        assert target.endswith(f"/ecosystem/2.html#entry-tool{extra - 1:04d}"), target
        page.goto(target)
        assert page.locator(f'.card[data-name="tool{extra - 1:04d}"] h2').text_content() == last
        page.fill("#facet", "schemadataset")
        shown = visit.visible_cards()  # the second page's tools, all reading SchemaDatasetFacet
        assert shown and len(shown) == page.locator('.card[data-name^="tool"]').count()
        assert not visit.errors, visit.errors


SCRIPT = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference registry plus an entry whose every text shown (names, descriptions, titles,
    enums, examples, use cases, partner, categories) is markup that would run."""
    import json
    import shutil

    root = tmp_path_factory.mktemp("hostile")
    repo = root / "repo"
    shutil.copytree(REFERENCE, repo)
    entry = repo / "spec/registry/evil"
    (entry / "facets/examples/EvilRunFacet").mkdir(parents=True)
    facet = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://openlineage.io/spec/facets/1-0-0/EvilRunFacet.json",
        "title": SCRIPT,
        "$defs": {
            "EvilRunFacet": {
                "description": SCRIPT,
                "allOf": [
                    {"$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"},
                    {
                        "type": "object",
                        "properties": {
                            SCRIPT: {"type": "string", "description": SCRIPT, "enum": [SCRIPT]},
                            "variant": {
                                "oneOf": [{"title": SCRIPT, "type": "object"}, {"type": "string"}]
                            },
                            "pattern": {"type": "string", "pattern": SCRIPT, "default": SCRIPT},
                        },
                    },
                ],
            }
        },
        "type": "object",
        "properties": {"evil_run": {"$ref": "#/$defs/EvilRunFacet"}},
    }
    (entry / "facets/EvilRunFacet.json").write_text(json.dumps(facet), encoding="utf-8")
    (entry / "facets/examples/EvilRunFacet/1.json").write_text(
        json.dumps({"evil_run": {SCRIPT: SCRIPT}}), encoding="utf-8"
    )
    registry = {
        "display_name": SCRIPT[:80],
        "description": SCRIPT,
        "organization": {"name": SCRIPT[:80], "homepage": "javascript:document.title='pwned'"},
        "categories": [SCRIPT],
        "producer": {
            "root_doc_URL": "javascript:document.title='pwned'",
            "produced_facets": {
                "ol:evil:EvilRunFacet.json": {"owner": "evil", "use_cases": [SCRIPT]},
                "ol:core:SQLJobFacet.json": {"use_cases": [SCRIPT]},
            },
        },
        "consumer": {"root_doc_URL": "https://example.com/", "consumed_facets": [SCRIPT]},
    }
    (entry / "registry.json").write_text(json.dumps(registry), encoding="utf-8")
    (repo / "spec/registry/use-cases.json").write_text(
        json.dumps({SCRIPT[:50]: {"title": SCRIPT, "description": SCRIPT}}), encoding="utf-8"
    )
    return publish(repo, root / "site")


def test_hostile_registry_text_runs_nothing_in_the_browser(
    browser: Any, hostile_site: Path
) -> None:
    """Every page of a registry whose every shown text is markup, opened in Chromium: the markup is
    shown as text, and nothing of it is an element: no script, image or handler (checked in the
    DOM, not only through the CSP, which would block them), no dialog, no console error."""
    pages = sorted(p for p in hostile_site.rglob("*.html") if "docusaurus" not in p.parts)
    assert any("evil" in p.as_posix() for p in pages)
    shown = 0
    for path in pages:
        with Visit(browser, path.as_uri()) as visit:
            page = visit.page
            page.on("dialog", lambda d: visit.errors.append(f"dialog: {d.message}"))
            # the filters load the search index, whose data holds the same text
            if page.locator("#q").count():
                page.fill("#q", "script")
                visit.visible_cards()
            live = page.evaluate(
                """() => [...document.querySelectorAll('*')].flatMap(e => [
                    ...(e.tagName === 'SCRIPT' && !(e.src.endsWith('/assets/site.js')
                        || e.src.endsWith('/assets/ecosystem-index.js')
                        || e.type === 'application/json') ? ['script ' + e.outerHTML] : []),
                    ...(e.tagName === 'IMG' && !e.src.includes('/logos/')
                        && !e.src.includes('/assets/') ? ['img ' + e.outerHTML] : []),
                    ...[...e.attributes].filter(a => a.name.startsWith('on')
                        || /^\\s*javascript:/i.test(a.value)).map(a => a.name + ' ' + a.value),
                ])"""
            )
            assert live == [], (path.name, live)
            assert page.title() != "pwned" and not visit.errors, (path.name, visit.errors)
            shown += "<script>document.title" in (page.inner_text("body") or "")
    assert shown >= 4, shown  # the ecosystem, the facet list, the facet page, the use case


def test_a_name_with_a_bidi_override_turns_nothing_after_it_around(
    browser: Any, tmp_path: Path
) -> None:
    """Finding: a display name ending with U+202E (right-to-left override) reversed what the page
    showed after it on the same line: in the partner list, the next entry's name (``Beta`` read
    ``ateB``), so one entry could spoof how another's name reads. Each shown text now closes what
    it opens (the Markdown already showed it as ``\\u202e``)."""
    import json
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(REFERENCE, repo)
    for name, shown in (("aaa", "Alpha\u202e"), ("bbb", "Beta")):
        (repo / "spec/registry" / name).mkdir(parents=True)
        doc = {
            "display_name": shown,
            "organization": {"name": "Acme"},
            "consumer": {"root_doc_URL": "https://example.com/", "consumed_facets": []},
        }
        (repo / f"spec/registry/{name}/registry.json").write_text(json.dumps(doc))
    out = publish(repo, tmp_path / "site")
    with Visit(browser, (out / "index.html").as_uri()) as visit:
        # x of the first and last letter of each "Beta" shown: left to right when not turned
        xs = visit.page.evaluate(
            """() => [...document.querySelectorAll('.partner-list a')]
                .filter(a => a.textContent === 'Beta').map(a => {
                    const r = document.createRange(), node = a.firstChild, at = i => {
                        r.setStart(node, i); r.setEnd(node, i + 1);
                        return r.getBoundingClientRect().x; };
                    return [at(0), at(3)]; })"""
        )
        assert xs and all(first < last for first, last in xs), xs
        assert not visit.errors, visit.errors
    markdown = (out / "docusaurus/registry/index.md").read_text(encoding="utf-8")
    assert "\u202e" not in markdown  # the Markdown shows it as an escape (``text``)


def test_a_partner_heading_lists_only_its_owners_entries(browser: Any, tmp_path: Path) -> None:
    """Finding: an entry of other owners claiming ``"organization": {"name": "Acme"}`` was listed
    under Acme's partner heading, which linked the claimant's homepage when it sorted first. In
    Chromium, the partner list now has one heading per owner group, each naming its owners, Acme's
    linking Acme's homepage; the claimant's card says whose claim it is, and a search finds it by
    its owners."""
    import json
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(REFERENCE, repo)
    for name, owner, homepage in (
        ("acme-lineage", "@acme/lineage", "https://acme.example"),
        ("aaa", "@mallory", "https://evil.example"),
    ):
        (repo / "spec/registry" / name).mkdir(parents=True)
        (repo / f"spec/registry/{name}/CODEOWNERS").write_text(f"* {owner}\n")
        doc = {
            "organization": {"name": "Acme", "homepage": homepage},
            "consumer": {"root_doc_URL": "https://example.com/", "consumed_facets": []},
        }
        (repo / f"spec/registry/{name}/registry.json").write_text(json.dumps(doc))
    out = publish(repo, tmp_path / "site")
    with Visit(browser, (out / "index.html").as_uri()) as visit:
        rows = visit.page.eval_on_selector_all(
            ".partner-list li",
            """els => els.map(li => [li.querySelector('strong').innerText,
                li.querySelector('strong a')?.href ?? '',
                [...li.querySelectorAll(':scope > a')].map(a => a.innerText)])""",
        )
        assert ["Acme (@acme/lineage)", "https://acme.example/", ["acme-lineage"]] in rows, rows
        assert ["Acme (@mallory)", "https://evil.example/", ["aaa"]] in rows, rows
        assert len([r for r in rows if r[0].startswith("Acme")]) == 2, rows
        card = visit.page.locator('.card[data-name="aaa"] .org').inner_text()
        assert card == "by Acme (@mallory)"
        visit.page.fill("#q", "mallory")
        assert visit.visible_cards() == ["aaa"]
        assert not visit.errors, visit.errors
