"""The dashboard page of the published site, in Debian's headless Chromium (as
``tests/test_site_browser.py``): every ``check --all`` finding of the real registry listed under its
entry, with the entry's owners."""

from __future__ import annotations

import json
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
