"""Which waivers apply: read from the base side, granted by its owners, unexpired, pointing at a
finding.

A waived finding is never dropped: it carries ``waived`` and stops blocking. A waiver that is
malformed, granted by someone who does not own what it waives, expired or pointing at nothing is a
finding itself. The head side's waiver files are checked too (a pull request adding a waiver learns
it is refused), but only the base side's ever waive: a waiver added or changed in a pull request
never applies to it.

A waiver follows its file across a rename the change makes within the waiver's entry (or anywhere,
for a registry-wide one): the finding it waived is the same finding at the new path. One whose
finding the change moves out of its reach (to another entry) is unmatched because of the change:
new, as one whose finding the change fixes.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import replace

from bot.core.changes import ChangeSet
from bot.core.config import CONFIG_PATHS, Config
from bot.core.findings import Finding, Severity, State
from bot.core.snapshot import Snapshot
from bot.core.waivers import FILE_NAME, INVALID, NEVER_WAIVED, Waiver, never_waived, parse_file
from bot.model.codeowners import owner_key
from bot.model.sides import ownership, root_ownership, side_model

DOC = "docs/waivers.md"
RULES: dict[str, str] = {
    INVALID: "An entry's `waivers.json` (or the configuration's `waivers:` list) follows "
    "`registry/waivers.schema.json`: each waiver names one rule, one place (path and JSON pointer "
    "or subject), a reason, who granted it and its expiry date. A file that breaks the schema "
    "waives nothing. A waiver of a rule that is never waived (who must approve a change, what the "
    "review could not judge in full) waives nothing either.",
    "waivers/not-owner": "A waiver is granted (`granted_by`) by an owner, on the base branch, of "
    "the entry it sits in (its CODEOWNERS line for `waivers.json`), or by the registry's owners "
    "(the root CODEOWNERS line of the configuration) for a registry-wide one; and an entry's "
    "waiver waives only that entry's files. Otherwise it waives nothing.",
    "waivers/expired": "A waiver applies until its `expires` date (inclusive); after that the "
    "finding it waived counts again and the stale waiver is a warning until it is removed or "
    "renewed.",
    "waivers/unmatched": "A waiver points at a finding the review reports (same rule, path, and "
    "pointer or subject); one that points at nothing (the finding is fixed, or the place was "
    "mistyped) is a warning.",
}


def entry_waiver_files(snapshot: Snapshot, config: Config) -> list[tuple[str, str]]:
    """(path, entry name) of every entry's ``waivers.json`` on ``snapshot``."""
    registry = side_model(snapshot, config).registry
    out = []
    for entry in registry.entries.values():
        path = f"{entry.folder}/{FILE_NAME}"
        if snapshot.size(path) is not None:
            out.append((path, entry.name))
    return out


def read_waivers(snapshot: Snapshot, config: Config) -> tuple[list[Waiver], list[Finding]]:
    """Every waiver of ``snapshot`` (entries' files, then the configuration's), and the malformed
    files."""
    waivers: list[Waiver] = list(config.waivers)
    problems: list[Finding] = []
    for path, entry in entry_waiver_files(snapshot, config):
        found, wrong = parse_file(snapshot.read(path) or b"", path, entry)
        waivers += found
        problems += wrong
    return waivers, problems


def refusal(waiver: Waiver, owners_side: Snapshot, config: Config) -> str | None:
    """Why ``waiver`` cannot apply, judged by ``owners_side`` (the base): not an owner's, or outside
    its entry."""
    model = side_model(owners_side, config)
    registry, side = model.registry, model.owners
    if waiver.entry is not None:
        entry = registry.entries.get(waiver.entry)
        if entry is None:
            return (
                f"entry `{waiver.entry}` is not on the base branch yet, so it has no owners to "
                f"grant it"
            )
        target = registry.entry_for(waiver.path)
        if target is None or target.name != waiver.entry:
            return f"it waives {waiver.path}, which is not a file of entry `{waiver.entry}`"
        owners = ownership(side, entry, waiver.source).owners
        whose = f"the owners of `{waiver.entry}` on the base branch"
    else:
        owners = root_ownership(side, config.source or CONFIG_PATHS[0]).owners
        whose = "the registry's owners (root CODEOWNERS of the configuration, base branch)"
    if owner_key(waiver.granted_by) in {owner_key(o) for o in owners}:
        return None
    return (
        f"it is granted by {waiver.granted_by}, who is not one of {whose}: "
        f"{', '.join(owners) or 'no one'}"
    )


def _problem(
    rule: str, severity: Severity, waiver: Waiver, message: str, hint: str, entry: str | None
) -> Finding:
    return Finding(
        rule=rule,
        severity=severity,
        path=waiver.source,
        line=waiver.line,
        column=1 if waiver.line else None,
        message=message,
        hint=hint,
        entry=entry,
        subject=f"{waiver.rule} {waiver.place()}",
    )


def _entry_of(path: str, snapshot: Snapshot, config: Config) -> str | None:
    entry = side_model(snapshot, config).registry.entry_for(path)
    return entry.name if entry is not None else None


def validity(
    waivers: Iterable[Waiver], owners_side: Snapshot, config: Config, today: datetime.date
) -> tuple[list[Waiver], list[Finding]]:
    """The waivers that may apply today, and a finding for each one refused or expired."""
    usable: list[Waiver] = []
    problems: list[Finding] = []
    for w in waivers:
        entry = w.entry or _entry_of(w.path, owners_side, config)
        never = never_waived(w.rule)
        why = refusal(w, owners_side, config)
        if never is not None:
            problems.append(
                _problem(
                    INVALID,
                    Severity.ERROR,
                    w,
                    f"waiver of {w.rule} at {w.place()} cannot apply: {never}",
                    f"Remove the waiver; {w.rule} is never waived. See {DOC}.",
                    entry,
                )
            )
        elif why is not None:
            problems.append(
                _problem(
                    "waivers/not-owner",
                    Severity.ERROR,
                    w,
                    f"waiver of {w.rule} at {w.place()} does not apply: {why}",
                    "An owner grants the waiver in their own name, through a reviewed change. "
                    f"See {DOC}.",
                    entry,
                )
            )
        elif w.expires < today:
            problems.append(
                _problem(
                    "waivers/expired",
                    Severity.WARNING,
                    w,
                    f"waiver of {w.rule} at {w.place()} expired on {w.expires.isoformat()}; "
                    "the finding counts again",
                    f"Fix the finding, or renew the waiver. See {DOC}.",
                    entry,
                )
            )
        else:
            usable.append(w)
    return usable, problems


def waive(
    findings: Sequence[Finding],
    fixed: Sequence[Finding],
    entries: Iterable[str],
    head: Snapshot,
    base: Snapshot | None,
    changes: ChangeSet | None,
    config: Config,
    today: datetime.date,
    before: Sequence[Finding] = (),
) -> list[Finding]:
    """``findings`` with the base side's valid waivers applied, plus the waivers' own findings
    (judged: a problem of the base side's files is pre-existing, one a change brings in is new).
    ``before``: the base side's findings (a waiver that pointed at one there and points at none
    after the change's renames is the change's)."""
    side = base if base is not None else head
    waivers, problems = read_waivers(side, config)
    usable, refused = validity(waivers, side, config, today)
    problems += refused
    out = list(findings)
    reviewed = set(entries)
    renamed = {f.old_path: f.path for f in changes.files if f.old_path} if changes else {}
    for w in usable:
        target = _followed(w, renamed, head, config)
        hits = [
            i
            for i, f in enumerate(out)
            # a finding asking owners to approve (``owners``) is never waived, whatever its rule
            if f.waived is None
            and f.rule not in NEVER_WAIVED
            and not f.owners
            and target.matches(f)
        ]
        for i in hits:
            out[i] = replace(out[i], waived=w.waived())
        in_scope = changes is None or (w.entry or _entry_of(w.path, head, config)) in reviewed
        if not hits and in_scope:
            was_there = any(w.matches(f) for f in fixed)
            moved = w.path in renamed and any(w.matches(f) for f in before)
            problem = _problem(
                "waivers/unmatched",
                Severity.WARNING,
                w,
                f"waiver of {w.rule} at {w.place()} points at no finding"
                + (" (this change fixes it)" if was_there else "")
                + (
                    f" (this change moves its file to {renamed[w.path]}, out of the waiver's entry)"
                    if moved and not was_there
                    else ""
                ),
                f"Remove the waiver, or correct its rule, path and pointer. See {DOC}.",
                w.entry or _entry_of(w.path, side, config),
            )
            problems.append(replace(problem, state=State.NEW if was_there or moved else None))
    if base is None or changes is None:
        return out + problems
    # a change review shows the entries it touches: another entry's stale waiver is not this
    # change's news
    problems = [f for f in problems if f.entry is None or f.entry in reviewed]
    return out + _judged(problems, head, base, changes, config, today)


def _followed(w: Waiver, renamed: dict[str, str], head: Snapshot, config: Config) -> Waiver:
    """``w`` at the path the change renamed its file to, where the waiver still reaches it: a
    registry-wide waiver anywhere, an entry's within that entry (on the head side)."""
    new = renamed.get(w.path)
    if new is None or (w.entry is not None and _entry_of(new, head, config) != w.entry):
        return w
    subject = w.subject.replace(w.path, new) if w.subject is not None else None
    return replace(w, path=new, subject=subject)


def _judged(
    base_problems: list[Finding],
    head: Snapshot,
    base: Snapshot,
    changes: ChangeSet,
    config: Config,
    today: datetime.date,
) -> list[Finding]:
    """The base side's waiver problems as pre-existing, and those of the head's changed waiver files
    as new."""
    from bot.review.engine import judge

    changed = {p for p in changes.paths() if p.rsplit("/", 1)[-1] == FILE_NAME}
    head_files = [(p, e) for p, e in entry_waiver_files(head, config) if p in changed]
    head_problems: list[Finding] = [
        f for f in base_problems if f.path not in changed and f.state is None
    ]
    for path, entry in head_files:
        found, wrong = parse_file(head.read(path) or b"", path, entry)
        head_problems += wrong
        # owners from the base side, always
        head_problems += validity(found, base, config, today)[1]
    judged, _ = judge(head_problems, [f for f in base_problems if f.state is None])
    kept = [f for f in base_problems if f.state is not None]  # unmatched waivers a change made so
    return judged + kept
