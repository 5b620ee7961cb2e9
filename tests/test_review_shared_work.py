"""A change review does work in proportion to the change: a file the change leaves alone is judged
once for both sides (``ReviewInput.memo``), while the judged verdict stays what it was."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bot.core.changes import ChangeSet
from bot.core.findings import State
from bot.core.jsonformat import format_json
from bot.core.snapshot import GitSnapshot
from bot.review.checks import format as format_check
from bot.review.engine import review
from bot.review.input import ReviewContext
from tests.gitrepo import Repo

ICEBERG = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"


def test_a_file_the_change_leaves_alone_is_laid_out_once(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    text = (repo.path / ICEBERG).read_text(encoding="utf-8")
    # out of prettier's layout: the change's own format finding, new
    repo.change({ICEBERG: text.replace('"type": "object"', '"type":   "object"', 1)})
    laid_out: Counter[str] = Counter()

    def counted(source: str, indent: int) -> str:
        laid_out[source] += 1
        return format_json(source, indent)

    monkeypatch.setattr(format_check, "format_json", counted)
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = review(
            head=head,
            base=base,
            changes=ChangeSet.from_git(repo.path, base.commit, head.commit),
            context=ReviewContext(),
        )
        others = [
            head.read(p).decode()  # type: ignore[union-attr]
            for p in head.files("spec/registry/iceberg")
            if p.endswith(".json") and p != ICEBERG
        ]
    assert others and all(laid_out[t] == 1 for t in others)
    # the edited file differs between the sides: laid out on each
    assert laid_out[text] == 1 and sum(laid_out.values()) == len(others) + 2
    [finding] = [f for f in report.findings if f.rule == "format/json"]
    assert finding.path == ICEBERG and finding.state is State.NEW
