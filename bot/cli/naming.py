"""``registry-bot naming``: regenerate or verify Naming.md, and check identifiers in event files
(the arguments are in ``bot.cli.commands.naming``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, UsageError, verdict

if TYPE_CHECKING:
    from bot.model.naming.rules import NamingRules


def run(args: argparse.Namespace) -> int:
    if args.naming_command == "docs":
        return _docs(args)
    return _check(args)


def _rules(folder: str | None) -> NamingRules:
    from bot.core.snapshot import DirSnapshot
    from bot.model.naming import load_rules

    if folder is None:
        return load_rules()
    path = Path(folder)
    if not path.is_dir():
        raise UsageError(f"{folder} is not a folder")
    return load_rules(
        DirSnapshot(path.resolve().parent, only=path.resolve().name), path.resolve().name
    )


def _docs(args: argparse.Namespace) -> int:
    from bot.model.naming import bundled_folder
    from bot.model.naming.docs import render

    folder = Path(args.dir) if args.dir else bundled_folder()
    rules = _rules(args.dir)
    if args.dir and not any(Path(args.dir).glob("*.json")):
        raise UsageError(f"{args.dir} holds no naming files (*.json): nothing to document")
    for problem in rules.problems:
        print(
            f"{problem.path}{'#' + problem.pointer if problem.pointer else ''}: {problem.message}",
            file=sys.stderr,
        )
    text = render(rules)
    target = folder / "Naming.md"
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != text:
            print(f"{target} is out of date; run: registry-bot naming docs", file=sys.stderr)
            return EXIT_ERRORS
        print(f"{target} is up to date")
        return EXIT_OK
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return EXIT_OK


def _event_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl", ".ndjson"))
            )
        elif path.is_file():
            files.append(path)
        else:
            raise UsageError(f"{raw}: no such file or folder")
    return files


def _check(args: argparse.Namespace) -> int:
    from bot.model.naming.events import (
        INVALID,
        EventsProblem,
        document_kind,
        judge_event,
        read_events,
    )

    rules = _rules(args.rules)
    report: list[dict[str, object]] = []
    verdicts: dict[str, int] = {}
    unreadable = 0
    # file -> JSON documents that are neither events nor facet documents
    skipped: dict[str, int] = {}
    for path in _event_files(args.paths):
        try:
            events = read_events(path)
        except (EventsProblem, OSError) as exc:
            unreadable += 1
            report.append({"file": str(path), "error": str(exc)})
            continue
        for index, event in enumerate(events):
            kind = document_kind(event)
            if kind is None:
                skipped[str(path)] = skipped.get(str(path), 0) + 1
                continue
            judged = judge_event(rules, event)
            for j in judged:
                verdicts[j.verdict] = verdicts.get(j.verdict, 0) + 1
            report.append(
                {
                    "file": str(path),
                    "event": index,
                    "kind": kind,
                    "identifiers": [j.to_json() for j in judged],
                }
            )
    invalid = verdicts.get(INVALID, 0)
    no_events = not any("event" in e for e in report)
    verdict(EXIT_USAGE if unreadable or no_events else EXIT_ERRORS if invalid else EXIT_OK)
    if args.format == "json":
        sys.stdout.write(
            json.dumps(
                {
                    "events": report,
                    "invalid": invalid,
                    "verdicts": verdicts,
                    "unreadable": unreadable,
                    "skipped": skipped,
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        _print_text(report, args.quiet)
        total = sum(verdicts.values())
        n_events = sum(1 for e in report if "event" in e)
        others = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()) if v != INVALID and n)
        print(
            f"{total} identifiers in {n_events} events: {invalid} invalid"
            + (f" ({others})" if others else "")
            + (f", {unreadable} unreadable files" if unreadable else "")
        )
        if skipped:
            files = sorted(skipped)
            print(
                f"skipped {sum(skipped.values())} JSON documents that are not OpenLineage events "
                f"in {len(files)} files: {', '.join(files[:5])}{' ...' if len(files) > 5 else ''}"
            )
    if unreadable:  # unreadable input is a usage error (exit 2), as for every command
        print(
            f"registry-bot naming: {unreadable} file(s) could not be read as JSON events",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if no_events:
        raise UsageError(
            f"no OpenLineage events in {', '.join(args.paths)}: expected JSON (an object, an array "
            f"or JSON lines) with eventType, run and job (or a dataset or job event)"
        )
    return EXIT_ERRORS if invalid else EXIT_OK


def _print_text(report: list[dict[str, object]], quiet: bool) -> None:
    for entry in report:
        if "error" in entry:
            print(f"{entry['file']}: cannot read: {entry['error']}")
            continue
        items = entry["identifiers"]
        assert isinstance(items, list)
        shown = [i for i in items if not (quiet and i["verdict"] != "invalid")]
        if not shown:
            continue
        print(f"{entry['file']} event {entry['event']}:")
        for i in shown:
            verdict = f"ok ({i['source']})" if i["ok"] else f"{i['verdict'].upper()}: {i['reason']}"
            print(
                f"  {i['role']:<7} {i['pointer'] or '/'}  {i['namespace']} {i['name']}  {verdict}"
            )
