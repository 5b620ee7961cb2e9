"""Shared pieces of the regression tests: a registry tree with sample events and naming files,
mutations."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.core.config import Config
from bot.core.snapshot import DirSnapshot
from bot.model.naming import bundled_folder
from bot.model.registry import Registry
from bot.review.regression.compare import Tally, run_records
from bot.review.regression.events import sample_records
from bot.review.regression.side import SideSpec

DATA = Path(__file__).resolve().parent / "data" / "regress"
COMPOSER = "spec/registry/gcp/composer"
SAMPLES = f"{COMPOSER}/samples"
JOB_FACET = f"{COMPOSER}/facets/GcpComposerJobFacet.json"
RUN_FACET = f"{COMPOSER}/facets/GcpComposerRunFacet.json"
NAMING = "spec/naming"
BIGQUERY_NAMING = f"{NAMING}/datasets/bigquery/bigquery.json"


def make_tree(corpus: Path, target: Path, wrong_key: bool = False) -> Path:
    """A writable copy of the real corpus whose gcp/composer entry ships sample events."""
    # the registry and the mirror; the events stay in the corpus
    for folder in ("spec", "website/static/spec"):
        shutil.copytree(corpus / folder, target / folder)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (target / SAMPLES).mkdir(parents=True)
    shutil.copy(DATA / "composer_events.jsonl", target / SAMPLES / "events.jsonl")
    if wrong_key:
        shutil.copy(DATA / "composer_wrong_key.json", target / SAMPLES / "wrong_key.json")
    # the project's naming files, as the reviewed repo's
    shutil.copytree(bundled_folder(), target / NAMING)
    return target


def edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc, indent=2))


def spec(root: Path, label: str) -> SideSpec:
    return SideSpec.build(DirSnapshot(root), Config(), label)


def run(base_root: Path, head_root: Path) -> Tally:
    """Single-process regression of the head tree's samples, base versus head."""
    head_snapshot = DirSnapshot(head_root)
    records = list(sample_records(head_snapshot, Registry(head_snapshot, Config())))
    return run_records(records, spec(base_root, "base"), spec(head_root, "head"))


def outcomes(tally: Tally, outcome: str) -> set[tuple[str, int, str, str]]:
    """(file name, event index, subject, rule) of every row with ``outcome``."""
    return {
        (Path(r.file).name, r.index, r.subject, r.rule) for r in tally.rows if r.outcome == outcome
    }
