"""Delegated ownership: the App approves a pull request on behalf of the owners of the entries it
changes.

GitHub counts an approval only from someone with write access, and the companies that own
``spec/registry/<name>`` have none. So when every entry a change touches is approved by its owners
(its own CODEOWNERS on the base branch, as the owners check judges), on the exact head commit, and
the review found nothing blocking, the App submits an APPROVE review saying for whom and on what
evidence; with ``delegation.auto_merge`` it then enables GitHub's auto-merge. A push, a dismissed or
changed approval or a new blocking finding withdraws (dismisses) that approval. It never approves a
change to anything but entry folders: root files, core facets, any CODEOWNERS, the bot's
configuration (docs/owners.md). Whenever it does not approve the head (a change with nothing it
reviews, a review that fails or cannot finish included), it also turns off the auto-merge it enabled
(``disable_merge``): GitHub checks ``expectedHeadOid`` only when auto-merge is enabled, so without
branch protection's "dismiss stale approvals" it would merge a later head no one approved.

``decide`` is pure (inputs and report in, a ``Delegation`` out); ``withdraw`` and ``disable_merge``
(before the check run concludes), ``retract`` (before a failed review's check run concludes) and
``approve`` (after) are the only writers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from bot.core.config import CONFIG_PATHS, Config
from bot.core.findings import Report, Section, Verdict
from bot.core.quoting import code, cut_lines, escape
from bot.github import listing
from bot.github.api import GitHubAPI, GitHubError, PullRequest, ReviewInfo
from bot.github.pipeline import ReviewInputs
from bot.github.refusals import METHOD_REFUSED, Refusals, is_retryable
from bot.github.required_checks import merge_lines, newest_by_name
from bot.github.teams import membership
from bot.model.codeowners import ROOT_LOCATIONS, owner_key
from bot.model.registry import Entry
from bot.model.sides import Side, claimants, entry_relative, side_model
from bot.review.checks.owners import owner_list, unverifiable
from bot.review.compose import ReviewRequest

log = logging.getLogger(__name__)

MARKER = "<!-- registry-bot:delegated-approval {sha} -->"
_MARKER_START = "<!-- registry-bot:delegated-approval "
DECIDING = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
BODY_LIMIT = 60_000  # GitHub takes 65,536 characters
MAX_REASONS = 20  # reasons named one by one; a padded pull request has thousands


@dataclass(frozen=True)
class EntryConsent:
    """One entry the change touches: its owners (base side) and who of them approved the head."""

    name: str
    owners: tuple[str, ...]
    sources: tuple[str, ...]  # "spec/registry/x/CODEOWNERS line 1"
    # identities (login, org/team, the author) that stand for an owner
    approved_by: tuple[str, ...] = ()
    missing: tuple[tuple[str, ...], ...] = ()  # owner groups of changed files that no one stood for


@dataclass(frozen=True)
class Delegation:
    """What the App does for the owners on ``head_sha``: approve, or not and why."""

    head_sha: str
    approve: bool
    entries: tuple[EntryConsent, ...] = ()
    refused: tuple[str, ...] = ()  # why the change is outside delegation (Markdown, inert)
    waiting: tuple[str, ...] = ()  # why it is not approved yet (Markdown, inert)
    # the approving reviews, as Markdown
    evidence: tuple[str, ...] = field(default=(), compare=False)

    @property
    def reasons(self) -> tuple[str, ...]:
        return (*self.refused, *self.waiting)

    def body(self) -> str:
        """The APPROVE review's body: for whom, and on what evidence."""
        rows = [
            f"| {code(e.name)} | {', '.join(code(o) for o in e.owners)} "
            f"({', '.join(code(s) for s in e.sources)}) | "
            f"{', '.join(code(a) for a in e.approved_by)} |"
            for e in self.entries
        ]
        return "\n".join(
            [
                MARKER.format(sha=self.head_sha),
                f"**Approved on behalf of the entries' owners** for commit "
                f"{code(self.head_sha, table=False)}.",
                "",
                "| entry | owners (base-branch CODEOWNERS) | approved by |",
                "| --- | --- | --- |",
                *rows,
                "",
                "Evidence: "
                + ("; ".join(self.evidence) or "the author is an owner")
                + ". The **OpenLineage "
                "registry** check found nothing blocking on this commit.",
                "",
                "This approval is for this commit only: a push, a dismissed or changed approval, "
                "or a new blocking finding withdraws it.",
            ]
        )

    def section(self) -> Section:
        """The report's "Delegated approval" section: what the App did for the owners, or why
        not."""
        if self.approve:
            who = "; ".join(
                f"{code(e.name, table=False)} by "
                f"{', '.join(code(a, table=False) for a in e.approved_by)}"
                for e in self.entries
            )
            text = f"The bot approves this commit on behalf of the entries' owners ({who})."
        elif self.refused:
            text = "\n".join(
                [
                    "The bot does not approve this change on the owners' behalf:",
                    "",
                    *(f"- {r}" for r in self.refused),
                    "",
                    "A maintainer with write access reviews it.",
                ]
            )
        else:
            text = "\n".join(
                [
                    "The bot approves on the owners' behalf once:",
                    "",
                    *(f"- {r}" for r in self.waiting),
                ]
            )
        return Section(
            "Delegated approval", text, data={"approve": self.approve, "head_sha": self.head_sha}
        )


def latest_deciding(reviews: Sequence[ReviewInfo], me: str) -> dict[str, ReviewInfo]:
    """Each reviewer's latest deciding review (approved, changes requested, dismissed), the App's
    own aside: what the owners' consent is judged on."""
    latest: dict[str, ReviewInfo] = {}
    for r in reviews:
        if r.state in DECIDING and r.user != me:
            latest[r.user] = r
    return latest


def changed_reviewers(
    before: Sequence[ReviewInfo], now: Sequence[ReviewInfo], me: str
) -> tuple[str, ...]:
    """The reviewers whose latest deciding review (its state, its commit) differs between two
    listings of a pull request's reviews: a change request, a dismissal, a new approval."""
    old, new = latest_deciding(before, me), latest_deciding(now, me)

    def decision(r: ReviewInfo | None) -> tuple[str, str] | None:
        return (r.state, r.commit_id) if r is not None else None

    return tuple(
        sorted(u for u in old.keys() | new.keys() if decision(old.get(u)) != decision(new.get(u)))
    )


def head_approvers(
    reviews: Sequence[ReviewInfo], head_sha: str, me: str
) -> tuple[frozenset[str], frozenset[str]]:
    """(users whose latest deciding review approves ``head_sha``, users whose approval is of an
    older commit)."""
    latest = latest_deciding(reviews, me)
    approving = [r for r in latest.values() if r.state == "APPROVED"]
    return (
        frozenset(r.user for r in approving if r.commit_id == head_sha),
        frozenset(r.user for r in approving if r.commit_id != head_sha),
    )


def _protected(path: str, config_registry: str) -> str | None:
    """Why a path is never approved on anyone's behalf, or None."""
    if path in CONFIG_PATHS:
        return f"it changes the bot's configuration ({code(path, table=False)})"
    if path in ROOT_LOCATIONS or path.rsplit("/", 1)[-1] == "CODEOWNERS":
        return (
            f"it changes a CODEOWNERS file ({code(path, table=False)}), which decides who owns what"
        )
    if not path.startswith(config_registry + "/"):
        return f"it changes {code(path, table=False)}, outside the registry's entry folders"
    return None


def owner_groups(
    inputs: ReviewInputs,
) -> tuple[tuple[str, ...], dict[str, dict[tuple[str, ...], list[str]]]]:
    """(why the change is outside delegation, entry -> owners of its changed files -> CODEOWNERS
    lines)."""
    config = inputs.config
    side = side_model(inputs.base, config).owners
    base_registry, head_registry = side.registry, side_model(inputs.head, config).registry
    refused: list[str] = []
    groups: dict[str, dict[tuple[str, ...], list[str]]] = {}  # entry -> owners -> sources
    for path in sorted(inputs.changes.paths()):
        why = _protected(path, config.paths.registry)
        claims = claimants(base_registry, head_registry, path)
        reasons: list[str | None] = [why]
        if why is None and not claims:
            reasons.append(
                f"it changes {code(path, table=False)}, which belongs to no entry's folder"
            )
        for name, base_entry in claims if why is None else ():
            if base_entry is None and name in base_registry.entries:
                reasons.append(
                    f"it removes the registered name {code(name, table=False)}: the registry's "
                    "maintainers approve a name's removal, as they approve a new name"
                )
                continue
            entry = base_entry or head_registry.entries[name]
            if not path.startswith(entry.folder + "/"):
                reasons.append(
                    f"it changes {code(path, table=False)}, which belongs to no entry's folder"
                )
            else:
                reasons.append(_consent(side, groups, name, entry, base_entry, path, config))
        for reason in reasons:
            if reason is not None and reason not in refused:
                refused.append(reason)
    return tuple(refused), groups


def _consent(
    side: Side,
    groups: dict[str, dict[tuple[str, ...], list[str]]],
    name: str,
    entry: Entry,
    base_entry: Entry | None,
    path: str,
    config: Config,
) -> str | None:
    """Why the owners of ``name`` cannot approve ``path`` through the App, or ``None`` once the
    owners and their CODEOWNERS line are added to ``groups``."""
    own = side.own(base_entry) if base_entry is not None else None
    rule = (
        own.rule_for(entry_relative(base_entry, path)) if own is not None and base_entry else None
    )
    if entry.is_core:
        return (
            f"it changes the core entry ({code(name, table=False)}), the OpenLineage project's own"
        )
    if not config.delegation.covers(name):
        return (
            f"the configuration does not delegate {code(name, table=False)} (`delegation.entries`)"
        )
    if base_entry is None:
        return (
            f"{code(name, table=False)} is a new entry: the registry's maintainers approve a "
            "new name"
        )
    if own is None or rule is None or not rule.owners:
        return (
            f"{code(path, table=False)} has no owner in {code(name, table=False)}'s own "
            "CODEOWNERS on the base branch (the root CODEOWNERS owners approve it themselves)"
        )
    source = f"{own.path} line {rule.line}"
    sources = groups.setdefault(name, {}).setdefault(tuple(rule.owners), [])
    if source not in sources:
        sources.append(source)
    return None


def owners_moved(gh: GitHubAPI, inputs: ReviewInputs) -> str:
    """Why the owners judged by are not known to be the base branch's now; empty when they are.

    They are read at the pull request's ``base.sha``, which GitHub leaves where the base branch was
    at the pull request's last push (merges to the base branch do not move it): an owner the base
    branch removed since would still approve. One request: every CODEOWNERS location the owners
    were judged by (``Side.read_paths``), read at the base branch as it is."""
    pr = inputs.pr
    paths = side_model(inputs.base, inputs.config).owners.read_paths()
    try:
        now = gh.read_files(pr.repo, pr.base_ref, paths)
    except GitHubError as exc:
        if is_retryable(exc):
            raise
        where = code(pr.base_ref, table=False)
        return f"the owners on the base branch {where} could not be read ({escape(str(exc))})"
    unread = getattr(now, "skipped", {})
    changed = [p for p in paths if p in unread or inputs.base.read(p) != now.get(p)]
    if not changed:
        return ""
    return (
        f"the base branch {code(pr.base_ref, table=False)} changed "
        f"{', '.join(code(p, table=False) for p in changed[:MAX_REASONS])} since the pull "
        f"request's base {code(pr.base_sha[:12], table=False)}: its owners may be others now; "
        "a push (or updating the branch) reviews it against the base branch as it is"
    )


def decide(
    inputs: ReviewInputs, report: Report, me: str, gh: GitHubAPI | None = None
) -> Delegation:
    """Whether the App approves ``inputs.pr``'s head for the owners of the entries it changes.

    ``gh``: to read team membership again when some approval is of an older commit (a team counts
    only through a member's approval of the head); without it such teams do not count.
    """
    pr, config = inputs.pr, inputs.config
    head_sha = pr.head_sha
    if config.unusable is not None:
        return Delegation(
            head_sha,
            False,
            refused=(
                "the bot's configuration cannot be used (config/invalid), so whether it approves "
                "for the owners is unknown; it approves nothing until the configuration is fixed",
            ),
        )
    if not config.delegation.approve:
        return Delegation(
            head_sha, False, refused=("delegation is off in the bot's configuration",)
        )
    if inputs.changes.truncated or not inputs.changes.files:
        return Delegation(
            head_sha,
            False,
            refused=(
                "the bot could not see the whole change"
                + (f" ({inputs.changes.cut})" if inputs.changes.cut else ""),
            ),
        )
    refused, groups = owner_groups(inputs)
    refused = (
        *(
            f"it could not read {code(f.path, table=False)} ({escape(f.unread)})"
            for f in inputs.changes.unread()
        ),
        *refused,
    )
    if refused:
        more = len(refused) - MAX_REASONS
        cut = (*refused[:MAX_REASONS], *([f"and {more:,} more"] if more > 0 else []))
        return Delegation(head_sha, False, refused=cut)

    current, stale = head_approvers(inputs.reviews, head_sha, me)
    teams = inputs.teams.approving
    # the teams counted for the review may rest on an approval of an older commit: ask again
    if stale:
        teams = frozenset()
        if gh is not None:
            teams = membership(
                gh,
                inputs.base,
                inputs.head,
                inputs.changes,
                config,
                pr.author,
                current,
                home=pr.repo.partition("/")[0],
            ).approving
    consent = {owner_key(x): x for x in (pr.author, *sorted(current), *sorted(teams)) if x}
    entries: list[EntryConsent] = []
    waiting: list[str] = []
    for name, by_owners in groups.items():
        approved: dict[str, None] = {}
        missing: list[tuple[str, ...]] = []
        for owners in by_owners:
            hit = [consent[owner_key(o)] for o in owners if owner_key(o) in consent]
            if hit:
                approved.update(dict.fromkeys(hit))
            else:
                missing.append(owners)
                waiting.append(
                    f"an owner of {code(name, table=False)} approves this commit: "
                    f"{owner_list(code(o, table=False) for o in owners)}"
                    + escape(unverifiable(owners))
                )
        entries.append(
            EntryConsent(
                name,
                tuple(dict.fromkeys(o for g in by_owners for o in g)),
                tuple(dict.fromkeys(s for v in by_owners.values() for s in v)),
                tuple(approved),
                tuple(missing),
            )
        )
    if stale and waiting:
        waiting.append(
            "approvals of an older commit do not count: "
            + ", ".join(code("@" + u, table=False) for u in sorted(stale))
            + " approve the new head"
        )
    if report.verdict is not Verdict.SUCCESS:
        blocking = [
            f
            for f in report.findings
            if report.is_blocking(f)
            and f.rule
            not in ("owners/approval-required", "owners/codeowners-change-needs-approval")
        ]
        if blocking or report.verdict is Verdict.NEUTRAL or not waiting:
            waiting.append(
                f"the review finds nothing blocking (today: {report.verdict.value}, "
                f"{len(blocking)} blocking finding(s) besides approvals)"
            )
    # about to approve: the owners judged by are the base branch's now
    if not waiting and gh is not None:
        moved = owners_moved(gh, inputs)
        if moved:
            return Delegation(head_sha, False, refused=(moved,))
    # about to approve: the listing's paths outside the trees read held to the whole pinned trees
    if not waiting and gh is not None and not inputs.from_trees:
        unconfirmed = listing.unconfirmed_whole(gh, pr, inputs.changes)
        if unconfirmed:
            return Delegation(head_sha, False, refused=(unconfirmed,))
    evidence = tuple(
        f"{code('@' + r.user, table=False)} approved in review {r.id}"
        for r in inputs.reviews
        if r.user in current and r.state == "APPROVED" and r.commit_id == head_sha
    )
    return Delegation(
        head_sha, not waiting, tuple(entries), waiting=tuple(waiting), evidence=evidence
    )


def is_delegated_approval(review: ReviewInfo, me: str) -> bool:
    return review.user == me and review.state == "APPROVED" and _MARKER_START in review.body


def withdraw(
    gh: GitHubAPI,
    pr: PullRequest,
    delegation: Delegation,
    reviews: Sequence[ReviewInfo],
    refusals: Refusals | None = None,
) -> tuple[ReviewInfo, ...]:
    """Dismiss the App's approvals that no longer hold (another commit's; this one's when it no
    longer approves). Runs before the check run concludes, so that no passing check ever stands next
    to a stale approval. A dismissal GitHub refuses is recorded in ``refusals`` (the approval
    stays). Returns the reviews as they are now."""
    refusals = refusals if refusals is not None else Refusals()
    me = gh.bot_login()
    now: list[ReviewInfo] = []
    kept = False
    for r in reviews:
        if (
            is_delegated_approval(r, me)
            and r.commit_id == delegation.head_sha
            and delegation.approve
            and not kept
        ):
            kept = True
        elif is_delegated_approval(r, me):
            if r.commit_id != delegation.head_sha:
                why = (
                    f"New commits were pushed (now {pr.head_sha[:12]}): the owners approve the new "
                    f"head."
                )
            else:
                why = "Withdrawn: " + "; ".join(
                    delegation.reasons or ("the approval no longer holds",)
                )

            def dismiss(review_id: int = r.id, message: str = why[:1000]) -> None:
                gh.dismiss_review(pr.repo, pr.number, review_id, message)

            if refusals.done("dismiss", dismiss):
                r = replace(r, state="DISMISSED")
        now.append(r)
    return tuple(now)


def approve(
    gh: GitHubAPI,
    pr: PullRequest,
    delegation: Delegation,
    reviews: Sequence[ReviewInfo],
    merge: bool = False,
    merge_method: str = "SQUASH",
    refusals: Refusals | None = None,
) -> tuple[str, tuple[ReviewInfo, ...]]:
    """Approve ``delegation.head_sha`` when it should (once) and (``merge``) enable auto-merge.
    Returns what it did and the reviews as they are now (for the publisher). What GitHub refuses is
    recorded in ``refusals`` and named in the outcome. A draft is approved but not merged: its
    ``ready_for_review`` delivery has it reviewed again."""
    refusals = refusals if refusals is not None else Refusals()
    me = gh.bot_login()
    if not delegation.approve:
        return "not approved", tuple(reviews)
    outcome = "approval kept"
    now = list(reviews)
    if not any(
        is_delegated_approval(r, me) and r.commit_id == delegation.head_sha for r in reviews
    ):
        body = cut_lines(delegation.body(), BODY_LIMIT, "(cut to fit GitHub's size limit)")
        review_id = refusals.attempt(
            "approve",
            lambda: gh.create_review(pr.repo, pr.number, delegation.head_sha, "APPROVE", body),
        )
        if review_id is None:  # the App does not approve this head after all
            disable_merge(gh, pr, refusals)
            return "approval refused", tuple(now)
        now.append(ReviewInfo(review_id, me, "APPROVED", delegation.head_sha, body))
        outcome = "approved"
    if merge and pr.draft:  # GitHub merges no draft nor enables auto-merge on one
        outcome += ", " + DRAFT
    elif merge and not pr.auto_merge:
        outcome += ", " + enable_merge(gh, pr, merge_method, refusals)
    return outcome, tuple(now)


def enabled_by_me(pr: PullRequest, me: str) -> bool:
    """Whether the pull request's auto-merge is on and the App enabled it (or GitHub does not say
    who did). A person's auto-merge is theirs: the App leaves it alone."""
    return pr.auto_merge and (not pr.auto_merge_by or pr.auto_merge_by.casefold() == me.casefold())


def disable_merge(gh: GitHubAPI, pr: PullRequest, refusals: Refusals | None = None) -> bool:
    """Turn off the auto-merge the App enabled (``enabled_by_me``), when it does not approve
    ``pr``'s head: GitHub checks ``expectedHeadOid`` only when auto-merge is enabled, and would
    merge a later head that no one approved once its checks pass. Whether it was turned off; a
    refusal is recorded in ``refusals`` (the verdict stays)."""
    refusals = refusals if refusals is not None else Refusals()
    if not enabled_by_me(pr, gh.bot_login()):
        return False
    if not refusals.done(
        "disable auto-merge", lambda: gh.disable_auto_merge(pr.repo, pr.number, pr.node_id)
    ):
        return False
    log.info("auto-merge turned off: the bot does not approve %s", pr.head_sha[:12])
    return True


def retract(
    gh: GitHubAPI, pr: PullRequest, refusals: Refusals | None = None
) -> tuple[ReviewInfo, ...]:
    """Before a review that failed or could not finish concludes its check run: dismiss the App's
    approvals of other commits and, unless its approval of ``pr``'s head stands, turn off the
    auto-merge it enabled. (Its approval of this head, given on an earlier review, is left as it
    is: nothing was decided this time.) Returns the reviews as they are now."""
    me = gh.bot_login()
    # ``approve``: keep the approval of this head, if any; dismiss the others
    reviews = withdraw(
        gh, pr, Delegation(pr.head_sha, True), gh.list_reviews(pr.repo, pr.number), refusals
    )
    if not any(is_delegated_approval(r, me) and r.commit_id == pr.head_sha for r in reviews):
        disable_merge(gh, pr, refusals)
    return reviews


def already_on(gh: GitHubAPI, pr: PullRequest) -> str | None:
    """The outcome to report when GitHub refused to enable auto-merge because it is on already,
    read from the pull request (REST ``auto_merge``, GraphQL's ``autoMergeRequest``): enabled by
    an earlier attempt of the App whose answer was lost (a 5xx after GitHub did it, sent again:
    "Pull request Auto merge is already enabled"), or by a person meanwhile. None when it is off,
    the head moved, or the pull request cannot be read (a refusal of the read; GitHub failing
    passes through)."""
    try:
        now = gh.get_pull_request(pr.repo, pr.number)
    except GitHubError as exc:
        if is_retryable(exc):
            raise
        return None
    if not now.auto_merge or now.head_sha != pr.head_sha:
        return None
    if enabled_by_me(now, gh.bot_login()):
        return "auto-merge enabled"
    return f"auto-merge already enabled by {now.auto_merge_by}"


# the outcome for a draft: GitHub refuses to merge one (405 "Pull Request is still a draft", as
# public clients report it) or to enable auto-merge on one, and turns auto-merge off on conversion
DRAFT = "a draft: not merging"
# GitHub's refusals of auto-merge for a pull request that can merge
MERGEABLE_NOW = ("clean status", "unstable status")
# GitHub's refusal where the repository's "Allow auto-merge" is off (its default): a setting to name
NOT_ALLOWED = "auto merge is not allowed"


def enable_merge(
    gh: GitHubAPI, pr: PullRequest, method: str, refusals: Refusals | None = None
) -> str:
    """Enable auto-merge; GitHub refuses it for a pull request that can merge now ("clean status",
    or "unstable status" when only checks that are not required are red or pending): merge it.
    A rate limit or GitHub failing (``is_retryable``) passes through: the job runs again. Any other
    refusal is checked against the pull request's state first (``already_on``)."""
    refusals = refusals if refusals is not None else Refusals()
    try:
        gh.enable_auto_merge(pr.repo, pr.number, pr.node_id, pr.head_sha, method)
        return "auto-merge enabled"
    except GitHubError as exc:
        if is_retryable(exc):
            raise
        if not any(word in str(exc).lower() for word in MERGEABLE_NOW):
            on = already_on(gh, pr)
            if on is not None:
                log.info("enabling auto-merge was refused (%s), but it is on: %s", exc, on)
                return on
            log.warning("auto-merge could not be enabled: %s", exc)
            if exc.status in (403, 404) or METHOD_REFUSED.search(str(exc)):
                refusals.add("auto-merge", exc)
            elif NOT_ALLOWED in str(exc).lower():
                refusals.add("auto-merge setting", exc)
            return f"auto-merge refused ({exc})"
    if not refusals.done(
        "merge", lambda: gh.merge_pull_request(pr.repo, pr.number, pr.head_sha, method)
    ):
        return "merge refused"
    return "merged"


# -- the worker's entry points ---------------------------------------------------------------------
@dataclass(frozen=True)
class OwnerStep:
    """The decision for one review and the pull request's reviews once stale approvals are
    withdrawn."""

    delegation: Delegation
    reviews: tuple[ReviewInfo, ...]


class OwnersStage:
    """Delegation as the last stage of the App's review: decides for the owners (reads only) and
    adds the "Delegated approval" section; ``withdraw`` (after the head is known current) retracts
    what no longer holds. A change the bot could not see whole or read in full is refused, and an
    approval given earlier withdrawn; so is one of a change with nothing the bot reviews (the stage
    does not run: nothing is decided, nothing approved)."""

    def __init__(self, gh: GitHubAPI, inputs: ReviewInputs) -> None:
        self.gh, self.inputs = gh, inputs
        self.delegation: Delegation | None = None

    def __call__(self, request: ReviewRequest, report: Report) -> Report:
        if not self.inputs.touches_watched() and not self.inputs.changes.truncated:
            return report  # not reviewed: nothing watched
        self.delegation = decide(self.inputs, report, self.gh.bot_login(), self.gh)
        return report.with_sections(self.delegation.section())

    def withdraw(
        self, refusals: Refusals | None = None, current: PullRequest | None = None
    ) -> OwnerStep:
        """Retract what no longer holds: the App's approvals of other commits (and of this one when
        it does not approve it) and, when it does not approve the head, the auto-merge it enabled.
        ``current``: the pull request as read last (its auto-merge state), default the inputs'. What
        GitHub refuses is recorded in ``refusals``."""
        pr = current if current is not None else self.inputs.pr
        delegation = self.delegation or Delegation(
            pr.head_sha, False, refused=("the change has nothing the bot reviews",)
        )
        reviews = withdraw(self.gh, pr, delegation, self.inputs.reviews, refusals)
        if not delegation.approve:
            disable_merge(self.gh, pr, refusals)
        return OwnerStep(delegation, reviews)

    def reviews_changed(self) -> tuple[str, ...]:
        """When the stage approves: the reviewers whose deciding review changed since the inputs
        were read (one more listing of the reviews, the pipeline's); else (), nothing read. The App
        acts only on the reviews it judged."""
        if self.delegation is None or not self.delegation.approve:
            return ()
        pr = self.inputs.pr
        now = self.gh.list_reviews(pr.repo, pr.number)
        return changed_reviewers(self.inputs.reviews, now, self.gh.bot_login())


def act_for_owners(
    gh: GitHubAPI,
    pr: PullRequest,
    inputs: ReviewInputs,
    step: OwnerStep | None,
    refusals: Refusals | None = None,
) -> tuple[tuple[ReviewInfo, ...], tuple[Section, ...]]:
    """Approve and enable auto-merge (after the check run concluded); returns the reviews as they
    now are and the merge status section for the summary comment (none when auto-merge is not
    configured). What GitHub refuses is said in the Merge section, or, without one, recorded in
    ``refusals``."""
    if step is None:
        return inputs.reviews, ()
    policy = inputs.config.delegation
    mine = Refusals()
    outcome, reviews = approve(
        gh, pr, step.delegation, step.reviews, policy.auto_merge, policy.merge_method, mine
    )
    log.info("delegated approval: %s", outcome)
    if not policy.auto_merge:
        for refusal in mine.found:
            if refusals is not None:
                refusals.found.append(refusal)
        return reviews, ()
    return reviews, (merge_section(gh, pr, step.delegation, outcome, mine),)


def merge_section(
    gh: GitHubAPI,
    pr: PullRequest,
    delegation: Delegation,
    outcome: str,
    refusals: Refusals | None = None,
) -> Section:
    """Why the pull request is (not) merging: the owners still missing, the check runs that have not
    passed, what GitHub refused and what to grant for it."""
    if outcome.endswith("merged"):
        text = f"Merged at {code(pr.head_sha[:12], table=False)}."
    elif not delegation.approve:
        text = "\n".join(
            [
                "Not merging yet: the bot has not approved on the owners' behalf.",
                "",
                *(f"- {r}" for r in delegation.reasons),
            ]
        )
    elif outcome.endswith(DRAFT):
        text = (
            "Not merging: this pull request is a draft, which GitHub neither merges nor "
            "auto-merges. Once it is marked ready for review, the bot reviews it again and enables "
            "auto-merge."
        )
    elif refusals:
        text = "\n".join(
            [
                "Not merging: GitHub refused what the bot does for the owners; a maintainer merges "
                "this pull request, or an administrator changes what is named below and re-runs "
                "the check.",
                "",
                *(r.line() for r in refusals.found),
            ]
        )
    elif "refused" in outcome:
        text = (
            "The bot approved, but GitHub refused auto-merge; a maintainer merges this pull "
            "request."
        )
    else:
        text = "\n".join(
            [
                "Auto-merge is enabled: GitHub merges this pull request once every required check "
                "passes and its branch protection is satisfied.",
                *check_lines(gh, pr),
            ]
        )
    return Section("Merge", text, data={"outcome": outcome})


def check_lines(gh: GitHubAPI, pr: PullRequest) -> list[str]:
    """The checks that hold the merge back: required ones failing and pending, then the others
    (GraphQL ``isRequired``); when GraphQL cannot tell, the check runs and the commit statuses
    (the combined status: a required check may be either) that have not passed, required or not,
    and which of the two could not be read."""
    states = gh.check_states(pr.repo, pr.number, pr.head_sha)
    if states is not None:
        return merge_lines(states)
    out: list[str] = []
    try:
        newest = newest_by_name(gh.list_check_runs(pr.repo, pr.head_sha, ""))
        lines = [
            f"- {code(r.name, table=False)}: {code(r.conclusion or r.status, table=False)}"
            for r in newest.values()
            if r.status != "completed" or r.conclusion not in ("success", "neutral", "skipped")
        ]
        if lines:
            out += ["", "Check runs on this commit that have not passed:", "", *lines]
    except GitHubError as exc:
        log.warning("check runs could not be listed: %s", exc)
        out += ["", _unread("The check runs", exc, "Checks: read")]
    try:
        lines = [
            f"- {code(s.context, table=False)}: {code(s.state, table=False)}"
            for s in gh.list_commit_statuses(pr.repo, pr.head_sha)
            if s.state != "success"
        ]
        if lines:
            out += ["", "Commit statuses on this commit that have not passed:", "", *lines]
    except GitHubError as exc:
        log.warning("commit statuses could not be read: %s", exc)
        out += ["", _unread("The commit statuses", exc, "Commit statuses: read")]
    return out


def _unread(what: str, exc: GitHubError, permission: str) -> str:
    """The Merge section's line for checks it could not read: never "none is red"."""
    why = f"GitHub answered {exc.status}" if exc.status else "GitHub did not answer in full"
    grant = f" (the App needs {permission})" if exc.status == 403 else ""
    return (
        f"{what} on this commit could not be read ({why}){grant}: a required one may be red or "
        "pending; GitHub's merge box shows them."
    )
