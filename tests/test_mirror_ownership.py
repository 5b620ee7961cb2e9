"""A change to the published mirror is approved by the mirror's base-side owners.

Before, a stranger's pull request adding ``website/static/spec/facets/9-9-9/<someone's facet>.json``
passed with no approval at all: the mirror is neither an entry nor a steering file. The mirror is
what openlineage.io publishes and what the version rules read as "published", so an entry's owner
publishing a copy of its own unbumped, incompatible edit must not pass on the entry owner's say
either: the version rules read the base side's mirror, and the mirror's owners approve the copy.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.core.changes import ChangeSet
from bot.core.findings import Report, State, Verdict
from bot.core.snapshot import GitSnapshot
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo
from tests.test_waivers import root_owner

FACET = "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json"
PUBLISHED = "website/static/spec/facets/{}/IcebergScanReportInputDatasetFacet.json"
RULE = "ownership/mirror-change"


def review(repo: Repo, author: str | None, approvers: frozenset[str] = frozenset()) -> Report:
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        return run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author=author,
                approvers=approvers,
            )
        )


def test_a_strangers_copy_of_a_future_version_needs_the_mirrors_owners(
    tmp_path: Path, corpus: Path
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    copy = (corpus / FACET).read_text().replace("1-0-1", "9-9-9")
    repo.change({PUBLISHED.format("9-9-9"): copy})
    report = review(repo, "stranger")
    [finding] = [f for f in report.findings if f.rule == RULE]
    assert finding.state is State.NEW and finding.owners == (root_owner(repo),)
    assert report.is_blocking(finding) and report.verdict is Verdict.FAILURE
    # the mirror's owners pass it; without an author or approvers (the command line) approval is
    # not checked, as for an entry's files, and a notice says so
    owner = root_owner(repo).removeprefix("@")
    assert not [f for f in review(repo, "stranger", frozenset({owner})).findings if f.rule == RULE]
    unchecked = {f.rule for f in review(repo, None).findings}
    assert RULE not in unchecked and "owners/approval-not-checked" in unchecked


def test_an_entry_owner_cannot_publish_its_own_unbumped_break(tmp_path: Path, corpus: Path) -> None:
    """The entry's owner makes an incompatible change without a bump and, in the same pull
    request, publishes the head as the copy of its (not yet released) version: the published-copy
    exemption reads the base's mirror, and the copy asks the mirror's owners."""
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    repo.write("spec/registry/iceberg/CODEOWNERS", "* @iceberg-dev\n")
    repo.delete(PUBLISHED.format("1-0-1"))  # 1-0-1 not released yet, as registry facets wait
    repo.commit("iceberg owns its entry; 1-0-1 unreleased", branch="main")
    data = json.loads((repo.path / FACET).read_text())
    definition = data["$defs"][next(iter(data["$defs"]))]
    body = definition["allOf"][1] if "allOf" in definition else definition
    body["required"] = [*body.get("required", []), "newRequiredField"]
    body.setdefault("properties", {})["newRequiredField"] = {"type": "string"}
    text = json.dumps(data, indent=2) + "\n"
    repo.change({FACET: text, PUBLISHED.format("1-0-1"): text})
    report = review(repo, "iceberg-dev")
    rules = {f.rule for f in report.findings if report.is_blocking(f)}
    assert {"versions/not-bumped", RULE} <= rules
    assert report.verdict is Verdict.FAILURE
