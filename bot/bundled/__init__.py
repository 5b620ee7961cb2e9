"""The files the bot reads at run time besides its code: the registry's own format (``registry/``: the JSON
Schema of registry.json, the reference registry and the demo's pull request) and the naming files
(``naming/``).

They stay at the project's top level, where contributors edit them; ``bot/bundled/registry`` and
``bot/bundled/naming`` are symbolic links to them, so the package reads them through
``importlib.resources`` the same way from a checkout, an editable install and an installed wheel (which
carries copies: setuptools follows the links when it collects the package data).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def path(*parts: str) -> Path:
    """The bundled file or folder ``parts`` (for example ``path("registry", "registry.schema.json")``)."""
    # resolved: in a checkout the links' targets, so folder walks that never follow links (DirSnapshot) see them
    return Path(str(files(__name__).joinpath(*parts))).resolve()
