"""Ownership and steering files are reviewed files, approved by their base-side owners.

The root CODEOWNERS GitHub enforces (``.github/``, root, ``docs/``), the naming base schema and the
bot's own configuration decide how every other file is judged, so a pull request that edits one is
never judged by it (the review reads them from the base branch) and never passes on its own say: the
owners of the file on the base branch approve it, and so do the base-side owners of every path whose
ownership a CODEOWNERS change moves. An entry's own CODEOWNERS is covered by
``owners/codeowners-change-needs-approval``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from bot.core import budget
from bot.core.changes import ChangeSet, Status
from bot.core.config import CONFIG_PATHS, NAMING_BASE_FILE, Config, ConfigError, read_config
from bot.core.findings import Finding, Severity
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.codeowners import ROOT_LOCATIONS, RootOwners, owner_key
from bot.model.sides import side_model, unowned_fallback
from bot.review.checks.owners import owner_list, unverifiable
from bot.review.input import ReviewInput

DOC = "docs/owners.md"
RULE = "ownership/steering-file-change"
OUTSIDE = "ownership/outside-entry"
MIRROR = "ownership/mirror-change"
SPEC = "ownership/spec-change"
MOVES_SHOWN = 5
FILES_SHOWN = 5  # of a deleted naming folder, named in its one finding

RULES: dict[str, str] = {
    RULE: "A change to the root CODEOWNERS GitHub reads (`.github/CODEOWNERS`, `CODEOWNERS`, "
    "`docs/CODEOWNERS`), to the naming base schema (`NamingBase.json`) or to the bot's "
    "configuration (`.github/registry-bot.yml`), or one that deletes a naming file (or moves it "
    "out of the naming folder) is approved by the owners of that file on the base "
    "branch and, for a CODEOWNERS change, by the base-side owners of every path whose ownership it "
    "moves; the finding says whose ownership moves where. Checked without an author or approvers "
    "too: such a change never passes unapproved.",
    OUTSIDE: "A changed file under the registry folder that belongs to no entry (no "
    "`registry.json`, `CODEOWNERS` or `facets/` folder claims it, on either side) is judged by no "
    "check: the owners of that file on the base branch (the root CODEOWNERS) approve it; when no "
    "root line gives it an owner, the owners of the root CODEOWNERS itself do.",
    MIRROR: "A change that adds, edits, renames or deletes a file in the published mirror "
    "(`paths.mirror`, `website/static/spec`) is approved by the owners of that file on the base "
    "branch (the root CODEOWNERS): the mirror is what openlineage.io publishes, and the version "
    "rules read it. Never waived; without an author or approvers (the command line) it is not "
    "checked, as for entries (`owners/approval-not-checked`).",
    SPEC: "A change that edits, renames or deletes the specification (`paths.spec`, "
    "`spec/OpenLineage.json`) is approved by the owners of that file on the base branch (the root "
    "CODEOWNERS): every facet schema refers to it and every example is validated against it, and "
    "no entry owns it. Never waived; without an author or approvers (the command line) it is not "
    "checked, as for entries (`owners/approval-not-checked`).",
}


def steering_paths(config: Config) -> tuple[str, ...]:
    """The files that steer the review or say who owns what (an entry's own CODEOWNERS aside)."""
    return (
        *ROOT_LOCATIONS,
        *CONFIG_PATHS,
        f"{config.paths.naming.strip('/')}/{NAMING_BASE_FILE}",
    )


def approvers_of(base_root: RootOwners, path: str) -> tuple[tuple[str, ...], bool]:
    """Who approves a change of ``path`` outside the entries (``unowned_fallback``), and whether
    they own the root CODEOWNERS rather than ``path`` itself."""
    found = unowned_fallback(base_root, path)
    return found.owners, found.unowned is not None


def _fallback_note(path: str, base_root: RootOwners) -> str:
    return (
        f"no line gives {path} an owner in the root {base_root.path}, so the owners of that file, "
        "who decide who owns what, approve it"
    )


def _itself(path: str, fallback: bool, base_root: RootOwners, name: str = "") -> str:
    """What of ``path`` its owners approve, said in a finding: ``path itself`` (``name``), and
    why when they own the root CODEOWNERS (``fallback``)."""
    return f"{name or path + ' itself'}" + (
        f": {_fallback_note(path, base_root)}" if fallback else ""
    )


def _needed(owners: tuple[str, ...], fallback: bool, what: str, base_root: RootOwners) -> str:
    """The "approval needed from ..." text of ``what``: the owners, why when they own the root
    CODEOWNERS (``fallback``), and which of them no approval on GitHub can count for."""
    return (
        f"approval needed from {owner_list(owners)}"
        + (f" ({_fallback_note(what, base_root)})" if fallback else "")
        + unverifiable(owners)
    )


def deleted_naming_files(changes: ChangeSet, config: Config) -> set[str]:
    """The naming files (``.json`` under ``config.paths.naming``) that ``changes`` deletes or moves
    out of the folder: the conventions identifiers are judged by, which the naming checks cannot
    judge once gone (a head without any is judged by no naming rule)."""
    prefix = config.paths.naming.strip("/") + "/"
    base = prefix + NAMING_BASE_FILE  # a steering file already
    out: set[str] = set()
    for change in changes.files:
        old = change.old_path if change.status is Status.RENAMED else change.path
        gone = change.status is Status.DELETED or (
            change.status is Status.RENAMED and not change.path.startswith(prefix)
        )
        if gone and old and old.startswith(prefix) and old.endswith(".json") and old != base:
            out.add(old)
    return out


def steering_changes(changes: ChangeSet, config: Config) -> set[str]:
    """The changed steering files and the deleted naming files."""
    return (changes.paths() & set(steering_paths(config))) | deleted_naming_files(changes, config)


def root_owner_groups(
    base: Snapshot, head: Snapshot, changes: ChangeSet, config: Config
) -> list[tuple[str, ...]]:
    """Every owner group (base-side root CODEOWNERS) these rules may ask to approve ``changes``:
    changed steering files, changed files under the registry that no entry claims, and the files
    whose ownership a root CODEOWNERS change moves. The App looks up the teams among them, as it
    does for entries' owners."""
    base_root = RootOwners.of(base)
    root = config.paths.registry.strip("/") + "/"
    registries = [side_model(s, config).registry for s in (head, base)]
    paths = changes.paths()
    steering = steering_changes(changes, config)
    mirror = config.paths.mirror_prefix
    spec = config.paths.spec.strip("/")
    groups = [
        approvers_of(base_root, path)[0]
        for path in sorted(paths)
        if path in steering
        or path == spec
        or path.startswith(mirror)
        or (path.startswith(root) and not any(r.entry_for(path) for r in registries))
    ]
    if paths & set(ROOT_LOCATIONS):
        groups += [before for _what, before, _after in _moves(base, head, base_root)]
    return groups


def check(review: ReviewInput) -> Iterator[Finding]:
    changes, base = review.changes, review.base
    if changes is None or base is None:
        # a whole tree has no change to approve (the base side of a review is judged without one)
        return
    context = review.context
    consent = {owner_key(x) for x in (context.author, *context.approvers) if x}
    base_root = RootOwners.of(base)
    yield from _outside_entries(review, changes, base_root, consent)
    yield from _mirror(review, changes, base_root, consent)
    yield from _spec(review, changes, base_root, consent)
    deleted = deleted_naming_files(changes, review.config)
    changed = sorted(steering_changes(changes, review.config))
    if not changed:
        return
    yield from _unusable_config(review.head, [p for p in changed if p in CONFIG_PATHS])
    moves = _moves(base, review.head, base_root) if set(changed) & set(ROOT_LOCATIONS) else []
    removed = {c.old_path or c.path for c in changes.files if c.status is Status.DELETED}
    removed |= {c.old_path for c in changes.files if c.status is Status.RENAMED and c.old_path}
    grouped: dict[tuple[tuple[str, ...], bool], list[str]] = {}  # (owners, fallback) -> paths
    for path in changed:
        own, fallback = approvers_of(base_root, path)
        groups: list[tuple[str, tuple[str, ...]]] = [(_itself(path, fallback, base_root), own)]
        if path in ROOT_LOCATIONS:
            groups += [(what, before) for what, before, _after in moves]
        missing = [
            (what, owners)
            for what, owners in groups
            if owners and not any(owner_key(o) in consent for o in owners)
        ]
        if not missing:
            continue
        if path in deleted:  # a deleted naming folder is one finding per set of approvers
            grouped.setdefault((own, fallback), []).append(path)
            continue
        verb = "deletes" if path in removed else "edits"
        yield _steering(review, path, _what(path), verb, missing, moves)
    for (own, fallback), paths in grouped.items():
        if len(paths) == 1:
            missing = [(_itself(paths[0], fallback, base_root), own)]
            yield _steering(review, paths[0], _what(paths[0]), "deletes", missing, [], gone=True)
            continue
        folder = posixpath.commonpath(paths)
        listed = ", ".join(posixpath.relpath(p, folder) for p in paths[:FILES_SHOWN])
        more = f" and {len(paths) - FILES_SHOWN} more" if len(paths) > FILES_SHOWN else ""
        missing = [(_itself("them", fallback, base_root, name="these files"), own)]
        yield _steering(
            review,
            folder,
            "are naming conventions identifiers are judged by",
            f"deletes {len(paths)} naming files under",
            missing,
            [],
            detail=f" ({listed}{more})",
            gone=True,
        )


def _what(path: str) -> str:
    """What a steering file is, said in a finding."""
    return (
        "says who owns the repository's files"
        if path in ROOT_LOCATIONS
        else "configures the review"
        if path in CONFIG_PATHS
        else "is the schema naming files are judged by"
        if path.endswith("/" + NAMING_BASE_FILE)
        else "is a naming convention identifiers are judged by"
    )


def _steering(
    review: ReviewInput,
    path: str,
    what: str,
    verb: str,
    missing: list[tuple[str, tuple[str, ...]]],
    moves: list[tuple[str, tuple[str, ...], tuple[str, ...]]],
    detail: str = "",
    gone: bool = False,
) -> Finding:
    """The finding of a steering change of ``path`` (a file, or the folder of deleted naming
    files, ``detail`` naming them) that ``missing`` owners have not approved; ``gone``: the head
    side is judged without it (deleted naming files)."""
    needed = tuple(dict.fromkeys(o for _what, owners in missing for o in owners))
    moved = "; ".join(
        f"{what_}: from {owner_list(before) or 'no one'} to {owner_list(after) or 'no one'}"
        for what_, before, after in moves[:MOVES_SHOWN]
    )
    more = f" and {len(moves) - MOVES_SHOWN} more moves" if len(moves) > MOVES_SHOWN else ""
    judged = (
        "the head side is judged without " + ("them" if detail else "it")
        if gone
        else "it is judged by the base branch's version"
    )
    message = (
        f"this change {verb} {path}{detail}, which {what}; {judged} and "
        + (f"moves ownership: {moved}{more}; " if moved and path in ROOT_LOCATIONS else "")
        + "approval needed from "
        + "; and from ".join(f"{owner_list(owners)} (for {what_})" for what_, owners in missing)
        + unverifiable(needed)
    )
    return Finding(
        rule=RULE,
        severity=Severity.ERROR,
        path=path,
        line=1 if not detail and review.head.size(path) else None,
        message=message,
        owners=needed,
        subject=path,
        hint="An owner listed here approves the pull request (a member of a listed team "
        "counts). "
        f"See {DOC}.",
    )


def _outside_entries(
    review: ReviewInput, changes: ChangeSet, base_root: RootOwners, consent: set[str]
) -> Iterator[Finding]:
    """Changed files under the registry folder that no entry of either side claims: no check
    judges them, so their base-side owners approve them."""
    root = review.config.paths.registry.strip("/") + "/"
    registries = [r for r in (review.head_registry, review.base_registry) if r is not None]
    # a move is also the deletion of its old path
    places = [(c.path, c.status is Status.DELETED) for c in changes.files]
    places += [(c.old_path, True) for c in changes.files if c.old_path and c.old_path != c.path]
    for path, gone in places:
        if not path.startswith(root) or any(r.entry_for(path) for r in registries):
            continue
        owners, fallback = approvers_of(base_root, path)
        if not owners or any(owner_key(o) in consent for o in owners):
            continue  # no owner for it nor for the root CODEOWNERS: no one is asked, as on GitHub
        yield Finding(
            rule=OUTSIDE,
            severity=Severity.ERROR,
            path=path,
            line=1 if not gone and review.head.size(path) else None,
            message=f"{path} belongs to no registry entry (no registry.json, CODEOWNERS or "
            "facets/ folder claims it), so no check judges it; "
            + _needed(owners, fallback, path, base_root),
            owners=owners,
            subject=path,
            hint="Put it in an entry's folder, or have an owner listed here approve the pull "
            f"request. See {DOC}.",
        )


def _mirror(
    review: ReviewInput, changes: ChangeSet, base_root: RootOwners, consent: set[str]
) -> Iterator[Finding]:
    """Files of the published mirror the change adds, edits, renames or deletes: what
    openlineage.io publishes, and what the version rules read as published, so their base-side
    owners approve them (one finding per owner group). Like an entry's files (unlike the steering
    files, which decide how this very review judges), not checked without author or approvers."""
    if review.context.author is None and not review.context.approvers:
        return  # as for an entry's files: owners/approval-not-checked says approval was not checked
    mirror = review.config.paths.mirror_prefix
    missing: dict[tuple[tuple[str, ...], bool], list[str]] = {}
    for path in sorted(p for p in changes.paths() if p.startswith(mirror)):
        owners, fallback = approvers_of(base_root, path)
        if owners and not any(owner_key(o) in consent for o in owners):
            missing.setdefault((owners, fallback), []).append(path)
    for (owners, fallback), paths in missing.items():
        first = paths[0]
        yield Finding(
            rule=MIRROR,
            severity=Severity.ERROR,
            path=first,
            line=1 if review.head.size(first) else None,
            message=f"this change writes the published mirror ({_files(paths)}), which is what "
            "openlineage.io publishes and what the version rules read as published; "
            + _needed(owners, fallback, _files(paths), base_root),
            owners=owners,
            subject=first,
            hint="An owner listed here approves the pull request (a member of a listed team "
            "counts); an entry publishes its versions through them. "
            f"See {DOC}.",
        )


def _spec(
    review: ReviewInput, changes: ChangeSet, base_root: RootOwners, consent: set[str]
) -> Iterator[Finding]:
    """The specification the change edits, renames or deletes: the ground every facet schema
    refers to, which no entry owns, so its base-side owners approve it. Like the mirror, not
    checked without author or approvers."""
    if review.context.author is None and not review.context.approvers:
        return  # as for an entry's files: owners/approval-not-checked says approval was not checked
    spec = review.config.paths.spec.strip("/")
    change = next((c for c in changes.files if spec in (c.path, c.old_path)), None)
    if change is None:
        return
    owners, fallback = approvers_of(base_root, spec)
    if not owners or any(owner_key(o) in consent for o in owners):
        return  # no owner for it nor for the root CODEOWNERS: no one is asked, as on GitHub
    verb = (
        "deletes"
        if change.status is Status.DELETED
        else "moves"
        if change.old_path == spec and change.path != spec
        else "adds"
        if change.status is Status.ADDED
        else "edits"
    )
    yield Finding(
        rule=SPEC,
        severity=Severity.ERROR,
        path=spec,
        line=1 if review.head.size(spec) else None,
        message=f"this change {verb} {spec}, the specification every facet schema refers to and "
        "every example is validated against; " + _needed(owners, fallback, spec, base_root),
        owners=owners,
        subject=spec,
        hint=f"An owner listed here approves the pull request (a member of a listed team counts). "
        f"See {DOC}.",
    )


def _unusable_config(head: Snapshot, paths: list[str]) -> Iterator[Finding]:
    """The configuration a change writes, as the reviews after its merge would read it: one that
    cannot be used is this change's error (once merged, every review falls back to the defaults)."""
    for path in paths:
        try:
            read_config(head, path)
        except (ConfigError, SnapshotError) as exc:
            yield Finding(
                rule="config/invalid",
                severity=Severity.ERROR,
                path=path,
                line=1,
                column=1,
                message=f"this change's configuration cannot be used: {exc}; once merged, every "
                "review would fall back to the defaults",
                hint="See the README section 'Configuration' for the keys the bot reads.",
            )


def _moves(
    base: Snapshot, head: Snapshot, base_root: RootOwners
) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Whose ownership the change of the enforced root CODEOWNERS moves: ``(files, before, after)``
    groups over the files of both sides, named by their common folder and count."""
    head_root = RootOwners.of(head)
    grouped: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for path in sorted(set(base.files()) | set(head.files())):
        budget.check()
        before, after = base_root.owners_of(path), head_root.owners_of(path)
        if {owner_key(o) for o in before} != {owner_key(o) for o in after}:
            grouped.setdefault((before, after), []).append(path)
    return [(_files(paths), before, after) for (before, after), paths in grouped.items()]


def _files(paths: list[str]) -> str:
    if len(paths) == 1:
        return paths[0]
    common = paths[0].rsplit("/", 1)[0] if "/" in paths[0] else ""
    while common and not all(p.startswith(common + "/") for p in paths):
        common = common.rsplit("/", 1)[0] if "/" in common else ""
    return f"{len(paths):,} files under {common}/" if common else f"{len(paths):,} files"
