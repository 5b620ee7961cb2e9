"""Re-serialise an SVG from an allow-list, so that what is published can neither fetch nor run
anything.

The file is parsed (no DOCTYPE, so no entity) and written again element by element: only drawing
elements in the SVG namespace, only listed attributes, references only to ``#ids`` of the file
(``href`` and ``url(#id)``), no processing instruction or comment (the parser drops them), no other
namespace (editor metadata). ``<style>`` is kept, rebuilt from its plain rules: at-rules
(``@import``, ``@font-face``) are dropped, and a declaration is kept only when its property is
listed and its value passes ``safe_value`` (no backslash, so no escape; functions only from a short
list; ``url()`` only to ``#id``). ``<image>`` keeps only an embedded bitmap
(``data:image/png;base64,...``), which renders without a request. Presentation attributes and
``style`` attributes go through the same filter, since a browser reads them as CSS too. Allow-list
rather than deny-list: whatever a browser learns to fetch next is simply not on the list.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"

ELEMENTS = {
    name.lower(): name
    for name in (
        "svg",
        "g",
        "defs",
        "symbol",
        "use",
        "path",
        "rect",
        "circle",
        "ellipse",
        "line",
        "polyline",
        "polygon",
        "text",
        "tspan",
        "textPath",
        "title",
        "desc",
        "linearGradient",
        "radialGradient",
        "stop",
        "clipPath",
        "mask",
        "pattern",
        "marker",
        "style",
        "filter",
        "feBlend",
        "feColorMatrix",
        "feComponentTransfer",
        "feComposite",
        "feConvolveMatrix",
        "feDiffuseLighting",
        "feDisplacementMap",
        "feDistantLight",
        "feDropShadow",
        "feFlood",
        "feFuncA",
        "feFuncB",
        "feFuncG",
        "feFuncR",
        "feGaussianBlur",
        "feMerge",
        "feMergeNode",
        "feMorphology",
        "feOffset",
        "fePointLight",
        "feSpecularLighting",
        "feSpotLight",
        "feTile",
        "feTurbulence",
        "image",
    )
}  # never feImage, foreignObject, script, a, animate, set, font, iframe

PROPERTIES = frozenset(
    (  # presentation properties: as attributes, in style="" and in <style>
        "fill",
        "fill-opacity",
        "fill-rule",
        "stroke",
        "stroke-width",
        "stroke-opacity",
        "stroke-linecap",
        "stroke-linejoin",
        "stroke-miterlimit",
        "stroke-dasharray",
        "stroke-dashoffset",
        "opacity",
        "color",
        "display",
        "visibility",
        "overflow",
        "clip-path",
        "clip-rule",
        "mask",
        "filter",
        "stop-color",
        "stop-opacity",
        "font-family",
        "font-size",
        "font-weight",
        "font-style",
        "font-variant",
        "font-stretch",
        "font",
        "letter-spacing",
        "word-spacing",
        "text-anchor",
        "dominant-baseline",
        "alignment-baseline",
        "baseline-shift",
        "text-decoration",
        "writing-mode",
        "direction",
        "unicode-bidi",
        "isolation",
        "mix-blend-mode",
        "paint-order",
        "shape-rendering",
        "text-rendering",
        "image-rendering",
        "color-interpolation",
        "color-interpolation-filters",
        "vector-effect",
        "enable-background",
        "marker",
        "marker-start",
        "marker-mid",
        "marker-end",
        "transform",
        "transform-origin",
        "transform-box",
        "flood-color",
        "flood-opacity",
        "lighting-color",
        "white-space",
        "line-height",
        "font-kerning",
    )
)

ATTRIBUTES = PROPERTIES | frozenset(
    (
        "id",
        "class",
        "style",
        "viewBox",
        "preserveAspectRatio",
        "width",
        "height",
        "x",
        "y",
        "x1",
        "y1",
        "x2",
        "y2",
        "cx",
        "cy",
        "r",
        "rx",
        "ry",
        "fx",
        "fy",
        "fr",
        "d",
        "points",
        "pathLength",
        "offset",
        "gradientUnits",
        "gradientTransform",
        "spreadMethod",
        "patternUnits",
        "patternContentUnits",
        "patternTransform",
        "clipPathUnits",
        "maskUnits",
        "maskContentUnits",
        "markerWidth",
        "markerHeight",
        "markerUnits",
        "refX",
        "refY",
        "orient",
        "dx",
        "dy",
        "rotate",
        "textLength",
        "lengthAdjust",
        "startOffset",
        "href",
        "version",
        "filterUnits",
        "primitiveUnits",
        "in",
        "in2",
        "result",
        "stdDeviation",
        "mode",
        "type",
        "values",
        "operator",
        "k1",
        "k2",
        "k3",
        "k4",
        "kernelMatrix",
        "order",
        "tableValues",
        "slope",
        "intercept",
        "amplitude",
        "exponent",
        "scale",
        "xChannelSelector",
        "yChannelSelector",
        "radius",
        "baseFrequency",
        "numOctaves",
        "seed",
        "stitchTiles",
        "surfaceScale",
        "specularConstant",
        "specularExponent",
        "diffuseConstant",
        "azimuth",
        "elevation",
        "z",
        "pointsAtX",
        "pointsAtY",
        "pointsAtZ",
        "limitingConeAngle",
        "edgeMode",
        "divisor",
        "bias",
        "targetX",
        "targetY",
        "preserveAlpha",
        "role",
        "aria-label",
        "aria-hidden",
        "xml:space",
    )
)

FUNCTIONS = frozenset(
    (
        "rgb",
        "rgba",
        "hsl",
        "hsla",
        "url",
        "matrix",
        "translate",
        "translatex",
        "translatey",
        "scale",
        "scalex",
        "scaley",
        "rotate",
        "skewx",
        "skewy",
    )
)
_FUNCTION = re.compile(r"([A-Za-z0-9_-]*)\s*\(")
_LOCAL_URL = re.compile(r"url\(\s*(['\"]?)#[A-Za-z0-9_.:-]+\1\s*\)", re.IGNORECASE)
_LOCAL_HREF = re.compile(r"\s*#[A-Za-z0-9_.:-]+\s*")
# an embedded bitmap
_RASTER_DATA = re.compile(r"\s*data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*")
_SELECTOR = re.compile(r"[A-Za-z0-9_\-.#,\s>+~*:\[\]=\"'|^$]+")
_PROPERTY = re.compile(r"[A-Za-z-]+")
_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.DOTALL)
_UNSAFE_CHARS = re.compile(r"[\\@<\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_VALUE = 512 * 1024  # no more than a whole file the site reads


class SvgError(ValueError):
    """The file cannot be re-serialised as an SVG logo."""


def safe_value(value: str) -> bool:
    """A CSS value that cannot fetch: no escape, no at-sign, functions only from ``FUNCTIONS``,
    ``url()`` only to a ``#id`` of the file (every spelling of ``url(`` is a function named ``url``,
    case folded)."""
    if len(value) > MAX_VALUE or _UNSAFE_CHARS.search(value):
        return False
    for match in _FUNCTION.finditer(value):
        name = match[1].lower()
        if name not in FUNCTIONS:
            return False
        if name == "url" and not _LOCAL_URL.match(value, match.start()):
            return False
    return True


def clean_declarations(text: str) -> str:
    """``prop: value; ...`` with only the listed properties whose values are safe."""
    kept = []
    for declaration in _COMMENT.sub(" ", text).split(";"):
        prop, colon, value = declaration.partition(":")
        prop, value = prop.strip().lower(), value.strip()
        if (
            colon
            and _PROPERTY.fullmatch(prop)
            and prop in PROPERTIES
            and value
            and safe_value(value)
        ):
            kept.append(f"{prop}:{value}")
    return ";".join(kept)


def clean_stylesheet(text: str) -> str:
    """The plain rules of a stylesheet, each rebuilt from its safe declarations; at-rules dropped
    whole."""
    text = _COMMENT.sub(" ", text)
    rules: list[str] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        if text[i] == "@":
            i = _skip_at_rule(text, i)
            continue
        open_at = text.find("{", i)
        if open_at < 0:
            break
        close_at = text.find("}", open_at)
        if close_at < 0:
            break
        selector, body = text[i:open_at].strip(), text[open_at + 1 : close_at]
        i = close_at + 1
        if "{" in body:  # a nested block: not a plain rule; skip to where its braces balance
            i = _skip_block(text, open_at)
            continue
        declarations = clean_declarations(body)
        if declarations and _SELECTOR.fullmatch(selector):
            rules.append(f"{selector}{{{declarations}}}")
    return "\n".join(rules)


def _skip_block(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return len(text)


def _skip_at_rule(text: str, start: int) -> int:
    semicolon, brace = text.find(";", start), text.find("{", start)
    if brace < 0 or 0 <= semicolon < brace:
        return len(text) if semicolon < 0 else semicolon + 1
    return _skip_block(text, brace)


def clean_svg(data: bytes) -> bytes:
    """The SVG ``data`` rebuilt from the allow-list; ``SvgError`` when it is not an SVG document."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SvgError("the SVG is not UTF-8 text") from exc
    if "<!DOCTYPE" in text.upper() or "<!ENTITY" in text.upper():
        raise SvgError("the SVG has a DOCTYPE or entity declaration")
    try:
        root = ET.fromstring(data)  # drops comments and processing instructions (xml-stylesheet)
    except ET.ParseError as exc:
        raise SvgError(f"the SVG is not well-formed XML ({exc})") from exc
    if _element(root.tag) != "svg":
        raise SvgError("the file's root element is not <svg> in the SVG namespace")
    out: list[str] = []
    _write(root, out, root=True)
    return "".join(out).encode("utf-8")


def _element(tag: object) -> str | None:
    """The element's canonical SVG name when it is on the list and in the SVG (or no) namespace."""
    if not isinstance(tag, str):
        return None
    namespace, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    if namespace not in ("", SVG_NS):
        return None
    return ELEMENTS.get(local.lower()) if ELEMENTS.get(local.lower()) == local else None


def _attributes(element: ET.Element, name: str) -> list[tuple[str, str]]:
    """The listed attributes; ``href`` only to a ``#id``, or (``<image>``) to an embedded PNG, JPEG,
    GIF or WebP, which an image renders without fetching; never an SVG, which could nest
    anything."""
    out: list[tuple[str, str]] = []
    is_image = name == "image"
    for key, value in element.attrib.items():
        attribute = "href" if key == XLINK_HREF else "xml:space" if key == XML_SPACE else key
        if attribute not in ATTRIBUTES:
            continue
        if attribute == "href":
            if _LOCAL_HREF.fullmatch(value) or (is_image and _RASTER_DATA.fullmatch(value)):
                out.append((attribute, value.strip()))
        elif attribute == "style":
            if kept := clean_declarations(value):
                out.append((attribute, kept))
        elif safe_value(value):
            out.append((attribute, value))
    return out


UNWRAPPED = frozenset(("a", "switch"))  # dropped, their drawing kept: a link is no part of a logo


def _write(element: ET.Element, out: list[str], root: bool = False) -> None:
    name = _element(element.tag)
    if name is None:
        if (
            not root
            and isinstance(element.tag, str)
            and element.tag.removeprefix(f"{{{SVG_NS}}}") in UNWRAPPED
        ):
            _write_children(element, out)
        return
    attributes = _attributes(element, name)
    if root:
        attributes = [("xmlns", SVG_NS), *attributes]
    out.append(
        f"<{name}" + "".join(f' {k}="{_escape(v, attribute=True)}"' for k, v in attributes) + ">"
    )
    if name == "style":
        out.append(_escape(clean_stylesheet("".join(element.itertext()))))
    else:
        _write_children(element, out)
    out.append(f"</{name}>")


def _write_children(element: ET.Element, out: list[str]) -> None:
    out.append(_escape(element.text or ""))
    for child in element:
        _write(child, out)
        out.append(_escape(child.tail or ""))


def _escape(text: str, attribute: bool = False) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if attribute:
        text = (
            text.replace('"', "&quot;")
            .replace("\n", "&#10;")
            .replace("\t", "&#9;")
            .replace("\r", "&#13;")
        )
    return text
