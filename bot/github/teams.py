"""Team approvals: which ``@org/team`` owners of a change the author or an approver belongs to.

The owners check counts a team owner as consenting when ``org/team`` is among the approvers
(docs/owners.md). Only GitHub knows who is in a team, so before the review the App asks it, for
the teams that own the changed files on the base side (the same ownership the check judges by),
whether the author or an approving reviewer is an active member. That needs the App's
``members: read`` organization permission; without it GitHub answers 403, the team is reported as
unverified and the check simply asks for an owner's approval.

Only the teams that can matter are asked about: those owning a changed file that no login among the
author and the approvers owns (``membership``), and only about the author and the approvers (never
an App's account: no team has one). One review asks at most ``MAX_LOOKUPS`` times; a team the cap
leaves unasked is not approving either (``TeamMembership.unasked``), and is never a team GitHub
would not show: whoever can add approvals (anyone can approve a public pull request) must not turn
a missing approval into "not checked".
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
from bot.model.codeowners import BOT_LOGIN, owner_key, owner_kind
from bot.model.sides import claimants, ownership, side_model
from bot.review.checks.ownership import root_owner_groups

log = logging.getLogger(__name__)

MAX_LOOKUPS = 50  # membership requests per review; a change owned by more teams is rare
_WHY = {
    403: "GitHub refused the lookup (403): {who} lacks the {permission}",
    404: "GitHub does not show this team to {who} (404): no {permission}, or no such team",
}
# a team of another organization than the repository's (the proposal's layout names vendors' teams)
FOREIGN = (
    "the team belongs to {org}, not to the repository's organization {home}; {who} is given "
    "access for {home}, and GitHub does not show it {org}'s teams ({status}), so its members' "
    "approvals are not counted: name them by login in CODEOWNERS"
)
# who reads the teams, and what lets it see them
APP_ACCESS = ("the App", "Members: read permission")


CAPPED = f"more than {MAX_LOOKUPS} membership lookups in one review: not everyone was looked up"
APP_ADVICE = (
    "The App needs the organization permission **Members: read** to check teams (see the App's "
    "manifest, `app.yml`)."
)


@dataclass(frozen=True)
class TeamMembership:
    """The outcome of the lookups: teams to count as approving, teams GitHub would not tell about,
    and teams the lookup cap left unasked (neither counts as approving)."""

    approving: frozenset[str] = frozenset()  # "org/team" as written in CODEOWNERS, without the "@"
    unverified: tuple[tuple[str, str], ...] = ()  # (org/team, why): GitHub would not tell
    unasked: tuple[str, ...] = ()  # org/team: not (fully) asked, ``MAX_LOOKUPS`` reached

    def section(self, who: str = "the App", advice: str = APP_ADVICE) -> Section | None:
        """A note for the summary when a team could not be checked (None when every lookup
        worked); ``who`` reads the teams, ``advice`` says how it can see them."""
        parts: list[str] = []
        if self.unverified:
            parts += [
                "Team membership could not be verified, so approvals by members of these teams "
                f"were not counted; an owner listed by login (or a team member, once {who} can "
                "see the team) must approve:",
                "",
                *(
                    f"- {code('@' + team, table=False)}: {escape(why)}"
                    for team, why in self.unverified
                ),
                "",
                advice,
            ]
        if self.unasked:
            parts += [
                *([""] if parts else []),
                "Team membership was not looked up for everyone: one review makes at most "
                f"{MAX_LOOKUPS} membership lookups (the author, then each approver, team by team) "
                "and this one needed more, so these teams do not count as approving; an owner "
                "listed by login, or a member of a team that was looked up, must approve:",
                "",
                *(f"- {code('@' + team, table=False)}: {escape(CAPPED)}" for team in self.unasked),
            ]
        if not parts:
            return None
        return Section(
            "Team membership",
            "\n".join(parts),
            data={
                "unverified": [team for team, _ in self.unverified],
                "unasked": list(self.unasked),
            },
        )


def owning_teams(
    base: Snapshot,
    head: Snapshot,
    changes: ChangeSet,
    config: Config,
    consent: Iterable[str] = (),
) -> list[str]:
    """The ``org/team`` owners (base side) of the changed files of registry entries, then of the
    files outside them that the ownership rules ask about (``root_owner_groups``), in first-seen
    order; with ``consent`` (the author and the approvers' logins), only those of files that no
    owner among them owns (the others need no team)."""
    side = side_model(base, config).owners
    base_registry, head_registry = side.registry, side_model(head, config).registry
    agreed = {owner_key(x) for x in consent if x}
    groups = [
        ownership(side, entry, path).owners
        for path in sorted(changes.paths())
        for _name, entry in claimants(base_registry, head_registry, path)
    ]
    groups += root_owner_groups(base, head, changes, config)
    # GitHub matches team owners case-insensitively: one team however CODEOWNERS spells it
    teams: dict[str, str] = {}
    for owners in groups:
        if not any(owner_key(o) in agreed for o in owners):
            for owner in owners:
                if owner_kind(owner) == "team":
                    teams.setdefault(owner_key(owner), owner.removeprefix("@"))
    return list(teams.values())


def membership(
    gh: GitHubAPI,
    base: Snapshot,
    head: Snapshot,
    changes: ChangeSet,
    config: Config,
    author: str | None,
    logins: Iterable[str],
    access: tuple[str, str] = APP_ACCESS,
    home: str | None = None,
) -> TeamMembership:
    """The owning teams (base side) of the change the author or an approver (``logins``) is an
    active member of, asking only about the teams of files no login among them owns. ``home``: the
    organization the repository belongs to (``owner`` of ``owner/name``)."""
    identities = (author or "", *sorted(logins))
    teams = owning_teams(base, head, changes, config, identities)
    return resolve(gh, teams, identities, access, home)


def resolve(
    gh: GitHubAPI,
    teams: Iterable[str],
    identities: Iterable[str],
    access: tuple[str, str] = APP_ACCESS,
    home: str | None = None,
) -> TeamMembership:
    """Ask GitHub, team by team, whether one of ``identities`` (author, approvers; an App's account
    is no team member and is not asked about) is an active member; at most ``MAX_LOOKUPS`` lookups,
    the teams left are ``unasked``. ``access``: who asks, and what lets it see a team (for the
    reasons of ``unverified``); ``home``: the repository's organization, to name a team of another
    one as such when GitHub will not show it."""
    # logins are case-insensitive: one person is asked about once
    found: dict[str, str] = {}
    for identity in identities:
        login = identity.removeprefix("@")
        if login and not BOT_LOGIN.fullmatch(login):
            found.setdefault(login.casefold(), login)
    people = list(found.values())
    approving: set[str] = set()
    unverified: list[tuple[str, str]] = []
    unasked: list[str] = []
    lookups = 0
    for team in teams:
        # GitHub's team slugs are lower case; CODEOWNERS may write ``@org/Team-Name``
        org, _, written = team.partition("/")
        slug = written.lower()
        for login in people:
            if lookups >= MAX_LOOKUPS:
                unasked.append(team)
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
                ).format(who=access[0], permission=access[1])
                if home and org.casefold() != home.casefold():
                    why = FOREIGN.format(org=org, home=home, who=access[0], status=exc.status)
                unverified.append((team, why))
                break
            if state == "active":
                approving.add(team)
                break
    return TeamMembership(frozenset(approving), tuple(unverified), tuple(unasked))
