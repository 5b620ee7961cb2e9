"""The published mirror's facet schemas (``paths.mirror``/``facets/<M-R-A>/<File>.json``): which
versions of each file openlineage.io serves. One index for the checks (``versions/*``,
``examples/*``) and ``publish``, which serves every file listed here under its URL."""

from __future__ import annotations

import re

from bot.core.config import Paths
from bot.core.snapshot import Snapshot

VERSION = re.compile(r"\d+-\d+-\d+")
# a file name a schema URL can name (``publish`` serves it under that name, never renamed)
FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.json")


def facet_versions(snapshot: Snapshot, paths: Paths) -> dict[str, dict[str, str]]:
    """File name -> {version -> its path in the mirror}, in the snapshot's order."""
    root = paths.mirrored("facets/")
    out: dict[str, dict[str, str]] = {}
    for path in snapshot.files(paths.mirrored("facets")):
        parts = path[len(root) :].split("/")
        if len(parts) == 2 and VERSION.fullmatch(parts[0]) and FILE.fullmatch(parts[1]):
            out.setdefault(parts[1], {})[parts[0]] = path
    return out
