"""The Docusaurus Markdown through the real MDX 3 compiler (npm ``@mdx-js/mdx`` with ``remark-gfm``,
as Docusaurus compiles ``.md`` docs): every page of the real corpus, a description Docusaurus broke
on, and random descriptions full of ``<``, ``{``, backticks and HTML. One long-lived node process
compiles them all (``tests/node/mdx-compile.mjs``), so a case costs a pipe round trip, not a node
start."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.outputs.site import build_site
from bot.outputs.site.markdown import link, literal, render_markdown, text

NODE = Path(__file__).resolve().parent / "node"


class Mdx:
    def __init__(self) -> None:
        if not (NODE / "node_modules/@mdx-js/mdx").is_dir():
            raise RuntimeError(
                "@mdx-js/mdx is not installed: `make node-deps` (part of `make test`) installs it"
            )
        self.process = subprocess.Popen(
            ["node", str(NODE / "mdx-compile.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def error(self, page: str) -> str | None:
        """None when ``page`` compiles to text only (the ``<br/>`` line breaks of table cells
        aside), else the compiler's message or what MDX would run: a JSX element, an
        ``{expression}``, an import or export."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(page) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        if not reply["ok"]:
            return str(reply["error"])
        live = [x for x in reply["live"] if x != "mdxJsxTextElement <br>"]
        return f"live MDX: {live}" if live else None

    def close(self) -> None:
        # closes stdin (the script ends) and reads stdout to its end
        self.process.communicate(timeout=10)


@pytest.fixture(scope="module")
def mdx() -> Iterator[Mdx]:
    compiler = Mdx()
    yield compiler
    compiler.close()


def test_the_compiler_is_strict_enough_to_catch_what_docusaurus_rejects(mdx: Mdx) -> None:
    assert mdx.error("a Map<String, String> b") is not None  # raw: JSX
    # escaped twice: a backslash, then JSX
    assert mdx.error("a Map\\\\<String, String> b") is not None
    assert mdx.error("x {y} z") is not None  # compiles, but runs y
    assert mdx.error("export const a = 1\n") is not None and mdx.error("a <br/> b") is None


def pages_of(repo: Path) -> dict[str, str]:
    snapshot = DirSnapshot(repo)
    site = build_site(snapshot, load_config(snapshot)[0])
    return {
        path: data.decode("utf-8")
        for path, data in render_markdown(site).items()
        if path.endswith(".md")
    }


def test_every_page_of_the_real_registry_compiles_with_a_generics_description(
    mdx: Mdx, corpus: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(corpus, repo, ignore=shutil.ignore_patterns(".git"))
    facet_path = repo / "spec/facets/ColumnLineageDatasetFacet.json"
    facet = json.loads(facet_path.read_text(encoding="utf-8"))
    definition = facet["$defs"]["ColumnLineageDatasetFacet"]
    definition["description"] = (
        "Maps each output column to a Map<String, String> of {inputs}; see `a<b>`."
    )
    facet_path.write_text(json.dumps(facet), encoding="utf-8")
    pages = pages_of(repo)
    kinds = {path.split("/")[1].removesuffix(".md") for path in pages}
    assert {"index", "facets", "compat", "use-cases", "promotion", "naming"} <= kinds
    page = next(
        text for path, text in pages.items() if path.endswith("/ColumnLineageDatasetFacet.md")
    )
    assert "Map\\<String, String\\> of \\{inputs\\}" in page
    failures = {
        path: error for path, page in pages.items() if (error := mdx.error(page)) is not None
    }
    assert not failures, failures


@pytest.mark.parametrize(
    "url",
    [
        "https://x.example/\r{alert(document.cookie)}",  # a line end to Markdown: did not compile
        "https://x.example/\x0b{a}",
        "https://x.example/a\u2028b",
        "https://x.example/<b>",
        "https://x.example/ok?q={x}",
    ],
)
def test_an_entrys_link_compiles_whatever_its_url_holds(mdx: Mdx, url: str) -> None:
    """Finding: a carriage return in a registry entry's homepage URL went into the link's
    destination, and the ecosystem page (so the whole website build) no longer compiled."""
    page = f"# Entry\n\n- {link('homepage', url)}\n"
    assert mdx.error(page) is None, page


ALPHABET = st.sampled_from(list("<>{}`|*_[]()#@!&:;\\/'\"=-+~$^ \n\tabcXYZ012.,"))
FRAGMENTS = st.sampled_from(
    [
        "Map<String, String>",
        "<script>alert(1)</script>",
        "{props.x}",
        "</div>",
        "<br/>",
        "import x from 'y'",
        "export const a = 1",
        "```",
        "<!-- c -->",
        "&amp;",
        "&#123;",
        "https://example.com/<x>",
        "<https://example.com>",
        "---",
        "> quote",
        "1. item",
        "- item",
        "# heading",
        "$$x$$",
        "| a | b |",
        "\\{",
        "\\<",
        "{/* c */}",
    ]
)
DESCRIPTIONS = st.lists(st.one_of(ALPHABET, FRAGMENTS), max_size=12).map("".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(description=DESCRIPTIONS)
@example(description="<\\|")  # a backslash before a pipe: a table split the code span at it
def test_random_descriptions_compile_in_prose_table_cells_and_code(
    mdx: Mdx, description: str
) -> None:
    page = "\n".join(
        [
            "---",
            "title: x",
            "---",
            "",
            text(description),
            "",
            "| Field | Description |",
            "| --- | --- |",
            f"| {literal(description)} | {text(description)} |",
            "",
            f"- Key: {literal(description, table=False)}",
            "",
        ]
    )
    assert mdx.error(page) is None, (description, page)
