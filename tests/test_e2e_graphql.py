"""GraphQL failing for a whole review, against the real processes: the review concludes through
REST.

Finding (issue 21): with the stand-in answering 502 to every GraphQL query, every attempt ended
"internal error" and the check run flipped completed -> in progress four times in 67 s. Now a
GraphQL query is retried once; then the job reads its files over REST.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.test_e2e_faults import repo, running

pytestmark = pytest.mark.e2e
__all__ = ["repo"]  # the module's fixture: the corpus with a broken entry on the ``pr`` branch


def test_graphql_answering_502_for_a_whole_review_concludes_through_rest(
    tmp_path: Path, repo: Path
) -> None:
    with running(tmp_path, repo) as service:
        service.faults([{"path": "/graphql", "status": 502, "count": 1000}])
        head = git(repo, "rev-parse", "pr")
        assert service.deliver("opened", head) == 202
        run = service.completed_run(head)
        state = service.summary_for(head)
    assert run["conclusion"] == "failure" and "internal error" not in run["title"]
    # the finding, read from files over REST
    assert [a["start_line"] for a in run["annotations"]] == [6]
    # concluded once, never reopened
    assert [r["status"] for r in run["requests"] if r["conclusion"]] == ["completed"]
    graphql = [h for h in state["fault_hits"] if h["path"] == "/graphql"]
    blobs = [
        r for r in state["requests"] if "/git/blobs/" in r["path"] or "/contents/" in r["path"]
    ]
    # one query and its retry; every later read of the job over REST
    assert len(graphql) == 2 and blobs
