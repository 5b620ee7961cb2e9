"""A change that deletes a facet other entries consume: the consumers' sample events that carry it
are judged by the regression, base against head, like every entry's samples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bot.review.regression.compare import BROKEN
from tests.regress_helpers import SAMPLES, edit_json, make_tree, outcomes, run

DATAPROC = "spec/registry/gcp/dataproc"
LINEAGE = "spec/registry/gcp/lineage"  # consumes ol:gcp:dataproc:GcpDataprocRunFacet.json
URL = "https://openlineage.io/spec/facets/1-0-0/GcpDataprocRunFacet.json"
REFERENCES = {  # how a sample names the facet's schema
    "url": {"_schemaURL": f"{URL}#/$defs/GcpDataprocRunFacet"},
    "short uri": {"_schemaURL": "ol:gcp:dataproc:GcpDataprocRunFacet.json"},
}


def test_a_deleted_facets_consumers_samples_are_broken(corpus: Path, tmp_path: Path) -> None:
    """gcp:lineage really consumes gcp:dataproc's GcpDataprocRunFacet. Its sample events carrying
    `gcp_dataproc` pass at base; with the facet deleted (and dropped from dataproc's
    produced_facets) each is broken at head, whichever way it names the schema: the mirror's
    published copy is no registered facet of that side any more (its key is unknown), a short URI
    names nothing. Nothing to fix: this pins it."""
    base = make_tree(corpus, tmp_path / "base")
    [first] = (base / SAMPLES / "events.jsonl").read_text().splitlines()[:1]
    event = json.loads(first)
    lines = []
    for reference in REFERENCES.values():
        facet = {
            "_producer": "https://cloud.google.com/dataproc/docs/guides/lineage",
            **reference,
            "appId": "application_1",
            "appName": "daily_orders",
            "projectId": "my-project",
        }
        lines.append(
            json.dumps({**event, "run": {**event["run"], "facets": {"gcp_dataproc": facet}}})
        )
    (base / LINEAGE / "samples").mkdir()
    (base / LINEAGE / "samples" / "events.jsonl").write_text("\n".join(lines) + "\n")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / DATAPROC / "facets" / "GcpDataprocRunFacet.json").unlink()
    edit_json(head / DATAPROC / "registry.json", lambda d: d["producer"].update(produced_facets=[]))

    assert not outcomes(run(base, base), BROKEN)
    tally = run(base, head)
    broken = {
        (r.index, r.rule, r.head)
        for r in tally.rows
        if r.outcome == BROKEN and r.subject == "run.facets.gcp_dataproc"
    }
    assert {r.file for r in tally.rows if r.outcome == BROKEN} == {
        f"{LINEAGE}/samples/events.jsonl"
    }
    # the mirror's published copy still validates the facet named by its URL: its key is what is
    # lost; a short URI names nothing at head
    assert broken == {
        (0, "facet-key", "unknown"),
        (1, "facet-schema", "unknown"),
        (1, "facet-key", "unknown"),
    }
