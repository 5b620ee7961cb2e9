"""GitHub's "no" to a write: told apart from a failure, reported once, never allowed to change a
verdict.

GitHub refuses a write for reasons the bot cannot fix by retrying: the App lacks a permission (403
"Resource not accessible by integration"), branch protection restricts who may dismiss reviews
(403), the pull request cannot merge (405), the request is not acceptable (422). Such a refusal of
an action taken beside the verdict (dismissing, approving, merging, turning auto-merge off,
reviewing, commenting) is collected here and shown in the summary (or, when the summary comment
itself is refused, in the concluded check run's text) with what the repository's administrators
grant or change; the verdict the check run concluded stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from bot.core.findings import Section
from bot.github.api import GitHubError, RateLimited
from bot.outputs.render.markdown import escape

T = TypeVar("T")

# What each action needs, in the words of GitHub's settings (docs/github.md cites the permission
# tables).
FIXES: dict[str, str] = {
    "dismiss": (
        "grant the App **Pull requests: write**; on a protected branch that restricts who can "
        "dismiss "
        'reviews, add the App to "Allow specified actors to dismiss pull request reviews"'
    ),
    "approve": "grant the App **Pull requests: write**",
    "review": "grant the App **Pull requests: write**",
    "comment": "grant the App **Issues: write** (pull request comments are issue comments)",
    "reply": "grant the App **Issues: write** (pull request comments are issue comments)",
    "merge": (
        "grant the App **Contents: write** (merging writes the base branch), or turn "
        "`delegation.auto_merge` off and merge by hand"
    ),
    "auto-merge": (
        'grant the App **Contents: write** and **Pull requests: write**, and turn on "Allow '
        "auto-merge\" in the repository's settings"
    ),
    "disable auto-merge": (
        "grant the App **Pull requests: write**, or turn auto-merge off on this pull request by "
        "hand (the bot no longer approves its head)"
    ),
    # GitHub's 422 where the repository's "Allow auto-merge" is off (GitHub's default)
    "auto-merge setting": (
        'an administrator turns on "Allow auto-merge" (the repository\'s Settings, General, Pull '
        "Requests), then re-runs the check"
    ),
    # GitHub's 405 (GraphQL: the same words) for a merge method the repository turns off
    "merge method": (
        "an administrator allows that merge method (the repository's Settings, General, Pull "
        'Requests: "Allow merge commits", "Allow squash merging", "Allow rebase merging"), or '
        "the configuration's `delegation.merge_method` names one the repository allows; then "
        "re-run the check"
    ),
    # GitHub's "no" on a locked conversation (403 for a comment, 422 for a review)
    "locked": (
        'a maintainer unlocks the conversation ("Unlock conversation" on the pull request), then '
        "re-runs the check"
    ),
    "dashboard": "grant the App **Issues: write** (the dashboard is an issue)",
    # GitHub's 410 Gone where the repository's Issues feature is off
    "issues off": (
        "an administrator turns on Issues (the repository's Settings, General, Features), then "
        "re-runs the check"
    ),
}
# refusals whose fix is a setting, whatever GitHub's status for it
SETTINGS = frozenset({"auto-merge setting", "merge method", "locked", "issues off"})
# GitHub's words for a merge method the repository does not allow ("Squash merges are not allowed on
# this repository.", "Merge commits are ...", "Rebase merges are ...")
METHOD_REFUSED = re.compile(
    r"\b(merge commits|squash merges|rebase merges) are not allowed\b", re.I
)
# GitHub's words on a locked conversation ("Unable to create comment because issue is locked.", a
# review's "lock prevents review") and where Issues are off ("Issues are disabled for this repo")
LOCKED = re.compile(r"\bis locked\b|\block prevents\b", re.I)
ISSUES_OFF = re.compile(r"\bissues are disabled\b", re.I)
WHAT = {
    "dismiss": "dismiss a review",
    "approve": "approve on the owners' behalf",
    "review": "post its review",
    "comment": "post the summary comment",
    "reply": "post its reply to the waive command",
    "merge": "merge the pull request",
    "auto-merge": "enable auto-merge",
    "disable auto-merge": "turn off the auto-merge it enabled",
    "auto-merge setting": "enable auto-merge",
    "merge method": "merge with the configured merge method",
    "locked": "post on this pull request: its conversation is locked",
    "issues off": "post the summary comment: the repository's Issues are turned off",
}


def is_refusal(exc: BaseException) -> bool:
    """GitHub answered "no" (403 without a rate limit, 404, 405, 409, 410 Gone: issues turned off,
    422): retrying the job changes nothing."""
    return (
        isinstance(exc, GitHubError)
        and not isinstance(exc, RateLimited)
        and exc.status in (403, 404, 405, 409, 410, 422)
    )


def is_retryable(exc: BaseException) -> bool:
    """GitHub failed rather than refused: a rate limit, a 5xx or no answer; the job runs again."""
    return isinstance(exc, GitHubError) and (
        isinstance(exc, RateLimited) or exc.status == 0 or exc.status >= 500
    )


def setting_of(action: str, message: str) -> str:
    """The refused ``action``, or the setting GitHub's words name as the cause (a key of
    ``FIXES`` in ``SETTINGS``), whatever its status: a grant would not help there."""
    if action in ("merge", "auto-merge") and METHOD_REFUSED.search(message):
        return "merge method"
    if LOCKED.search(message):
        return "locked"
    if action in ("comment", "reply") and ISSUES_OFF.search(message):
        return "issues off"
    return action


@dataclass(frozen=True)
class Refusal:
    """One refused write: the action (a key of ``FIXES``), GitHub's status and message."""

    action: str
    status: int
    message: str

    def line(self) -> str:
        fix = (
            FIXES.get(self.action, "check the App's permissions and the branch protection")
            if self.status in (403, 404) or self.action in SETTINGS
            else "see GitHub's answer"
        )
        return (
            f"- GitHub refused to let the bot {WHAT.get(self.action, self.action)} "
            f"({self.status}: {escape(self.message, 300)}): {fix}."
        )


@dataclass
class Refusals:
    """The refusals of one review, in the order they happened (each action and status once)."""

    found: list[Refusal] = field(default_factory=list)

    def attempt(self, action: str, write: Callable[[], T]) -> T | None:
        """``write()``, or None when GitHub refuses it (recorded); other failures pass through."""
        try:
            return write()
        except GitHubError as exc:
            if not is_refusal(exc):
                raise
            self.add(action, exc)
            return None

    def done(self, action: str, write: Callable[[], object]) -> bool:
        """Whether ``write()`` went through; False when GitHub refused it (recorded)."""
        try:
            write()
        except GitHubError as exc:
            if not is_refusal(exc):
                raise
            self.add(action, exc)
            return False
        return True

    def add(self, action: str, exc: GitHubError) -> None:
        refusal = Refusal(setting_of(action, str(exc)), exc.status, str(exc))
        if not any(
            r.action == refusal.action and (r.status == refusal.status or r.action in SETTINGS)
            for r in self.found
        ):  # each action and status once; a setting once, whatever its status
            self.found.append(refusal)

    def refused(self, action: str) -> bool:
        return any(r.action == action for r in self.found)

    def __bool__(self) -> bool:
        return bool(self.found)

    def markdown(self) -> str:
        return "\n".join(
            [
                "GitHub refused some of what the bot does beside its verdict; the verdict stands.",
                "",
                *(r.line() for r in self.found),
            ]
        )

    def sections(self) -> tuple[Section, ...]:
        """The summary's "GitHub refused" section (none when nothing was refused)."""
        if not self.found:
            return ()
        return (
            Section(
                "GitHub refused",
                self.markdown(),
                data={"refused": [{"action": r.action, "status": r.status} for r in self.found]},
            ),
        )
