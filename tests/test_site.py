"""``registry-bot publish``: the site built from the real corpus, its schemas, its index, hostile
input, the preview."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from bot.cli.sample import REFERENCE
from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.outputs.site import build_site
from bot.outputs.site.build import write_site
from bot.outputs.site.handwritten import doc_url
from bot.outputs.site.index import INDEX_FILE, SCHEMA_FILE
from bot.outputs.site.markdown import ECOSYSTEM, render_markdown
from bot.outputs.site.preview import preview

ROOT = Path(__file__).resolve().parent.parent
MIRROR = "website/static/spec"
SITE_URL = "https://openlineage.io/"


def publish(repo: Path, out: Path) -> Path:
    snapshot = DirSnapshot(repo)
    write_site(build_site(snapshot, load_config(snapshot)[0]), out)
    return out


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return publish(corpus, tmp_path_factory.mktemp("site") / "out")


def index(site: Path) -> dict[str, object]:
    return json.loads((site / INDEX_FILE).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_every_core_and_registry_facet_of_the_corpus_has_its_page(
    corpus: Path, corpus_site: Path
) -> None:
    facets = index(corpus_site)["facets"]
    by_path = {(f["owner"], f["file"]): f for f in facets}  # type: ignore[index, union-attr]
    core = sorted(p.name for p in (corpus / "spec/facets").glob("*.json"))
    custom = sorted(p for p in (corpus / "spec/registry").rglob("facets/*.json"))
    assert core and custom
    for name in core:
        page = corpus_site / by_path["core", name]["page"]
        assert page.is_file() and name.removesuffix(".json") in page.read_text(encoding="utf-8")
    for path in custom:
        owner = ":".join(path.relative_to(corpus / "spec/registry").parts[:-2])
        assert (corpus_site / by_path[owner, path.name]["page"]).is_file()
    assert len(facets) == len(core) + len(custom)  # type: ignore[arg-type]


def test_schemas_under_their_id_paths_are_the_published_mirror_byte_for_byte(
    corpus: Path, corpus_site: Path
) -> None:
    written = sorted((corpus_site / "spec/facets").rglob("*.json"))
    compared = 0
    for path in written:
        mirrored = corpus / MIRROR / path.relative_to(corpus_site / "spec")
        if mirrored.is_file():
            assert path.read_bytes() == mirrored.read_bytes(), path
            compared += 1
    assert compared == len(list((corpus / MIRROR / "facets").rglob("*.json")))
    for schema in (corpus / "spec/facets").glob("*.json"):  # each current core version has its URL
        url = json.loads(schema.read_bytes())["$id"]
        assert (corpus_site / url.removeprefix("https://openlineage.io/")).is_file(), url


def test_the_core_spec_files_are_published_byte_for_byte(corpus: Path, corpus_site: Path) -> None:
    mirrored = [p for p in (corpus / MIRROR).rglob("*") if p.is_file() and "facets" not in p.parts]
    assert {p.name for p in mirrored} == {"OpenLineage.json", "OpenLineage.yml"}
    for path in mirrored:
        assert (
            corpus_site / "spec" / path.relative_to(corpus / MIRROR)
        ).read_bytes() == path.read_bytes(), path


def _served(site: Path, url: str) -> Path | None:
    """The output's file for an openlineage.io URL (as a static host would serve it), or None."""
    path = site / url.removeprefix(SITE_URL)
    return path if url.startswith(SITE_URL) and path.is_file() else None


def _refs(node: Any) -> Any:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_every_ref_of_every_published_schema_resolves_inside_the_output(
    corpus: Path, corpus_site: Path
) -> None:
    """Every ``$ref`` of every published schema resolves to a file of the output and a node inside
    it; the only exceptions are refs the published mirror itself leaves dangling
    (``OpenLineage.json`` 1-0-4 to 2-0-1 refer to ``facets/X.json`` beside themselves, a path
    openlineage.io never served)."""
    resolved, upstream = 0, 0
    for path in sorted((corpus_site / "spec").rglob("*.json")):
        doc = json.loads(path.read_bytes())
        base = doc.get("$id") or SITE_URL + path.relative_to(corpus_site).as_posix()
        for ref in _refs(doc):
            url, _, pointer = urljoin(base, ref).partition("#")
            target = _served(corpus_site, url)
            if (
                target is None
                and not (corpus / MIRROR / url.removeprefix(SITE_URL + "spec/")).exists()
            ):
                assert "facets" not in path.relative_to(corpus_site / "spec").parts, (path, ref)
                upstream += 1
                continue
            assert target is not None, (path, ref)
            node = json.loads(target.read_bytes())
            for token in filter(None, pointer.split("/")):
                # KeyError: a dangling pointer
                node = node[token.replace("~1", "/").replace("~0", "~")]
            resolved += 1
    # 100 point into OpenLineage.json
    assert resolved >= 100 and upstream < resolved, (resolved, upstream)


def test_real_events_validate_offline_from_the_output_alone(
    corpus: Path, corpus_site: Path
) -> None:
    """A consumer with only the published output validates the facets of real integration events by
    their ``_schemaURL`` (and whole events by their ``schemaURL``): every reference resolves from
    the output."""

    def retrieve(uri: str) -> Resource[Any]:
        path = _served(corpus_site, uri)
        if path is None:
            raise LookupError(f"{uri} is not in the output")
        return Resource.from_contents(json.loads(path.read_bytes()))

    registry: Registry[Any] = Registry(retrieve=retrieve)  # type: ignore[call-arg]
    outcome: dict[str, int] = {"valid": 0, "invalid": 0, "events": 0}
    for path in sorted((corpus / "integration").rglob("*.json")):
        try:
            doc = json.loads(path.read_bytes())
        except ValueError:
            continue
        for node, key in _schema_urls(doc):
            if not node[key].startswith(SITE_URL + "spec/"):
                continue  # a facet of the integration's own, published elsewhere
            errors = list(
                Draft202012Validator({"$ref": node[key]}, registry=registry).iter_errors(node)
            )
            outcome["events" if key == "schemaURL" else "valid" if not errors else "invalid"] += 1
    # invalid ones are the events' own data
    assert outcome["valid"] > 200 and outcome["events"] > 10, outcome


def _schema_urls(node: Any) -> Any:
    """(object, key) for every facet (``_schemaURL``) and event (``schemaURL``) inside ``node``."""
    if isinstance(node, dict):
        for key in ("_schemaURL", "schemaURL"):
            if isinstance(node.get(key), str):
                yield node, key
        for value in node.values():
            yield from _schema_urls(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schema_urls(value)


def test_the_discovery_index_validates_and_gives_a_custom_facets_schema_url_back(
    corpus_site: Path,
) -> None:
    schema = json.loads((corpus_site / SCHEMA_FILE).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    document = index(corpus_site)
    assert not list(Draft202012Validator(schema).iter_errors(document))
    custom = [f for f in document["facets"] if f["owner"] != "core"]  # type: ignore[attr-defined, index]
    assert custom
    for facet in custom:
        url = facet["schema_url"]
        served = json.loads(
            (corpus_site / url.removeprefix("https://openlineage.io/")).read_bytes()
        )
        assert served["$id"] == url and facet["uri"].endswith(":" + facet["file"])
        assert url in [v["schema_url"] for v in facet["versions"]]
    names = {e["name"] for e in document["entries"]}  # type: ignore[attr-defined, index]
    assert {f["owner"] for f in custom} <= names


def test_docusaurus_pages_have_front_matter(corpus_site: Path) -> None:
    pages = list((corpus_site / "docusaurus").rglob("*.md"))
    assert len(pages) > len(index(corpus_site)["facets"])  # type: ignore[arg-type]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text.startswith("---\ntitle: ") and "\n---\n" in text[4:], page


def test_docusaurus_producers_and_consumers_link_their_entry(corpus: Path) -> None:
    """Every name a Docusaurus page shows as a producer or consumer links its section of the
    ecosystem page, and each section's heading carries that anchor as its explicit id (Docusaurus
    checks anchors of headings only)."""
    snapshot = DirSnapshot(corpus)
    site = build_site(snapshot, load_config(snapshot)[0])
    pages = {p: d.decode("utf-8") for p, d in render_markdown(site).items() if p.endswith(".md")}
    ecosystem = pages["registry/index.md"]
    ids = set(re.findall(r"(?m)^### .* \\\{#([^}\\]+)\\\}$", ecosystem))
    anchors = {c.name: c.page for c in site.entries}
    assert ids == set(anchors.values())
    linked = 0
    for f in site.facets.values():
        page = pages[f"registry/{f.page[:-5]}.md"]
        for role, names in (("Produced by", f.producers), ("Consumed by", f.consumers)):
            line = next(x for x in page.splitlines() if x.startswith(f"- {role}: "))
            for name in names:
                assert f"]({ECOSYSTEM}#{anchors[name]})" in line, (f.uri, role, name)
                linked += 1
        link = f"](/docs/registry/{f.page[:-5]})"
        row = next(x for x in pages["registry/facets.md"].splitlines() if link in x)
        for name in (*f.producers, *f.consumers):
            assert f"[{name}]({ECOSYSTEM}#{anchors[name]})" in row, (f.uri, name)
    assert linked
    targets = set(re.findall(rf"\]\({re.escape(ECOSYSTEM)}#([^)]+)\)", "\n".join(pages.values())))
    assert targets and targets <= ids
    for case in (p for p in pages if p.startswith("registry/use-cases/")):
        assert "(/docs/registry/#" in pages[case] or "| no facet" in pages[case]


def test_generated_and_hand_written_facet_docs_link_each_other(
    corpus: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(corpus, repo, ignore=shutil.ignore_patterns(".git"))
    snapshot = DirSnapshot(repo)
    facet = next(f for f in build_site(snapshot, load_config(snapshot)[0]).facets.values() if f.url)
    name = facet.url.rsplit("/", 1)[-1]
    docs = repo / "website/docs"
    cited = docs / "spec/facets/dataset-facets/01-by-hand.md"  # Docusaurus drops the number
    cited.parent.mkdir(parents=True, exist_ok=True)
    # an older version of the schema, as the website's docs cite it
    cited.write_text(
        f"---\nsidebar_position: 3\n---\n\n# {name} by hand\n\nThe facet specification can be "
        f"found [here](https://openlineage.io/spec/facets/1-0-0/{name}).\n",
        encoding="utf-8",
    )
    (docs / "spec/facets/dataset-facets/overview.md").write_text("# Overview\n\nNo schema.\n")
    (docs / "registry").mkdir()  # the website's copy of generated pages is not hand-written
    (docs / "registry/old.md").write_text(f"Schema URL: {facet.url}\n", encoding="utf-8")
    out = publish(repo, tmp_path / "out") / "docusaurus"
    generated = f"/docs/registry/{facet.page[:-5]}"
    page = (out / f"registry/{facet.page[:-5]}.md").read_text(encoding="utf-8")
    assert (
        f"- Hand-written docs: [{name} by hand](/docs/spec/facets/dataset-facets/by-hand)" in page
    )
    # the HTML site's facet page links it on the website that serves the schema
    html = (out.parent / facet.page).read_text(encoding="utf-8")
    origin = "/".join(facet.url.split("/", 3)[:3])
    assert (
        f'<dt>Hand-written docs</dt><dd><a href="{origin}/docs/spec/facets/dataset-facets/by-hand">'
        f"{name} by hand</a></dd>" in html
    ), html
    drafted = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    assert [p for p in drafted if not p.startswith("registry/")] == [
        "spec/facets/dataset-facets/01-by-hand.md"
    ]
    draft = (out / "spec/facets/dataset-facets/01-by-hand.md").read_text(encoding="utf-8")
    assert draft.startswith(cited.read_text(encoding="utf-8").rstrip("\n"))
    assert f"]({generated})" in draft
    cited.write_text(draft, encoding="utf-8")  # the website takes the draft: nothing more to draft
    again = publish(repo, tmp_path / "again") / "docusaurus"
    assert not (again / "spec").exists()
    assert "- Hand-written docs: " in (again / f"registry/{facet.page[:-5]}.md").read_text()


@pytest.mark.parametrize(
    ("rel", "front", "url"),
    [
        ("spec/facets/dataset-facets/schema.md", {}, "/docs/spec/facets/dataset-facets/schema"),
        ("spec/facets/run-facets/run-facets.md", {}, "/docs/spec/facets/run-facets"),
        ("spec/02-facets/index.mdx", {}, "/docs/spec/facets"),
        ("spec/a.md", {"id": "b"}, "/docs/spec/b"),
        ("spec/a.md", {"slug": "/elsewhere/c"}, "/docs/elsewhere/c"),
        ("spec/a.md", {"slug": "d"}, "/docs/spec/d"),
        ("spec/a b.md", {}, None),
    ],
)
def test_a_hand_written_docs_url_is_the_one_docusaurus_gives_it(
    rel: str, front: dict[str, str], url: str | None
) -> None:
    assert doc_url(rel, front) == url


HOSTILE = "<script>alert(1)</script>{danger}"


@pytest.fixture
def hostile_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REFERENCE, repo)
    entry = repo / "spec/registry/evil"
    (entry / "facets").mkdir(parents=True)
    facet = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://openlineage.io/spec/facets/1-0-0/EvilRunFacet.json",
        "$defs": {
            "EvilRunFacet": {
                "description": HOSTILE,
                "allOf": [
                    {"$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"},
                    {
                        "type": "object",
                        "properties": {
                            '<img src=x onerror="alert(2)">': {
                                "type": "string",
                                "description": HOSTILE,
                                "enum": ["</code><script>alert(3)</script>"],
                            },
                            "remote": {"$ref": "https://127.0.0.1:9/schema.json"},
                        },
                    },
                ],
            }
        },
        "type": "object",
        "properties": {"evil_run": {"$ref": "#/$defs/EvilRunFacet"}},
    }
    (entry / "facets/EvilRunFacet.json").write_text(json.dumps(facet), encoding="utf-8")
    registry = {
        "display_name": HOSTILE,
        "description": HOSTILE,
        "homepage": "javascript:alert(6)",
        "logo": "../../../etc/passwd.svg",
        "categories": [HOSTILE],
        "producer": {
            "root_doc_URL": "javascript:alert(4)",
            "produced_facets": {
                "ol:evil:EvilRunFacet.json": {"owner": "evil", "use_cases": [HOSTILE, "../../etc"]}
            },
        },
        "consumer": {
            "root_doc_URL": 'https://example.com/"onmouseover=alert(5)',
            "consumed_facets": [HOSTILE],
        },
    }
    (entry / "registry.json").write_text(json.dumps(registry), encoding="utf-8")
    return repo


def test_docusaurus_sidebar_labels_links_and_line_breaks(corpus: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(corpus, repo, ignore=shutil.ignore_patterns(".git"))
    path = repo / "spec/facets/ColumnLineageDatasetFacet.json"
    facet = json.loads(path.read_text(encoding="utf-8"))
    facet["$defs"]["ColumnLineageDatasetFacet"]["description"] = (
        "First paragraph.\n\nSecond one,\nwith a break."
    )
    path.write_text(json.dumps(facet), encoding="utf-8")
    docs = publish(repo, tmp_path / "out") / "docusaurus/registry"
    labels = {
        p.parent.relative_to(docs).as_posix(): json.loads(p.read_text(encoding="utf-8"))["label"]
        for p in docs.rglob("_category_.json")
    }
    owners = {f.parent.name for f in (docs / "facets").glob("*/*.md")}
    assert (
        labels["."] == "Registry"
        and labels["facets"] == "Facet pages"
        and labels["use-cases"] == "Use case pages"
    )
    assert {labels[f"facets/{o}"] for o in owners} == {
        f["owner"] for f in index(docs.parent.parent)["facets"]
    }  # type: ignore[index, union-attr]
    page = (docs / "facets/core/ColumnLineageDatasetFacet.md").read_text(encoding="utf-8")
    assert "First paragraph.<br/><br/>Second one,<br/>with a break." in page and "\\n" not in page
    url = json.loads(path.read_text(encoding="utf-8"))["$id"]
    assert f"- Schema URL: [`{url}`](<{url}>)" in page
    ecosystem = (docs / "index.md").read_text(encoding="utf-8")
    # a section per entry, not a table whose columns a docs page cuts off; its table of contents
    # lists the two sections, not every entry
    assert 'title: "Producers and consumers"' in ecosystem and "| Name |" not in ecosystem
    assert "toc_max_heading_level: 2" in ecosystem and "\n## Registered names\n" in ecosystem


def test_hostile_registry_text_stays_text(
    hostile_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"publish opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)  # the remote $ref below is never fetched
    monkeypatch.setattr(socket, "create_connection", refuse)
    out = publish(hostile_repo, tmp_path / "out")
    monkeypatch.undo()
    assert all(out in p.resolve().parents for p in out.rglob("*"))  # no file outside the output
    assert not (out / "logos").exists()  # a logo path out of the entry is never read
    html = "\n".join(p.read_text(encoding="utf-8") for p in out.rglob("*.html"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, as text
    for live in ("<script>alert", "<img src=x", "javascript:", '"onmouseover', "</script><script"):
        assert live not in html, live
    # front matter: a YAML string
    markdown = "\n".join(
        p.read_text(encoding="utf-8").split("\n---\n", 1)[1]
        for p in (out / "docusaurus").rglob("*.md")
    )
    prose = re.sub(r"``.*?``|`[^`\n]*`", "", re.sub(r"(?ms)^(```|~~~~)json$.*?^\1$", "", markdown))
    assert "danger" in prose and "danger" in markdown  # the text is there, in prose and in code
    assert not re.search(r"(?<!\\)[<{](?!/?br/?>)(?!https://)", prose.replace("](<", "](")), (
        "MDX reads < or { as JSX"
    )
    document = json.loads((out / INDEX_FILE).read_text(encoding="utf-8"))
    assert not list(
        Draft202012Validator(json.loads((out / SCHEMA_FILE).read_text())).iter_errors(document)
    )
    evil = next(e for e in document["entries"] if e["name"] == "evil")
    assert "documentation" not in evil["producer"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", "publish", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def test_publish_command_writes_the_site_and_refuses_bad_input(tmp_path: Path) -> None:
    done = cli(str(REFERENCE), str(tmp_path / "site"))
    assert (
        done.returncode == 0
        and "index.html" in done.stderr
        and (tmp_path / "site/index.html").is_file()
    )
    # an earlier output is replaced
    assert cli(str(REFERENCE), str(tmp_path / "site")).returncode == 0
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep me", encoding="utf-8")
    for args in (
        (str(tmp_path / "missing"), str(tmp_path / "o")),
        (str(REFERENCE), str(tmp_path / "mine")),
        (str(REFERENCE), str(tmp_path / "x"), "--rev", "no-such-rev"),
    ):
        refused = cli(*args)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert "Traceback" not in refused.stderr
    assert (tmp_path / "mine/notes.txt").read_text(encoding="utf-8") == "keep me"


def test_preview_lists_new_cards_new_pages_and_field_changes(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(REFERENCE, base)
    shutil.copytree(REFERENCE, head)
    facet_path = next((head / "spec/registry").rglob("facets/*.json"))
    facet = json.loads(facet_path.read_text(encoding="utf-8"))
    definition = next(iter(facet["$defs"].values()))
    props = next(
        p["properties"] for p in definition["allOf"] if isinstance(p, dict) and "properties" in p
    )
    changed = next(iter(props))
    props[changed] = {"type": "integer", "description": "now a number"}
    props["addedField"] = {"type": "string", "format": "uri"}
    facet_path.write_text(json.dumps(facet), encoding="utf-8")
    shutil.copytree(REFERENCE / "spec/registry/airflow", head / "spec/registry/newcomer")
    config = load_config(DirSnapshot(base))[0]
    section = preview(DirSnapshot(base), DirSnapshot(head), config)
    assert section is not None
    rows = {
        line.split(" | ")[1]: line
        for line in section.markdown.splitlines()
        if line.startswith("| ")
    }
    assert rows["`newcomer`"].endswith("| new |")
    assert "new: version" in rows[next(k for k in rows if "newcomer:" in k)]
    owner = (
        facet_path.parent.parent.relative_to(head / "spec/registry").as_posix().replace("/", ":")
    )
    changed_row = rows[f"`ol:{owner}:{facet_path.name}`"]
    assert f".{changed}`: " in changed_row and "→ integer, " in changed_row
    assert ".addedField` added (string (uri), optional)" in changed_row
    # nothing changes: no section
    assert preview(DirSnapshot(base), DirSnapshot(base), config) is None

    # As the App runs it: only the files the change touches are read, with the same rows for them.
    touched = [
        p.relative_to(head).as_posix()
        for p in head.rglob("*")
        if p.is_file()
        and (
            not (base / p.relative_to(head)).is_file()
            or (base / p.relative_to(head)).read_bytes() != p.read_bytes()
        )
    ]
    changes = ChangeSet(files=tuple(FileChange(p, Status.MODIFIED) for p in touched))
    reads: list[str] = []

    class Counting(DirSnapshot):
        def read(self, path: str) -> bytes | None:
            reads.append(path)
            return super().read(path)

    limited = preview(Counting(base), Counting(head), config, changes)
    assert limited is not None
    limited_rows = {
        line.split(" | ")[1]: line
        for line in limited.markdown.splitlines()
        if line.startswith("| ")
    }
    assert limited_rows["`newcomer`"] == rows["`newcomer`"]
    assert ".addedField` added" in limited_rows[f"`ol:{owner}:{facet_path.name}`"]
    facet_reads = [p for p in reads if "/facets/" in p and not p.startswith(MIRROR)]
    assert facet_reads and set(facet_reads) <= set(touched)


def test_demo_builds_the_samples_site_and_says_where_to_open_it(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the demo's site folder, away from other runs
    done = subprocess.run(
        [sys.executable, "-m", "bot", "demo", "--no-regression", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    url = next(
        w
        for line in done.stderr.splitlines()
        if "Published site" in line
        for w in line.split()
        if w.startswith("file://")
    )
    index_html = Path(url.removeprefix("file://"))
    assert index_html.is_file() and tmp_path in index_html.parents
    document = json.loads((index_html.parent / INDEX_FILE).read_text(encoding="utf-8"))
    # the sample's head, with its new entry
    assert {e["name"] for e in document["entries"]} >= {"dagster"}


def test_the_check_run_summary_previews_the_published_site(tmp_path: Path, corpus: Path) -> None:
    from bot.service.worker import review_pull_request
    from tests.fakes import FAKE_CHECKS
    from tests.gitrepo import Repo
    from tests.test_pipeline import load

    repo = Repo.from_folder(corpus, tmp_path / "repo")
    facet_path = sorted((corpus / "spec/registry").rglob("facets/*.json"))[0]
    facet = json.loads(facet_path.read_text(encoding="utf-8"))
    definition = next(iter(facet["$defs"].values()))
    props = next(
        p["properties"] for p in definition["allOf"] if isinstance(p, dict) and "properties" in p
    )
    props["previewedField"] = {"type": "boolean", "description": "added by the pull request"}
    repo.change(
        {facet_path.relative_to(corpus).as_posix(): json.dumps(facet, indent=2) + "\n"},
        "a new field",
    )
    gh, pr = load(repo)
    review_pull_request(gh, pr, "d-site", checks=FAKE_CHECKS)
    [run] = gh.runs_for(pr.head_sha)
    summary = run.summary
    assert "### Published site" in summary
    assert "previewedField` added (boolean, optional)" in summary


def test_a_schema_whose_parts_share_what_they_reference_is_walked_a_bounded_number_of_times() -> (
    None
):
    """Finding: six levels of ``allOf`` parts all referencing the next level (16 parts each: a
    3.2 KB schema) were walked 16**6 times, rows already shown dropped each time: publish and the
    pull request's site preview took 16 s, and 100 parts a level would not end. The walk stops past
    ``MAX_VISITS`` parts, and the table says it was cut."""
    from bot.outputs.site.fields import MAX_VISITS, FieldWalker

    defs: dict[str, Any] = {
        f"L{i}": {
            "type": "object",
            "properties": {f"x{i}": {"type": "string"}},
            "allOf": [{"$ref": f"#/$defs/L{i + 1}"}] * 100,
        }
        for i in range(1, 7)
    }
    defs["L7"] = {"type": "object", "properties": {"y": {"type": "string"}}}
    doc = {"$id": "https://openlineage.io/spec/facets/1-0-0/B.json", "$defs": defs}
    walker = FieldWalker(doc, doc["$id"], lambda url: None)
    rows = walker.fields(defs["L1"])
    assert {r.path for r in rows[:7]} == {"x1", "x2", "x3", "x4", "x5", "x6", "y"}
    assert rows[-1].path == "…" and f"past {MAX_VISITS:,} parts" in rows[-1].notes[0]
    assert walker._visits <= MAX_VISITS + 6 * 100  # the parts left at each level, not walked


def test_field_tables_follow_refs_merge_allof_and_stop_on_cycles() -> None:
    from bot.outputs.site.fields import FieldWalker

    base = {
        "$defs": {
            "RunFacet": {
                "type": "object",
                "required": ["_producer"],
                "properties": {"_producer": {"type": "string", "format": "uri"}},
            }
        }
    }
    doc = {
        "$id": "https://openlineage.io/spec/facets/1-0-0/X.json",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/Node"}, "label": {"enum": ["a", "b"]}},
            },
            "X": {
                "allOf": [
                    {"$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"},
                    {
                        "type": "object",
                        "required": ["tree"],
                        "properties": {
                            "tree": {"$ref": "#/$defs/Node"},
                            "items": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {"n": {"type": "integer"}},
                                },
                            },
                            "remote": {"$ref": "https://elsewhere.example/s.json"},
                        },
                    },
                ]
            },
        },
    }
    walker = FieldWalker(
        doc, doc["$id"], lambda url: base if url.endswith("/OpenLineage.json") else None
    )
    rows = {f.path: f for f in walker.fields(doc["$defs"]["X"])}
    assert rows["_producer"].inherited == "RunFacet" and rows["_producer"].required
    assert rows["_producer"].format == "uri"
    assert rows["tree"].required and rows["tree.label"].enum == ("a", "b")
    # the cycle stops
    assert "tree.child" in rows and not any(p.startswith("tree.child.child.child") for p in rows)
    assert rows["items"].type == "array of object" and rows["items[].n"].type == "integer"
    assert rows["remote"].type == "unresolved $ref"


def test_long_names_that_share_their_first_100_characters_get_files_of_their_own() -> None:
    """Finding: file names were cut at 100 characters, so two facets whose names shared their
    first 100 wrote one schema file (the second overwrote the first) and one page."""
    from bot.outputs.site.model import slug

    one, two = ("Long" + "X" * 96 + end for end in ("OneJobFacet", "TwoJobFacet"))
    assert slug(one) != slug(two) and len(slug(one)) == len(slug(two)) == 100
    assert slug(one) == slug(one) and slug(one).startswith("Long" + "X" * 83 + "-")
    assert (
        slug("gcp:dataproc") == "gcp-dataproc"
        and slug("SchemaDatasetFacet") == "SchemaDatasetFacet"
    )
