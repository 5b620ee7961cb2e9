"""The stand-in's ``POST /graphql``: the part of GitHub's GraphQL schema the bot queries, executed
by graphql-core.

``repository(owner, name) { object(expression: "REV:PATH") { ... } }`` with ``Blob`` (``oid``,
``byteSize``, ``isBinary``, ``isTruncated``, ``text``) and ``Tree`` (``entries { name mode type oid
}``), as on GitHub. Real parsing, validation and execution: a query the stand-in accepts is one
GitHub's schema accepts too (for these fields), aliases and variables included. Like GitHub,
``text`` is null for a binary blob (git's test: a NUL byte in the first 8,000 bytes) and cut at
``text_limit`` bytes with ``isTruncated`` set; bytes that are not UTF-8 come back replaced, so only
``byteSize`` tells. A ``Commit`` has its ``statusCheckRollup`` (the newest check run of each name
and the latest commit status of each context, ``CheckRun`` and ``StatusContext``,
``isRequired(pullRequestNumber)`` from the branch protection, for the one pull request served), and
``enablePullRequestAutoMerge`` and ``disablePullRequestAutoMerge`` are the mutations.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Any

from graphql import GraphQLError, OperationType, build_schema, graphql_sync, parse
from graphql.error import GraphQLSyntaxError

SDL = """
scalar GitObjectID

type Query {
  repository(owner: String!, name: String!): Repository
}

type Mutation {
  enablePullRequestAutoMerge(input: EnablePullRequestAutoMergeInput!): EnablePullRequestAutoMergePayload
  disablePullRequestAutoMerge(input: DisablePullRequestAutoMergeInput!): DisablePullRequestAutoMergePayload
}

enum PullRequestMergeMethod { MERGE SQUASH REBASE }

input EnablePullRequestAutoMergeInput {
  pullRequestId: ID!
  expectedHeadOid: GitObjectID
  mergeMethod: PullRequestMergeMethod
  clientMutationId: String
}

type EnablePullRequestAutoMergePayload {
  clientMutationId: String
  pullRequest: PullRequest
}

input DisablePullRequestAutoMergeInput {
  pullRequestId: ID!
  clientMutationId: String
}

type DisablePullRequestAutoMergePayload {
  actor: Actor
  clientMutationId: String
  pullRequest: PullRequest
}

interface Actor {
  login: String!
}

type Bot implements Actor {
  login: String!
}

type PullRequest {
  id: ID!
  number: Int!
}

type Repository {
  nameWithOwner: String!
  object(expression: String, oid: GitObjectID): GitObject
}

interface GitObject {
  oid: GitObjectID!
  abbreviatedOid: String!
}

type Blob implements GitObject {
  oid: GitObjectID!
  abbreviatedOid: String!
  byteSize: Int!
  isBinary: Boolean
  isTruncated: Boolean!
  text: String
}

type Tree implements GitObject {
  oid: GitObjectID!
  abbreviatedOid: String!
  entries: [TreeEntry!]
}

type TreeEntry {
  name: String!
  path: String
  mode: Int!
  type: String!
  oid: GitObjectID!
}

type Commit implements GitObject {
  oid: GitObjectID!
  abbreviatedOid: String!
  statusCheckRollup: StatusCheckRollup
}

type StatusCheckRollup {
  contexts(first: Int, after: String): StatusCheckRollupContextConnection!
}

type StatusCheckRollupContextConnection {
  totalCount: Int!
  nodes: [StatusCheckRollupContext]
}

union StatusCheckRollupContext = CheckRun | StatusContext

enum CheckStatusState { REQUESTED QUEUED IN_PROGRESS COMPLETED WAITING PENDING }
enum CheckConclusionState { ACTION_REQUIRED TIMED_OUT CANCELLED FAILURE SUCCESS NEUTRAL SKIPPED STALE STARTUP_FAILURE }
enum StatusState { EXPECTED ERROR FAILURE PENDING SUCCESS }

type CheckRun {
  name: String!
  status: CheckStatusState!
  conclusion: CheckConclusionState
  isRequired(pullRequestId: ID, pullRequestNumber: Int): Boolean!
}

type StatusContext {
  context: String!
  state: StatusState!
  isRequired(pullRequestId: ID, pullRequestNumber: Int): Boolean!
}
"""  # noqa: E501

SCHEMA = build_schema(SDL)
TEXT_LIMIT = 512 * 1024  # the stand-in's cut for ``text``; the bot reads a truncated blob over REST


def is_mutation(source: str) -> bool:
    """Whether a GraphQL request body holds a mutation (a write) rather than a query."""
    import json

    try:
        query = json.loads(source).get("query", "")
        document = parse(query)
    except (ValueError, AttributeError, TypeError, GraphQLSyntaxError):
        return False
    return any(
        getattr(d, "operation", None) is OperationType.MUTATION for d in document.definitions
    )


@dataclass
class GitObjects:
    """Objects of one repository read through one ``git cat-file --batch`` process per request."""

    repo_path: str
    text_limit: int = TEXT_LIMIT
    _proc: subprocess.Popen[bytes] | None = None
    _cache: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    def lookup(self, expression: str) -> dict[str, Any] | None:
        if not expression or "\n" in expression or expression.startswith("-"):
            return None
        if expression not in self._cache:
            self._cache[expression] = self._read(expression)
        return self._cache[expression]

    def _read(self, expression: str) -> dict[str, Any] | None:
        if self._proc is None:
            self._proc = subprocess.Popen(
                ["git", "-C", self.repo_path, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(expression.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode().split()
        if len(header) != 3:  # "<expression> missing" or "ambiguous"
            return None
        oid, kind, size = header[0], header[1], int(header[2])
        data = self._proc.stdout.read(size + 1)[:size]
        found: dict[str, Any] = {
            "__typename": kind.capitalize(),
            "oid": oid,
            "abbreviatedOid": oid[:7],
        }
        if kind == "blob":
            binary = b"\x00" in data[:8000]
            found.update(
                byteSize=size,
                isBinary=binary,
                isTruncated=not binary and size > self.text_limit,
                text=None if binary else data[: self.text_limit].decode("utf-8", "replace"),
            )
        elif kind == "tree":
            found["entries"] = _tree_entries(data)
        return found

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait(timeout=10)
            if self._proc.stdout:
                self._proc.stdout.close()
            self._proc = None


def _tree_entries(data: bytes) -> list[dict[str, Any]]:
    """A raw git tree object as GitHub's ``TreeEntry`` list."""
    entries = []
    i = 0
    while i < len(data):
        space = data.index(b" ", i)
        nul = data.index(b"\x00", space)
        mode = int(data[i:space].decode(), 8)
        name = data[space + 1 : nul].decode("utf-8", "replace")
        oid = data[nul + 1 : nul + 21].hex()
        kind = {0o040000: "tree", 0o160000: "commit"}.get(mode, "blob")
        entries.append({"name": name, "path": name, "mode": mode, "type": kind, "oid": oid})
        i = nul + 21
    return entries


def execute(
    body: Any,
    repo: str,
    repo_path: str,
    text_limit: int = TEXT_LIMIT,
    mutations: dict[str, Any] | None = None,
    checks: Any = None,
) -> dict[str, Any]:
    """Run one GraphQL request (``{"query", "variables", "operationName"}``) against ``repo``;
    ``mutations``: the resolvers of the ``Mutation`` fields (a resolver's ``GitHubError`` becomes a
    GraphQL error, as on GitHub); ``checks``: the pull request whose commits' ``statusCheckRollup``
    is served (``LocalGitHub``), if any."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        return {
            "errors": [{"message": "A query attribute must be specified and must be a string."}]
        }
    objects = GitObjects(repo_path, text_limit)

    def repository(_info: Any, owner: str, name: str) -> dict[str, Any]:
        if f"{owner}/{name}".casefold() != repo.casefold():
            raise GraphQLError(
                f"Could not resolve to a Repository with the name '{owner}/{name}'.",
                extensions={"type": "NOT_FOUND"},
            )
        return {
            "nameWithOwner": repo,
            "object": lambda info, expression=None, oid=None: with_rollup(
                objects.lookup(expression or oid or ""), checks
            ),
        }

    try:
        result = graphql_sync(
            SCHEMA,
            body["query"],
            root_value={"repository": repository, **(mutations or {})},
            variable_values=body.get("variables") or None,
            operation_name=body.get("operationName"),
            type_resolver=lambda value, *_: value["__typename"],
        )
    finally:
        objects.close()
    out: dict[str, Any] = {"data": result.data}
    if result.errors:
        out["errors"] = [e.formatted for e in result.errors]
    return out


def with_rollup(found: dict[str, Any] | None, checks: Any) -> dict[str, Any] | None:
    """A commit with its ``statusCheckRollup`` (null when nothing reported, as on GitHub);
    ``isRequired`` is true only for the pull request the stand-in serves, into its protected base
    branch."""
    if found is None or found["__typename"] != "Commit" or checks is None:
        return found
    nodes = checks.rollup_contexts(found["oid"])
    for node in nodes:
        required = node.pop("isRequired")
        node["isRequired"] = (
            lambda _info, pullRequestNumber=None, pullRequestId=None, required=required: (
                required and (pullRequestNumber == checks.number or pullRequestId == checks.node_id)
            )
        )
    return {
        **found,
        "statusCheckRollup": {
            "contexts": lambda _info, first=None, after=None: {
                "totalCount": len(nodes),
                "nodes": nodes[:first] if first is not None else nodes,
            }
        }
        if nodes
        else None,
    }


def automerge_mutations(local: Any) -> dict[str, Any]:
    """``enablePullRequestAutoMerge`` and ``disablePullRequestAutoMerge`` over ``LocalGitHub`` (its
    rules: clean status refused, closed refused)."""
    from bot.github.api import GitHubError

    def enable(_info: Any, input: dict[str, Any]) -> dict[str, Any]:
        try:
            local.enable_auto_merge(
                local.repo,
                local.number,
                str(input["pullRequestId"]),
                str(input.get("expectedHeadOid") or ""),
                str(input.get("mergeMethod") or "MERGE"),
            )
        except GitHubError as exc:
            raise GraphQLError(
                str(exc).removeprefix("Unprocessable Entity: "),
                extensions={"type": "FORBIDDEN" if exc.status == 403 else "UNPROCESSABLE"},
            ) from exc
        return {
            "clientMutationId": input.get("clientMutationId"),
            "pullRequest": {"id": local.node_id, "number": local.number},
        }

    def disable(_info: Any, input: dict[str, Any]) -> dict[str, Any]:
        try:
            local.disable_auto_merge(local.repo, local.number, str(input["pullRequestId"]))
        except GitHubError as exc:
            raise GraphQLError(
                str(exc).removeprefix("Unprocessable Entity: "),
                extensions={"type": "FORBIDDEN" if exc.status == 403 else "UNPROCESSABLE"},
            ) from exc
        return {
            "actor": {"__typename": "Bot", "login": local.bot.removesuffix("[bot]")},
            "clientMutationId": input.get("clientMutationId"),
            "pullRequest": {"id": local.node_id, "number": local.number},
        }

    return {"enablePullRequestAutoMerge": enable, "disablePullRequestAutoMerge": disable}
