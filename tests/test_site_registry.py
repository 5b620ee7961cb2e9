"""The published registry read in full: core, the proposal's facets map (versions, use cases), every
schema construct, presentation fields and logos, the site preview in ``check``, the partner-list
migration aid."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.cli.sample import REFERENCE
from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.outputs.site import build_site
from bot.outputs.site.build import write_site
from bot.outputs.site.fields import FieldWalker
from bot.outputs.site.index import INDEX_FILE
from bot.outputs.site.usecases import PROPOSAL, case_id
from tests.gitrepo import Repo

ROOT = Path(__file__).resolve().parent.parent
MIRROR = "website/static/spec/facets"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><circle cx="4" cy="4" r="3" '
    b'fill="#2b6a30"/></svg>'
)


def site_of(repo: Path) -> Any:
    snapshot = DirSnapshot(repo)
    return build_site(snapshot, load_config(snapshot)[0])


def copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".git"))
    return target


def test_core_is_an_entry_like_the_others_with_every_core_facet_and_its_versions(
    corpus: Path,
) -> None:
    site = site_of(corpus)
    folders = {
        p.parent.relative_to(corpus / "spec/registry").as_posix().replace("/", ":")
        for p in (corpus / "spec/registry").rglob("registry.json")
    }
    assert {c.name for c in site.entries} == folders and "core" in folders
    core = next(c for c in site.entries if c.name == "core")
    for schema in sorted((corpus / "spec/facets").glob("*.json")):
        uri = f"ol:core:{schema.name}"
        page = site.facets[uri]
        published = sorted(p.parent.name for p in (corpus / MIRROR).glob(f"*/{schema.name}"))
        current = json.loads(schema.read_bytes())["$id"].split("/")[-2]
        assert [v.version for v in page.versions] == sorted(
            {*published, current}, key=lambda v: tuple(map(int, v.split("-")))
        )
        if uri in core.produced:
            assert "core" in page.producers


def proposal_form(repo: Path) -> dict[str, list[str]]:
    """Rewrite core's registry.json as the proposal writes it: ``facets`` as a map of file names
    with owner, spec_versions (the published ones) and use_cases (the proposal's list, dealt round);
    returns use case -> facet URIs, as written."""
    path = repo / "spec/registry/core/registry.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    producer = doc["producer"]
    uris = producer.pop("produced_facets")
    # the seed writes "data quality"
    cases = [c.replace("-", " ") if c == "data-quality" else c for c in PROPOSAL]
    facets, expected = {}, {}
    for i, uri in enumerate(uris):
        file = uri.rsplit(":", 1)[-1]
        versions = sorted(p.parent.name for p in (repo / MIRROR).glob(f"*/{file}")) or ["1-0-0"]
        chosen = [cases[i % len(cases)], cases[(i + 1) % len(cases)]]
        facets[file] = {"owner": "core", "spec_versions": versions, "use_cases": chosen}
        for case in chosen:
            expected.setdefault(case, []).append(uri)
    producer["root_doc_URL"] = producer.pop("root_doc_url", "https://openlineage.io/spec/facets/")
    producer["facets"] = facets
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return expected


def test_the_proposals_facets_map_fills_use_case_pages_versions_and_passes_check(
    corpus: Path, tmp_path: Path
) -> None:
    repo = copy(corpus, tmp_path / "repo")
    expected = proposal_form(repo)
    assert "data quality" in expected
    site = site_of(repo)
    by_case = site.use_cases()
    for case, uris in expected.items():
        assert by_case[case_id(case)] >= set(uris), case  # with the core facets mapped by default
    out = tmp_path / "out"
    write_site(site, out)
    index = json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))
    core = next(e for e in index["entries"] if e["name"] == "core")
    declared = json.loads((repo / "spec/registry/core/registry.json").read_text())["producer"][
        "facets"
    ]
    assert {u.rsplit(":", 1)[-1]: v for u, v in core["producer"]["versions"].items()} == {
        f: sorted(d["spec_versions"], key=lambda v: tuple(map(int, v.split("-"))), reverse=True)
        for f, d in declared.items()
    }
    for case in PROPOSAL:
        html = (out / f"use-cases/{case}.html").read_text(encoding="utf-8")
        assert PROPOSAL[case].description.split(",")[0] in html
        uris = [u for written, us in expected.items() if case_id(written) == case for u in us]
        assert uris and all(uri in html for uri in uris) and ">core<" in html, case
    done = subprocess.run(
        [sys.executable, "-m", "bot", "check", str(repo), "--all", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    findings = json.loads(done.stdout)["findings"]
    assert not [
        f for f in findings if f["path"].endswith("core/registry.json") and f["severity"] == "error"
    ]


def test_a_use_cases_file_in_the_registry_replaces_the_proposals_list(tmp_path: Path) -> None:
    repo = copy(REFERENCE, tmp_path / "repo")
    (repo / "spec/registry/use-cases.json").write_text(
        json.dumps({"Catalog": {"title": "Finding data", "description": "What a catalog shows."}}),
        encoding="utf-8",
    )
    site = site_of(repo)
    assert (
        list(site.use_case_texts) == ["catalog"]
        and site.use_case_texts["catalog"].title == "Finding data"
    )
    out = tmp_path / "out"
    write_site(site, out)
    page = (out / "use-cases/catalog.html").read_text(encoding="utf-8")
    assert "Finding data" in page and "What a catalog shows." in page and "ol:egeria:" in page


def test_use_case_pages_list_core_facets_and_who_emits_them_on_the_real_registry(
    corpus: Path, tmp_path: Path
) -> None:
    site = site_of(corpus)
    out = tmp_path / "out"
    write_site(site, out)
    by_case = site.use_cases()
    for case in PROPOSAL:
        listed = by_case[case]
        assert listed and listed <= set(site.facets), case  # only facets the registry has
        html = (out / f"use-cases/{case}.html").read_text(encoding="utf-8")
        assert all(uri in html for uri in listed) and 'index.html#entry-core">core</a>' in html, (
            case
        )
        assert "No registered name declares" not in html
    index = json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))
    lineage = next(
        f for f in index["facets"] if f["uri"] == "ol:core:ColumnLineageDatasetFacet.json"
    )
    assert "lineage" in lineage["use_cases"]


def test_cards_that_show_the_same_display_name_are_told_apart(tmp_path: Path) -> None:
    repo = copy(REFERENCE, tmp_path / "repo")
    for name in ("alpha", "beta"):
        add_entry(
            repo,
            name,
            {
                "display_name": "Google Cloud",
                "consumer": {"root_doc_URL": f"https://{name}.example/docs", "consumed_facets": []},
            },
            {},
        )
    site = site_of(repo)
    titles = {c.name: c.title for c in site.entries}
    assert titles["alpha"] == "Google Cloud (alpha)" and titles["beta"] == "Google Cloud (beta)"
    assert len(set(titles.values())) == len(titles)
    out = tmp_path / "out"
    write_site(site, out)
    assert "Google Cloud (alpha)" in (out / "compat.html").read_text(encoding="utf-8")


def test_the_lineage_facet_page_lists_the_fields_of_every_variant(corpus: Path) -> None:
    site = site_of(corpus)
    schema = json.loads((corpus / "spec/facets/LineageFacet.json").read_text(encoding="utf-8"))
    defs = schema["$defs"]
    page = site.facets["ol:core:LineageFacet.json"]
    rows = {x.path for d in page.definitions for x in d.fields}
    variants = {ref["$ref"].rsplit("/", 1)[-1] for d in defs.values() for ref in d.get("oneOf", [])}
    assert variants
    for name in variants:
        shown = [p for p in rows if p.endswith("{" + name + "}")]
        assert shown, name
        for prop in defs[name].get("properties", {}):
            assert any(f"{s}.{prop}" in rows for s in shown), (name, prop)


def test_every_schema_construct_has_its_row() -> None:
    doc = {
        "$id": "https://openlineage.io/spec/facets/1-0-0/X.json",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}},
            },
            "X": {
                "type": "object",
                "properties": {
                    "mode": {"enum": ["a", "b"], "default": "a"},
                    "old": {"type": "string", "deprecated": True, "format": "date-time"},
                    "labels": {
                        "type": "object",
                        "patternProperties": {"^x-": {"type": "string"}},
                        "properties": {"id": {"type": "string"}},
                        "additionalProperties": {"type": "number"},
                    },
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "shape": {
                        "type": "object",
                        "properties": {"kind": {"type": "string"}},
                        "if": {"properties": {"kind": {"const": "circle"}}},
                        "then": {"properties": {"radius": {"type": "number", "minimum": 0}}},
                        "else": {"properties": {"side": {"type": "number"}}},
                    },
                    "either": {
                        "anyOf": [
                            {"title": "Text", "type": "string", "maxLength": 9},
                            {"type": "object", "properties": {"n": {"type": "integer"}}},
                        ]
                    },
                    "list": {"$ref": "#/$defs/Node"},
                },
            },
        },
    }
    rows = {
        f.path: f for f in FieldWalker(doc, doc["$id"], lambda url: None).fields(doc["$defs"]["X"])
    }
    assert rows["mode"].enum == ("a", "b") and rows["mode"].default == '"a"'
    assert rows["old"].deprecated and rows["old"].format == "date-time"
    assert (
        rows["labels.<key ~ ^x->"].type == "string" and rows["labels.<other key>"].type == "number"
    )
    assert rows["env"].type == "map of string"
    assert (
        "circle" in " ".join(rows["shape.{then}"].notes)
        and "minimum 0" in rows["shape.{then}.radius"].notes
    )
    assert "shape.{else}.side" in rows
    assert (
        rows["either"].type == "any of: Text | variant 2"
        and "maxLength 9" in rows["either.{Text}"].notes
    )
    assert rows["either.{variant 2}.n"].type == "integer"
    assert rows["list.next"].type == "recursive" and "the same as list" in rows["list.next"].notes
    assert not any(p.startswith("list.next.") for p in rows)  # shown once


def add_entry(repo: Path, name: str, registry: dict[str, Any], files: dict[str, bytes]) -> Path:
    entry = repo / "spec/registry" / name
    entry.mkdir(parents=True)
    (entry / "CODEOWNERS").write_text("* @someone\n", encoding="utf-8")
    (entry / "registry.json").write_text(json.dumps(registry, indent=2) + "\n", encoding="utf-8")
    for rel, data in files.items():
        (entry / rel).write_bytes(data)
    return entry


BAD_LOGOS = {
    "big.png": PNG + b"\0" * 110_000,
    "fake.png": b"GIF89a" + b"\0" * 20,
    "doctype.svg": b'<!DOCTYPE svg [<!ENTITY x "y">]>' + SVG,
    "broken.svg": SVG[:-6],
    "big.svg": SVG.replace(b"<circle", b'<path d="' + b"M0 0" * 30_000 + b'"/><circle'),
}
CLEANED_LOGOS = {  # published re-serialised, without what could run or fetch
    "script.svg": SVG.replace(b"<circle", b"<script>alert(1)</script><circle"),
    "handler.svg": SVG.replace(b"<circle", b'<circle onload="alert(1)"'),
    "remote.svg": SVG.replace(b"<circle", b'<use href="https://example.com/x.svg#a"/><circle'),
    "styled.svg": SVG.replace(
        b"<circle", b"<style>@import 'https://example.com/a.css';*{fill:red}</style><circle"
    ),
    "metadata.svg": b'<?xml-stylesheet href="https://example.com/a.css"?>'
    + SVG.replace(
        b"<circle",
        b'<namedview xmlns="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd"/><circle',
    ),
}


@pytest.mark.parametrize(
    "logo", [*BAD_LOGOS, *CLEANED_LOGOS, "good.png", "good.svg", "missing.svg"]
)
def test_logos_are_judged_by_the_check_and_only_good_ones_are_published(
    tmp_path: Path, logo: str
) -> None:
    from bot.review.checks import entry as entry_check
    from bot.review.engine import ReviewContext, review

    repo = copy(REFERENCE, tmp_path / "repo")
    files = {**BAD_LOGOS, **CLEANED_LOGOS, "good.png": PNG, "good.svg": SVG}
    add_entry(
        repo,
        "shiny",
        {
            "display_name": "Shiny Tool",
            "description": "Emits lineage <fast>.",
            "homepage": "https://shiny.example",
            "logo": logo,
            "categories": ["orchestrator"],
            "producer": {"root_doc_URL": "https://shiny.example/docs", "produced_facets": []},
        },
        {k: v for k, v in files.items() if k == logo},
    )
    report = review(
        head=DirSnapshot(repo),
        base=None,
        changes=None,
        context=ReviewContext(),
        checks=(entry_check.check,),
    )
    refused = [f for f in report.findings if f.rule == "entry/logo"]
    published = logo.startswith("good") or logo in CLEANED_LOGOS
    assert bool(refused) != published, (logo, refused)
    assert not [f for f in report.findings if f.rule == "entry/schema" and "shiny" in f.path]
    site = site_of(repo)
    card = next(c for c in site.entries if c.name == "shiny")
    assert card.title == "Shiny Tool" and card.categories == ("orchestrator",)
    assert bool(card.logo) == published
    if logo in CLEANED_LOGOS:
        text = site.logo_files[card.logo].decode("utf-8")
        assert (
            "example.com" not in text
            and "script" not in text
            and "onload" not in text
            and "<circle" in text
        )


def test_check_text_and_markdown_show_the_published_site_preview(tmp_path: Path) -> None:
    repo = Repo.from_folder(REFERENCE, tmp_path / "repo")
    facet_path = next((REFERENCE / "spec/registry").rglob("facets/*.json"))
    facet = json.loads(facet_path.read_text(encoding="utf-8"))
    props = next(
        p["properties"] for p in next(iter(facet["$defs"].values()))["allOf"] if "properties" in p
    )
    props["previewedField"] = {"type": "boolean"}
    repo.change(
        {facet_path.relative_to(REFERENCE).as_posix(): json.dumps(facet, indent=2) + "\n"},
        "a field",
    )
    for fmt, heading in (("text", "== Published site"), ("markdown", "### Published site")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bot",
                "check",
                str(repo.path),
                "--base",
                "HEAD~1",
                "--format",
                fmt,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
            check=False,
        )
        assert heading in done.stdout and "previewedField" in done.stdout, (
            fmt,
            done.stdout[-2000:],
            done.stderr,
        )


PRODUCERS_TSX = """import { Partner } from "@site/static/ecosystem/consumers";

export const Producers: Array<Partner> = [
    {
        image: "google_logo.svg",
        org: "Google",
        description: "Dataproc captures lineage events from Spark jobs.",
        docs_url: "https://cloud.google.com/dataproc/docs/guides/lineage",
        org_url: "https://cloud.google.com"
    },
    {
        image: "nowhere_logo.svg",
        org: "Unregistered Tool",
        description: "Not in the registry yet.",
        docs_url: "",
        org_url: "https://unregistered.example"
    },
]
"""
STYLED_LOGO = (
    b'<?xml version="1.0" encoding="utf-8"?><!-- Generator: Adobe Illustrator -->'
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><style '
    b'type="text/css">.st0{fill:#4285F4;}</style><rect class="st0" width="8" height="8"/></svg>'
)


def test_partners_in_the_hand_written_shape_place_their_entries_and_publish_their_logos(
    corpus: Path, tmp_path: Path
) -> None:
    repo = copy(corpus, tmp_path / "repo")
    static = tmp_path / "website/static"
    (static / "ecosystem").mkdir(parents=True)
    (static / "img").mkdir()
    (static / "ecosystem/producers.tsx").write_text(PRODUCERS_TSX, encoding="utf-8")
    (static / "img/google_logo.svg").write_bytes(STYLED_LOGO)
    entries = sorted(
        p.parent.relative_to(repo / "spec/registry").as_posix().replace("/", ":")
        for p in (repo / "spec/registry/gcp").rglob("registry.json")
    )
    (tmp_path / "entries.json").write_text(json.dumps({"Google": entries}), encoding="utf-8")
    out = tmp_path / "drafts"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "publish",
            str(repo),
            str(out),
            "--draft-presentation",
            str(static / "ecosystem/producers.tsx"),
            "--entries",
            str(tmp_path / "entries.json"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "1 of 2 partners placed" in done.stderr and "Unregistered Tool" in done.stderr
    consumers_only = [
        e
        for e in entries
        if "producer"
        not in json.loads(
            (repo / "spec/registry" / e.replace(":", "/") / "registry.json").read_text(
                encoding="utf-8"
            )
        )
    ]
    assert all(f"{e} has no producer block" in done.stderr for e in consumers_only)
    for name in entries:
        folder = name.replace(":", "/")
        drafted = json.loads(
            (out / "spec/registry" / folder / "registry.json").read_text(encoding="utf-8")
        )
        assert drafted["organization"] == {"name": "Google", "homepage": "https://cloud.google.com"}
        # one partner, several products: each keeps its own name
        assert "display_name" not in drafted
        shutil.copytree(
            out / "spec/registry" / folder, repo / "spec/registry" / folder, dirs_exist_ok=True
        )
    site = site_of(repo)
    assert [c.name for c in site.organizations()["Google"]] == entries
    logos = [site.logo_files[c.logo] for c in site.entries if c.name in entries]
    assert len(logos) == len(entries) and all(b".st0{fill:#4285F4}" in logo for logo in logos)
    from bot.review.checks import entry as entry_check
    from bot.review.engine import ReviewContext, review

    report = review(
        head=DirSnapshot(repo),
        base=None,
        changes=None,
        context=ReviewContext(),
        checks=(entry_check.check,),
    )
    assert not [f for f in report.findings if f.severity.name == "ERROR" and "gcp" in f.path], (
        report.findings
    )
    write_site(site, tmp_path / "site")
    html = (tmp_path / "site/index.html").read_text(encoding="utf-8")
    assert 'id="partners-title"' in html and "by Google" in html


def test_a_partner_list_drafts_presentation_fields_without_touching_the_repository(
    tmp_path: Path,
) -> None:
    repo = copy(REFERENCE, tmp_path / "repo")
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    (tmp_path / "logos").mkdir()
    (tmp_path / "logos/airflow.svg").write_bytes(SVG)
    (tmp_path / "logos/bad.svg").write_bytes(BAD_LOGOS["doctype.svg"])
    partners = [
        {
            "name": "Apache Airflow",
            "entry": "airflow",
            "description": "Orchestrates.",
            "homepage": "https://airflow.apache.org",
            "logo": "logos/airflow.svg",
            "categories": ["Orchestrator"],
        },
        {"name": "Egeria", "logo": "logos/bad.svg"},
        {"name": "Nobody Registered"},
    ]
    (tmp_path / "partners.json").write_text(json.dumps(partners), encoding="utf-8")
    out = tmp_path / "drafts"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "publish",
            str(repo),
            str(out),
            "--draft-presentation",
            str(tmp_path / "partners.json"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Nobody Registered" in done.stderr and "bad.svg left out" in done.stderr
    airflow = json.loads((out / "spec/registry/airflow/registry.json").read_text(encoding="utf-8"))
    original = json.loads(
        (repo / "spec/registry/airflow/registry.json").read_text(encoding="utf-8")
    )
    assert airflow["display_name"] == "Apache Airflow" and airflow["categories"] == ["orchestrator"]
    assert (
        airflow["producer"] == original["producer"]
        and (out / "spec/registry/airflow/logo.svg").read_bytes() == SVG
    )
    assert "logo" not in json.loads(
        (out / "spec/registry/egeria/registry.json").read_text(encoding="utf-8")
    )
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before
    for rel in ("airflow", "egeria"):  # the drafts pass the checks once copied in
        shutil.copytree(
            out / "spec/registry" / rel, repo / "spec/registry" / rel, dirs_exist_ok=True
        )
    from bot.review.checks import entry as entry_check
    from bot.review.engine import ReviewContext, review

    report = review(
        head=DirSnapshot(repo),
        base=None,
        changes=None,
        context=ReviewContext(),
        checks=(entry_check.check,),
    )
    assert not [f for f in report.findings if f.severity.name == "ERROR"], report.findings


def test_the_preview_names_presentation_and_version_changes_of_a_card(tmp_path: Path) -> None:
    from bot.outputs.site.preview import preview

    base, head = copy(REFERENCE, tmp_path / "base"), copy(REFERENCE, tmp_path / "head")
    path = next(
        p
        for p in sorted((head / "spec/registry").glob("*/registry.json"))
        if isinstance(json.loads(p.read_text())["producer"].get("produced_facets"), dict)
    )
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["display_name"] = "A New Name"
    first = next(iter(doc["producer"]["produced_facets"].values()))
    first["spec_versions"] = ["9-9-9"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    section = preview(DirSnapshot(base), DirSnapshot(head), load_config(DirSnapshot(base))[0])
    assert section is not None
    row = next(line for line in section.markdown.splitlines() if f"`{path.parent.name}`" in line)
    assert "display name: `A New Name` (was " in row and "declared versions changed" in row


def test_display_names_that_only_look_the_same_are_told_apart(tmp_path: Path) -> None:
    """Finding: cards were told apart by display names equal with case folded only, so Google with
    two Cyrillic o, with a zero-width space, an accent or a full-width G beside Google showed as a
    second "Google" in the partner list, the explorer and the search, without its registered name.
    Names equal once accents, invisible characters and compatibility forms are folded, and names
    mixing scripts, now show it."""
    repo = copy(REFERENCE, tmp_path / "repo")
    shown = {
        "real": "Google",
        "cyrillic": "G\\u043e\\u043egle",
        "invisible": "Goo\\u200bgle",
        "accent": "G\\u00f3ogle",
        "wide": "\\uff27oogle",
        "zurich": "Z\\u00fcrich Lineage",
    }
    for name, display in shown.items():
        add_entry(
            repo,
            name,
            {
                "display_name": display.encode().decode("unicode_escape"),
                "consumer": {"root_doc_URL": f"https://{name}.example/docs", "consumed_facets": []},
            },
            {},
        )
    titles = {c.name: c.title for c in site_of(repo).entries}
    for name in ("real", "cyrillic", "invisible", "accent", "wide"):
        assert titles[name].endswith(f" ({name})"), titles[name]
    assert titles["zurich"] == "Z\u00fcrich Lineage"  # one script, like no other name: as written


def test_display_names_written_wholly_in_another_script_are_told_apart(tmp_path: Path) -> None:
    """Finding: a name whose every letter is Cyrillic or Greek (one script, so not "mixed"), or
    whose letters are digits and capitals drawn like them (``0`` for ``o``, ``I`` for ``l``), folds
    to nothing Latin, so it showed beside the Latin name as a second "Coca" or "Google". Names with
    one confusable skeleton (UTS #39, ``bot.core.lookalike``) now show their registered names."""
    repo = copy(REFERENCE, tmp_path / "repo")
    shown = {
        "latin": "Coca Lineage",
        "cyrillic": "\\u0421\\u043e\\u0441\\u0430 Lineage",  # all four letters of Coca Cyrillic
        "greek": "\\u039f\\u03a1\\u0395\\u039d",  # OPEN in Greek capitals
        "open": "Open",
        "digits": "G00gle",
        "google": "GoogIe",  # capital I for l
        "real": "Google",
        "other": "Acme",
    }
    for name, display in shown.items():
        add_entry(
            repo,
            name,
            {
                "display_name": display.encode().decode("unicode_escape"),
                "consumer": {"root_doc_URL": f"https://{name}.example/docs", "consumed_facets": []},
            },
            {},
        )
    titles = {c.name: c.title for c in site_of(repo).entries}
    for name in ("latin", "cyrillic", "greek", "open", "digits", "google", "real"):
        assert titles[name].endswith(f" ({name})"), titles[name]
    assert titles["other"] == "Acme"


def test_an_organization_claimed_by_other_owners_is_another_partner(tmp_path: Path) -> None:
    """Finding: any entry could say ``"organization": {"name": "Acme"}`` and be listed under
    Acme's partner heading, beside Acme's own entries, and the heading linked to the homepage of
    whichever claimant sorted first (``aaa`` claiming Acme with its own homepage took the link).
    An organization is what an entry's owners say of it: entries whose ``registry.json`` owners
    differ are other partners, each shown with its owners, look-alike names (Acme in
    Cyrillic capitals) included; one owner group's claim is shown as written."""
    repo = copy(REFERENCE, tmp_path / "repo")
    acme = {"name": "Acme", "homepage": "https://acme.example"}
    claims = {
        "acme-lineage": ("@acme/lineage", acme),
        "acme-catalog": ("@acme/lineage", acme),
        "aaa": ("@mallory", {"name": "Acme", "homepage": "https://evil.example"}),
        "cyrillic": ("@mallet", {"name": "\u0410\u0421\u041c\u0415"}),  # ACME in Cyrillic
        "solo": ("@solo", {"name": "Solo Corp"}),
        "eve": ("@eve", {"name": "Acme (@acme/lineage)"}),  # written like Acme's label
    }
    for name, (owner, organization) in claims.items():
        entry = add_entry(
            repo,
            name,
            {
                "organization": organization,
                "consumer": {"root_doc_URL": f"https://{name}.example/docs", "consumed_facets": []},
            },
            {},
        )
        (entry / "CODEOWNERS").write_text(f"* {owner}\n", encoding="utf-8")
    site = site_of(repo)
    partners = {org: [c.name for c in cards] for org, cards in site.organizations().items()}
    assert partners["Acme (@acme/lineage)"] == ["acme-catalog", "acme-lineage"]
    assert partners["Acme (@mallory)"] == ["aaa"]
    assert partners["\u0410\u0421\u041c\u0415 (@mallet)"] == ["cyrillic"]
    assert partners["Solo Corp"] == ["solo"]  # nobody else claims it: as written
    assert partners["Acme (@acme/lineage) (@eve)"] == ["eve"]
    assert not any(org == "Acme" for org in partners)
    out = tmp_path / "site"
    write_site(site, out)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "by Acme (@mallory)" in page and "by Acme (@acme/lineage)" in page
    real = page.split('<a href="https://acme.example"', 1)[1].split("</li>", 1)[0]
    assert "Acme (@acme/lineage)" in real and "aaa" not in real
    markdown = (out / "docusaurus/registry/index.md").read_text(encoding="utf-8")
    lines = [line for line in markdown.splitlines() if line.startswith("- ")]
    assert any("mallory" in line and line.endswith("[aaa](#entry-aaa)") for line in lines)
    real_line = next(line for line in lines if "acme.example" in line)
    assert "lineage" in real_line and "entry-aaa" not in real_line


def test_the_preview_names_a_new_organization_claim(tmp_path: Path) -> None:
    """Finding: a pull request giving an entry ``"organization": {"name": "Google", ...}`` (listed
    under that partner once merged) changed nothing the preview showed: its Published site section
    compared every presentation field but the organization and its homepage."""
    from bot.outputs.site.preview import preview

    base, head = copy(REFERENCE, tmp_path / "base"), copy(REFERENCE, tmp_path / "head")
    path = sorted((head / "spec/registry").glob("*/registry.json"))[-1]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["organization"] = {"name": "Google", "homepage": "https://cloud.google.com"}
    path.write_text(json.dumps(doc), encoding="utf-8")
    section = preview(DirSnapshot(base), DirSnapshot(head), load_config(DirSnapshot(base))[0])
    assert section is not None
    row = next(line for line in section.markdown.splitlines() if f"`{path.parent.name}`" in line)
    assert "organization: `Google` (was none)" in row
    assert "organization url: `https://cloud.google.com` (was none)" in row
