"""The static site: HTML pages (Jinja2, autoescaped), assets and the schemas under their ``$id``
paths."""

from __future__ import annotations

import functools
import itertools
import json
import urllib.parse
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any, TypeVar

import jinja2
from markupsafe import Markup, escape

from bot.core.inert import bidi_closed
from bot.core.quoting import file_url as file_url  # re-exported: they lived here
from bot.core.quoting import safe_url as safe_url
from bot.core.small_cache import small_cache
from bot.model.presentation import MAX_FACETS, MAX_USE_CASES
from bot.outputs.render.dashboard import fix_command
from bot.outputs.site.fields import Field
from bot.outputs.site.model import FacetPage, Site, slug
from bot.outputs.site.usecases import title_of

T = TypeVar("T")
PAGE_SIZE = 100  # cards per ecosystem page: the rest is a page away, or found by the search
SEARCH_INDEX = "assets/ecosystem-index.js"
# findings per table of an entry on the dashboard page (the real registry's most: 26): one entry's
# registry.json listing 8,000 facets that do not exist made it 3.5 MB; the CLI lists them all
DASHBOARD_ROWS = 200
NAV = (
    ("index.html", "Ecosystem"),
    ("compat.html", "Compatibility"),
    ("facets.html", "Facets"),
    ("use-cases.html", "Use cases"),
    ("naming.html", "Naming"),
    ("promotion.html", "Custom to core"),
)


def short(uri: str) -> str:
    """The facet part of a short URI, for chips (the full URI stays in the title and the facet
    page)."""
    return uri.rsplit(":", 1)[-1].removesuffix(".json") if uri.startswith("ol:") else uri


def owner_of(uri: str) -> str:
    """The name part of a short URI (``gcp:composer`` in ``ol:gcp:composer:X.json``)."""
    return ":".join(uri.split(":")[1:-1]) if uri.startswith("ol:") else ""


def _text(value: object) -> Markup:
    """Untrusted text for a page: escaped, its bidi controls closed (``bidi_closed``)."""
    return escape(bidi_closed(str(value)))


def _finalize(value: Any) -> Any:
    """Every ``{{ expression }}`` of the templates: a string's bidi controls closed at its end, so
    that one name cannot turn around the text after it (markup the code built is closed already)."""
    return bidi_closed(value) if isinstance(value, str) and not isinstance(value, Markup) else value


@small_cache(maxsize=16384)  # the base facets' rows repeat on every facet page
def field_row(x: Field) -> Markup:
    """One row of a facet page's field table, escaped as the templates escape (rendered here: a
    facet page is mostly these rows, and Jinja's per-expression overhead was most of the site's
    rendering time)."""
    kind = [str(_text(x.type))]
    if x.format:
        kind.append(f" <small>({_text(x.format)})</small>")
    if x.enum:
        kind.append(
            "<br><small>one of "
            + ", ".join(f"<code>{_text(v)}</code>" for v in x.enum)
            + "</small>"
        )
    about = [
        '<span class="req">deprecated</span> ' if x.deprecated else "",
        str(_text(x.description)),
    ]
    about += [f"<br><small>{_text(n)}</small>" for n in x.notes]
    if x.default:
        about.append(f"<br><small>default <code>{_text(x.default)}</code></small>")
    if x.inherited:
        about.append(f" <small>(from {_text(x.inherited)})</small>")
    css = ' class="inherited"' if x.inherited else ""
    need = (
        '<span class="req">required</span>' if x.required else '<span class="opt">optional</span>'
    )
    return Markup(
        f'<tr{css}><td class="indent-{min(x.depth, 4)}"><code><span '
        f'class="parent">{_text(x.parent)}'
        f"</span><strong>{_text(x.leaf)}</strong></code></td><td>{''.join(kind)}</td><td>{need}</td>"
        f"<td>{''.join(about)}</td></tr>"
    )


def environment(uc_label: Callable[[str], str], dashboard: bool = False) -> jinja2.Environment:
    folder = str(resources.files("bot.outputs.site").joinpath("templates"))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=True,
        # no stat per page
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
        finalize=_finalize,
    )
    nav = (*NAV, ("dashboard.html", "Dashboard")) if dashboard else NAV
    env.globals.update(
        safe_url=safe_url,
        uc_label=uc_label,
        short=short,
        owner_of=owner_of,
        nav=nav,
        fix_command=fix_command,
        field_row=field_row,
    )
    return env


def file_pages(site: Site, cards: dict[str, str]) -> dict[str, str]:
    """Repository file -> the site's page about it: a facet schema's page; an entry's
    ``registry.json``, its card."""
    pages = {f.path: f.page for f in site.facets.values()}
    for f in site.dashboard.findings() if site.dashboard is not None else ():
        if (
            f.entry is not None
            and f.entry in cards
            and f.path.rsplit("/", 1)[-1] == "registry.json"
        ):
            pages.setdefault(f.path, cards[f.entry])
    return pages


def use_case_pages(site: Site) -> dict[str, str]:
    out: dict[str, str] = {}
    taken: set[str] = set()
    for case in sorted(site.use_cases()):
        name = slug(case.lower())
        while name in taken:
            name += "-"
        taken.add(name)
        out[case] = f"use-cases/{name}.html"
    return out


def _closed(value: Any) -> Any:
    """``value`` with the bidi controls of each of its strings closed (``bidi_closed``): the
    scripts show them as text."""
    if isinstance(value, str):
        return bidi_closed(value)
    if isinstance(value, dict):
        return {_closed(k): _closed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_closed(v) for v in value]
    return value


def _json_script(value: Any) -> Markup:
    """JSON safe inside a ``<script type="application/json">``: no ``<``, ``>`` or ``&`` survives,
    so no ``</script>`` or ``<!--`` can end it, and the script element decodes no entity (hence
    ``Markup``)."""
    text = json.dumps(_closed(value), ensure_ascii=True, sort_keys=True)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


# (i, n): the facet pages and schema files at positions i, i + n, ...; None: none
Shard = tuple[int, int] | None


def in_shard(items: Iterable[T], shard: Shard) -> list[T]:
    """The items of ``shard`` (every n-th from the i-th), so that n processes split the per-facet
    files."""
    return [] if shard is None else list(itertools.islice(items, shard[0], None, shard[1]))


def render_pages(site: Site, common: bool = True, shard: Shard = (0, 1)) -> dict[str, bytes]:
    """Every file of the site but the discovery index: path -> bytes. In parts, for parallel
    writers: ``common`` the pages every site has once (ecosystem, lists, assets, logos), ``shard``
    the facet pages and schema files of that shard (the default: all of them)."""
    uc_label = functools.partial(title_of, site.use_case_texts)
    env = environment(uc_label, site.dashboard is not None)
    pages = {uri: f.page for uri, f in site.facets.items()}
    chunks = [site.entries[i : i + PAGE_SIZE] for i in range(0, len(site.entries), PAGE_SIZE)] or [
        []
    ]
    paths = ["index.html", *(f"ecosystem/{n}.html" for n in range(2, len(chunks) + 1))]
    cards = {
        c.name: f"{path}#{c.page}" for path, chunk in zip(paths, chunks, strict=True) for c in chunk
    }
    ucs = use_case_pages(site)
    context: dict[str, Any] = {
        "source": site.label,
        "pages": pages,
        "cards": cards,
        "uc_pages": ucs,
        "max_use_cases": MAX_USE_CASES,
        "max_facets": MAX_FACETS,
    }
    out: dict[str, bytes] = {}

    def page(path: str, template: str, title: str, **values: Any) -> None:
        root = "../" * path.count("/")
        html = env.get_template(f"{template}.html").render(
            title=title, root=root, current=path, **context, **values
        )
        out[path] = html.encode("utf-8")

    for facet in in_shard(site.facets.values(), shard):
        page(facet.page, "facet", facet.stem, f=facet, docs=website_docs(site, facet))
    out.update(in_shard(site.schema_files.items(), shard))
    if not common:
        return out
    use_cases = [
        (uc, uc_label(uc)) for uc in sorted({u for c in site.entries for u in c.all_use_cases})
    ]
    for number, (path, chunk) in enumerate(zip(paths, chunks, strict=True), start=1):
        pager = [(n, paths[n - 1]) for n in range(1, len(paths) + 1)] if len(paths) > 1 else []
        page(
            path,
            "ecosystem",
            "Ecosystem" if number == 1 else f"Ecosystem, page {number}",
            cards_list=chunk,
            total=len(site.entries),
            pager=pager,
            number=number,
            organizations=site.organizations() if number == 1 else {},
            use_cases=use_cases,
        )
    out[SEARCH_INDEX] = search_index(site, cards)
    producers = {c.name: c.produced for c in site.entries if "producer" in c.roles}
    consumers = {c.name: c.consumed for c in site.entries if "consumer" in c.roles}
    versions = {
        role: {c.name: c.versions.get(role, {}) for c in site.entries if role in c.roles}
        for role in ("producer", "consumer")
    }
    page(
        "compat.html",
        "compat",
        "Compatibility explorer",
        producers=sorted(producers),
        consumers=sorted(consumers),
        data=_json_script(
            {
                "produced": producers,
                "consumed": consumers,
                "pages": pages,
                "versions": versions,
                "titles": {c.name: c.title for c in site.entries},
            }
        ),
    )
    page("facets.html", "facets", "Facets", facets=list(site.facets.values()))
    by_case = site.use_cases()
    page(
        "use-cases.html",
        "use_cases",
        "Use cases",
        items=[
            (
                uc,
                uc_label(uc),
                ucs[uc],
                len(by_case[uc]),
                site.use_case_texts[uc].description if uc in site.use_case_texts else "",
            )
            for uc in sorted(ucs)
        ],
    )
    for case, path in ucs.items():
        rows = [site.facets.get(uri) or _unknown(uri) for uri in sorted(by_case[case])]
        text = site.use_case_texts.get(case)
        page(
            path,
            "use_case",
            uc_label(case),
            label=uc_label(case),
            facets=rows,
            description=text.description if text else "",
        )
    page("promotion.html", "promotion", "From custom facet to core facet")
    if site.dashboard is not None:
        page(
            "dashboard.html",
            "dashboard",
            "Registry dashboard",
            board=site.dashboard,
            file_url=functools.partial(file_url, site.source_url),
            file_pages=file_pages(site, cards),
            max_rows=DASHBOARD_ROWS,
        )
    datasets, jobs = naming_rows(site.naming)
    page("naming.html", "naming", "Naming conventions", datasets=datasets, jobs=jobs)
    for name in ("site.css", "site.js", "favicon.svg"):
        out[f"assets/{name}"] = (
            resources.files("bot.outputs.site").joinpath("static", name).read_bytes()
        )
    out.update(site.logo_files)
    return out


def search_index(site: Site, cards: dict[str, str]) -> bytes:
    """The ecosystem's search data, one script the page loads on the first search (``<script src>``:
    allowed by the CSP, and read from ``file://`` too, where ``fetch`` is not): per entry its name,
    title, card link, roles, use cases, facets (as numbers into one list of URIs) and the text a
    search reads."""
    facets = sorted({u for c in site.entries for u in (*c.produced, *c.consumed)})
    number = {uri: i for i, uri in enumerate(facets)}
    entries = [
        [
            c.name,
            c.title,
            cards[c.name],
            list(c.roles),
            c.all_use_cases,
            sorted({number[u] for u in (*c.produced, *c.consumed)}),
            " ".join((c.name, c.title, c.description, c.partner, *c.categories)).lower(),
        ]
        for c in site.entries
    ]
    return (
        b"window.registryIndex = "
        + _json_script({"entries": entries, "facets": facets}).encode()
        + b";\n"
    )


def _unknown(uri: str) -> FacetPage:
    return FacetPage(
        uri=uri,
        owner="",
        file=uri,
        path="",
        page="",
        version="",
        url="",
        definitions=(),
        versions=(),
        examples=(),
    )


def naming_rows(rules: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of the naming page: title, type and the namespace and name templates of each source."""
    if rules is None:
        return [], []

    def rows(sources: Any) -> list[dict[str, Any]]:
        out = []
        for s in sorted(sources.values(), key=lambda s: s.title.lower()):
            out.append(
                {
                    "anchor": f"naming-{slug(s.id)}",
                    "title": s.title,
                    "type": str(s.raw.get("type", "")),
                    "namespaces": list(dict.fromkeys(f.namespace.text for f in s.forms)),
                    "names": list(dict.fromkeys(f.name.text for f in s.forms)),
                }
            )
        return out

    return rows(rules.datasets), rows(rules.jobs)


def website_docs(site: Site, facet: FacetPage) -> list[tuple[str, str]]:
    """(title, URL) of the website's hand-written docs citing ``facet``'s schema: on the website
    that serves the schema (its ``$id``'s origin), where Docusaurus puts them."""
    origin = urllib.parse.urlsplit(facet.url)
    if not facet.url or not origin.scheme or not origin.netloc:
        return []
    base = f"{origin.scheme}://{origin.netloc}"
    return [(d.title, base + d.url) for d in site.hand_docs.get(facet.uri, [])]
