"""The dashboard page of the published site, in Debian's headless Chromium (as
``tests/test_site_browser.py``): every ``check --all`` finding of the real registry listed under its
entry, with the entry's owners."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main

# the Chromium fixture
from tests.test_site_browser import AXE, DESKTOP, NARROW, Visit, browser  # noqa: F401

PAGE = "dashboard.html"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    out = tmp_path_factory.mktemp("dashboard-site") / "site"
    assert main(["publish", "--no-markdown", str(corpus), str(out)]) == 0
    return out


def test_the_dashboard_page_lists_every_finding_by_entry_with_owners(
    browser: Any,  # noqa: F811
    published: Path,
    corpus: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    assert main(["check", "--all", "--format", "json", str(corpus)]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    with Visit(browser, (published / PAGE).as_uri()) as visit:
        page = visit.page
        rows = page.eval_on_selector_all(
            "section.dashboard-entry tr.finding",
            "rows => rows.map(r => [r.closest('section').dataset.entry, r.dataset.rule, "
            "r.dataset.path, r.dataset.line])",
        )
        owners = page.eval_on_selector_all(
            "section.dashboard-entry",
            "els => els.map(s => [s.dataset.entry, s.querySelectorAll('code.owner').length])",
        )
        nav = page.eval_on_selector_all(
            "header nav a", "els => els.map(a => a.getAttribute('href'))"
        )
        assert not visit.errors, visit.errors
    expected = sorted(
        [f.get("entry", "(repository)"), f["rule"], f["path"], str(f["line"] or "")]
        for f in findings
    )
    assert sorted(rows) == expected and len(rows) == len(findings) > 0
    assert owners and all(count > 0 for _, count in owners)
    assert PAGE in nav


def test_every_page_links_to_the_dashboard(published: Path) -> None:
    pages = list(published.rglob("*.html"))
    assert pages and all(f'{PAGE}"' in p.read_text(encoding="utf-8") for p in pages)


def test_the_dashboard_page_has_no_serious_axe_violation_and_fits_400_px(
    browser: Any,  # noqa: F811
    published: Path,
) -> None:
    source = AXE.read_text(encoding="utf-8")
    for viewport in (DESKTOP, NARROW):
        with Visit(browser, (published / PAGE).as_uri(), viewport) as visit:
            visit.page.evaluate(source)
            result = visit.page.evaluate("axe.run(document, {resultTypes: ['violations']})")
            bad = [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]
            assert (
                bad == []
                and visit.page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
            )


class Rows(HTMLParser):
    """Each finding row's (path, line) and the ``href`` of its links by class (``file``,
    ``page``); every element id of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[tuple[str, str], dict[str, str]] = {}
        self.ids: set[str] = set()
        self.row: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "tr" and a.get("class") == "finding":
            self.row = self.rows.setdefault((a["data-path"], a["data-line"]), {})
        elif tag == "a" and self.row is not None and a.get("class") in ("file", "page"):
            self.row[a["class"]] = a["href"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self.row = None


def parsed(path: Path) -> Rows:
    rows = Rows()
    rows.feed(path.read_text(encoding="utf-8"))
    return rows


SOURCE = "https://github.com/OpenLineage/OpenLineage/blob/0123456789abcdef0123456789abcdef01234567"


def test_each_finding_links_to_its_file_and_line_and_to_the_sites_page_of_it(
    tmp_path: Path, published: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--all", "--format", "json", str(corpus)]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    out = tmp_path / "site"
    assert main(["publish", "--no-markdown", "--source-url", SOURCE, str(corpus), str(out)]) == 0
    rows = parsed(out / PAGE).rows
    places = {(f["path"], str(f["line"] or "")) for f in findings}
    assert set(rows) == places and places
    for (path, line), links in rows.items():
        assert links["file"] == f"{SOURCE}/{path}" + (f"#L{line}" if line else "")
    # the site's own page of a facet schema or an entry's registry.json: a page of the output, and
    # on it the card's anchor
    paged = {place: links["page"] for place, links in rows.items() if "page" in links}
    facets = {place for place in places if "/facets/" in place[0] and "/examples/" not in place[0]}
    assert facets and facets <= set(paged)
    assert {p for p, _ in places if p.endswith("/registry.json")} <= {p for p, _ in paged}
    for href in paged.values():
        page, _, anchor = href.partition("#")
        assert (out / page).is_file(), href
        assert not anchor or anchor in parsed(out / page).ids, href
    # without --source-url (the module's site): the same pages, no file links
    plain = parsed(published / PAGE).rows
    assert {p: links.get("page") for p, links in plain.items()} == {
        p: links.get("page") for p, links in rows.items()
    }
    assert not any("file" in links for links in plain.values())


def test_a_source_url_that_is_not_a_web_address_is_refused(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    assert main(["publish", "--source-url", "javascript:alert(1)", str(corpus), str(out)]) == 2
    err = capsys.readouterr().err
    assert "--source-url" in err and len(err.strip().splitlines()) == 1 and not out.exists()
