"""An entry's logo (``registry.json`` ``logo``): one file of its folder, small, of the type its name
says.

The check (``entry/logo``) and the site use the same judgement (``published_logo``). A raster logo
is published as it is when its first bytes say its type. An SVG is re-serialised from an allow-list
(``bot.model.svg_clean``): only drawing elements and their attributes, references only to ``#ids``
of the file, ``<style>`` kept with the rules and properties that cannot fetch; processing
instructions, comments, editor metadata, scripts, handlers, ``<image>``, ``@import``, escapes and
every ``url()`` to outside the file are dropped. So what is published cannot fetch or run anything,
opened directly or inside a page; the check refuses only what cannot be re-serialised (not XML, a
DOCTYPE or entity, another root) or is too big.
"""

from __future__ import annotations

import re

LOGO_LIMIT = 100 * 1024  # bytes, of the published file
# bytes read of an SVG: editors' metadata is dropped before the limit applies
SVG_SOURCE_LIMIT = 512 * 1024
# as the schema says
LOGO_NAME = re.compile(r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_./-]*\.(png|jpg|jpeg|webp|svg)")
_MAGIC = {"png": (b"\x89PNG\r\n\x1a\n",), "jpg": (b"\xff\xd8\xff",), "jpeg": (b"\xff\xd8\xff",)}


def source_limit(name: str) -> int:
    """How many bytes of the file ``name`` are read to judge it."""
    return SVG_SOURCE_LIMIT if name.lower().endswith(".svg") else LOGO_LIMIT


def published_logo(name: str, data: bytes) -> bytes | str:
    """The bytes published for the logo file ``name`` holding ``data``, or why it cannot be a
    logo."""
    if len(data) > source_limit(name):
        return f"the logo is {len(data):,} bytes; at most {LOGO_LIMIT:,} are published"
    kind = name.rsplit(".", 1)[-1].lower()
    if kind == "svg":
        from bot.model.svg_clean import SvgError, clean_svg  # XML parsing, only for an SVG logo

        try:
            data = clean_svg(data)
        except SvgError as exc:
            return str(exc)
        if len(data) > LOGO_LIMIT:
            return (
                f"the SVG is {len(data):,} bytes without its metadata; at most {LOGO_LIMIT:,} are "
                f"published"
            )
        return data
    if kind == "webp":
        ok = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    else:
        ok = data.startswith(_MAGIC.get(kind, (b"\0never",)))
    return (
        data if ok else f"the file's content is not {kind.upper()} (its first bytes say otherwise)"
    )


def logo_problem(name: str, data: bytes) -> str | None:
    """Why the file ``name`` with ``data`` cannot be a logo, or None when it can."""
    out = published_logo(name, data)
    return out if isinstance(out, str) else None
