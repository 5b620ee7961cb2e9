"""Draft the presentation fields of existing entries from a partner list (``publish
--draft-presentation``).

More in docs/module-notes.md (bot/outputs/site/migrate.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.config import Config
from bot.core.snapshot import Snapshot
from bot.model.logo import logo_problem, source_limit
from bot.model.registry import Entry, fold_name
from bot.model.sides import side_model

FIELDS = ("display_name", "description", "homepage", "logo", "categories", "organization")
_TS_KEY = re.compile(r"(?m)^(\s*)([A-Za-z_]\w*)\s*:")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass
class Drafts:
    files: dict[str, bytes] = field(default_factory=dict)  # repository path -> content
    # partners not placed, roles missing, logos left out
    notes: list[str] = field(default_factory=list)
    placed: dict[str, list[str]] = field(default_factory=dict)  # partner -> entries drafted


def read_partner_list(path: Path) -> list[dict[str, Any]]:
    """The partners of a JSON file or of a TypeScript ``Array<Partner>`` literal, each with its
    ``role`` when the file's name says it."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".ts", ".tsx", ".js"):
        start, end = text.find("[", text.find("=")), text.rfind("]")
        if start < 0 or end < start:
            raise ValueError("no array literal (`= [ ... ]`) in the file")
        text = _TRAILING_COMMA.sub(r"\1", _TS_KEY.sub(r'\1"\2":', text[start : end + 1]))
    value = json.loads(text)
    if not isinstance(value, list):
        raise ValueError("the partner list is an array of objects")
    role = next((r for r in ("producer", "consumer") if r in path.stem.lower()), None)
    return [{**({"role": role} if role else {}), **p} if isinstance(p, dict) else p for p in value]


def draft_presentation(
    snapshot: Snapshot,
    config: Config,
    partners: Any,
    folder: Path,
    mapping: dict[str, list[str]] | None = None,
) -> Drafts:
    """Drafted ``registry.json`` files (and logos) for the entries ``partners`` place."""
    if not isinstance(partners, list):
        raise ValueError("the partner list is a JSON array of objects")
    registry = side_model(snapshot, config).registry
    by_fold = {fold_name(name): entry for name, entry in registry.entries.items()}
    by_org = {fold_name(org.replace(" ", "")): names for org, names in (mapping or {}).items()}
    out = Drafts()
    # entry -> fields, merged over partners (a product listed twice)
    drafted: dict[str, dict[str, Any]] = {}
    for i, partner in enumerate(partners):
        name = _first(partner, "full_name", "name", "org") if isinstance(partner, dict) else None
        if not isinstance(partner, dict) or name is None:
            out.notes.append(f"item {i}: not an object with a name")
            continue
        wanted = _wanted(partner, name, by_org)
        entries = [by_fold.get(fold_name(w.replace(" ", ""))) for w in wanted]
        placed = [e for e in entries if e is not None and registry.registry_doc(e) is not None]
        if not placed:
            out.notes.append(
                f"{name}: no registered entry {', '.join(map(repr, wanted))} with a readable "
                "registry.json (register the name first, or map the partner with --entries)"
            )
            continue
        out.placed[name] = [e.name for e in placed]
        org = _first(partner, "org", "name", "full_name") or name
        for entry in placed:
            fields = drafted.setdefault(entry.name, {})
            _fields(partner, name, org, len(placed) == 1, fields)
            doc = registry.registry_doc(entry) or {}
            role = partner.get("role")
            if role in ("producer", "consumer") and not isinstance(doc.get(role), dict):
                out.notes.append(f"{name}: listed as {role}, but {entry.name} has no {role} block")
            logo = _first(partner, "logo", "image")
            if logo is not None and "logo" not in fields:
                _logo(entry, name, logo, folder, fields, out)
    for entry_name, fields in drafted.items():
        entry = registry.entries[entry_name]
        doc = registry.registry_doc(entry) or {}
        # what the entry says wins
        merged = {**{k: v for k, v in fields.items() if k not in doc}, **doc}
        ordered = {k: merged[k] for k in (*FIELDS, *doc) if k in merged}
        out.files[entry.registry_json] = (
            json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"
        ).encode("utf-8")
    return out


def _first(partner: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` that holds non-blank text, stripped."""
    return next(
        (
            partner[k].strip()
            for k in keys
            if isinstance(partner.get(k), str) and partner[k].strip()
        ),
        None,
    )


def _wanted(partner: dict[str, Any], name: str, by_org: dict[str, list[str]]) -> list[str]:
    """The registered names a partner places: the mapping's, else its ``entry``, else its own
    names."""
    for key in ("org", "full_name", "name"):
        mapped = by_org.get(fold_name(str(partner.get(key) or "").replace(" ", "")))
        if mapped:
            return [str(m) for m in mapped]
    if isinstance(partner.get("entry"), str):
        return [partner["entry"]]
    return list(dict.fromkeys(n for n in (name, _first(partner, "org")) if n))


def _fields(
    partner: dict[str, Any], name: str, org: str, alone: bool, fields: dict[str, Any]
) -> None:
    if alone:
        fields.setdefault("display_name", name[:80])
    if description := _first(partner, "description"):
        fields.setdefault("description", description[:500])
    homepage = _first(partner, "homepage", "org_url")
    if homepage and homepage.startswith("https://"):
        fields.setdefault("homepage", homepage)
    if isinstance(partner.get("categories"), list):
        fields.setdefault(
            "categories",
            sorted({str(c).strip().lower() for c in partner["categories"] if str(c).strip()}),
        )
    organization: dict[str, Any] = {"name": org[:80]}
    org_url = _first(partner, "org_url", "homepage")
    if org_url and org_url.startswith("https://"):
        organization["homepage"] = org_url
    fields.setdefault("organization", organization)


def _logo(
    entry: Entry, name: str, logo: str, folder: Path, fields: dict[str, Any], out: Drafts
) -> None:
    # the site keeps static/img
    places = (folder / logo, folder / "img" / logo, folder.parent / "img" / logo)
    source = next((p for p in places if p.is_file()), folder / logo)
    target = "logo." + source.suffix.lower().lstrip(".")
    data = (
        source.read_bytes()
        if source.is_file() and source.stat().st_size <= source_limit(target)
        else None
    )
    problem = "missing or too big" if data is None else logo_problem(target, data)
    if problem:
        out.notes.append(f"{name}: logo {logo} left out: {problem}")
        return
    fields["logo"] = target
    out.files[f"{entry.folder}/{target}"] = data or b""
