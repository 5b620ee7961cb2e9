"""The registry dashboard as terminal text and as GitHub Markdown (the dashboard issue's body).

Quoted text is made inert as everywhere else (``visible`` for a terminal, ``escape``/``code`` for
Markdown), so an owner named on the dashboard is shown, never mentioned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from bot.core.findings import Finding
from bot.core.inert import visible
from bot.core.quoting import (
    GITHUB_TEXT_LIMIT,
    MESSAGE_LIMIT,
    code,
    cut_lines,
    escape,
    link_target,
)
from bot.outputs.dashboard import Dashboard, EntryBoard

MARKER = "<!-- registry-bot:dashboard -->"  # the App finds its dashboard issue by this line
TITLE = "Registry dashboard"
_PR = re.compile(r"#[0-9]{1,10}")

# (path, line) -> URL of the file on the default branch
Link = Callable[[str, int | None], str | None]


def fix_command(f: Finding) -> str | None:
    """The command that applies the finding's fix, scoped to the files its edits touch."""
    if f.fix is None:
        return None
    return f"registry-bot fix --write --rule {f.rule} . " + " ".join(
        sorted({e.path for e in f.fix.edits})
    )


def _where(f: Finding) -> str:
    return (f.path or "<repository>") + (f":{f.line}" if f.line else "")


def _headline(board: Dashboard) -> str:
    t = board.totals
    at = f"commit {board.revision[:12]}, " if board.revision else ""
    return (
        f"{t['entries']} entries, {t['findings']} findings: {t['defects']} defects, "
        f"{t['adoption_gaps']} adoption gaps, {t['waived']} waived ({at}as of "
        f"{board.today.isoformat()})"
    )


# -- text ------------------------------------------------------------------------------------------


def _text_finding(f: Finding) -> list[str]:
    line = f"    {visible(_where(f))}: {f.severity.value} {visible(f.rule)} {visible(f.message)}"
    if f.waived is not None:
        line += (
            f" ({f.waived.label()} by {visible(f.waived.granted_by)}: {visible(f.waived.reason)})"
        )
    fix = fix_command(f)
    return [line] + ([f"      fix: {visible(fix)}"] if fix else [])


def _text_entry(e: EntryBoard) -> list[str]:
    owners = ", ".join(visible(o) for o in e.owners) or "no one"
    lines = [f"== {visible(e.name)} (owners: {owners}; {visible(e.owners_source)})"]
    if e.pending:
        lines.append(f"  waiting on its owners: {', '.join(e.pending)}")
    for title, items in (("defects", e.defects), ("adoption gaps", e.gaps), ("waived", e.waived)):
        if items:
            lines.append(f"  {title} ({len(items)}):")
            for f in items:
                lines += _text_finding(f)
    if e.waivers:
        lines.append(f"  waivers ({len(e.waivers)}):")
        lines += [
            f"    {visible(w.waiver.rule)} at {visible(w.waiver.place())}: {w.status}, expires "
            f"{w.waiver.expires.isoformat()}, granted by {visible(w.waiver.granted_by)}"
            for w in e.waivers
        ]
    lines += [
        f"  future lint: {visible(rule)} becomes an error on {day.isoformat()} ({n} finding(s) "
        f"here)"
        for rule, day, n in e.future
    ]
    if e.unregistered_keys:
        lines.append(
            "  unregistered facet keys in its sample events: "
            + ", ".join(visible(k) for k in e.unregistered_keys)
        )
    if not (e.open or e.waived or e.waivers or e.pending):
        lines.append("  nothing open")
    return lines


def render_text(board: Dashboard) -> str:
    lines = [f"Registry dashboard: {_headline(board)}"]
    lines += [
        f"future lint: {visible(rule)} becomes an error on {day.isoformat()}"
        for rule, day in board.future
    ]
    for e in board.entries:
        lines += _text_entry(e)
    return "\n".join(lines) + "\n"


# -- markdown --------------------------------------------------------------------------------------


def _md_finding(f: Finding, link: Link | None) -> str:
    # a link only to a web URL that nothing in it can end early (``file_url`` encodes the name)
    url = link_target(link(f.path, f.line)) if link is not None and f.path else None
    where = code(_where(f), table=False)
    where = f"[{where}]({url})" if url else where
    text = (
        f"- {f.severity.value} {code(f.rule, table=False)} {where}: "
        f"{escape(f.message, MESSAGE_LIMIT)}"
    )
    if f.waived is not None:
        text += (
            f" — **{f.waived.label()}** by {escape(f.waived.granted_by, 100)}: "
            f"{escape(f.waived.reason, MESSAGE_LIMIT)}"
        )
    fix = fix_command(f)
    return text + (f" — fix: {code(fix, table=False)}" if fix else "")


def _md_entry(e: EntryBoard, link: Link | None) -> list[str]:
    owners = ", ".join(code(o, table=False) for o in e.owners) or "no one"
    lines = [
        f"### {code(e.name, table=False)}",
        "",
        f"Owners: {owners} ({escape(e.owners_source, 200)})",
        "",
    ]
    if e.pending:
        # the App's own #N: a link
        linked = [p if _PR.fullmatch(p) else escape(p, 20) for p in e.pending]
        lines += [f"Pull requests waiting on its owners: {', '.join(linked)}", ""]
    for title, items in (("Defects", e.defects), ("Adoption gaps", e.gaps), ("Waived", e.waived)):
        if items:
            lines += [f"**{title} ({len(items)})**", "", *[_md_finding(f, link) for f in items], ""]
    if e.waivers:
        lines += [f"**Waivers ({len(e.waivers)})**", ""]
        lines += [
            f"- {code(w.waiver.rule, table=False)} at {code(w.waiver.place(), table=False)}: "
            f"{w.status}, expires {w.waiver.expires.isoformat()}, granted by "
            f"{escape(w.waiver.granted_by, 100)}"
            for w in e.waivers
        ]
        lines.append("")
    if e.future:
        lines += ["**Future lints**", ""]
        lines += [
            f"- {code(rule, table=False)} becomes an error on {day.isoformat()} ({n} finding(s) "
            f"here)"
            for rule, day, n in e.future
        ]
        lines.append("")
    if e.unregistered_keys:
        lines += [
            "**Unregistered facet keys in its sample events**: "
            + ", ".join(code(k, table=False) for k in e.unregistered_keys),
            "",
        ]
    if not (e.open or e.waived or e.waivers or e.pending):
        lines += ["Nothing open.", ""]
    return lines


def render_markdown(
    board: Dashboard,
    link: Link | None = None,
    limit: int = GITHUB_TEXT_LIMIT,
    notes: Sequence[str] = (),
) -> str:
    """``notes``: lines under the headline (what the dashboard could not read in full)."""
    lines = [MARKER, f"## {TITLE}", "", escape(_headline(board), 500), ""]
    lines += [line for note in notes for line in (f"> {escape(note, 500)}", "")]
    if board.future:
        lines += [
            "Future lints: "
            + "; ".join(
                f"{code(rule, table=False)} becomes an error on {day.isoformat()}"
                for rule, day in board.future
            ),
            "",
        ]
    for e in board.entries:
        lines += _md_entry(e, link)
    return cut_lines(
        "\n".join(lines) + "\n",
        limit,
        "\n> (cut to fit GitHub's size limit; `registry-bot dashboard` prints all of it)\n",
    )


# -- json ------------------------------------------------------------------------------------------


def to_json(board: Dashboard) -> dict[str, Any]:
    return {
        "today": board.today.isoformat(),
        "totals": dict(board.totals),
        "future_lints": {rule: day.isoformat() for rule, day in board.future},
        "entries": [
            {
                "name": e.name,
                "owners": list(e.owners),
                "owners_source": e.owners_source,
                "defects": [f.to_json() for f in e.defects],
                "adoption_gaps": [f.to_json() for f in e.gaps],
                "waived": [f.to_json() for f in e.waived],
                "waivers": [{**w.waiver.to_json(), "status": w.status} for w in e.waivers],
                "future_lints": [
                    {"rule": r, "becomes_error": d.isoformat(), "findings": n}
                    for r, d, n in e.future
                ],
                "unregistered_keys": list(e.unregistered_keys),
                "pending": list(e.pending),
            }
            for e in board.entries
        ],
    }


def render_json(board: Dashboard) -> str:
    return json.dumps(to_json(board), indent=2, ensure_ascii=True) + "\n"
