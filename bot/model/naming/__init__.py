"""The naming library: dataset and job identifiers parsed, formatted and checked by the naming
files.

rules = load_rules()  # the project's own naming/ folder
rules = load_rules(snapshot, folder="spec/naming")
rules = rules_for(snapshot, config)  # the reviewed repo's folder if it has one, else bundled
rules.parse_dataset("postgres://db:5432", "shop.public.orders").components["table"]  # 'orders'
rules.format_dataset(
    "postgres", host="db", port="5432", database="shop", schema="public", table="orders"
).uri
"""

from __future__ import annotations

import functools
from pathlib import Path

from bot import bundled
from bot.core.config import Config
from bot.core.snapshot import DirSnapshot, Snapshot
from bot.model.naming.loader import BASE_FILE, Problem, read_folder
from bot.model.naming.model import FormatError, Identifier, ParseResult
from bot.model.naming.patterns import MATCH_TIMEOUT
from bot.model.naming.rules import NamingRules

__all__ = [
    "FormatError",
    "Identifier",
    "NamingRules",
    "ParseResult",
    "Problem",
    "bundled_folder",
    "load_rules",
    "rules_for",
]


def bundled_folder() -> Path:
    """The project's own ``naming/`` folder."""
    return bundled.path("naming")


def load_rules(snapshot: Snapshot | None = None, folder: str = "naming") -> NamingRules:
    """Naming rules from ``folder`` of ``snapshot``; the bundled ``naming/`` folder without a
    snapshot.

    Files that cannot be used are skipped and listed in ``rules.problems``.
    """
    if snapshot is None:
        return _bundled()
    return _load(snapshot, folder)


@functools.lru_cache(maxsize=1)
def _bundled() -> NamingRules:
    root = bundled_folder()
    return _load(
        DirSnapshot(root.parent, label="bundled", only=root.name), root.name, bounded=False
    )


def _load(snapshot: Snapshot, folder: str, bounded: bool = True) -> NamingRules:
    """``bounded``: the files may come from a pull request, so every match has a time limit (only
    the bundled files, shipped with the bot, use the unbounded fast path)."""
    files = read_folder(snapshot, folder)
    base_doc = files.docs.get(f"{folder.strip('/')}/{BASE_FILE}")
    base = (
        base_doc.value
        if base_doc is not None and isinstance(base_doc.value, dict)
        else _bundled_base()
    )
    rules = NamingRules(
        ((p, d.value) for p, d in files.docs.items()),
        folder=folder.strip("/"),
        base_schema=base,
        label=f"{snapshot.label}:{folder}",
        match_timeout=MATCH_TIMEOUT if bounded else None,
    )
    rules.problems = (*files.problems, *rules.problems)
    return rules


@functools.lru_cache(maxsize=1)
def _bundled_base() -> dict[str, object]:
    import json

    value: dict[str, object] = json.loads(
        (bundled_folder() / BASE_FILE).read_text(encoding="utf-8")
    )
    return value


def has_naming_files(snapshot: Snapshot, folder: str) -> bool:
    prefix = folder.strip("/")
    return any(
        p.endswith(".json") and ("/datasets/" in p or "/jobs/" in p) for p in snapshot.files(prefix)
    )


def rules_for(snapshot: Snapshot, config: Config, stated: bool = False) -> NamingRules:
    """The naming rules a reviewed repository states (``config.paths.naming``), else the bundled
    ones. ``stated``: the repository states its own (the base side of a change has naming files),
    so a side without any is judged without naming rules (every identifier unknown), not by the
    bundled ones, and its ``problems`` say so."""
    folder = config.paths.naming
    if has_naming_files(snapshot, folder):
        return load_rules(snapshot, folder)
    if not stated:
        return load_rules()
    rules = load_rules(snapshot, folder)
    rules.problems = (
        *rules.problems,
        Problem(
            "naming/invalid-file",
            folder.strip("/"),
            "",
            "holds no naming file (the base side has them; the change deletes them): judged "
            "without naming rules, not by the bot's bundled ones",
        ),
    )
    return rules
