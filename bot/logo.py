"""An entry's logo (``registry.json`` ``logo``): one file of its folder, small, of the type its name says.

The check (``entry/logo``) and the site use the same judgement, so a logo the check would refuse is never
published even when ``publish`` runs on a tree no one checked. An SVG is accepted only when it is plain
drawing: an allowed list of elements, no event handler, no reference outside the file, no DOCTYPE (so no
entity), no ``<style>`` element; anything else is refused rather than rewritten, since a sanitiser that
rewrites is one more parser to get wrong. The site shows logos with ``<img>`` under a CSP of ``img-src
'self'``, where an SVG runs no script anyway: the refusal is the second wall, not the only one.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

LOGO_LIMIT = 100 * 1024  # bytes
LOGO_NAME = re.compile(r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_./-]*\.(png|jpg|jpeg|webp|svg)")  # as the schema says
_MAGIC = {"png": (b"\x89PNG\r\n\x1a\n",), "jpg": (b"\xff\xd8\xff",), "jpeg": (b"\xff\xd8\xff",)}
_SVG_ELEMENTS = frozenset((
    "svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "defs",
    "lineargradient", "radialgradient", "stop", "title", "desc", "clippath", "mask", "use", "symbol", "metadata"))
_LOCAL_URL = re.compile(r"url\(\s*(?!['\"]?#)", re.IGNORECASE)  # url(...) to anything but a local #id


def logo_problem(name: str, data: bytes) -> str | None:
    """Why the file ``name`` with ``data`` cannot be a logo, or None when it can."""
    if len(data) > LOGO_LIMIT:
        return f"the logo is {len(data):,} bytes; at most {LOGO_LIMIT:,} are published"
    kind = name.rsplit(".", 1)[-1].lower()
    if kind == "svg":
        return _svg_problem(data)
    if kind == "webp":
        ok = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    else:
        ok = data.startswith(_MAGIC.get(kind, (b"\0never",)))
    return None if ok else f"the file's content is not {kind.upper()} (its first bytes say otherwise)"


def _svg_problem(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "the SVG is not UTF-8 text"
    if "<!DOCTYPE" in text.upper() or "<!ENTITY" in text.upper():
        return "the SVG has a DOCTYPE or entity declaration"
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        return f"the SVG is not well-formed XML ({exc})"
    if _local(root.tag) != "svg":
        return "the file's root element is not <svg>"
    for element in root.iter():
        tag = _local(element.tag)
        if tag not in _SVG_ELEMENTS:
            return f"the SVG has a <{tag}> element (only plain drawing elements are published)"
        for attribute, value in element.attrib.items():
            local = _local(attribute).lower()
            if local.startswith("on"):
                return f"the SVG has an event handler ({local})"
            if local == "href" and not value.strip().startswith("#"):
                return "the SVG links to something outside the file (href)"
            if _LOCAL_URL.search(value) or "javascript:" in value.lower():
                return f"the SVG refers to something outside the file ({local})"
    return None


def _local(tag: str) -> str:
    """An element or attribute name without its XML namespace, lower-cased."""
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""

