"""GitHub's REST objects as GitHub answers them: every field ``@octokit/openapi``'s response schemas
require, filled from the stand-in's state (tests/conformance.py holds each answer to those schemas).

``Shapes(api)`` builds them for the API at ``api`` (the stand-in's own URL: ``url`` fields point
back at it; ``html_url`` fields at github.com, as GitHub's do). Values the stand-in does not model
are GitHub's answer for a plain repository: no labels, milestone, assignee or license, counts of
zero, fixed timestamps.
"""

from __future__ import annotations

import zlib
from typing import Any

WEB = "https://github.com"
CREATED = "2026-01-01T00:00:00Z"  # when everything the stand-in serves was created


def ident(kind: str, name: str) -> int:
    """A stable id for ``name`` (GitHub's ids are integers, unique per kind)."""
    return zlib.crc32(f"{kind}:{name}".encode()) & 0x7FFFFFFF or 1


def node(kind: str, key: object) -> str:
    """A GraphQL node id in GitHub's new format (``PR_…``, ``U_…``): opaque to clients."""
    return f"{kind}_standin{key}"


class Shapes:
    """GitHub's objects, their URLs rooted at ``api``."""

    def __init__(self, api: str) -> None:
        self.api = api.rstrip("/")

    # -- accounts ---------------------------------------------------------------------------------
    def user(self, login: str, kind: str = "") -> dict[str, Any]:
        """simple-user: an App's bot account (``name[bot]``) is a ``Bot``, an organization an
        ``Organization``."""
        kind = kind or ("Bot" if login.endswith("[bot]") else "User")
        url = f"{self.api}/users/{login}"
        return {
            "login": login,
            "id": ident("user", login),
            "node_id": node("U", ident("user", login)),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{ident('user', login)}?v=4",
            "gravatar_id": "",
            "url": url,
            "html_url": f"{WEB}/{login}",
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions",
            "organizations_url": f"{url}/orgs",
            "repos_url": f"{url}/repos",
            "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events",
            "type": kind,
            "site_admin": False,
        }

    def organization(self, login: str) -> dict[str, Any]:
        """team-organization."""
        url = f"{self.api}/orgs/{login}"
        return {
            "login": login,
            "id": ident("user", login),
            "node_id": node("O", ident("user", login)),
            "url": url,
            "repos_url": f"{url}/repos",
            "events_url": f"{url}/events",
            "hooks_url": f"{url}/hooks",
            "issues_url": f"{url}/issues",
            "members_url": f"{url}/members{{/member}}",
            "public_members_url": f"{url}/public_members{{/member}}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{ident('user', login)}?v=4",
            "description": None,
            "html_url": f"{WEB}/{login}",
            "has_organization_projects": True,
            "has_repository_projects": True,
            "public_repos": 1,
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "type": "Organization",
            "created_at": CREATED,
            "updated_at": CREATED,
            "archived_at": None,
        }

    def app(
        self,
        app_id: int,
        slug: str,
        owner: str,
        permissions: dict[str, str] | None = None,
        events: list[str] | None = None,
    ) -> dict[str, Any]:
        """integration (a GitHub App)."""
        return {
            "id": app_id,
            "slug": slug,
            "node_id": node("A", app_id),
            "client_id": f"Iv1.standin{app_id}",
            "owner": self.user(owner, "Organization"),
            "name": slug,
            "description": None,
            "external_url": f"{WEB}/{owner}",
            "html_url": f"{WEB}/apps/{slug}",
            "created_at": CREATED,
            "updated_at": CREATED,
            "permissions": dict(permissions or {}),
            "events": list(events or []),
        }

    def installation(
        self,
        installation_id: int,
        app_id: int,
        slug: str,
        account: str,
        permissions: dict[str, str] | None = None,
        events: list[str] | None = None,
    ) -> dict[str, Any]:
        # The pinned description of "List installations for the authenticated app" wants the account
        # to be a simple-user *and* an enterprise (allOf: name, slug, created_at, updated_at too);
        # the stand-in says both.
        owner = {
            **self.user(account, "Organization"),
            "name": account,
            "slug": account.lower(),
            "created_at": CREATED,
            "updated_at": CREATED,
        }
        return {
            "id": installation_id,
            "account": owner,
            "repository_selection": "selected",
            "access_tokens_url": f"{self.api}/app/installations/{installation_id}/access_tokens",
            "repositories_url": f"{self.api}/installation/repositories",
            "html_url": f"{WEB}/organizations/{account}/settings/installations/{installation_id}",
            "app_id": app_id,
            "app_slug": slug,
            "target_id": ident("user", account),
            "target_type": "Organization",
            "permissions": dict(permissions or {}),
            "events": list(events or []),
            "created_at": CREATED,
            "updated_at": CREATED,
            "single_file_name": None,
            "suspended_by": None,
            "suspended_at": None,
        }

    # -- repositories -----------------------------------------------------------------------------
    def repository(self, full_name: str, default_branch: str) -> dict[str, Any]:
        """repository: public, not a fork, nothing but its code."""
        owner, name = full_name.split("/", 1)
        url = f"{self.api}/repos/{full_name}"
        rid = ident("repo", full_name)
        urls = {
            f"{key}_url": f"{url}/{tail}"
            for key, tail in {
                "archive": "{archive_format}{/ref}",
                "assignees": "assignees{/user}",
                "blobs": "git/blobs{/sha}",
                "branches": "branches{/branch}",
                "collaborators": "collaborators{/collaborator}",
                "comments": "comments{/number}",
                "commits": "commits{/sha}",
                "compare": "compare/{base}...{head}",
                "contents": "contents/{+path}",
                "git_commits": "git/commits{/sha}",
                "git_refs": "git/refs{/sha}",
                "git_tags": "git/tags{/sha}",
                "issue_comment": "issues/comments{/number}",
                "issue_events": "issues/events{/number}",
                "issues": "issues{/number}",
                "keys": "keys{/key_id}",
                "labels": "labels{/name}",
                "milestones": "milestones{/number}",
                "notifications": "notifications{?since,all,participating}",
                "pulls": "pulls{/number}",
                "releases": "releases{/id}",
                "statuses": "statuses/{sha}",
                "trees": "git/trees{/sha}",
            }.items()
        }
        plain = (
            "contributors",
            "deployments",
            "downloads",
            "events",
            "forks",
            "hooks",
            "languages",
            "merges",
            "stargazers",
            "subscribers",
            "subscription",
            "tags",
            "teams",
        )
        urls.update({f"{key}_url": f"{url}/{key}" for key in plain})
        return {
            "id": rid,
            "node_id": node("R", rid),
            "name": name,
            "full_name": full_name,
            "owner": self.user(owner, "Organization"),
            "private": False,
            "html_url": f"{WEB}/{full_name}",
            "description": None,
            "fork": False,
            "url": url,
            **urls,
            "git_url": f"git://github.com/{full_name}.git",
            "ssh_url": f"git@github.com:{full_name}.git",
            "clone_url": f"{WEB}/{full_name}.git",
            "svn_url": f"{WEB}/{full_name}",
            "mirror_url": None,
            "homepage": None,
            "language": None,
            "forks": 0,
            "forks_count": 0,
            "stargazers_count": 0,
            "watchers": 0,
            "watchers_count": 0,
            "size": 0,
            "default_branch": default_branch,
            "open_issues": 1,
            "open_issues_count": 1,
            "has_issues": True,
            "has_projects": True,
            "has_wiki": True,
            "has_pages": False,
            "has_downloads": True,
            "archived": False,
            "disabled": False,
            "license": None,
            "visibility": "public",
            "pushed_at": CREATED,
            "created_at": CREATED,
            "updated_at": CREATED,
        }

    # -- pull requests ----------------------------------------------------------------------------
    def pull_request_simple(
        self,
        repo: str,
        default_branch: str,
        number: int,
        state: str,
        author: str,
        head_ref: str,
        head_sha: str,
        base_ref: str,
        base_sha: str,
        *,
        draft: bool = False,
        title: str = "",
        body: str | None = None,
        node_id: str = "",
        auto_merge: dict[str, Any] | None = None,
        head_repo: str = "",
    ) -> dict[str, Any]:
        """pull-request-simple (a listing's item): the pull request ``number`` of ``repo``, from a
        branch of it, or of ``head_repo`` (a fork)."""
        url = f"{self.api}/repos/{repo}/pulls/{number}"
        issue = f"{self.api}/repos/{repo}/issues/{number}"
        html = f"{WEB}/{repo}/pull/{number}"
        repository = self.repository(repo, default_branch)

        def side(ref: str, sha: str, of: str = repo) -> dict[str, Any]:
            who = of.split("/")[0]
            return {
                "label": f"{who}:{ref}",
                "ref": ref,
                "sha": sha,
                "user": self.user(who, "Organization" if of == repo else "User"),
                "repo": repository if of == repo else self.repository(of, default_branch),
            }

        return {
            "url": url,
            "id": ident("pull", f"{repo}#{number}"),
            "node_id": node_id or node("PR", number),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue,
            "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.api}/repos/{repo}/pulls/comments{{/number}}",
            "comments_url": f"{issue}/comments",
            "statuses_url": f"{self.api}/repos/{repo}/statuses/{head_sha}",
            "number": number,
            "state": state,
            "locked": False,
            "title": title or f"PR {number}",
            "user": self.user(author),
            "body": body,
            "labels": [],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": CREATED,
            "updated_at": CREATED,
            "closed_at": None if state == "open" else CREATED,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": side(head_ref, head_sha, head_repo or repo),
            "base": side(base_ref, base_sha),
            "author_association": "CONTRIBUTOR",
            "auto_merge": auto_merge,
            "draft": draft,
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "issue": {"href": issue},
                "comments": {"href": f"{issue}/comments"},
                "review_comments": {"href": f"{url}/comments"},
                "review_comment": {"href": f"{self.api}/repos/{repo}/pulls/comments{{/number}}"},
                "commits": {"href": f"{url}/commits"},
                "statuses": {"href": f"{self.api}/repos/{repo}/statuses/{head_sha}"},
            },
        }

    @staticmethod
    def pull_request(
        simple: dict[str, Any],
        *,
        merged: bool,
        mergeable_state: str,
        changed_files: int,
        merged_sha: str | None = None,
        merged_by: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """pull-request (the full object): ``simple`` with what only ``GET .../pulls/{number}``
        answers."""
        return {
            **simple,
            "merged": merged,
            "merged_at": CREATED if merged else None,
            "merge_commit_sha": merged_sha,
            "merged_by": merged_by if merged else None,
            "mergeable": None if mergeable_state == "unknown" else mergeable_state != "dirty",
            "rebaseable": None,
            "mergeable_state": mergeable_state,
            "comments": 0,
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": 1,
            "additions": 0,
            "deletions": 0,
            "changed_files": changed_files,
        }

    def diff_entry(
        self,
        repo: str,
        head_sha: str,
        filename: str,
        status: str,
        patch: str | None,
        previous: str | None,
        blob_sha: str,
    ) -> dict[str, Any]:
        added = removed = 0
        for line in (patch or "").splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        out = {
            "sha": blob_sha,
            "filename": filename,
            "status": status,
            "additions": added,
            "deletions": removed,
            "changes": added + removed,
            "blob_url": f"{WEB}/{repo}/blob/{head_sha}/{filename}",
            "raw_url": f"{WEB}/{repo}/raw/{head_sha}/{filename}",
            "contents_url": f"{self.api}/repos/{repo}/contents/{filename}?ref={head_sha}",
        }
        if patch is not None:
            out["patch"] = patch
        if previous:
            out["previous_filename"] = previous
        return out

    def review(
        self,
        repo: str,
        number: int,
        review_id: int,
        user: str,
        state: str,
        commit_id: str,
        body: str,
    ) -> dict[str, Any]:
        """pull-request-review."""
        html = f"{WEB}/{repo}/pull/{number}#pullrequestreview-{review_id}"
        pull = f"{self.api}/repos/{repo}/pulls/{number}"
        return {
            "id": review_id,
            "node_id": node("PRR", review_id),
            "user": self.user(user),
            "body": body,
            "state": state,
            "html_url": html,
            "pull_request_url": pull,
            "commit_id": commit_id,
            "submitted_at": CREATED,
            "author_association": _association(user),
            "_links": {"html": {"href": html}, "pull_request": {"href": pull}},
        }

    def review_comment(
        self,
        repo: str,
        number: int,
        comment_id: int,
        review_id: int,
        user: str,
        path: str,
        line: int | None,
        body: str,
        commit_id: str,
        start_line: int | None = None,
    ) -> dict[str, Any]:
        """pull-request-review-comment (a comment on a line of the diff; ``line`` None: on the file,
        as an outdated comment is: GitHub then leaves ``line`` out)."""
        url = f"{self.api}/repos/{repo}/pulls/comments/{comment_id}"
        html = f"{WEB}/{repo}/pull/{number}#discussion_r{comment_id}"
        pull = f"{self.api}/repos/{repo}/pulls/{number}"
        out = {
            "url": url,
            "id": comment_id,
            "node_id": node("PRRC", comment_id),
            "pull_request_review_id": review_id,
            "diff_hunk": f"@@ -0,0 +1,{line or 1} @@",
            "path": path,
            "commit_id": commit_id,
            "original_commit_id": commit_id,
            "user": self.user(user),
            "body": body,
            "created_at": CREATED,
            "updated_at": CREATED,
            "html_url": html,
            "pull_request_url": pull,
            "author_association": _association(user),
            "start_line": start_line,
            "original_start_line": start_line,
            "start_side": "RIGHT" if start_line is not None else None,
            "subject_type": "line" if line is not None else "file",
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": pull},
            },
        }
        if line is not None:
            out.update(line=line, original_line=line, side="RIGHT")
        return out

    def issue_comment(
        self, repo: str, number: int, comment_id: int, user: str, body: str
    ) -> dict[str, Any]:
        url = f"{self.api}/repos/{repo}/issues/comments/{comment_id}"
        return {
            "id": comment_id,
            "node_id": node("IC", comment_id),
            "url": url,
            "html_url": f"{WEB}/{repo}/pull/{number}#issuecomment-{comment_id}",
            "body": body,
            "user": self.user(user),
            "created_at": CREATED,
            "updated_at": CREATED,
            "issue_url": f"{self.api}/repos/{repo}/issues/{number}",
            "author_association": _association(user),
        }

    def issue(
        self, repo: str, number: int, user: str, title: str, body: str, state: str
    ) -> dict[str, Any]:
        url = f"{self.api}/repos/{repo}/issues/{number}"
        return {
            "id": ident("issue", f"{repo}#{number}"),
            "node_id": node("I", f"{repo}#{number}"),
            "url": url,
            "repository_url": f"{self.api}/repos/{repo}",
            "labels_url": url + "/labels{/name}",
            "comments_url": url + "/comments",
            "events_url": url + "/events",
            "html_url": f"{WEB}/{repo}/issues/{number}",
            "number": number,
            "state": state,
            "title": title,
            "body": body,
            "user": self.user(user),
            "labels": [],
            "assignee": None,
            "milestone": None,
            "locked": False,
            "comments": 0,
            "created_at": CREATED,
            "updated_at": CREATED,
            "closed_at": None if state == "open" else CREATED,
            "author_association": _association(user),
        }

    # -- checks -----------------------------------------------------------------------------------
    def check_run(
        self,
        repo: str,
        run_id: int,
        head_sha: str,
        name: str,
        status: str,
        conclusion: str | None,
        external_id: str,
        app: dict[str, Any],
        title: str | None = None,
        summary: str | None = None,
        text: str | None = None,
        annotations: int = 0,
    ) -> dict[str, Any]:
        url = f"{self.api}/repos/{repo}/check-runs/{run_id}"
        return {
            "id": run_id,
            "node_id": node("CR", run_id),
            "head_sha": head_sha,
            "name": name,
            "url": url,
            "html_url": f"{WEB}/{repo}/runs/{run_id}",
            "details_url": f"{WEB}/{repo}/runs/{run_id}",
            "status": status,
            "conclusion": conclusion if status == "completed" else None,
            "started_at": CREATED,
            "completed_at": CREATED if status == "completed" else None,
            "external_id": external_id,
            "check_suite": {"id": ident("suite", head_sha)},
            "app": app,
            "pull_requests": [],
            "output": {
                "title": title or None,
                "summary": summary or None,
                "text": text or None,
                "annotations_count": annotations,
                "annotations_url": f"{url}/annotations",
            },
        }

    # -- teams and permissions --------------------------------------------------------------------
    def team(self, org: str, slug: str) -> dict[str, Any]:
        """team-full."""
        tid = ident("team", f"{org}/{slug}")
        url = f"{self.api}/organizations/{ident('user', org)}/team/{tid}"
        return {
            "id": tid,
            "node_id": node("T", tid),
            "url": url,
            "html_url": f"{WEB}/orgs/{org}/teams/{slug}",
            "name": slug,
            "slug": slug,
            "description": None,
            "privacy": "closed",
            "notification_setting": "notifications_enabled",
            "permission": "pull",
            "type": "organization",
            "members_url": f"{url}/members{{/member}}",
            "repositories_url": f"{url}/repos",
            "parent": None,
            "members_count": 0,
            "repos_count": 0,
            "created_at": CREATED,
            "updated_at": CREATED,
            "organization": self.organization(org),
        }

    def collaborator(self, login: str, role: str) -> dict[str, Any]:
        """collaborator (``user`` of "Get repository permissions for a user")."""
        return {**self.user(login), "role_name": role}

    # -- contents ---------------------------------------------------------------------------------
    def content(
        self, repo: str, ref: str, path: str, sha: str, size: int, kind: str, **extra: Any
    ) -> dict[str, Any]:
        """content-file / content-symlink / a folder's item: ``kind`` is ``file``, ``symlink`` or
        ``dir``."""
        url = f"{self.api}/repos/{repo}/contents/{path}?ref={ref}"
        git = f"{self.api}/repos/{repo}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
        html = f"{WEB}/{repo}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{path}"
        return {
            "type": kind,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": size,
            "url": url,
            "git_url": git,
            "html_url": html,
            "download_url": None
            if kind == "dir"
            else f"https://raw.githubusercontent.com/{repo}/{ref}/{path}",
            "_links": {"self": url, "git": git, "html": html},
            **extra,
        }

    def commit(self, repo: str, sha: str, tree: str, parents: list[str]) -> dict[str, Any]:
        """commit (as a comparison holds it): ``sha`` of ``repo`` with its tree and parents."""
        url = f"{self.api}/repos/{repo}/commits/{sha}"
        person = {"name": "Stand-in", "email": "standin@example.com", "date": CREATED}
        return {
            "url": url,
            "sha": sha,
            "node_id": node("C", sha),
            "html_url": f"{WEB}/{repo}/commit/{sha}",
            "comments_url": f"{url}/comments",
            "commit": {
                "url": f"{self.api}/repos/{repo}/git/commits/{sha}",
                "author": person,
                "committer": person,
                "message": f"commit {sha[:12]}",
                "comment_count": 0,
                "tree": {"sha": tree, "url": f"{self.api}/repos/{repo}/git/trees/{tree}"},
            },
            "author": None,
            "committer": None,
            "parents": [
                {
                    "sha": p,
                    "url": f"{self.api}/repos/{repo}/commits/{p}",
                    "html_url": f"{WEB}/{repo}/commit/{p}",
                }
                for p in parents
            ],
        }

    def comparison(
        self,
        repo: str,
        basehead: str,
        base: dict[str, Any],
        merge_base: dict[str, Any],
        ahead: int,
        behind: int,
    ) -> dict[str, Any]:
        """commit-comparison, without its commits and files (the bot reads ``merge_base_commit``
        only)."""
        status = (
            "identical"
            if not ahead and not behind
            else "ahead"
            if not behind
            else "behind"
            if not ahead
            else "diverged"
        )
        return {
            "url": f"{self.api}/repos/{repo}/compare/{basehead}",
            "html_url": f"{WEB}/{repo}/compare/{basehead}",
            "permalink_url": f"{WEB}/{repo}/compare/{basehead}",
            "diff_url": f"{WEB}/{repo}/compare/{basehead}.diff",
            "patch_url": f"{WEB}/{repo}/compare/{basehead}.patch",
            "base_commit": base,
            "merge_base_commit": merge_base,
            "status": status,
            "ahead_by": ahead,
            "behind_by": behind,
            "total_commits": ahead,
            "commits": [],
            "files": [],
        }

    def blob(self, repo: str, sha: str, size: int, content: str) -> dict[str, Any]:
        return {
            "sha": sha,
            "node_id": node("B", sha),
            "size": size,
            "url": f"{self.api}/repos/{repo}/git/blobs/{sha}",
            "content": content,
            "encoding": "base64",
        }


def _association(login: str) -> str:
    """author_association: the stand-in's users are collaborators; its App's bot account is NONE."""
    return "NONE" if login.endswith("[bot]") else "COLLABORATOR"
