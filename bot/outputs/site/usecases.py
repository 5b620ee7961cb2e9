"""The use cases of the published site: what each one is, read from ``<registry>/use-cases.json``.

The file maps a use case id (what ``use_cases`` in a ``registry.json`` names) to a title, a short
text and, optionally, the facets that serve it whatever the entries declare::

    {"lineage": {"title": "Data lineage", "description": "Which jobs read and write ...",
                 "facets": ["ol:core:ColumnLineageDatasetFacet.json"]}}

Without the file, the proposal's list is used (``PROPOSAL``), with a default mapping of core facets
to it (``CORE_FACETS``), so the use case pages list facets and their producers before any entry
declares one. Ids are compared as ``case_id`` writes them, so the proposal's ``"data quality"`` and
``"data-quality"`` are the same use case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.core.config import Config
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.presentation import case_id

__all__ = ["PROPOSAL", "UseCase", "case_id", "load_use_cases", "title_of"]

FILE = "use-cases.json"
MAX_BYTES, MAX_CASES, MAX_TEXT = 64 * 1024, 100, 1000


@dataclass(frozen=True)
class UseCase:
    title: str
    description: str
    facets: tuple[str, ...] = ()  # short URIs that serve it, besides what entries declare


PROPOSAL = {
    "privacy": UseCase(
        "Compliance with privacy laws (GDPR, CCPA, …)",
        "Knowing where personal data is stored, where it flows and who owns it, so that access and "
        "erasure requests can be answered and each use of personal data can be shown.",
    ),
    "bcbs-239": UseCase(
        "Compliance with banking regulation (BCBS 239)",
        "BCBS 239 asks banks to show how every risk figure is aggregated from its sources: lineage "
        "down to the column, ownership and data quality let a report trace a number back to where "
        "it came from.",
    ),
    "data-quality": UseCase(
        "Data reliability and data quality",
        "Assertions, metrics and test results recorded with each run, so that a consumer can tell "
        "whether a dataset met its expectations when it was produced, and find the run that broke "
        "it.",
    ),
    "catalog": UseCase(
        "Data discovery and data catalog",
        "Descriptions of datasets and jobs (schema, documentation, ownership, storage, tags) that "
        "a catalog indexes so people can find data and judge whether to use it.",
    ),
    "governance": UseCase(
        "Data governance",
        "Ownership, classification and lifecycle of datasets and jobs, so that policies can be "
        "applied to the data they are about and their application can be checked.",
    ),
    "lineage": UseCase(
        "Data lineage",
        "Which jobs read and write which datasets, down to the column, so that the impact of a "
        "change and the origin of a value can be traced across tools.",
    ),
}
# the proposal's use cases -> core facets that serve them (by what each facet records)
CORE_FACETS = {
    "privacy": (
        "ColumnLineageDatasetFacet",
        "OwnershipDatasetFacet",
        "TagsDatasetFacet",
        "TagsJobFacet",
        "SchemaDatasetFacet",
        "LifecycleStateChangeDatasetFacet",
        "StorageDatasetFacet",
    ),
    "bcbs-239": (
        "ColumnLineageDatasetFacet",
        "DataQualityAssertionsDatasetFacet",
        "DataQualityMetricsInputDatasetFacet",
        "OwnershipDatasetFacet",
        "OwnershipJobFacet",
        "DatasetVersionDatasetFacet",
        "ParentRunFacet",
        "SQLJobFacet",
    ),
    "data-quality": (
        "DataQualityAssertionsDatasetFacet",
        "DataQualityMetricsInputDatasetFacet",
        "DataQualityMetricsDatasetFacet",
        "InputStatisticsInputDatasetFacet",
        "OutputStatisticsOutputDatasetFacet",
        "ErrorMessageRunFacet",
        "ExtractionErrorRunFacet",
        "TestRunFacet",
        "NominalTimeRunFacet",
    ),
    "catalog": (
        "SchemaDatasetFacet",
        "DocumentationDatasetFacet",
        "DocumentationJobFacet",
        "DatasourceDatasetFacet",
        "CatalogDatasetFacet",
        "DatasetTypeDatasetFacet",
        "HierarchyDatasetFacet",
        "StorageDatasetFacet",
        "SymlinksDatasetFacet",
        "JobTypeJobFacet",
        "SourceCodeLocationJobFacet",
        "TagsDatasetFacet",
        "OwnershipDatasetFacet",
    ),
    "governance": (
        "OwnershipDatasetFacet",
        "OwnershipJobFacet",
        "TagsDatasetFacet",
        "TagsJobFacet",
        "TagsRunFacet",
        "LifecycleStateChangeDatasetFacet",
        "DatasetVersionDatasetFacet",
        "SourceCodeJobFacet",
        "SourceCodeLocationJobFacet",
    ),
    "lineage": (
        "ColumnLineageDatasetFacet",
        "LineageFacet",
        "ParentRunFacet",
        "SQLJobFacet",
        "SymlinksDatasetFacet",
        "DatasetVersionDatasetFacet",
        "JobDependenciesRunFacet",
        "ExternalQueryRunFacet",
        "ProcessingEngineRunFacet",
        "BaseSubsetDatasetFacet",
    ),
}
PROPOSAL = {
    case: UseCase(
        text.title, text.description, tuple(f"ol:core:{f}.json" for f in CORE_FACETS[case])
    )
    for case, text in PROPOSAL.items()
}


def load_use_cases(snapshot: Snapshot, config: Config) -> dict[str, UseCase]:
    """The registry's use cases, or the proposal's when the file is absent or not of the documented
    form."""
    path = f"{config.paths.registry.strip('/')}/{FILE}"
    try:
        size = snapshot.size(path)
        data = snapshot.read(path) if size is not None and size <= MAX_BYTES else None
        value = json.loads(data) if data is not None else None
    except (SnapshotError, ValueError):
        value = None
    out: dict[str, UseCase] = {}
    if isinstance(value, dict):
        for key, item in list(value.items())[:MAX_CASES]:
            if isinstance(item, dict) and isinstance(item.get("title"), str):
                text = item.get("description")
                facets = item.get("facets")
                listed = (
                    tuple(f for f in facets[:MAX_CASES] if isinstance(f, str))
                    if isinstance(facets, list)
                    else ()
                )
                out[case_id(key)] = UseCase(
                    item["title"][:200], text[:MAX_TEXT] if isinstance(text, str) else "", listed
                )
    return out or dict(PROPOSAL)


def title_of(cases: dict[str, UseCase], case: str) -> str:
    known = cases.get(case)
    return known.title if known else case
