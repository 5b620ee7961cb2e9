"""What one entry's owners can make the published site show, bounded alike by the review and by the
site: use cases (each one no ``use-cases.json`` describes is a page), names that show nothing, and
the partner grouping the discovery index gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli.sample import REFERENCE
from bot.core.findings import Finding
from bot.core.snapshot import DirSnapshot
from bot.model.presentation import MAX_FACETS, MAX_USE_CASES, MAX_VERSIONS, case_id
from bot.outputs.site.build import write_site
from bot.outputs.site.index import INDEX_FILE
from bot.outputs.site.usecases import PROPOSAL
from tests.test_site_registry import add_entry, copy, site_of

FACET = "ol:core:SQLJobFacet.json"


def entry_findings(repo: Path) -> list[Finding]:
    from bot.review.checks import entry as entry_check
    from bot.review.engine import ReviewContext, review

    return review(
        head=DirSnapshot(repo),
        base=None,
        changes=None,
        context=ReviewContext(),
        checks=(entry_check.check,),
    ).findings


def producer(cases: list[str], *more: str) -> dict[str, Any]:
    """A producer declaring ``cases`` for one facet (and ``more`` for another)."""
    facets = {FACET: {"use_cases": cases}, "ol:core:ParentRunFacet.json": {"use_cases": list(more)}}
    return {"producer": {"root_doc_URL": "https://flood.example/docs", "produced_facets": facets}}


def test_thousands_of_use_cases_are_refused_and_publish_a_bounded_site(tmp_path: Path) -> None:
    """Finding: ``use_cases`` had no bound and each undescribed use case is a page of its own: one
    entry declaring 3,000 on one facet published 6,064 files, 30 MB, a 1.7 MB index.html, approved
    by that entry's owners alone. The review refuses more than 20 (the schema per facet, the
    entry's distinct ones by ``entry/use-cases``, naming the ones the site leaves out) and the site
    pages the first 20 in the file's order, saying how many more the card does not show."""
    repo = copy(REFERENCE, tmp_path / "repo")
    cases = [f"Use case {i:04}" for i in range(3000)]
    add_entry(repo, "flood", producer(cases), {})
    found = [f for f in entry_findings(repo) if "flood" in f.path]
    over = [f for f in found if f.rule == "entry/use-cases"]
    assert len(over) == 1 and "3000 distinct use cases" in over[0].message
    assert "'use-case-0020'" in over[0].message and "'use-case-0019'" not in over[0].message
    assert any(f.rule == "entry/schema" and "too long" in f.message for f in found)
    site = site_of(repo)
    card = next(c for c in site.entries if c.name == "flood")
    declared = [u for u in card.all_use_cases if u not in PROPOSAL]  # core facets map these
    assert declared == [case_id(c) for c in cases[:MAX_USE_CASES]]
    assert card.hidden_use_cases == 3000 - MAX_USE_CASES
    out = tmp_path / "site"
    count = write_site(site, out)
    pages = list((out / "use-cases").glob("*.html"))
    assert len(pages) == len(site.use_case_texts) + MAX_USE_CASES
    assert count < 400
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "2980 more use cases declared, not shown" in page
    assert len(page) < 100_000


def test_use_cases_within_the_bound_pass_and_are_all_shown(tmp_path: Path) -> None:
    repo = copy(REFERENCE, tmp_path / "repo")
    cases = [f"Use case {i}" for i in range(MAX_USE_CASES - 1)]
    add_entry(repo, "fine", producer(cases, "use_case 0", "Privacy"), {})  # one id twice: 20
    assert not [f for f in entry_findings(repo) if "fine" in f.path]
    card = next(c for c in site_of(repo).entries if c.name == "fine")
    assert len([u for u in card.all_use_cases if u not in PROPOSAL]) == MAX_USE_CASES - 1
    assert "privacy" in card.all_use_cases and not card.hidden_use_cases


def test_a_use_case_over_100_characters_is_refused(tmp_path: Path) -> None:
    repo = copy(REFERENCE, tmp_path / "repo")
    add_entry(repo, "long", producer(["x" * 101]), {})
    found = [f for f in entry_findings(repo) if "long" in f.path]
    assert [f.rule for f in found] == ["entry/schema"] and "is too long" in found[0].message


INVISIBLE = ["\u200b", " \u200b\u200d ", "\u3164", "\u2800", "\u0301", "\ufeff\u2060"]


def test_names_that_show_nothing_are_refused_and_the_site_shows_the_registered_name(
    tmp_path: Path,
) -> None:
    """Finding: a ``display_name`` or ``organization.name`` of invisible characters only (a zero
    width space, a Hangul filler) passed ``minLength: 1`` and the card showed an empty heading, the
    partner list an empty partner. The review refuses it (``entry/blank-name``) and the site shows
    the registered name, with no partner."""
    repo = copy(REFERENCE, tmp_path / "repo")
    for i, blank in enumerate(INVISIBLE):
        add_entry(
            repo,
            f"blank{i}",
            {
                "display_name": blank,
                "organization": {"name": blank},
                "consumer": {"root_doc_URL": "https://blank.example/docs", "consumed_facets": []},
            },
            {},
        )
    add_entry(
        repo,
        "shown",
        {
            "display_name": "\u200bShown",
            "organization": {"name": "Acme\u200d"},
            "consumer": {"root_doc_URL": "https://shown.example/docs", "consumed_facets": []},
        },
        {},
    )
    found = [f for f in entry_findings(repo) if f.rule == "entry/blank-name"]
    assert sorted(f.path.split("/")[-2] for f in found) == sorted(
        f"blank{i}" for i in range(len(INVISIBLE)) for _ in range(2)
    )
    assert all("shows nothing" in f.message for f in found)
    site = site_of(repo)
    for card in site.entries:
        if card.name.startswith("blank"):
            assert card.title == card.name and not card.partner, card
    assert {c.name: c.title for c in site.entries}["shown"] == "\u200bShown"
    out = tmp_path / "site"
    write_site(site, out)
    page = (out / "index.html").read_text(encoding="utf-8")
    for i in range(len(INVISIBLE)):
        assert f"<h2>blank{i}</h2>" in page


def test_the_discovery_index_groups_organizations_as_the_page_does(tmp_path: Path) -> None:
    """Finding: the index gave only each entry's ``organization.name``: a consumer grouping by it
    merged Acme's entries with another owner's entry claiming Acme, as the page used to. Each
    organization now carries the page's ``partner`` label (one per partner) and the claim's
    ``owners``; ``name`` stays as written."""
    repo = copy(REFERENCE, tmp_path / "repo")
    acme = {"name": "Acme", "homepage": "https://acme.example"}
    for name, owner in (("acme-a", "@acme/lineage"), ("acme-b", "@acme/lineage"), ("aaa", "@eve")):
        entry = add_entry(
            repo,
            name,
            {
                "organization": acme,
                "consumer": {"root_doc_URL": f"https://{name}.example/d", "consumed_facets": []},
            },
            {},
        )
        (entry / "CODEOWNERS").write_text(f"* {owner}\n", encoding="utf-8")
    site = site_of(repo)
    out = tmp_path / "site"
    write_site(site, out)
    index = json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))
    orgs = {e["name"]: e["organization"] for e in index["entries"] if "organization" in e}
    assert {o["name"] for o in orgs.values()} == {"Acme"}  # what consumers already read
    groups: dict[str, list[str]] = {}
    for name, org in sorted(orgs.items()):
        groups.setdefault(org["partner"], []).append(name)
    assert groups == {
        label: sorted(c.name for c in cards) for label, cards in site.organizations().items()
    }
    assert groups == {"Acme (@acme/lineage)": ["acme-a", "acme-b"], "Acme (@eve)": ["aaa"]}
    assert orgs["aaa"]["owners"] == ["@eve"]


def test_long_facet_lists_and_version_lists_are_refused_and_bounded_in_publish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: facet lists and ``spec_versions`` had no bound, and the card sorted an entry's
    versions of a facet again at each declaration: one 343 KB registry.json pinning one facet at
    8,000 versions took publish 110 s; 8,000 URIs naming no facet made a 1.1 MB index.html. The
    schema bounds a list to 1,000 facets and 100 versions; the site shows as many (the newest
    versions), says how many facets more, and sorts once."""
    import bot.outputs.site.model as model

    repo = copy(REFERENCE, tmp_path / "repo")
    pinned = [f"ol:core:{i}-0-0/SQLJobFacet.json" for i in range(3000)]
    unknown = [f"ol:many:Nope{i}RunFacet.json" for i in range(1500)]
    add_entry(
        repo,
        "many",
        {
            "producer": {"root_doc_URL": "https://m.example/d", "produced_facets": pinned},
            "consumer": {"root_doc_URL": "https://m.example/d", "consumed_facets": unknown},
        },
        {},
    )
    found = [f for f in entry_findings(repo) if f.rule == "entry/schema" and "many" in f.path]
    assert len(found) == 2 and all("is too long" in f.message for f in found)
    assert all(len(f.message) < 200 for f in found)
    calls = 0
    key = model._key

    def counted(version: str) -> tuple[int, ...]:
        nonlocal calls
        calls += 1
        return key(version)

    monkeypatch.setattr(model, "_key", counted)
    card = next(c for c in site_of(repo).entries if c.name == "many")
    assert calls < 100_000  # n log n, not n² (4.5 million on the code before)
    versions = card.versions["producer"]["ol:core:SQLJobFacet.json"]
    assert len(versions) == MAX_VERSIONS and versions[0] == "2999-0-0"
    assert len(card.consumed) == MAX_FACETS and card.hidden_facets == 500
    out = tmp_path / "site"
    write_site(site_of(repo), out)
    assert "500 more facets declared, not shown" in (out / "index.html").read_text("utf-8")


def test_the_dashboard_page_shows_a_bounded_number_of_an_entrys_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding: the dashboard page listed every finding of an entry: one registry.json naming
    8,000 facets that do not exist made dashboard.html 3.5 MB. A table shows 200 rows (the real
    registry's most is 26) and says how many more ``registry-bot dashboard`` lists."""
    from bot.cli import main
    from bot.outputs.site.pages import DASHBOARD_ROWS

    repo = copy(REFERENCE, tmp_path / "repo")
    unknown = [f"ol:many:Nope{i}RunFacet.json" for i in range(DASHBOARD_ROWS + 50)]
    add_entry(
        repo,
        "many",
        {"consumer": {"root_doc_URL": "https://m.example/d", "consumed_facets": unknown}},
        {},
    )
    out = tmp_path / "site"
    assert main(["publish", "--no-markdown", str(repo), str(out)]) == 0
    capsys.readouterr()
    page = (out / "dashboard.html").read_text(encoding="utf-8")
    section = page.split('data-entry="many"', 1)[1].split("</section>", 1)[0]
    assert section.count('<tr class="finding"') == DASHBOARD_ROWS
    total = int(section.split("<h3>Defects (", 1)[1].split(")", 1)[0])
    assert total > DASHBOARD_ROWS + 50 - 1
    assert f"{total - DASHBOARD_ROWS} more not shown here" in section


def test_urls_over_the_link_limit_are_refused_and_not_in_the_discovery_index(
    tmp_path: Path,
) -> None:
    """Finding: the pages link no URL of 2,048 characters or more (``safe_url``), but the
    discovery index copied any ``http(s)`` URL: four 2 MB URLs in one registry.json made
    registry-index.json 6 MB (the review refused them only as "not a 'uri'"). The schema says
    "too long" and the index leaves them out as the pages do."""
    repo = copy(REFERENCE, tmp_path / "repo")
    url = "https://long.example/" + "a" * 100_000
    add_entry(
        repo,
        "long",
        {
            "homepage": url,
            "organization": {"name": "Long", "homepage": url},
            "consumer": {"root_doc_URL": url, "sample_URL": url, "consumed_facets": []},
        },
        {},
    )
    found = [f for f in entry_findings(repo) if f.rule == "entry/schema" and "long" in f.path]
    assert len([f for f in found if "is too long" in f.message]) == 4
    assert all(len(f.message) < 200 for f in found)
    out = tmp_path / "site"
    write_site(site_of(repo), out)
    text = (out / INDEX_FILE).read_text(encoding="utf-8")
    assert "long.example" not in text and len(text) < 100_000


def test_a_key_shared_by_many_facets_names_a_few_of_the_others(tmp_path: Path) -> None:
    """Finding: each facet file sharing a facet key named every other one, so n files made n²
    text: 500 facets of one key in one entry made dashboard.html 5.9 MB. A finding names 5 and
    says how many more."""
    from bot.review.checks import facets as facets_check
    from bot.review.engine import ReviewContext, review

    repo = copy(REFERENCE, tmp_path / "repo")
    source = repo / "spec/registry/airflow/facets/AirflowDagRunFacet.json"
    text = source.read_text(encoding="utf-8")
    for i in range(12):
        name = f"AirflowDag{i}RunFacet"
        (source.parent / f"{name}.json").write_text(
            text.replace("AirflowDagRunFacet", name), encoding="utf-8"
        )
    found = [
        f
        for f in review(
            head=DirSnapshot(repo),
            base=None,
            changes=None,
            context=ReviewContext(),
            checks=(facets_check.check,),
        ).findings
        if f.rule == "facets/duplicate-key"
    ]
    assert len(found) == 13
    assert all(f.message.count("spec/registry/") == 5 for f in found)
    assert all(f.message.endswith(" and 7 more") for f in found)


def test_the_dashboard_names_a_bounded_number_of_unregistered_sample_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding: the dashboard's line of facet keys an entry's sample events carry undeclared
    listed every key: a sample event of 10 MB holds hundreds of thousands. It names 200 and
    says how many more."""
    from bot.cli import main
    from bot.outputs.site.pages import DASHBOARD_ROWS

    repo = copy(REFERENCE, tmp_path / "repo")
    samples = repo / "spec/registry/egeria/samples/events.jsonl"
    event = json.loads(samples.read_text(encoding="utf-8").splitlines()[0])
    event["run"]["facets"] = {f"nope{i:04}": {"_producer": "https://x.example"} for i in range(250)}
    samples.write_text(json.dumps(event) + "\n", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["publish", "--no-markdown", str(repo), str(out)]) == 0
    capsys.readouterr()
    page = (out / "dashboard.html").read_text(encoding="utf-8")
    line = page.split("Unregistered facet keys in its sample events: ", 1)[1].split("</p>", 1)[0]
    assert line.count("<code>") == DASHBOARD_ROWS and line.endswith(" and 50 more")
