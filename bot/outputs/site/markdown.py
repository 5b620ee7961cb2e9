"""The same pages as Markdown with front matter, for OpenLineage's Docusaurus website (its ``docs/``
folder).

Docusaurus compiles ``.md`` as MDX, where ``<`` opens JSX, ``{`` an expression and a line starting
with ``import``/``export`` is code. Every quoted value passes through exactly one of ``text`` (prose
and table cells) or ``literal`` (a code span): nothing is escaped twice, and nothing quoted reaches
the page another way. ``tests/test_site_mdx.py`` compiles random descriptions through the real
``@mdx-js/mdx``.
"""

from __future__ import annotations

import json
import re
from importlib import resources

from bot.core.quoting import code, escape
from bot.core.small_cache import small_cache
from bot.outputs.site.fields import Field
from bot.outputs.site.model import EntryCard, FacetPage, Site, slug
from bot.outputs.site.pages import Shard, in_shard, naming_rows, safe_url, short, use_case_pages
from bot.outputs.site.usecases import title_of

_PARAGRAPH = re.compile(r"\r?\n[ \t]*\r?\n\s*")
_BREAK = re.compile(r"\r\n|\r|\n")
# MDX reads a paragraph starting with import/export as ESM
_ESM = re.compile(r"^(\s*)([ie])(?=mport|xport)")
ECOSYSTEM = "/docs/registry/"  # registry/index.md in the website's docs/
# the stylesheet that makes the pages' tables fit (the website adds it to its customCss)
STYLESHEET, STYLESHEET_SOURCE = "registry.css", "docusaurus.css"


@small_cache(maxsize=8192)  # the base facets' fields repeat on every facet page
def text(value: str) -> str:
    """Untrusted text as inert MDX prose or table cell: Markdown escapes, then ``{``/``}`` and ESM,
    line by line; its line breaks become ``<br/>`` (a paragraph break two), which a table cell can
    hold too."""
    paragraphs = [p for p in _PARAGRAPH.split(value.strip()) if p.strip()]
    return "<br/><br/>".join(
        "<br/>".join(_line(line) for line in _BREAK.split(p) if line.strip()) for p in paragraphs
    )


def _line(value: str) -> str:
    escaped = escape(value.strip()).replace("{", "\\{").replace("}", "\\}")
    return _ESM.sub(lambda m: f"{m[1]}&#{ord(m[2])};", escaped)


@small_cache(maxsize=8192)
def literal(value: str, table: bool = True) -> str:
    """Untrusted text as a code span (MDX keeps code literal); ``|`` escaped inside a table. A
    backslash before a ``|`` cannot be in a table's code span: the table reads the backslash and the
    pipe's escape as an escaped backslash, then the pipe as the cell's end; such a value is quoted
    as prose instead."""
    if table and "\\|" in value:
        return text(value)
    return code(value, table=table, limit=None)


# what ends or escapes a link destination ``<...>``: a bracket, a backslash, white space or a
# control character (a carriage return is a line end to Markdown: the page no longer compiled)
_NOT_IN_LINK = re.compile(r"[<>\\\s\x00-\x1f\x7f]")


def link(label: str, url: str) -> str:
    """A link to a web URL (``safe_url``); just the label when the URL is not one a page may link
    to."""
    target = safe_url(url)
    if target is None or _NOT_IN_LINK.search(target):
        return text(label)
    return f"[{text(label)}](<{target}>)"


def _front(title: str, position: int | None = None, toc: int | None = None) -> str:
    lines = ["---", f"title: {json.dumps(title)}", f"sidebar_label: {json.dumps(title)}"]
    if position is not None:
        lines.append(f"sidebar_position: {position}")
    if toc is not None:  # the deepest heading level the page's table of contents lists
        lines.append(f"toc_max_heading_level: {toc}")
    return "\n".join([*lines, "---", ""])


def _md(path: str) -> str:
    return path[:-5] + ".md" if path.endswith(".html") else path


def render_markdown(site: Site, common: bool = True, shard: Shard = (0, 1)) -> dict[str, bytes]:
    """``registry/...`` Markdown files: path -> bytes, one per page of the HTML site; in parts as
    ``render_pages`` (``common`` the pages every site has once, ``shard`` that shard's facet
    pages)."""
    entries = _entries(site)
    out: dict[str, str] = {
        f"registry/{_md(f.page)}": _facet(f, site, entries)
        for f in in_shard(site.facets.values(), shard)
    }
    if not common:
        return {path: page.encode("utf-8") for path, page in out.items()}
    pages = {uri: f"/docs/registry/{_md(f.page)[:-3]}" for uri, f in site.facets.items()}
    ucs = use_case_pages(site)
    by_case = site.use_cases()
    out.update(
        {
            "registry/index.md": _ecosystem(site, pages),
            "registry/facets.md": _facets(site, pages, entries),
            "registry/compat.md": _compat(site, pages, entries),
            "registry/use-cases.md": _use_cases(site, ucs, by_case),
            "registry/promotion.md": PROMOTION,
            "registry/naming.md": _naming(site),
        }
    )
    for case, path in ucs.items():
        out[f"registry/{_md(path)}"] = _use_case(site, case, sorted(by_case[case]), pages, entries)
    out.update(_categories(site, ucs))
    out.update(hand_written_links(site, pages))
    files = {path: page.encode("utf-8") for path, page in out.items()}
    files[STYLESHEET] = (
        resources.files("bot.outputs.site").joinpath("static", STYLESHEET_SOURCE).read_bytes()
    )
    return files


def hand_written_links(site: Site, pages: dict[str, str]) -> dict[str, str]:
    """Each hand-written doc citing a facet's schema, with a paragraph appended that links the
    facet's published page, at its path under ``docs/``: only the docs that do not link every such
    page yet (a doc that has the paragraph is not written again)."""
    cites: dict[str, list[str]] = {}
    docs = {}
    for uri, found in site.hand_docs.items():
        for doc in found:
            docs[doc.path] = doc
            cites.setdefault(doc.path, []).append(uri)
    out: dict[str, str] = {}
    for path, doc in sorted(docs.items()):
        missing = [u for u in sorted(cites[path]) if f"]({pages[u]})" not in doc.text]
        if missing:
            links = ", ".join(f"[{text(site.facets[u].stem)}]({pages[u]})" for u in missing)
            out[doc.rel] = (
                doc.text.rstrip("\n")
                + f"\n\nIn the registry: {links} (fields, versions, producers and consumers).\n"
            )
    return out


def _categories(site: Site, ucs: dict[str, str]) -> dict[str, str]:
    """``_category_.json`` of each folder: Docusaurus's sidebar shows these labels, in this order,
    instead of the folder names."""

    def category(label: str, position: int | None = None) -> str:
        value: dict[str, object] = {"label": label, "collapsed": True}
        if position is not None:
            value["position"] = position
        return json.dumps(value, ensure_ascii=False) + "\n"

    out = {
        "registry/_category_.json": category("Registry"),
        "registry/facets/_category_.json": category("Facet pages", 7),
    }
    if ucs:
        out["registry/use-cases/_category_.json"] = category("Use case pages", 8)
    owners = sorted(
        {(f.page.split("/")[1], f.owner) for f in site.facets.values() if f.page.count("/") == 2}
    )
    for position, (folder, owner) in enumerate(owners, start=1):
        out[f"registry/facets/{folder}/_category_.json"] = category(owner, position)
    return out


def _chips(card: EntryCard, role: str, uris: list[str], pages: dict[str, str]) -> str:
    out = []
    for uri in uris:
        name = f"[{text(short(uri))}]({pages[uri]})" if uri in pages else literal(uri)
        versions = card.declared_versions(role, uri)
        out.append(name + (f" ({text(', '.join(versions))})" if versions else ""))
    return ", ".join(out)


def _ecosystem(site: Site, pages: dict[str, str]) -> str:
    """One section per entry, its heading's explicit id the HTML card's anchor (a table cell can
    hold no heading, and Docusaurus checks anchors of headings only), so that producers and
    consumers link to their entry from every page."""
    lines = [
        _front("Producers and consumers", 1, toc=2),
        "Every name registered in the OpenLineage registry.\n",
        "## Registered names\n",
    ]
    for c in site.entries:
        links = [link("homepage", c.homepage)] if safe_url(c.homepage) else []
        links += [link(f"{r} documentation", u) for r, u in c.documentation.items() if safe_url(u)]
        lines.append(f"### {text(c.title)} \\{{#{c.page}\\}}\n")
        if c.logo:
            lines.append(f"![{text(c.title)} logo](/registry/{c.logo})\n")
        if c.description:
            lines.append(text(c.description) + "\n")
        about = [
            f"- Registered name: {literal(c.name, table=False)}",
            f"- Roles: {text(', '.join(c.roles))}",
        ]
        if c.categories:
            about.append(f"- Categories: {text(', '.join(c.categories))}")
        if links:
            about.append(f"- Links: {', '.join(links)}")
        about += [
            f"- {label}: {_chips(c, role, uris, pages)}"
            for label, role, uris in (
                ("Produces", "producer", c.produced),
                ("Consumes", "consumer", c.consumed),
            )
            if uris
        ]
        lines.append("\n".join(about) + "\n")
    if organizations := site.organizations():
        lines.append("## Partners\n")
        for org, members in organizations.items():
            who = (
                link(org, members[0].organization_url)
                if safe_url(members[0].organization_url)
                else text(org)
            )
            lines.append(f"- {who}: {', '.join(f'[{text(c.title)}](#{c.page})' for c in members)}")
    if any(c.logo for c in site.entries):
        lines.append(
            "\nLogos are under `logos/` of the published output: copy it to "
            "`static/registry/logos/`."
        )
    return "\n".join(lines) + "\n"


def _entries(site: Site) -> dict[str, str]:
    """Registered name -> its section on the ecosystem page."""
    return {c.name: f"{ECOSYSTEM}#{c.page}" for c in site.entries}


def _names(names: list[str], entries: dict[str, str], titles: dict[str, str] | None = None) -> str:
    """Registered names as links to their entries (``titles``: shown instead of the names)."""
    return ", ".join(
        f"[{text(label)}]({entries[n]})" if n in entries else text(label)
        for n in names
        for label in [(titles or {}).get(n, n)]
    )


def _facets(site: Site, pages: dict[str, str], entries: dict[str, str]) -> str:
    lines = [
        _front("Facets", 2),
        "| Facet | Extends | Version | Produced by | Consumed by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for f in site.facets.values():
        lines.append(
            f"| [{text(f.uri)}]({pages[f.uri]}) | {text(', '.join(f.bases))} | {text(f.version)} | "
            f"{_names(f.producers, entries)} | {_names(f.consumers, entries)} |"
        )
    return "\n".join(lines) + "\n"


def _compat(site: Site, pages: dict[str, str], entries: dict[str, str]) -> str:
    """The explorer's answer for every producer and consumer pair that shares a facet, as a
    table."""
    lines = [
        _front("Compatibility", 3),
        "Which facets each consumer reads of each producer, and whether the "
        "versions they declare match.\n",
        "| Producer | Consumer | Facet | Versions |",
        "| --- | --- | --- | --- |",
    ]
    for p in (c for c in site.entries if "producer" in c.roles):
        for c in (c for c in site.entries if "consumer" in c.roles):
            for uri in (u for u in p.produced if u in c.consumed):
                verdict = version_match(
                    p.declared_versions("producer", uri), c.declared_versions("consumer", uri)
                )
                facet = f"[{text(short(uri))}]({pages[uri]})" if uri in pages else literal(uri)
                who = [_names([x.name], entries, {x.name: x.title}) for x in (p, c)]
                lines.append(f"| {who[0]} | {who[1]} | {facet} | {text(verdict)} |")
    return "\n".join(lines) + "\n"


def version_match(emitted: tuple[str, ...], read: tuple[str, ...]) -> str:
    """What a pair's declared versions of one facet say (the explorer says the same, in
    ``site.js``)."""
    if not emitted or not read:
        return "versions not declared by both"
    both = [v for v in emitted if v in read]
    if both:
        return "match: " + ", ".join(both)
    return f"no common version: emits {', '.join(emitted)}, reads {', '.join(read)}"


def _use_cases(site: Site, ucs: dict[str, str], by_case: dict[str, set[str]]) -> str:
    lines = [_front("Use cases", 4)]
    for case in sorted(ucs):
        lines += [
            f"## "
            f"[{text(title_of(site.use_case_texts, case))}](/docs/registry/{_md(ucs[case])[:-3]})",
            "",
        ]
        known = site.use_case_texts.get(case)
        if known and known.description:
            lines += [text(known.description), ""]
        lines += [f"{len(by_case[case])} facet(s) declared for it.", ""]
    return "\n".join(lines)


def _use_case(
    site: Site, case: str, uris: list[str], pages: dict[str, str], entries: dict[str, str]
) -> str:
    label = title_of(site.use_case_texts, case)
    known = site.use_case_texts.get(case)
    rows = [
        _front(label),
        *([text(known.description), ""] if known and known.description else []),
        "| Facet | Emitted by | Read by |",
        "| --- | --- | --- |",
    ]
    for uri in uris:
        facet = site.facets.get(uri)
        name = f"[{text(uri)}]({pages[uri]})" if uri in pages else literal(uri)
        rows.append(
            f"| {name} | {_names(facet.producers, entries) if facet else ''} | "
            f"{_names(facet.consumers, entries) if facet else ''} |"
        )
    if not uris:
        rows.append("| no facet is declared for this use case yet | | |")
    return "\n".join(rows) + "\n"


def _naming(site: Site) -> str:
    datasets, jobs = naming_rows(site.naming)
    lines = [_front("Naming conventions", 5)]
    for title, rows, kind in (("Datasets", datasets, True), ("Jobs", jobs, False)):
        if not rows:
            continue
        lines += [
            f"## {title}",
            "",
            "| Name | Type | Namespace | Name |" if kind else "| Name | Namespace | Name |",
            "| --- | --- | --- | --- |" if kind else "| --- | --- | --- |",
        ]
        for r in rows:
            cells = [
                text(r["title"]),
                *([text(r["type"])] if kind else []),
                " or ".join(literal(n) for n in r["namespaces"]),
                " or ".join(literal(n) for n in r["names"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if len(lines) == 1:
        lines.append("The naming files could not be read.")
    return "\n".join(lines) + "\n"


PROMOTION = (
    _front("From custom facet to core facet", 6)
    + """
A custom facet lives in its owner's registry folder, under the owner's prefix. When several producers and
consumers rely on it, it can become part of the OpenLineage specification.

1. **Register and use it.** The facet is a schema in `spec/registry/<name>/facets/`, with examples, declared in
   the owner's `registry.json` and published at its schema URL like a core facet.
2. **Show adoption.** Other entries declare it in their `produced_facets` or `consumed_facets`; the
   compatibility page and the facet's page list them.
3. **Open a proposal.** Follow the OpenLineage proposal process (`proposals/` in the OpenLineage repository):
   describe the facet, its users and the name it takes as a core facet.
4. **Vote and move.** Once the committers accept the proposal, the schema moves to `spec/facets/` under the
   core name with a new version, core's `registry.json` declares it, and the custom facet is kept,
   deprecated, so existing events stay valid.
"""  # noqa: E501
)


def _kind(x: Field) -> str:
    kind = x.type + (f" ({x.format})" if x.format else "")
    if x.enum:
        kind += ": " + ", ".join(x.enum)
    return kind


def _about(x: Field) -> str:
    parts = [text(x.description)] if x.description else []
    parts += [text(n) for n in x.notes]
    if x.default:
        parts.append("default " + literal(x.default))
    if x.deprecated:
        parts.append("**deprecated**")
    if x.inherited:
        parts.append(text(f"(from {x.inherited})"))
    return "<br/>".join(parts)


def _url(url: str) -> str:
    """A schema URL as a link (its code span the label), or ``none``."""
    target = safe_url(url)
    if target is None or any(ch in target for ch in "<>\\ \n\t"):
        return literal(url, table=False) if url else "none"
    return f"[{literal(url, table=False)}](<{target}>)"


def _facet(f: FacetPage, site: Site, entries: dict[str, str]) -> str:
    def who(role: str, names: list[str]) -> str:
        return ", ".join(
            _names([n], entries)
            + (f" ({text(', '.join(f.declared[role, n]))})" if (role, n) in f.declared else "")
            for n in names
        )

    lines = [
        _front(f.stem),
        f"- Short URI: {literal(f.uri, table=False)}",
        f"- Schema URL: {_url(f.url)}",
        "- Facet key: "
        + (
            ", ".join(
                literal(d.key, table=False) + (f" ({text(d.base)})" if d.base else "")
                for d in f.definitions
            )
            or "none: this file defines shared types"
        ),
        f"- Produced by: {who('producer', f.producers) or 'no registered producer'}",
        f"- Consumed by: {who('consumer', f.consumers) or 'no registered consumer'}",
    ]
    if docs := site.hand_docs.get(f.uri):
        lines.append(
            "- Hand-written docs: " + ", ".join(f"[{text(d.title)}]({d.url})" for d in docs)
        )
    if f.use_cases:
        lines.append(
            "- Use cases: "
            + ", ".join(text(title_of(site.use_case_texts, u)) for u in sorted(f.use_cases))
        )
    lines.append("")
    for d in f.definitions:
        if d.description:
            lines += [text(d.description), ""]
        lines += [
            f"## Fields of {literal(d.key, table=False)}",
            "",
            "| Field | Type | Required | Description |",
            "| --- | --- | --- | --- |",
        ]
        for x in d.fields:
            lines.append(
                f"| {literal(x.path)} | {text(_kind(x))} | "
                f"{'required' if x.required else 'optional'} | {_about(x)} |"
            )
        lines.append("")
    lines += ["## Versions", "", "| Version | Schema | What changed |", "| --- | --- | --- |"]
    for i, v in enumerate(reversed(f.versions)):
        what = (
            "first published version"
            if i == len(f.versions) - 1
            else (
                "<br/>".join(literal(c) for c in v.changes)
                or "no change in what the schema accepts"
            )
        )
        lines.append(f"| {text(v.version)} {text(v.bump)} | {literal(v.url)} | {what} |")
    lines.append("")
    for name, example in f.examples:
        fence = "~~~~" if "```" in example else "```"
        lines += [
            f"### Example {text(name)}",
            "",
            f"{fence}json",
            example.rstrip("\n").replace(fence, ""),
            fence,
            "",
        ]
    return "\n".join(lines)


__all__ = ["literal", "render_markdown", "slug", "text", "version_match"]
