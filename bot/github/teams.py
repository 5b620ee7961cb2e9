"""Team approvals: which ``@org/team`` owners of a change the author or an approver belongs to.

The owners check counts a team owner as consenting when ``org/team`` is among the approvers
(docs/owners.md). Only GitHub knows who is in a team, so before the review the App asks it, for
the teams that own the changed files on the base side (the same ownership the check judges by),
whether the author or an approving reviewer is an active member. That needs the App's
``members: read`` organization permission; without it GitHub answers 403, the team is reported as
unverified and the check simply asks for an owner's approval.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Section
from bot.core.quoting import code, escape
from bot.core.snapshot import Snapshot
from bot.github.api import GitHubAPI, GitHubError
from bot.github.refusals import is_retryable
from bot.model.codeowners import owner_kind
from bot.model.sides import ownership, side_model

log = logging.getLogger(__name__)

MAX_LOOKUPS = 50  # membership requests per review; a change owned by more teams is rare
_WHY = {
    403: "GitHub refused the lookup (403): the App lacks the Members: read permission",
    404: "GitHub does not show this team to the App (404): no Members: read permission, or no "
    "such team",
}


@dataclass(frozen=True)
class TeamMembership:
    """The outcome of the lookups: teams to count as approving, and teams GitHub would not tell
    about."""

    approving: frozenset[str] = frozenset()  # "org/team" as written in CODEOWNERS, without the "@"
    unverified: tuple[tuple[str, str], ...] = ()  # (org/team, why)

    def section(self) -> Section | None:
        """A note for the summary when a team could not be checked (None when every lookup
        worked)."""
        if not self.unverified:
            return None
        lines = [
            f"- {code('@' + team, table=False)}: {escape(why)}" for team, why in self.unverified
        ]
        return Section(
            "Team membership",
            "\n".join(
                [
                    "Team membership could not be verified, so approvals by members of these teams "
                    "were not counted; an owner listed by login (or a team member, once the App "
                    "can see the team) must approve:",
                    "",
                    *lines,
                    "",
                    "The App needs the organization permission **Members: read** to check teams "
                    "(see the App's manifest, `app.yml`).",
                ]
            ),
            data={"unverified": [team for team, _ in self.unverified]},
        )


def owning_teams(base: Snapshot, head: Snapshot, changes: ChangeSet, config: Config) -> list[str]:
    """The ``org/team`` owners (base side) of the changed files of registry entries, in first-seen
    order."""
    side = side_model(base, config).owners
    base_registry, head_registry = side.registry, side_model(head, config).registry
    teams: dict[str, None] = {}
    for path in sorted(changes.paths()):
        entry = base_registry.entry_for(path) or head_registry.entry_for(path)
        if entry is None:
            continue
        for owner in ownership(side, base_registry.entries.get(entry.name), path).owners:
            if owner_kind(owner) == "team":
                teams.setdefault(owner.removeprefix("@"), None)
    return list(teams)


def resolve(gh: GitHubAPI, teams: Iterable[str], identities: Iterable[str]) -> TeamMembership:
    """Ask GitHub, team by team, whether one of ``identities`` (author, approvers) is an active
    member."""
    people = list(dict.fromkeys(i.removeprefix("@") for i in identities if i))
    approving: set[str] = set()
    unverified: list[tuple[str, str]] = []
    lookups = 0
    for team in teams:
        org, _, slug = team.partition("/")
        for login in people:
            if lookups >= MAX_LOOKUPS:
                unverified.append(
                    (team, f"more than {MAX_LOOKUPS} membership lookups in one review")
                )
                break
            lookups += 1
            try:
                state = gh.get_team_membership(org, slug, login)
            except GitHubError as exc:
                # a limit or an outage passes: the job is retried, no verdict on a guess
                if is_retryable(exc):
                    raise
                log.warning("membership of %s in %s could not be read: %s", login, team, exc)
                why = _WHY.get(
                    exc.status, f"GitHub failed the lookup ({exc.status or 'no response'})"
                )
                unverified.append((team, why))
                break
            if state == "active":
                approving.add(team)
                break
    return TeamMembership(frozenset(approving), tuple(unverified))
