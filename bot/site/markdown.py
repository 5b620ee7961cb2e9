"""The same pages as Markdown with front matter, for OpenLineage's Docusaurus website (its ``docs/`` folder).

Docusaurus reads ``.md`` as MDX: every quoted value is escaped for Markdown (``bot.render.markdown``) and
``{``/``}``/``<`` are escaped so that no registry text becomes JSX.
"""

from __future__ import annotations

import json

from bot.render.markdown import code, escape
from bot.site.model import FacetPage, Site, slug
from bot.site.pages import short, uc_label, use_case_pages


def _t(text: str) -> str:
    """Untrusted text for MDX prose or a table cell."""
    return escape(text).replace("{", "\\{").replace("}", "\\}").replace("<", "\\<")


def _c(text: str) -> str:
    """Untrusted text as inline code (MDX keeps code spans literal); ``|`` escaped for table cells."""
    return code(text, limit=None)


def _front(title: str, position: int | None = None) -> str:
    lines = ["---", f"title: {json.dumps(title)}", f"sidebar_label: {json.dumps(title)}"]
    if position is not None:
        lines.append(f"sidebar_position: {position}")
    return "\n".join([*lines, "---", ""])


def _md(path: str) -> str:
    return path[:-5] + ".md" if path.endswith(".html") else path


def render_markdown(site: Site) -> dict[str, bytes]:
    """``registry/...`` Markdown files: path -> bytes."""
    out: dict[str, str] = {}
    pages = {uri: f"/docs/registry/{_md(f.page)[:-3]}" for uri, f in site.facets.items()}
    lines = [_front("Ecosystem", 1), "Every name registered in the OpenLineage registry.\n",
             "| Name | Role | Documentation | Produces | Consumes |", "| --- | --- | --- | --- | --- |"]
    for c in site.entries:
        docs = " ".join(f"[{r}](<{u}>)" for r, u in c.documentation.items()
                        if u.startswith(("https://", "http://")) and not any(ch in u for ch in "<> \n"))
        cells = [", ".join(f"[{_t(short(u))}]({pages[u]})" if u in pages else _c(u) for u in lst)
                 for lst in (c.produced, c.consumed)]
        lines.append(f"| {_t(c.name)} | {', '.join(c.roles)} | {docs} | {cells[0]} | {cells[1]} |")
    out["registry/index.md"] = "\n".join(lines) + "\n"
    lines = [_front("Facets", 2), "| Facet | Extends | Version |", "| --- | --- | --- |"]
    for f in site.facets.values():
        lines.append(f"| [{_t(f.uri)}]({pages[f.uri]}) | {', '.join(f.bases)} | {_t(f.version)} |")
    out["registry/facets.md"] = "\n".join(lines) + "\n"
    for f in site.facets.values():
        out[f"registry/{_md(f.page)}"] = _facet(f)
    ucs = use_case_pages(site)
    by_case = site.use_cases()
    for case, path in ucs.items():
        rows = [_front(uc_label(case)), "| Facet | Emitted by | Read by |", "| --- | --- | --- |"]
        for uri in sorted(by_case[case]):
            facet = site.facets.get(uri)
            name = f"[{_t(uri)}]({pages[uri]})" if uri in pages else _c(uri)
            rows.append(f"| {name} | {_t(', '.join(facet.producers) if facet else '')} | "
                        f"{_t(', '.join(facet.consumers) if facet else '')} |")
        out[f"registry/{_md(path)}"] = "\n".join(rows) + "\n"
    return {path: text.encode("utf-8") for path, text in out.items()}


def _facet(f: FacetPage) -> str:
    lines = [_front(f.stem), f"- Short URI: {_c(f.uri)}", f"- Schema URL: {_c(f.url) if f.url else 'none'}",
             f"- Facet key: {', '.join(_c(d.key) + (f' ({d.base})' if d.base else '') for d in f.definitions)}",
             f"- Produced by: {_t(', '.join(f.producers)) or 'no registered producer'}",
             f"- Consumed by: {_t(', '.join(f.consumers)) or 'no registered consumer'}", ""]
    for d in f.definitions:
        if d.description:
            lines += [_t(d.description), ""]
        lines += [f"## Fields of {_c(d.key)}", "", "| Field | Type | Required | Description |",
                  "| --- | --- | --- | --- |"]
        for x in d.fields:
            kind = x.type + (f" ({x.format})" if x.format else "")
            if x.enum:
                kind += ": " + ", ".join(x.enum)
            lines.append(f"| {_c(x.path)} | {_t(kind)} | {'required' if x.required else 'optional'} | "
                         f"{_t(x.description)}{_t(f' (from {x.inherited})') if x.inherited else ''} |")
        lines.append("")
    lines += ["## Versions", "", "| Version | Schema | What changed |", "| --- | --- | --- |"]
    for i, v in enumerate(reversed(f.versions)):
        what = "first published version" if i == len(f.versions) - 1 else (
            "<br/>".join(_c(c) for c in v.changes) or "no change in what the schema accepts")
        lines.append(f"| {_t(v.version)} {v.bump} | {_c(v.url)} | {what} |")
    lines.append("")
    for name, text in f.examples:
        fence = "~~~~" if "```" in text else "```"
        lines += [f"### Example {_t(name)}", "", f"{fence}json", text.rstrip("\n").replace(fence, ""), fence, ""]
    return "\n".join(lines)


__all__ = ["render_markdown", "slug"]
