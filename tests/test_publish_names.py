"""The names publish writes: long names, names differing only in case, and URLs claimed twice."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from bot.cli.sample import REFERENCE
from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.outputs.site import build_site
from bot.outputs.site.build import write_site
from bot.outputs.site.index import INDEX_FILE
from bot.outputs.site.model import SiteError

ROOT = Path(__file__).resolve().parent.parent
SITE_URL = "https://openlineage.io/"
BASE_REF = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"


def facet(name: str, key: str, version: str = "1-0-0") -> dict[str, object]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://openlineage.io/spec/facets/{version}/{name}.json",
        "$defs": {
            name: {
                "allOf": [
                    {"$ref": BASE_REF},
                    {"type": "object", "properties": {"x": {"type": "string"}}},
                ],
                "type": "object",
            }
        },
        "type": "object",
        "properties": {key: {"$ref": f"#/$defs/{name}"}},
    }


def add_entry(repo: Path, folder: str, facets: dict[str, str], logo: bool = False) -> None:
    """An entry at ``spec/registry/<folder>`` producing ``facets`` (file stem -> key)."""
    entry = repo / "spec/registry" / folder
    (entry / "facets").mkdir(parents=True)
    for stem, key in facets.items():
        (entry / f"facets/{stem}.json").write_text(json.dumps(facet(stem, key)), encoding="utf-8")
    name = folder.replace("/", ":")
    doc: dict[str, object] = {
        "producer": {
            "root_doc_URL": "https://example.com/",
            "produced_facets": [f"ol:{name}:{stem}.json" for stem in facets],
        }
    }
    if logo:
        svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect/></svg>'
        (entry / "logo.svg").write_text(svg, encoding="utf-8")
        doc["logo"] = "logo.svg"
    (entry / "registry.json").write_text(json.dumps(doc), encoding="utf-8")


def publish(repo: Path, out: Path) -> Path:
    snapshot = DirSnapshot(repo)
    write_site(build_site(snapshot, load_config(snapshot)[0]), out)
    return out


def dangling_links(out: Path) -> list[tuple[str, str]]:
    """Relative links of the HTML pages, and ``/docs/`` links of the Markdown, to no file."""
    bad = []
    for page in out.rglob("*.html"):
        for url in re.findall(r'(?:href|src)="([^"#][^"]*)"', page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", url):
                target = page.parent / unquote(url.replace("&amp;", "&").split("#")[0])
                if not target.exists():
                    bad.append((page.relative_to(out).as_posix(), url))
    docs = out / "docusaurus"
    for page in docs.rglob("*.md"):
        for url in re.findall(r"\]\(<?/docs/([^)>#]*)", page.read_text(encoding="utf-8")):
            rel = url.rstrip("/")
            if not ((docs / f"{rel}.md").exists() or (docs / rel / "index.md").exists()):
                bad.append((page.relative_to(out).as_posix(), url))
    return bad


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(REFERENCE, copy)
    return copy


def test_a_long_facet_name_is_served_at_its_schema_url_and_linked_where_it_is_served(
    repo: Path, tmp_path: Path
) -> None:
    """Finding: a schema whose file name is over 100 characters was written under a shortened name
    ending with a digest, so its ``$id`` URL (the index's ``schema_url``, each version's URL, the
    facet page's schema link) named a file the output did not have."""
    stems = ["Longname" + "X" * 100 + end for end in ("OneRunFacet", "TwoRunFacet")]
    add_entry(repo, "longname", {stem: f"longname_{i}" for i, stem in enumerate(stems)})
    out = publish(repo, tmp_path / "out")
    facets = {
        f["file"]: f
        for f in json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))["facets"]
        if f["owner"] == "longname"
    }
    assert len(facets) == 2 and len({f["page"] for f in facets.values()}) == 2
    for stem in stems:
        record = facets[f"{stem}.json"]
        source = repo / f"spec/registry/longname/facets/{stem}.json"
        urls = [record["schema_url"], *(v["schema_url"] for v in record["versions"])]
        for url in urls:
            served = out / url.removeprefix(SITE_URL)
            assert url.startswith(SITE_URL) and served.is_file(), url
            assert served.read_bytes() == source.read_bytes()
            assert json.loads(served.read_bytes())["$id"] == url
        assert (out / record["page"]).is_file()
    assert dangling_links(out) == []


def folded_duplicates(out: Path) -> list[str]:
    files = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    folded: dict[str, str] = {}
    return [f for f in files if folded.setdefault(f.casefold(), f) != f]


def test_names_differing_only_in_case_are_distinct_files_on_a_case_insensitive_disk(
    repo: Path, tmp_path: Path
) -> None:
    """Finding: two entries whose names differ only in case (``Caseful``, ``caseful``) were
    published as ``facets/Caseful/...``, ``facets/caseful/...``, ``logos/Caseful.svg`` and
    ``logos/caseful.svg``: one folder and one logo on a case-insensitive disk (macOS, Windows),
    where one entry's sidebar label and logo overwrote the other's. Every name publish writes now
    differs from the others with case folded."""
    add_entry(repo, "Caseful", {"CasefulOneRunFacet": "caseful_one"}, logo=True)
    add_entry(repo, "caseful", {"CasefulTwoRunFacet": "caseful_two"}, logo=True)
    out = publish(repo, tmp_path / "out")
    assert folded_duplicates(out) == []
    labels = {
        json.loads(p.read_text(encoding="utf-8"))["label"]
        for p in (out / "docusaurus/registry/facets").glob("*/_category_.json")
    }
    assert {"Caseful", "caseful"} <= labels
    assert len(list((out / "logos").glob("*.svg"))) == 2
    assert dangling_links(out) == []


def test_schema_urls_differing_only_in_case_are_refused_naming_both(
    repo: Path, tmp_path: Path
) -> None:
    """Finding: ``CasedRunFacet.json`` and ``CaSedRunFacet.json`` were both written under
    ``spec/facets/1-0-0/``, one file on a case-insensitive disk. Their URLs cannot be renamed, so
    publish refuses (exit 2, one line naming both) and writes nothing."""
    add_entry(repo, "cased", {"CasedRunFacet": "cased_a", "CaSedRunFacet": "cased_b"})
    snapshot = DirSnapshot(repo)
    with pytest.raises(SiteError, match=r"CaSedRunFacet\.json and .*CasedRunFacet\.json"):
        build_site(snapshot, load_config(snapshot)[0])
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "bot", "publish", str(repo), str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "CasedRunFacet.json" in done.stderr and "CaSedRunFacet.json" in done.stderr
    assert not out.exists()


def test_a_schema_url_claimed_by_two_entries_is_refused(repo: Path, tmp_path: Path) -> None:
    """Finding: an entry whose schema has the file name and ``$id`` of another entry's facet
    (``facets/duplicate-file`` at review) replaced that facet's published schema: the later entry
    in the registry's order won, silently."""
    add_entry(repo, "aaa", {"SharedRunFacet": "aaa_shared"})
    add_entry(repo, "zzz", {"SharedRunFacet": "zzz_shared"})
    snapshot = DirSnapshot(repo)
    with pytest.raises(SiteError, match=r"are both published as spec/facets/1-0-0/Shared"):
        build_site(snapshot, load_config(snapshot)[0])


def test_an_id_naming_another_entrys_file_does_not_claim_its_url(
    repo: Path, tmp_path: Path
) -> None:
    """Finding: a schema whose ``$id`` names another entry's file (``facets/id`` at review) showed
    that facet's published URL as its own, on its page and as its ``schema_url`` in the discovery
    index, where a consumer looking a facet up fetched the other entry's schema for it."""
    add_entry(repo, "hijack", {"HijackRunFacet": "hijack_run"})
    path = repo / "spec/registry/hijack/facets/HijackRunFacet.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    stolen = "https://openlineage.io/spec/facets/1-0-0/AirflowDagRunFacet.json"
    doc["$id"] = stolen
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = publish(repo, tmp_path / "out")
    facets = json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))["facets"]
    claims = [f["uri"] for f in facets if stolen in (f["schema_url"], *f["versions"])]
    urls = {f["uri"]: [v["schema_url"] for v in f["versions"]] for f in facets}
    assert claims == ["ol:airflow:AirflowDagRunFacet.json"], claims
    assert stolen not in urls["ol:hijack:HijackRunFacet.json"]
    page = next(f["page"] for f in facets if f["uri"] == "ol:hijack:HijackRunFacet.json")
    assert stolen not in (out / page).read_text(encoding="utf-8")
    served = json.loads((out / stolen.removeprefix(SITE_URL)).read_bytes())
    assert "AirflowDagRunFacet" in served["$defs"] and "HijackRunFacet" not in served["$defs"]


def test_a_description_repeated_by_refs_does_not_multiply_the_page(
    repo: Path, tmp_path: Path
) -> None:
    """Finding: a field table shows each ``$ref``'s target on every row that uses it, so one
    definition of 100 KB of description (and a long enum) referenced by 200 properties, a schema of
    107 KB, made a facet page of 20 MB and its Markdown twin as much (10.8 s); a 10 MB schema could
    ask for hundreds of GB. A row now shows at most 2,000 characters of a description and 100 enum
    values of 200 characters, and once a table has shown 200,000 characters, 100 and 5 of 100; each
    says its full length."""
    add_entry(repo, "amp", {"AmpRunFacet": "amp_run"})
    path = repo / "spec/registry/amp/facets/AmpRunFacet.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["$defs"]["Big"] = {
        "type": "string",
        "description": "d" * 100_000,
        "enum": [f"{i}" + "e" * 300 for i in range(150)],
    }
    props = {f"p{i}": {"$ref": "#/$defs/Big"} for i in range(200)}
    doc["$defs"]["AmpRunFacet"]["allOf"][1]["properties"] = props
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = publish(repo, tmp_path / "out")
    page = out / "facets/amp/AmpRunFacet.html"
    twin = out / "docusaurus/registry/facets/amp/AmpRunFacet.md"
    schema = path.stat().st_size
    assert page.stat().st_size < 10 * schema and twin.stat().st_size < 10 * schema
    html = page.read_text(encoding="utf-8")
    assert html.count("(100,000 characters)") == 200 and html.count("(150 values)") == 200
    assert html.count("d" * 2000) >= 1  # the first rows in full
    assert (out / "spec/facets/1-0-0/AmpRunFacet.json").read_bytes() == path.read_bytes()
