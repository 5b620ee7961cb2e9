"""Owners: every entry names its owners in its own CODEOWNERS, and they approve changes to it.

GitHub itself enforces only the root CODEOWNERS of the base branch; the per-entry files of the
registry proposal are enforced here. Ownership of a change is always judged from the base side,
so a pull request cannot make its author an owner and approve itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from bot.core.findings import Edit, Finding, Fix, Severity
from bot.core.incomplete import UNCHECKED_PATTERN
from bot.model.codeowners import (
    LOGIN,
    ROOT_LOCATIONS,
    CodeOwners,
    Rule,
    owner_key,
    owner_kind,
    same_owners,
)
from bot.model.registry import Entry
from bot.model.sides import (
    Ownership,
    Side,
    claimants,
    entry_relative,
    ownership,
    root_ownership,
)
from bot.review.input import ReviewInput

DOC = "docs/owners.md"

RULES: dict[str, str] = {
    "owners/missing-codeowners": "Every entry has its own `CODEOWNERS` file "
    "(`spec/registry/<name>/CODEOWNERS`) naming who may approve changes to it. A new entry without "
    "one, or a change that deletes one, fails the review; for an existing entry without one the "
    "finding is pre-existing and names who GitHub routes its review to today through the root "
    "CODEOWNERS. An adoption gap: a warning with `--all`.",
    "owners/invalid-owner": "Each owner on a CODEOWNERS line is `@user`, `@org/team` or an e-mail "
    "address. GitHub skips a line with any other owner, so the line is reported where the bad "
    "owner sits.",
    "owners/invalid-pattern": "CODEOWNERS patterns follow gitignore, except that GitHub rejects "
    "`!` negation, `[ ]` character ranges and `\\#` escapes; such a line, or one that is not a "
    "valid pattern at all, is skipped by GitHub and reported on its line.",
    "owners/unchecked-pattern": "A CODEOWNERS pattern the bot could not match (past its time "
    "limit, or over its limit on compiled patterns) is ignored, so the ownership of the paths it "
    "may match was not judged: an error on its line, never pre-existing (the same line on the "
    "base says nothing of who owns what the change touches), never waived.",
    "owners/unreadable-codeowners": "A CODEOWNERS file GitHub would not load: over 3 MB, or a "
    "symlink.",
    "owners/no-owners": "An entry's CODEOWNERS gives its `registry.json` at least one owner (a "
    "line with a pattern and no owner is legal, but it leaves the files it matches without owner).",
    "owners/root-mismatch": "The root CODEOWNERS that GitHub enforces (`.github/CODEOWNERS`, else "
    "`CODEOWNERS`, else `docs/CODEOWNERS`, base branch, last matching line wins) routes the "
    "entry's files to the same owners as the entry's own CODEOWNERS. A warning: otherwise GitHub "
    "requests review from other people than the entry's owners. For a new entry the line is added "
    "in the same pull request (the head's root CODEOWNERS: GitHub applies it once merged); "
    "`registry-bot init` writes it.",
    "owners/ignored-root-codeowners": "The change edits a root-level CODEOWNERS file that GitHub "
    "does not read, because one earlier in GitHub's lookup order (`.github/`, root, `docs/`) "
    "exists.",
    "owners/approval-required": "For each entry the change touches, the author or an approving "
    "reviewer is one of the entry's owners (its CODEOWNERS on the base branch; the root CODEOWNERS "
    "when it has none); for a new name, and a name the change removes, one of the root "
    "CODEOWNERS owners too, who approve names. Otherwise an error names the owners who must "
    "approve. Teams count through the `org/team` slugs passed with the approvers; logins, teams "
    "and e-mails compare case-insensitively.",
    "owners/codeowners-change-needs-approval": "A change to an entry's CODEOWNERS is a change of "
    "who owns the entry: it is approved by the owners on the base branch, never by owners the "
    "change itself adds.",
    "owners/repo-relative-pattern": "A warning: a pattern in an entry's CODEOWNERS written from "
    "the repository root (`/spec/registry/acme/facets/`) matches nothing, because an entry's "
    "patterns are relative to its folder (`/facets/`); the files it meant fall to the lines before "
    "it or to the root CODEOWNERS.",
    "owners/approval-not-checked": "A notice: the change was reviewed without an author or "
    "approvers (`--author`, `--approved-by`), so whether its owners approved it was not checked.",
}


def owner_list(owners: Iterable[str]) -> str:
    """``@a``, ``@a or @b``, ``@a, @b or @c``."""
    items = list(owners)
    return f"{', '.join(items[:-1])} or {items[-1]}" if len(items) > 1 else "".join(items)


def unverifiable(owners: Iterable[str]) -> str:
    """What a finding asking ``owners`` to approve says of the e-mail owners among them ("" when
    none): GitHub matches such an owner to the account with that verified e-mail address, which
    the bot cannot read, so no approval on GitHub is ever counted for it."""
    emails = [o for o in owners if owner_kind(o) == "email"]
    if not emails:
        return ""
    one = len(emails) == 1
    return (
        f"; {owner_list(emails)} {'is an e-mail owner' if one else 'are e-mail owners'}, which "
        "GitHub matches to the account with that verified e-mail address and the bot cannot (it "
        f"does not read accounts' e-mail addresses): no approval on GitHub counts for "
        f"{'it' if one else 'them'}, so an owner named by login or team must approve"
    )


def _routed(route: Ownership) -> str:
    """Who GitHub requests, as a phrase: ``@a, @b (CODEOWNERS line 3)`` or ``no one (...)``."""
    if route.owners:
        return f"{', '.join(route.owners)} ({route.source()})"
    if route.file:
        return f"no one ({route.file} has no owner for it)"
    return "no one (the repository has no CODEOWNERS GitHub reads)"


def _location(review: ReviewInput, paths: Iterable[str]) -> tuple[str, int | None, int | None]:
    """A file of the head side to attach a finding to, preferring the given order."""
    candidates = list(paths)
    for path in candidates:
        if review.head.size(path) is not None:
            return path, 1, 1
    return (candidates[0], None, None) if candidates else ("", None, None)


# --- CODEOWNERS syntax --------------------------------------------------------------------------

_PROBLEM_RULES = {
    "owner": "owners/invalid-owner",
    "pattern": "owners/invalid-pattern",
    "file": "owners/unreadable-codeowners",
}
_HINTS = {
    "owner": "Write owners as `@login`, `@org/team-slug` or an e-mail address of a GitHub account.",
    "pattern": "Use gitignore-style patterns without `!`, `[ ]` or `\\#`; list each alternative "
    "on its own line.",
    "file": "Keep CODEOWNERS a regular file under 3 MB.",
}


def syntax_findings(file: CodeOwners, entry: str | None) -> Iterator[Finding]:
    for problem in file.problems:
        yield Finding(
            rule=_PROBLEM_RULES[problem.kind],
            severity=Severity.ERROR,
            path=file.path,
            line=problem.line,
            column=problem.column,
            message=problem.message,
            hint=_HINTS[problem.kind],
            entry=entry,
        )


def failed_pattern_findings(sides: Iterable[Side]) -> Iterator[Finding]:
    for side in sides:
        for file in side.parsed():
            for line, why in sorted(file.failed_lines.items()):
                rule = next(r for r in file.rules if r.line == line)
                yield Finding(
                    rule=UNCHECKED_PATTERN,
                    severity=Severity.ERROR,
                    path=file.path,
                    line=line,
                    column=1,
                    message=f"pattern `{rule.pattern}` {why}; the bot ignored this line (GitHub "
                    "may not)",
                    hint=_HINTS["pattern"],
                )


# --- per-entry files ----------------------------------------------------------------------------


def entry_findings(review: ReviewInput, head: Side, base: Side | None) -> Iterator[Finding]:
    """Missing, unusable and root-disagreeing CODEOWNERS of the entries under review."""
    judge = base or head  # GitHub reads the root CODEOWNERS of the base branch
    for entry in review.reviewed_entries():
        own = head.own(entry)
        if own is None:
            # an entry with no folder in the registry has nothing to own yet; core may be delegated
            # by a root CODEOWNERS line of its own (`spec/registry/core @org/team`, the proposal's
            # layout)
            if entry.has_folder and not (
                entry.is_core and any(_delegated(entry, side) for side in (head, judge))
            ):
                yield _missing(review, entry, judge, base)
            continue
        yield from syntax_findings(own, entry.name)
        if any(p.kind == "file" for p in own.problems):
            continue
        yield from _repo_relative(review, entry, own)
        rule = own.rule_for("registry.json")
        if rule is None and any(p.kind in ("owner", "pattern") for p in own.problems):
            # the line GitHub skips is the cause, reported on its line: one message per cause
            continue
        if rule is None or not rule.owners:
            where = f"line {rule.line} un-owns it" if rule else "no line matches it"
            yield Finding(
                rule="owners/no-owners",
                severity=Severity.ERROR,
                path=own.path,
                line=rule.line if rule else 1,
                column=1,
                entry=entry.name,
                message=f"the CODEOWNERS of `{entry.name}` names no owner for its registry.json "
                f"({where})",
                hint="Start the file with a line such as `* @your-org/your-team`.",
            )
            continue
        # a new entry's routing is added in the same change: GitHub applies it once merged
        yield from _root_mismatch(
            entry, own, rule, head if review.is_new_entry(entry.name) else judge
        )


def _repo_relative(review: ReviewInput, entry: Entry, own: CodeOwners) -> Iterator[Finding]:
    """Lines whose pattern names a repository folder of the registry (``/spec/registry/...``):
    relative to the entry's folder, such a pattern matches nothing, so the files it meant
    silently fall back to the lines before it or to the root CODEOWNERS."""
    paths = review.config.paths
    folders = [f.strip("/") for f in (paths.registry, paths.facets, paths.tests)]
    for rule in own.rules:
        body = rule.pattern.lstrip("/")
        if not any(body.rstrip("*").rstrip("/") == f or body.startswith(f + "/") for f in folders):
            continue
        meant = entry_relative(entry, body)
        suggestion = (
            f"write it relative to the folder: `/{meant}`"
            if meant != body
            else "an entry's CODEOWNERS owns only the entry's own files"
        )
        yield Finding(
            rule="owners/repo-relative-pattern",
            severity=Severity.WARNING,
            path=own.path,
            line=rule.line,
            column=1,
            entry=entry.name,
            message=f"pattern `{rule.pattern}` is written from the repository root, but the "
            f"patterns of an entry's CODEOWNERS are relative to the entry's folder "
            f"({entry.folder}/), so it matches nothing: the files it meant fall to the lines "
            "before it or to the root CODEOWNERS",
            hint=f"{suggestion[0].upper()}{suggestion[1:]}. See {DOC}.",
        )


def _delegated(entry: Entry, side: Side) -> bool:
    """Whether the root CODEOWNERS gives the entry's folder owners on a line of its own (not a
    catch-all)."""
    rule = side.root.rule_for(entry.registry_json)
    return (
        rule is not None
        and bool(rule.owners)
        and rule.pattern.strip("/").rstrip("*").rstrip("/") == entry.folder
    )


def _missing(review: ReviewInput, entry: Entry, judge: Side, base: Side | None) -> Finding:
    base_entry = base.registry.entries.get(entry.name) if base is not None else None
    deleted = base is not None and base_entry is not None and base.own(base_entry) is not None
    new = review.is_new_entry(entry.name)
    route = root_ownership(judge, entry.registry_json)
    if new:
        why = "a new entry must name its owners"
    elif deleted:
        why = "this change deletes it"
    else:
        why = f"GitHub routes its review to {_routed(route)} today"
    path, line, column = _location(
        review, [entry.registry_json, *entry.registry.snapshot.files(entry.folder)]
    )
    return Finding(
        rule="owners/missing-codeowners",
        severity=Severity.ERROR,
        path=path,
        line=line,
        column=column,
        entry=entry.name,
        subject=entry.name,
        message=f"entry `{entry.name}` has no CODEOWNERS of its own ({entry.codeowners}); {why}",
        hint=f"Add {entry.codeowners} with a line such as `* @your-org/your-team`. See {DOC}.",
        fix=_codeowners_fix(review, entry) if new else None,
    )


_LOGIN = re.compile(LOGIN)


def _codeowners_fix(review: ReviewInput, entry: Entry) -> Fix | None:
    """A new entry's CODEOWNERS naming the author of the change (who claims the name), when
    known."""
    author = (review.context.author or "").lstrip("@")
    if not _LOGIN.fullmatch(author) or review.head.size(entry.codeowners) is not None:
        return None
    text = f"# Owners of the {entry.name} registry entry.\n* @{author}\n"
    return Fix(f"create {entry.codeowners} naming @{author}", (Edit(entry.codeowners, 1, 0, text),))


def _root_mismatch(entry: Entry, own: CodeOwners, first: Rule, judge: Side) -> Iterator[Finding]:
    for path in (entry.registry_json, entry.codeowners):
        rule = own.rule_for(entry_relative(entry, path)) if path != entry.registry_json else first
        mine = rule.owners if rule else ()
        route = root_ownership(judge, path)
        if not same_owners(mine, route.owners):
            folder = "/" + entry.folder + "/"
            yield Finding(
                rule="owners/root-mismatch",
                severity=Severity.WARNING,
                path=own.path,
                line=rule.line if rule else 1,
                column=1,
                entry=entry.name,
                message=f"GitHub routes {path} to {_routed(route)}, but the entry's CODEOWNERS "
                f"names {', '.join(mine) or 'no one'}; GitHub will not request review from the "
                f"entry's owners",
                hint=f"Add `{folder} {' '.join(own.all_owners())}` at the end of the root "
                f"CODEOWNERS ({judge.root.path or ROOT_LOCATIONS[0]}).",
            )
            return


def root_file_findings(review: ReviewInput, head: Side) -> Iterator[Finding]:
    """Syntax of the root CODEOWNERS (when the change edits it, or on ``--all``) and edits GitHub
    ignores."""
    if review.changes is None:
        if head.root.file is not None:
            yield from syntax_findings(head.root.file, None)
        return
    changed = review.changes.paths()
    enforced = head.root.path
    for location in ROOT_LOCATIONS:
        if location not in changed or review.head.size(location) is None:
            continue
        if location == enforced and head.root.file is not None:
            yield from syntax_findings(head.root.file, None)
        elif enforced is not None and ROOT_LOCATIONS.index(enforced) < ROOT_LOCATIONS.index(
            location
        ):
            yield Finding(
                rule="owners/ignored-root-codeowners",
                severity=Severity.WARNING,
                path=location,
                line=1,
                column=1,
                message=f"GitHub does not read {location}: it reads {enforced}, which comes first",
                hint=f"Make the change in {enforced}, or move the file there.",
            )


# --- approvals ----------------------------------------------------------------------------------


def approval_findings(review: ReviewInput, head: Side, base: Side | None) -> Iterator[Finding]:
    """Whether the owners (base side) of every entry the change touches authored or approved it."""
    changes = review.changes
    if changes is None or base is None:
        return  # a whole-tree review has no author: the approval rules do not apply
    context = review.context
    if context.author is None and not context.approvers:
        yield Finding(
            rule="owners/approval-not-checked",
            severity=Severity.NOTICE,
            path="",
            message="owner approval was not checked: no author or approvers were given",
            hint="Pass --author LOGIN and --approved-by LOGIN,ORG/TEAM to check it.",
        )
        return
    consent = {owner_key(x) for x in (context.author, *context.approvers) if x}
    per_entry: dict[str, list[tuple[str, Entry | None]]] = {}
    for path in sorted(changes.paths()):
        for name, entry in claimants(base.registry, head.registry, path):
            per_entry.setdefault(name, []).append((path, entry))
    for name, claims in sorted(per_entry.items()):
        finding = _approval(review, base, head, name, claims, consent)
        if finding is not None:
            yield finding


def _approval(
    review: ReviewInput,
    base: Side,
    head: Side,
    name: str,
    claims: list[tuple[str, Entry | None]],
    consent: set[str],
) -> Finding | None:
    base_entry = base.registry.entries.get(name)
    paths = list(dict.fromkeys(path for path, _entry in claims))
    missing: dict[tuple[str, ...], list[Ownership]] = {}
    for path, entry in claims:
        owned = ownership(base, entry, path)
        if owned.owners and not any(owner_key(o) in consent for o in owned.owners):
            missing.setdefault(owned.owners, []).append(owned)
    if not missing:
        return None
    owners = tuple(dict.fromkeys(o for group in missing for o in group))
    needs = "; and from ".join(
        f"{owner_list(group)} ({_sources(found)})" for group, found in missing.items()
    ) + unverifiable(owners)
    who = _who(review)
    rule = "owners/approval-required"
    where = _location(review, paths)
    if base_entry is None:
        message = (
            f"`{name}` is a new entry: claiming a name is approved by the registry's owners on the "
            f"base branch, and {who}: approval needed from {needs}"
        )
    elif name not in head.registry.entries:
        if base_entry.codeowners in paths:
            rule = "owners/codeowners-change-needs-approval"
        message = (
            f"this change removes the registered name `{name}`, which frees it for anyone: a "
            "name's removal is approved by the registry's owners on the base branch, as its claim "
            f"is, and the change to its files by the entry's owners, and {who}: approval needed "
            f"from {needs}"
        )
    elif base_entry.codeowners in paths:
        rule = "owners/codeowners-change-needs-approval"
        message = (
            f"this change edits {base_entry.codeowners}, which decides who owns `{name}`; "
            f"ownership is judged by the owners on the base branch, and {who}: approval needed "
            f"from {needs}"
        )
        where = _location(review, [base_entry.codeowners])
    else:
        message = f"`{name}` is changed but {who}: approval needed from {needs}"
    return Finding(
        rule=rule,
        severity=Severity.ERROR,
        path=where[0],
        line=where[1],
        column=where[2],
        entry=name,
        owners=owners,
        message=message,
        hint="An owner listed here approves the pull request (a member of a listed team counts). "
        f"See {DOC}.",
    )


def _sources(found: list[Ownership]) -> str:
    return ", ".join(dict.fromkeys(f"base-branch {o.source()}" for o in found))


def _who(review: ReviewInput) -> str:
    context = review.context
    author = (
        f"the author @{context.author.removeprefix('@')}"
        if context.author
        else "the author (unknown)"
    )
    approvers = ", ".join(sorted("@" + a.removeprefix("@") for a in context.approvers)) or "none"
    return f"neither {author} nor the approvers ({approvers}) own it"


# --- the check ----------------------------------------------------------------------------------


def check(review: ReviewInput) -> Iterator[Finding]:
    head = review.head_model.owners
    base = review.base_model.owners if review.base_model is not None else None
    yield from entry_findings(review, head, base)
    yield from root_file_findings(review, head)
    yield from approval_findings(review, head, base)
    yield from failed_pattern_findings([s for s in (head, base) if s is not None])
