"""The conformance check itself (tests/conformance.py): it catches what GitHub's description does not allow
(so the end-to-end suite's check, run on every ``Service.close``, can fail), and the GraphQL documents built
into ``bot/app`` validate against GitHub's published schema."""

from __future__ import annotations

import pytest

from bot.github import client as github_client
from bot.github import graphql_reads, required_checks
from tests import conformance


@pytest.mark.parametrize("document", [
    required_checks.QUERY,
    github_client.ENABLE_AUTO_MERGE,
    graphql_reads.objects_query([("oid", "a" * 40), ("expression", "main:spec")])[0],
    graphql_reads.objects_query([("expression", "main:spec")], trees=True)[0],
])
def test_the_bots_graphql_documents_validate_against_githubs_schema(document: str) -> None:
    assert conformance.check([{"method": "POST", "path": "/graphql", "json": {"query": document}}]) == []


def test_what_github_does_not_allow_is_caught() -> None:
    drift = conformance.check([
        {"method": "GET", "path": "/repos/o/r/nonsense"},
        {"method": "GET", "path": "/repos/o/r/pulls/7", "query": {"per_page": "100"}},
        {"method": "POST", "path": "/repos/o/r/check-runs", "json": {"name": "x", "head_sha": "a", "status": "bogus"}},
        {"method": "POST", "path": "/graphql", "json": {"query": "{ viewer { nope } }"}},
    ])
    assert drift == [
        "GET /repos/o/r/nonsense: no such operation",
        "GET /repos/{owner}/{repo}/pulls/{pull_number}: query parameter 'per_page' is not declared",
        "POST /repos/{owner}/{repo}/check-runs: body: 'bogus' is not one of ['queued', 'in_progress', 'completed'] "
        "at ['status']",
        "GraphQL: Cannot query field 'nope' on type 'User'. Did you mean 'name'?",
    ]


def test_a_conforming_request_and_the_stand_ins_own_pass() -> None:
    assert conformance.check([
        {"method": "GET", "path": "/repos/o/r/contents/spec/registry/a/registry.json", "query": {"ref": "main"}},
        {"method": "PATCH", "path": "/repos/o/r/check-runs/5", "json": {"status": "completed", "conclusion": "success",
                                                                        "output": {"title": "t", "summary": "s"}}},
        {"method": "GET", "path": "/_standin/state"},
    ]) == []
