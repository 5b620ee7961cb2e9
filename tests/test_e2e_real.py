"""End to end with the real checks: gunicorn, the worker and the stand-in GitHub as real processes.

The repository is the real corpus; the pull request (``pr``) changes the registry entry
``gcp:dataproc`` with real mistakes: its registry.json names a facet file that does not exist, a new
facet's key lacks the registered prefix, and that facet's example has a type error three levels
deep. ``fix`` corrects all three. The entry is owned (root CODEOWNERS, base side) by
``@OpenLineage/committers``; the author is not a member, ``carol`` is (the stand-in answers GitHub's
team membership endpoint). Expected lines are read from the files. The worker runs the default
checks and, as the regression, the fake stage of ``tests/fakes.py`` (``--regression-module``), so
that the regression's path through ``main()`` is real too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import Repo, git
from tests.test_e2e import Service

pytestmark = pytest.mark.e2e

FOLDER = "spec/registry/gcp/dataproc"
REGISTRY_JSON = f"{FOLDER}/registry.json"
FACET = f"{FOLDER}/facets/GcpDataprocJobFacet.json"
EXAMPLE = f"{FOLDER}/facets/examples/GcpDataprocJobFacet/1.json"
# the published copy of a new version
MIRROR = "website/static/spec/facets/1-0-0/GcpDataprocJobFacet.json"
MISSING = "ol:gcp:dataproc:GcpDataprocMissingFacet.json"
TEAM = "OpenLineage/committers"
AUTHOR, MEMBER = "contributor", "carol"
# default checks; regression on, with the fake stage
WORKER = ("--regression-module", "tests.fakes")
STANDIN = ("--author", AUTHOR, "--team-member", f"{TEAM}={MEMBER}")
# the entry's owners, and the mirror's (the root CODEOWNERS: the same team here)
APPROVALS = ("owners/approval-required", "ownership/mirror-change")


def facet(key: str) -> str:
    return _json(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://openlineage.io/spec/facets/1-0-0/GcpDataprocJobFacet.json",
            "$defs": {
                "GcpDataprocJobFacet": {
                    "allOf": [
                        {
                            "$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobFacet"
                        },
                        {
                            "type": "object",
                            "required": ["cluster"],
                            "properties": {
                                "cluster": {
                                    "type": "object",
                                    "properties": {
                                        "config": {
                                            "type": "object",
                                            "properties": {
                                                "workerCount": {
                                                    "description": "Number of primary workers.",
                                                    "type": "integer",
                                                }
                                            },
                                        }
                                    },
                                }
                            },
                        },
                    ],
                    "type": "object",
                }
            },
            "type": "object",
            "properties": {key: {"$ref": "#/$defs/GcpDataprocJobFacet"}},
        }
    )


def example(key: str, workers: object) -> str:
    return _json(
        {
            key: {
                "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/spark",
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/GcpDataprocJobFacet.json#/$defs/GcpDataprocJobFacet",
                "cluster": {"config": {"workerCount": workers}},
            }
        }
    )


def registry_json(corpus: Path, *extra: str) -> str:
    data = json.loads((corpus / REGISTRY_JSON).read_text(encoding="utf-8"))
    data["producer"]["produced_facets"] += ["ol:gcp:dataproc:GcpDataprocJobFacet.json", *extra]
    return _json(data)


def _json(value: object) -> str:
    return json.dumps(value, indent=2) + "\n"


def broken_files(corpus: Path) -> dict[str, str]:
    return {
        REGISTRY_JSON: registry_json(corpus, MISSING),
        FACET: facet("dataprocJob"),
        MIRROR: facet("dataprocJob"),
        EXAMPLE: example("dataprocJob", "three"),
    }


def fixed_files(corpus: Path) -> dict[str, str]:
    key = "gcp_dataproc_job"
    return {
        REGISTRY_JSON: registry_json(corpus),
        FACET: facet(key),
        MIRROR: facet(key),
        EXAMPLE: example(key, 3),
    }


def build_repo(corpus: Path, target: Path) -> Repo:
    """``main``: the corpus; ``pr``: the broken change; ``fix``: ``pr`` plus a commit fixing it."""
    repo = Repo.from_folder(corpus, target)
    repo.change(broken_files(corpus), "gcp:dataproc: add GcpDataprocJobFacet")
    for path, text in fixed_files(corpus).items():
        repo.write(path, text)
    repo.commit("gcp:dataproc: fix the facet key, the example and the facet list", branch="fix")
    return repo


def line_of(repo: Path, rev: str, path: str, needle: str) -> int:
    """The 1-based line of ``path`` at ``rev`` holding ``needle`` (exactly one line must)."""
    lines = [
        n
        for n, text in enumerate(git(repo, "show", f"{rev}:{path}").splitlines(), start=1)
        if needle in text
    ]
    assert len(lines) == 1, f"{needle!r} is on lines {lines} of {path}"
    return lines[0]


def expected_errors(repo: Path) -> set[tuple[str, int, str]]:
    """(path, line, rule) of each mistake of ``pr``, on the line of the offending value or key."""
    return {
        (REGISTRY_JSON, line_of(repo, "pr", REGISTRY_JSON, MISSING), "uris/unresolved"),
        (FACET, line_of(repo, "pr", FACET, '"dataprocJob"'), "facets/prefix-key"),
        (EXAMPLE, line_of(repo, "pr", EXAMPLE, '"workerCount": "three"'), "examples/invalid"),
    }


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    return build_repo(corpus, tmp_path_factory.mktemp("e2e-real") / "repo").path


@pytest.fixture
def service(git_repo: Path, tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path, worker_args=WORKER, standin_args=STANDIN)
    try:
        svc.start(git_repo)
        yield svc
    finally:
        svc.close()


def errors(run: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [
        (a["path"], a["start_line"], a["title"])
        for a in run["annotations"]
        if a["level"] == "failure"
    ]


def summaries(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in state["issue_comments"] if "registry-bot:summary" in c["body"]]


def test_real_checks_annotate_the_mistakes_and_an_owner_team_approval_plus_the_fix_turn_it_green(
    service: Service, git_repo: Path
) -> None:
    head = git(git_repo, "rev-parse", "pr")
    assert service.deliver("opened", head) == 202
    run = service.completed_run(head)
    assert run["conclusion"] == "failure"
    mistakes = expected_errors(git_repo)
    approval = [e for e in errors(run) if e[2] in APPROVALS]
    assert set(errors(run)) - set(approval) == mistakes and len(errors(run)) == len(mistakes) + 2
    # the entry's first changed file; the published copy, which the mirror's owners approve
    assert sorted((a[2], a[0]) for a in approval) == sorted(
        zip(APPROVALS, (FACET, MIRROR), strict=True)
    )
    assert f"@{TEAM}" in run["summary"] and "Approvals needed" in run["summary"]
    # the regression stage ran in the worker: its section and its finding
    assert "### Regression" in run["summary"] and "| fake-stage |" in run["summary"]
    assert (REGISTRY_JSON, 1, "warning") in {
        (a["path"], a["start_line"], a["level"]) for a in run["annotations"]
    }

    state = service.summary_for(head)
    [review] = state["reviews"]
    assert review["state"] == "CHANGES_REQUESTED" and review["commit_id"] == head
    inline = {(c["path"], c["line"]) for c in review["comments"]}
    assert {(path, line) for path, line, _ in mistakes} <= inline
    [summary] = summaries(state)
    assert "failed" in summary["body"] and "examples/invalid" in summary["body"]

    service.approve(MEMBER)  # a member of the owning team approves
    fixed = service.push("fix")
    assert service.deliver("synchronize", fixed) == 202
    run = service.completed_run(fixed)
    assert run["conclusion"] == "success" and errors(run) == []
    state = service.summary_for(fixed)
    assert [s["id"] for s in summaries(state)] == [summary["id"]]  # the same comment, edited
    [edited] = summaries(state)
    assert "passed" in edited["body"] and edited["history"] and "failed" in edited["history"][-1]
    bot_reviews = {r["id"]: r for r in state["reviews"] if r["user"] == "registry-bot[bot]"}
    assert bot_reviews[review["id"]]["state"] == "DISMISSED"
    assert [r["state"] for r in state["reviews"] if r["user"] == MEMBER] == ["APPROVED"]
    lookups = {(r["path"], r["status"]) for r in state["requests"] if "/memberships/" in r["path"]}
    assert (f"/orgs/{TEAM.replace('/', '/teams/')}/memberships/{MEMBER}", 200) in lookups
    assert all(r["status"] == "completed" for r in state["check_runs"])


def test_without_the_members_permission_the_fix_still_waits_for_an_owner(
    service: Service, git_repo: Path
) -> None:
    service.faults(
        [
            {
                "path": "/orgs/*",
                "status": 403,
                "count": 100,
                "message": "Resource not accessible by integration",
            }
        ]
    )
    service.approve(MEMBER)
    fixed = service.push("fix")
    assert service.deliver("opened", fixed) == 202
    run = service.completed_run(fixed)
    assert run["conclusion"] == "failure"
    assert sorted(e[2] for e in errors(run)) == sorted(APPROVALS)
    assert (
        "Team membership could not be verified" in run["summary"]
        and "Members: read" in run["summary"]
    )
    [summary] = summaries(service.summary_for(fixed))
    assert "Team membership could not be verified" in summary["body"]
