"""Shared fixtures: the real corpus, copied to a temporary folder when a test changes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "openlineage"
PAYLOADS = SHARED / "github-payloads"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real OpenLineage repository data (read-only)."""
    if not CORPUS.is_dir():
        raise RuntimeError(f"the shared corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture
def corpus_copy(tmp_path: Path, corpus: Path) -> Path:
    """A writable copy of the corpus for tests that mutate it."""
    target = tmp_path / "openlineage"
    shutil.copytree(corpus, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    target.chmod(0o755)
    return target


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One real local SparkSession for the whole test run (two cores, no UI), stopped at the end."""
    from bot.regression.spark_job import start_session

    session = start_session("local[2]", app="registry-bot-tests", extra={"spark.driver.memory": "1g"})
    yield session
    session.stop()
