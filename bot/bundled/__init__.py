"""The files the bot reads at run time besides its code: the registry's own format (``registry/``:
the JSON Schema of registry.json, the reference registry and the demo's pull request) and the naming
files (``naming/``).

They stay at the project's top level, where contributors edit them; ``bot/bundled/registry`` and
``bot/bundled/naming`` are symbolic links to them, so the package reads them from its own folder the
same way from a checkout, an editable install and an installed wheel (which carries copies:
setuptools follows the links when it collects the package data).
"""

from __future__ import annotations

from pathlib import Path


def path(*parts: str) -> Path:
    """The bundled file or folder ``parts`` (for example ``path("registry",
    "registry.schema.json")``)."""
    # resolved: in a checkout the links' targets, so folder walks that never follow links
    # (DirSnapshot) see them. The package's own folder, as ``importlib.resources.files`` gives it
    # for a package on disk (a checkout, an editable install, an installed wheel), without importing
    # importlib.resources (and zipfile) for it.
    return Path(__file__).parent.joinpath(*parts).resolve()
