"""Shared pieces of the regression tests: a registry tree with sample events, mutations, a naming stand-in."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.config import Config
from bot.registry import Registry
from bot.regression.compare import Tally, run_records
from bot.regression.events import sample_records
from bot.regression.side import SideSpec
from bot.snapshot import DirSnapshot, Snapshot

DATA = Path(__file__).resolve().parent / "data" / "regress"
COMPOSER = "spec/registry/gcp/composer"
SAMPLES = f"{COMPOSER}/samples"
JOB_FACET = f"{COMPOSER}/facets/GcpComposerJobFacet.json"
RUN_FACET = f"{COMPOSER}/facets/GcpComposerRunFacet.json"
NAMING = "spec/naming/standin.json"
STANDIN_RULES = {"bigquery": r"^[a-z][a-z0-9-]*\.[a-z_]+\.[a-z_]+$",
                 "composer": r"^[a-z_]+(\.[a-z_]+)?$"}


@dataclass(frozen=True)
class StandinResult:
    ok: bool
    source: str | None
    components: dict[str, str]
    reason: str


@dataclass(frozen=True)
class StandinNaming:
    """The shape of ``bot.naming.NamingRules`` (picklable): one name regex per namespace scheme."""

    rules: tuple[tuple[str, str], ...]

    def _parse(self, namespace: str, name: str) -> StandinResult:
        source = namespace.split("://", 1)[0]
        pattern = dict(self.rules).get(source)
        if pattern is None:
            return StandinResult(False, None, {}, f"no naming rule for {source!r}")
        if re.fullmatch(pattern, name):
            return StandinResult(True, source, {"name": name}, "")
        return StandinResult(False, source, {}, f"{name!r} does not match {pattern}")

    def parse_dataset(self, namespace: str, name: str) -> StandinResult:
        return self._parse(namespace, name)

    def parse_job(self, namespace: str, name: str, kind: str | None = None) -> StandinResult:
        return self._parse(namespace, name)


def standin_naming(snapshot: Snapshot, config: Config) -> StandinNaming | None:
    data = snapshot.read(NAMING)
    return None if data is None else StandinNaming(tuple(sorted(json.loads(data).items())))


def make_tree(corpus: Path, target: Path, wrong_key: bool = False) -> Path:
    """A writable copy of the real corpus whose gcp/composer entry ships sample events."""
    for folder in ("spec", "website/static/spec"):  # the registry and the mirror; the events stay in the corpus
        shutil.copytree(corpus / folder, target / folder)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (target / SAMPLES).mkdir(parents=True)
    shutil.copy(DATA / "composer_events.jsonl", target / SAMPLES / "events.jsonl")
    if wrong_key:
        shutil.copy(DATA / "composer_wrong_key.json", target / SAMPLES / "wrong_key.json")
    (target / NAMING).parent.mkdir(parents=True, exist_ok=True)
    (target / NAMING).write_text(json.dumps(STANDIN_RULES))
    return target


def edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc, indent=2))


def spec(root: Path, label: str) -> SideSpec:
    return SideSpec.build(DirSnapshot(root), Config(), label, naming=standin_naming)


def run(base_root: Path, head_root: Path) -> Tally:
    """Single-process regression of the head tree's samples, base versus head."""
    head_snapshot = DirSnapshot(head_root)
    records = list(sample_records(head_snapshot, Registry(head_snapshot, Config())))
    return run_records(records, spec(base_root, "base"), spec(head_root, "head"))


def outcomes(tally: Tally, outcome: str) -> set[tuple[str, int, str, str]]:
    """(file name, event index, subject, rule) of every row with ``outcome``."""
    return {(Path(r.file).name, r.index, r.subject, r.rule) for r in tally.rows if r.outcome == outcome}
