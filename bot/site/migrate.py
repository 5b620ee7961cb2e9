"""Draft the presentation fields of existing entries from a partner list (``publish --draft-presentation``).

The list is JSON: an array of partners as a hand-written ecosystem page keeps them (docs/publish.md)::

    [{"name": "Apache Airflow", "entry": "airflow", "description": "...", "homepage": "https://...",
      "logo": "logos/airflow.svg", "categories": ["orchestrator"]}]

``entry`` is the registered name (else ``name`` is matched, case, ``-``, ``_`` and ``:`` folded); ``logo`` is a
file relative to the list. Each matched entry's ``registry.json`` is drafted with the fields added (what it
already says is kept) and its logo copied beside it, under the output folder: nothing in the repository is
written. A logo ``entry/logo`` would refuse is left out, with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.config import Config
from bot.logo import LOGO_LIMIT, logo_problem
from bot.registry import fold_name
from bot.sides import side_model
from bot.snapshot import Snapshot

FIELDS = ("display_name", "description", "homepage", "logo", "categories")


@dataclass
class Drafts:
    files: dict[str, bytes] = field(default_factory=dict)  # repository path -> content
    notes: list[str] = field(default_factory=list)  # partners not matched, logos left out


def draft_presentation(snapshot: Snapshot, config: Config, partners: Any, folder: Path) -> Drafts:
    """Drafted ``registry.json`` files (and logos) for the entries ``partners`` names."""
    if not isinstance(partners, list):
        raise ValueError("the partner list is a JSON array of objects")
    registry = side_model(snapshot, config).registry
    by_fold = {fold_name(name): entry for name, entry in registry.entries.items()}
    out = Drafts()
    for i, partner in enumerate(partners):
        if not isinstance(partner, dict) or not isinstance(partner.get("name"), str):
            out.notes.append(f"item {i}: not an object with a name")
            continue
        wanted = partner.get("entry") if isinstance(partner.get("entry"), str) else partner["name"]
        entry = by_fold.get(fold_name(str(wanted).replace(" ", "")))
        doc = registry.registry_doc(entry) if entry is not None else None
        if entry is None or doc is None:
            out.notes.append(f"{partner['name']}: no registered entry {wanted!r} with a readable registry.json "
                             "(register the name first)")
            continue
        fields: dict[str, Any] = {"display_name": partner["name"].strip()}
        for key in ("description", "homepage"):
            if isinstance(partner.get(key), str) and partner[key].strip():
                fields[key] = partner[key].strip()
        if isinstance(partner.get("categories"), list):
            fields["categories"] = sorted({str(c).strip().lower() for c in partner["categories"] if str(c).strip()})
        if isinstance(partner.get("logo"), str):
            source = folder / partner["logo"]
            name = "logo." + source.suffix.lower().lstrip(".")
            data = source.read_bytes() if source.is_file() and source.stat().st_size <= LOGO_LIMIT else None
            problem = "missing or over 100 KB" if data is None else logo_problem(name, data)
            if problem:
                out.notes.append(f"{partner['name']}: logo {partner['logo']} left out: {problem}")
            else:
                fields["logo"] = name
                out.files[f"{entry.folder}/{name}"] = data or b""
        merged = {**{k: v for k, v in fields.items() if k not in doc}, **doc}  # what the entry says wins
        ordered = {k: merged[k] for k in (*FIELDS, *doc) if k in merged}
        out.files[entry.registry_json] = (json.dumps(ordered, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return out
