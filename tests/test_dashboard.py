"""The registry dashboard: every finding of ``check --all`` grouped by entry with its owners,
waivers and future lints; ``registry-bot dashboard`` prints it."""

from __future__ import annotations

import datetime
import json
from collections import Counter
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.snapshot import DirSnapshot
from bot.outputs.dashboard import build
from bot.outputs.render.dashboard import MARKER, render_markdown, render_text
from bot.review.compose import ReviewRequest, run_review

TODAY = datetime.date(2026, 6, 1)


def test_the_real_registrys_dashboard_lists_every_finding_by_entry_with_its_owners(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--all", "--format", "json", str(corpus)]) == 0
    checked = json.loads(capsys.readouterr().out)["findings"]
    assert main(["dashboard", "--format", "json", str(corpus)]) == 0
    board = json.loads(capsys.readouterr().out)
    listed = [
        (e["name"], f)
        for e in board["entries"]
        for kind in ("defects", "adoption_gaps", "waived")
        for f in e[kind]
    ]
    key = lambda f: (f["rule"], f["path"], f["pointer"], f["message"])  # noqa: E731
    assert Counter(key(f) for _, f in listed) == Counter(key(f) for f in checked)
    assert all(name == f.get("entry", "(repository)") for name, f in listed)
    assert all(e["owners"] for e in board["entries"])
    assert board["totals"]["findings"] == len(checked) and len(checked) > 0
    gaps = {f["rule"] for e in board["entries"] for f in e["adoption_gaps"]}
    defects = {f["rule"] for e in board["entries"] for f in e["defects"]}
    assert gaps and defects and not gaps & defects

    assert main(["dashboard", str(corpus)]) == 0
    text = capsys.readouterr().out
    for name, owners in ((e["name"], e["owners"]) for e in board["entries"]):
        assert f"== {name} (owners: {', '.join(owners)};" in text
    for f in checked:
        assert f"{f['path']}:{f['line']}: {f['severity']} {f['rule']} " in text


def test_waivers_and_future_lints_show_on_the_dashboard(corpus_copy: Path) -> None:
    report = run_review(ReviewRequest(head=DirSnapshot(corpus_copy), today=TODAY))
    target = next(f for f in report.findings if f.entry not in (None, "core") and f.pointer)
    folder = corpus_copy / "spec/registry" / str(target.entry).replace(":", "/")
    owner = next(
        line.split()[1]
        for line in (corpus_copy / "CODEOWNERS").read_text().splitlines()
        if line.startswith("*")
    )
    (folder / "waivers.json").write_text(
        json.dumps(
            {
                "waivers": [
                    {
                        "rule": target.rule,
                        "path": target.path,
                        "pointer": target.pointer,
                        "reason": "known",
                        "granted_by": owner,
                        "expires": "2026-09-30",
                    },
                    {
                        "rule": target.rule,
                        "path": target.path,
                        "pointer": target.pointer,
                        "reason": "old",
                        "granted_by": owner,
                        "expires": "2026-01-31",
                    },
                ]
            }
        )
    )
    other = next(
        f.rule for f in report.findings if f.entry == target.entry and f.rule != target.rule
    )
    (corpus_copy / ".github").mkdir()
    (corpus_copy / ".github/registry-bot.yml").write_text(
        f"severity:\n  {other}: {{becomes_error: 2027-01-01}}\n"
    )
    snapshot = DirSnapshot(corpus_copy)
    request = ReviewRequest(head=snapshot, today=TODAY).configured()
    board = build(
        run_review(request), snapshot, request.settings, TODAY, pending={str(target.entry): ("#7",)}
    )
    mine = next(e for e in board.entries if e.name == target.entry)
    assert [f.waived.expires for f in mine.waived if f.waived] == ["2026-09-30"]
    assert sorted(w.status for w in mine.waivers) == ["active", "expired"]
    assert [(rule, day.isoformat()) for rule, day, _ in mine.future] == [(other, "2027-01-01")]
    markdown = render_markdown(
        board, link=lambda path, line: f"https://example.invalid/blob/main/{path}#L{line}"
    )
    assert markdown.startswith(MARKER)
    assert "waived until 2026-09-30" in markdown and "becomes an error on 2027-01-01" in markdown
    assert f"https://example.invalid/blob/main/{target.path}" in markdown
    assert "waiting on its owners: #7" in render_text(board)


def test_a_clean_entry_says_nothing_is_open(tmp_path: Path) -> None:
    from bot.bundled import path as bundled

    tree = tmp_path / "reference"
    import shutil

    shutil.copytree(bundled("registry", "reference"), tree)
    snapshot = DirSnapshot(tree)
    request = ReviewRequest(head=snapshot, today=TODAY).configured()
    report = run_review(request)
    board = build(report, snapshot, request.settings, TODAY)
    clean = [e for e in board.entries if not e.open]
    assert clean and "nothing open" in render_text(board)
    assert len(board.findings()) == len(report.findings)


def test_a_folder_without_a_registry_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "README.md").write_text("not a registry\n")
    assert main(["dashboard", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
