"""The website's hand-written docs (``paths.docs``, Docusaurus Markdown) that describe a facet: a
doc describes the facets whose schema URL it cites (any version, as "The facet specification can be
found here" and the ``_schemaURL`` of its examples do). The published facet page links each one;
publish drafts the link back into each one that does not link the facet's page yet."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.core.snapshot import Snapshot, SnapshotError

MAX_DOC_BYTES = 512 * 1024
# a schema URL without its version: what a doc cites and what a facet page's $id is
_CITED = re.compile(r"https?://openlineage\.io/spec/facets/\d+-\d+-\d+/([A-Za-z0-9_.-]+\.json)")
_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n", re.DOTALL)
_TITLE = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# Docusaurus drops a number prefix from each part of a doc's path ("01-intro" is "intro")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?\s*[-_.]+\s*(?=[^-_.\s])")
# what may reach a link target unquoted
_SAFE_PATH = re.compile(r"[A-Za-z0-9_./-]+")


@dataclass(frozen=True)
class HandDoc:
    path: str  # in the repository
    rel: str  # under the docs folder: where the website keeps it
    url: str  # its page on the website, /docs/...
    title: str
    text: str  # the file as it is
    cites: frozenset[str]  # schema file names it cites


def cited(text: str) -> frozenset[str]:
    """The schema file names ``text`` cites by an openlineage.io facet URL."""
    return frozenset(m[1] for m in _CITED.finditer(text))


def load_docs(snapshot: Snapshot, root: str) -> list[HandDoc]:
    """The Markdown docs under ``root`` that cite a facet schema URL (the others are not read
    further)."""
    out: list[HandDoc] = []
    for path in snapshot.files(root):
        if not path.endswith((".md", ".mdx")):
            continue
        try:
            data = snapshot.read(path)
        except SnapshotError:
            continue
        if data is None or len(data) > MAX_DOC_BYTES:
            continue
        text = data.decode("utf-8", errors="replace")
        cites = cited(text)
        rel = path[len(root) + 1 :]
        url = doc_url(rel, _front(text))
        if cites and url is not None:
            out.append(HandDoc(path, rel, url, _title(text, rel), text, cites))
    return out


def _front(text: str) -> dict[str, str]:
    match = _FRONT.match(text)
    out: dict[str, str] = {}
    for line in match[1].splitlines() if match else ():
        key, sep, value = line.partition(":")
        if sep and not line.startswith((" ", "\t")):
            out[key.strip()] = value.strip().strip("\"'")
    return out


def _title(text: str, rel: str) -> str:
    front = _front(text)
    if front.get("title"):
        return front["title"]
    body = _FRONT.sub("", text, count=1)
    match = _TITLE.search(body)
    return match[1].strip() if match else rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def doc_url(rel: str, front: dict[str, str]) -> str | None:
    """The URL Docusaurus gives the doc at ``rel`` (under ``docs/``, routed at ``/docs/``): its
    ``slug``, else its path without number prefixes and extension, its ``id`` as the last part;
    ``index``, ``README`` or its folder's name stands for the folder. None when it is not a plain
    path."""
    *folders, name = rel.rsplit(".", 1)[0].split("/")
    folders = [_NUMBER.sub("", f) for f in folders]
    slug = front.get("slug", "")
    if slug.startswith("/"):
        url = "/docs" + slug
    else:
        stem = front.get("id") or _NUMBER.sub("", name)
        index = not front.get("id") and (
            stem.lower() in ("index", "readme") or (folders and stem == folders[-1])
        )
        parts = [*folders, *([] if index else [slug or stem])]
        url = "/docs/" + "/".join(parts)
    url = url.rstrip("/") or "/docs"
    return url if _SAFE_PATH.fullmatch(url) and ".." not in url.split("/") else None


def by_facet(docs: Iterable[HandDoc], facets: dict[str, str]) -> dict[str, list[HandDoc]]:
    """Facet URI -> the docs citing its schema, given each facet's schema file name
    (``facets``: URI -> file name)."""
    out: dict[str, list[HandDoc]] = {}
    for uri, name in facets.items():
        found = [d for d in docs if name in d.cites]
        if found:
            out[uri] = sorted(found, key=lambda d: d.url)
    return out


__all__ = ["HandDoc", "by_facet", "cited", "doc_url", "load_docs"]
