"""Event templates (events missing required event fields, as integration test suites keep them)
given to the regression as an event location: reported once as not complete events, never counted as
failing events."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot.core.config import RegressionPolicy
from bot.review.regression import compare
from bot.review.regression.compare import STILL_FAILING, run_records
from bot.review.regression.events import (
    EVENT_FIELDS,
    EventError,
    file_records,
    has_placeholders,
    missing_event_fields,
    parse_event,
)
from bot.review.regression.result import RegressionResult
from bot.review.regression.side import SideSpec
from tests.regress_helpers import make_tree, spec
from tests.test_regress import corpus_event_files

DROPPED = ("eventTime", "producer")  # what the integrations' expected events leave out


@pytest.fixture(scope="module")
def side(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> SideSpec:
    return spec(make_tree(corpus, tmp_path_factory.mktemp("templates") / "tree"), "same")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, corpus: Path, side: SideSpec) -> Path:
    """The corpus's files of complete events without placeholders, each beside its template twin
    (the same events without eventTime and producer)."""
    root = tmp_path_factory.mktemp("folder")
    for path in corpus_event_files(corpus):
        records = list(file_records([path]))
        try:
            events = [parse_event(r.text) for r in records]
        except EventError:
            continue
        if not events or any(missing_event_fields(e) or has_placeholders(e) for e in events):
            continue
        name = path.replace("/", "_")[-80:]
        (root / name).write_text("\n".join(json.dumps(e) for e in events) + "\n")
        twins = [{k: v for k, v in e.items() if k not in DROPPED} for e in events]
        (root / f"template_{name}").write_text("\n".join(json.dumps(e) for e in twins) + "\n")
    return root


def _still_failing(tally: compare.Tally) -> int:
    return sum(
        n for (_, _, _, outcome), n in tally.settle().counts.items() if outcome == STILL_FAILING
    )


def test_templates_are_reported_once_and_not_counted_as_failing(
    folder: Path, side: SideSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(str(p) for p in folder.iterdir())
    templates = [p for p in files if Path(p).name.startswith("template_")]
    assert len(templates) >= 10
    events_in_templates = sum(1 for _ in file_records(templates))

    tally = run_records(file_records(files), side, side)
    result = RegressionResult.from_tally(side, side, tally, "one Python process", 0.0)
    assert result.incomplete == {p: sum(1 for _ in file_records([p])) for p in templates}
    [notice] = [
        f for f in result.findings(RegressionPolicy()) if f.rule == "regression/incomplete-event"
    ]
    assert notice.message.startswith(
        f"not a complete event: {events_in_templates} event template(s) in {len(templates)} file(s)"
    )
    assert "Not complete events" in result.markdown()
    # the real events keep their verdicts; a template is never a failing event (its facets: at most
    # its twin's)
    alone = run_records(file_records([p for p in files if p not in templates]), side, side)
    assert sorted(map(_row, alone.rows)) == sorted(
        _row(r) for r in tally.rows if r.file not in templates
    )
    assert not [r for r in tally.rows if r.file in templates and r.rule == "event-schema"]
    twins = {
        (Path(r.file).name.removeprefix("template_"), r.index, r.rule, r.subject)
        for r in tally.rows
        if r.file in templates
    }
    assert twins <= {(Path(r.file).name, r.index, r.rule, r.subject) for r in alone.rows}

    # judged as the events they are not
    monkeypatch.setattr(compare, "template", lambda event, record: False)
    before = run_records(file_records(files), side, side)
    # each template was one failing event (still failing, or unknown where its schemaURL names no
    # schema here)
    failing = [r for r in before.rows if r.rule == "event-schema"]
    now = [r for r in tally.rows if r.rule == "event-schema"]
    assert len(failing) - len(now) == events_in_templates
    assert {(r.file, r.index) for r in failing} - {(r.file, r.index) for r in now} == {
        (r.file, r.index) for r in file_records(templates)
    }
    # The still-failing count drops by exactly what the templates no longer fail, and by more than
    # their still-failing event schemas: a template's facets are judged as a partial expected
    # event's, which may leave keys out, so a facet missing a required key fails in the complete
    # twin and in the template judged as an event, not in the template. Nothing else moves: no
    # template row appears, the real events' rows are the same (above), and a template keeps its
    # identifiers' failures (judged as any event's), so the count of events with a still-failing
    # row drops by fewer than the templates; the events failing their event schema drop by exactly
    # them (above).
    kept = Counter(map(_row, (r for r in tally.rows if r.file in templates)))
    gone = Counter(map(_row, (r for r in before.rows if r.file in templates))) - kept
    assert kept <= Counter(map(_row, (r for r in before.rows if r.file in templates)))
    forgiven = [r for r in before.rows if r.file in templates and r.rule != "event-schema"]
    forgiven = [r for r in forgiven if _row(r) in gone]
    assert forgiven and all(
        r.rule == "facet-schema" and r.message.endswith("is a required property") for r in forgiven
    )
    complete = {(Path(r.file).name, r.index, r.subject, r.message) for r in alone.rows}
    assert all(
        (Path(r.file).name.removeprefix("template_"), r.index, r.subject, r.message) in complete
        for r in forgiven
    )
    assert (
        _still_failing(before) - _still_failing(tally)
        == sum(n for row, n in gone.items() if row[-1] == STILL_FAILING)
        == sum(r.outcome == STILL_FAILING for r in failing)
        - sum(r.outcome == STILL_FAILING for r in now)
        + sum(r.outcome == STILL_FAILING for r in forgiven)
    )


def _row(r: compare.Row) -> tuple[str, int, str, str, str]:
    return r.file, r.index, r.rule, r.subject, r.outcome


def test_real_events_keep_their_verdicts_on_the_corpus(
    corpus: Path, side: SideSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows of every complete event are the same whether templates are recognised or not."""
    records = list(file_records(corpus_event_files(corpus)))
    complete = {(r.file, r.index) for r in records if _complete(r.text)}
    tally = run_records(records, side, side)
    monkeypatch.setattr(compare, "template", lambda event, record: False)
    before = run_records(records, side, side)

    def rows(t: compare.Tally) -> list[tuple[str, int, str, str, str]]:
        return sorted(
            (r.file, r.index, r.rule, r.subject, r.outcome)
            for r in t.rows
            if (r.file, r.index) in complete
        )

    assert rows(tally) == rows(before) and rows(tally)
    assert sum(tally.incomplete.values()) == len(records) - len(complete) - sum(
        tally.skipped.values()
    )
    # every template row that disappears is its event schema or a key a partial event may leave out
    gone = {(r.file, r.index, r.rule) for r in before.rows} - {
        (r.file, r.index, r.rule) for r in tally.rows
    }
    assert {rule for _, _, rule in gone} <= {"event-schema", "facet-schema", "facet-producer"}
    assert not [
        r for r in tally.rows if r.rule == "event-schema" and (r.file, r.index) not in complete
    ]


def _complete(text: str) -> bool:
    try:
        event = parse_event(text)
    except EventError:
        return False
    return (
        all(name in event for name in EVENT_FIELDS)
        and compare.document_kind(event) in compare.EVENT_KINDS
    )
