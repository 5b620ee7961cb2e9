"""Which App permission each ``GitHubAPI`` call needs, per GitHub's permission tables, and the
manifest's grants.

GitHub lists, for every REST endpoint, the fine-grained permission an App's installation token needs
("Permissions required for GitHub Apps"); a call the installation is not granted is answered 403
"Resource not accessible by integration". ``LocalGitHub`` enforces this table against the
permissions of ``app.yml`` (``manifest_permissions``), so a feature that needs more than the
manifest asks for fails in tests as it would on GitHub; ``registry-bot app register`` and
docs/app.md name the feature behind each grant.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from bot.github.api import GitHubError

LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}
REFUSED = "Resource not accessible by integration"

Need = tuple[tuple[str, str], ...]  # every one of these (permission, level) is needed
# method -> alternatives, any one of which suffices (GitHub: "Issues" or "Pull requests" for issue
# comments).
NEEDS: dict[str, tuple[Need, ...]] = {
    "get_pull_request": ((("pull_requests", "read"),),),
    "list_pull_request_files": ((("pull_requests", "read"),),),
    "list_open_pull_requests_for_sha": ((("pull_requests", "read"),),),
    "list_open_pull_requests": ((("pull_requests", "read"),),),
    "list_reviews": ((("pull_requests", "read"),),),
    "list_review_comments": ((("pull_requests", "read"),),),
    "list_issue_comments": ((("issues", "read"),), (("pull_requests", "read"),)),
    "read_tree": ((("contents", "read"),),),
    "read_file": ((("contents", "read"),),),
    "read_files": ((("contents", "read"),),),
    "merge_base": ((("contents", "read"),),),
    "default_branch_head": ((("contents", "read"),),),
    "get_permission": ((("metadata", "read"),),),
    "get_team_membership": ((("members", "read"),),),
    "list_check_runs": ((("checks", "read"),),),
    "check_states": ((("checks", "read"),),),
    # the Merge section's fallback; refused (a narrower grant): it says so, never "none is red"
    "list_commit_statuses": ((("statuses", "read"),),),
    "create_check_run": ((("checks", "write"),),),
    "update_check_run": ((("checks", "write"),),),
    "create_review": ((("pull_requests", "write"),),),
    "dismiss_review": ((("pull_requests", "write"),),),
    # merging writes the base branch: "Merge a pull request" needs Contents write. GraphQL's
    # ``enablePullRequestAutoMerge`` (and ``disablePullRequestAutoMerge``) is in no table; it is
    # modelled as a pull request write.
    "merge_pull_request": ((("contents", "write"),),),
    "enable_auto_merge": ((("pull_requests", "write"),),),
    "disable_auto_merge": ((("pull_requests", "write"),),),
    "create_issue_comment": ((("issues", "write"),), (("pull_requests", "write"),)),
    "edit_issue_comment": ((("issues", "write"),), (("pull_requests", "write"),)),
    "list_issues": ((("issues", "read"),),),
    "create_issue": ((("issues", "write"),),),
    "edit_issue": ((("issues", "write"),),),
}
# The features of the bot and the grants they add to the manifest's (docs/app.md).
FEATURES: dict[str, dict[str, str]] = {
    "review": {
        "checks": "write",
        "pull_requests": "write",
        "issues": "write",
        "contents": "read",
        "metadata": "read",
        "statuses": "read",  # the Merge section: a required check may be a commit status
    },
    "teams": {"members": "read"},  # CODEOWNERS @org/team owners
    "auto-merge": {"contents": "write"},  # delegation.auto_merge: merge or enable auto-merge
}


def manifest_permissions(path: str | Path) -> dict[str, str]:
    """``default_permissions`` of an App manifest (``app.yml``)."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    granted = data.get("default_permissions") if isinstance(data, dict) else None
    if not isinstance(granted, dict):
        raise ValueError(f"{path}: no default_permissions mapping")
    return {str(k): str(v) for k, v in granted.items()}


def granted(permissions: Mapping[str, str], need: Need) -> bool:
    return all(
        LEVELS.get(permissions.get(name, "none"), 0) >= LEVELS[level] for name, level in need
    )


def check(permissions: Mapping[str, str] | None, method: str) -> None:
    """Raise GitHub's 403 when ``permissions`` (None: everything) do not allow ``method``."""
    if permissions is None:
        return
    alternatives = NEEDS.get(method)
    if alternatives is None or any(granted(permissions, need) for need in alternatives):
        return
    wanted = " or ".join(
        ", ".join(f"{name}: {level}" for name, level in need) for need in alternatives
    )
    raise GitHubError(f"{REFUSED} (needs {wanted})", status=403)


def needed_for(features: tuple[str, ...]) -> dict[str, str]:
    """The least permissions that the named ``FEATURES`` need together."""
    out: dict[str, str] = {}
    for feature in features:
        for name, level in FEATURES[feature].items():
            if LEVELS[level] > LEVELS.get(out.get(name, "none"), 0):
                out[name] = level
    return out
