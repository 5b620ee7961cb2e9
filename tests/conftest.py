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


REGISTRY_ENTRY = "spec/registry/gcp/lineage/registry.json"


@pytest.fixture(scope="session")
def corpus_pr_repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """The corpus as a git repository (``main``) with a pull request branch ``pr`` that edits a registry
    entry, adds an entry and deletes a facet file. Shared: clone it before committing to it."""
    from tests.gitrepo import Repo

    made = Repo.from_folder(corpus, tmp_path_factory.mktemp("corpus-pr") / "openlineage")
    made.change({"spec/registry/acme/registry.json": '{"producer": {}}\n',
                 "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json": None})
    made.edit_json(REGISTRY_ENTRY, lambda data: data["consumer"].update(consumed_facets=["ol:gcp:lineage:X.json"]))
    made.commit("edit the entry")
    return made.path


@pytest.fixture
def fake_github():  # type: ignore[no-untyped-def]
    """The one shared fake of ``GitHubAPI`` (see ``tests/fakes.py``)."""
    from tests.fakes import FakeGitHub

    return FakeGitHub()
