"""The regression's result: counts per producer, rule and facet, examples, coverage; rendered and
judged.

Both engines (Spark and one process) end here, so the Markdown, the JSON and the findings are the
same whichever ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.core.config import RegressionPolicy
from bot.core.findings import Finding, Section, Severity
from bot.core.inert import ZWJ
from bot.core.quoting import NAME_LIMIT, code
from bot.core.quoting import escape as md_escape
from bot.review.regression.compare import (
    BROKEN,
    FIXED,
    OK,
    OUTCOMES,
    STILL_FAILING,
    UNKNOWN_SCHEMA,
    Row,
    Tally,
)
from bot.review.regression.events import EVENT_FIELDS
from bot.review.regression.side import SideSpec, unversioned

EXAMPLES_PER_GROUP = 3
MAX_NAMING_PROBLEMS = 5  # listed in the report's note, per side
MAX_TABLE_ROWS = 40  # with three examples each, well inside GitHub's 65,535-character summary
LABELS = {
    BROKEN: "broken by this change",
    FIXED: "fixed",
    STILL_FAILING: "still failing",
    UNKNOWN_SCHEMA: "unknown schema or rule",
    OK: "pass",
}

Group = tuple[str, str, str, str]  # (producer, rule, facet, outcome)


@dataclass
class Coverage:
    """Facets a producer's events use but its registry.json does not declare, and the reverse."""

    undeclared: list[str] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)


@dataclass
class RegressionResult:
    base: str
    head: str
    engine: str
    events: int
    counts: dict[Group, int]
    examples: dict[Group, list[Row]]
    coverage: dict[str, Coverage]
    seconds: float = 0.0
    # producers that are registry entries (findings group by them)
    registered: frozenset[str] = frozenset()
    # file -> JSON documents that are not events
    skipped: dict[str, int] = field(default_factory=dict)
    # _producer -> (facets, file, idx)
    unregistered: dict[str, tuple[int, str, int]] = field(default_factory=dict)
    # file -> event templates in it (not complete events)
    incomplete: dict[str, int] = field(default_factory=dict)
    # side label -> problems of its naming files ("path: message"; what they affect is judged
    # without them)
    naming_problems: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_parts(
        cls,
        base: SideSpec,
        head: SideSpec,
        engine: str,
        events: int,
        counts: Mapping[Group, int],
        rows: Iterable[Row],
        seen: Iterable[tuple[str, str]],
        seconds: float = 0.0,
        notes: Tally | None = None,
    ) -> RegressionResult:
        """``notes``: a tally whose skipped documents and unregistered producers are reported (once
        each)."""
        examples: dict[Group, list[Row]] = defaultdict(list)
        for row in sorted(rows, key=lambda r: (r.file, r.index, r.subject, r.message)):
            group = (row.producer, row.rule, row.facet, row.outcome)
            if len(examples[group]) < EXAMPLES_PER_GROUP:
                examples[group].append(row)
        skipped = dict(sorted(notes.skipped.items())) if notes else {}
        unregistered = (
            {p: (n, *notes.unregistered_first[p]) for p, n in sorted(notes.unregistered.items())}
            if notes
            else {}
        )
        incomplete = dict(sorted(notes.incomplete.items())) if notes else {}
        return cls(
            base.label,
            head.label,
            engine,
            events,
            dict(counts),
            dict(examples),
            coverage(head, seen),
            seconds,
            frozenset(head.producers),
            skipped,
            unregistered,
            incomplete,
            {
                side: problems
                for side, problems in (
                    ("base", _naming_problems(base)),
                    ("head", _naming_problems(head)),
                )
                if problems
            },
        )

    @classmethod
    def from_tally(
        cls, base: SideSpec, head: SideSpec, tally: Tally, engine: str, seconds: float
    ) -> RegressionResult:
        return cls.from_parts(
            base, head, engine, tally.events, tally.counts, tally.rows, tally.seen, seconds, tally
        )

    def total(self, outcome: str) -> int:
        return sum(n for (_, _, _, o), n in self.counts.items() if o == outcome)

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "head": self.head,
            "engine": self.engine,
            "events": self.events,
            "seconds": round(self.seconds, 3),
            "totals": {o: self.total(o) for o in OUTCOMES},
            "groups": [
                {
                    "producer": p,
                    "rule": r,
                    "facet": f,
                    "outcome": o,
                    "count": n,
                    "examples": [asdict(row) for row in self.examples.get((p, r, f, o), [])],
                }
                for (p, r, f, o), n in sorted(self.counts.items())
                if o != OK
            ],
            "coverage": {p: asdict(c) for p, c in sorted(self.coverage.items())},
            "skipped": self.skipped,
            "incomplete": self.incomplete,
            "naming_problems": self.naming_problems,
            "unregistered_producers": [
                {"producer": p, "facets": n, "file": f, "index": i}
                for p, (n, f, i) in self.unregistered.items()
            ],
        }

    def markdown(self) -> str:
        """The table for the check run summary: problem groups first, with examples."""
        totals = "Checks (one per event and rule, and per facet for facet rules): " + " · ".join(
            f"{LABELS[o]}: **{self.total(o)}**" for o in OUTCOMES
        )
        lines = [
            f"{self.events} events checked at base {code(self.base, table=False)} and head "
            f"{code(self.head, table=False)} ({md_escape(self.engine)}, {self.seconds:.1f} s).",
            "",
            totals,
            "",
        ]
        groups = sorted(
            ((g, n) for g, n in self.counts.items() if g[3] != OK),
            key=lambda item: (OUTCOMES.index(item[0][3]), item[0]),
        )
        if groups:
            lines += [
                "| outcome | producer | rule | facet | events | first examples |",
                "| --- | --- | --- | --- | ---: | --- |",
            ]
            for (producer, rule, facet, outcome), n in groups[:MAX_TABLE_ROWS]:
                shown = "<br>".join(
                    f"{code(r.file)} #{ZWJ}{r.index} {md_escape(r.subject, NAME_LIMIT)}: "
                    f"{md_escape(r.message, 160)}"
                    for r in self.examples.get((producer, rule, facet, outcome), [])
                )
                lines.append(
                    f"| {LABELS[outcome]} | {md_escape(producer, NAME_LIMIT)} | "
                    f"{md_escape(rule, NAME_LIMIT)} | {md_escape(facet, NAME_LIMIT) or '—'} "
                    f"| {n} | {shown} |"
                )
            if len(groups) > MAX_TABLE_ROWS:
                lines.append(f"\n{len(groups) - MAX_TABLE_ROWS} more groups in the JSON report.")
        cover = [(p, c) for p, c in sorted(self.coverage.items()) if c.undeclared or c.unseen]
        if cover:
            lines += [
                "",
                "| producer | emitted, not declared in registry.json | declared, never seen in "
                "samples |",
                "| --- | --- | --- |",
            ]
            for producer, c in cover:
                lines.append(
                    f"| {md_escape(producer, NAME_LIMIT)} "
                    f"| {md_escape(', '.join(c.undeclared), 1_000) or '—'} "
                    f"| {md_escape(', '.join(c.unseen), 1_000) or '—'} |"
                )
        lines += [f"\n{note}" for note in self.notes()]
        return "\n".join(lines) + "\n"

    def notes(self) -> list[str]:
        """One line for the JSON documents that are not events, one per unregistered producer
        (Markdown)."""
        out = []
        if self.skipped:
            out.append(
                f"Skipped {sum(self.skipped.values())} JSON document(s) that are not OpenLineage "
                f"events (no eventType, run, job or dataset of an event) in {len(self.skipped)} "
                f"file(s): {_files(self.skipped)}."
            )
        if self.incomplete:
            out.append(
                f"Not complete events: {sum(self.incomplete.values())} event template(s) without "
                f"{', '.join(EVENT_FIELDS)} in {len(self.incomplete)} file(s): "
                f"{_files(self.incomplete)}; "
                "their event schema was not judged, their facets were as partial expected events."
            )
        for side, problems in self.naming_problems.items():
            shown = "; ".join(md_escape(p, 300) for p in problems[:MAX_NAMING_PROBLEMS])
            more = len(problems) - MAX_NAMING_PROBLEMS
            out.append(
                f"The {side} side's naming files have {len(problems)} problem(s); identifiers were "
                f"judged without what they affect: {shown}"
                + (f" (and {more} more)." if more > 0 else ".")
            )
        for producer, (n, file, index) in self.unregistered.items():
            out.append(
                f"Producer {code(producer[:200], table=False)} is not registered: the "
                f"facet-producer rule was not applied to its {n} facet(s) (first: "
                f"{code(file, table=False)} event {index})."
            )
        return out

    def findings(
        self, policy: RegressionPolicy, registry_path: str = "spec/registry"
    ) -> list[Finding]:
        """One finding per problem group (with its first example's file), and per coverage gap (on
        the producer's registry.json)."""
        severity = {
            BROKEN: _level(policy.broken, Severity.ERROR),
            STILL_FAILING: _level(policy.still_failing, Severity.NOTICE),
            UNKNOWN_SCHEMA: _level(policy.unknown_schema, Severity.WARNING),
        }
        undeclared = _level(policy.undeclared_facet, Severity.WARNING)
        out: list[Finding] = []
        for group, n in sorted(self.counts.items()):
            producer, rule, facet, outcome = group
            level = severity.get(outcome)
            if level is None:
                continue
            first = self.examples.get(group, [])
            example = first[0] if first else None
            where = f" (facet {facet!r})" if facet else ""
            out.append(
                Finding(
                    rule=f"regression/{outcome.replace('_', '-')}",
                    severity=level,
                    path=example.file if example else "",
                    entry=producer if producer in self.registered else None,
                    message=f"{LABELS[outcome]}: {rule}{where} for {n} event(s) of {producer}"
                    + (
                        f"; first: event #{example.index} {example.subject}: {example.message}"
                        if example
                        else ""
                    ),
                    hint="Run `registry-bot regress` locally for every example.",
                )
            )
        if self.skipped:
            first_file = next(iter(self.skipped))
            out.append(
                Finding(
                    rule="regression/not-an-event",
                    severity=Severity.NOTICE,
                    path=first_file,
                    message=f"{sum(self.skipped.values())} JSON document(s) in {len(self.skipped)} "
                    f"file(s) are not OpenLineage events and were skipped: "
                    f"{', '.join(list(self.skipped)[:5])}",
                    hint="Keep only events in event locations, or ignore this notice for config "
                    "files.",
                )
            )
        if self.incomplete:
            out.append(
                Finding(
                    rule="regression/incomplete-event",
                    severity=Severity.NOTICE,
                    path=next(iter(self.incomplete)),
                    message=f"not a complete event: {sum(self.incomplete.values())} event "
                    f"template(s) in {len(self.incomplete)} file(s) lack required event fields "
                    f"({', '.join(EVENT_FIELDS)}); their event schema was not judged: "
                    f"{', '.join(list(self.incomplete)[:5])}",
                    hint="Test suites keep templates of expected events; give complete events to "
                    "judge them whole.",
                )
            )
        for producer, (n, file, index) in self.unregistered.items():
            out.append(
                Finding(
                    rule="regression/unregistered-producer",
                    severity=Severity.NOTICE,
                    path=file,
                    message=f"producer {producer[:200]!r} is not registered: facet-producer not "
                    f"applied to its {n} facet(s) (first: event #{index})",
                    hint="Register the producer (registry.json with root_doc_URL), or use "
                    "ol:<name> in _producer.",
                )
            )
        for producer, c in sorted(self.coverage.items()):
            if c.undeclared and undeclared is not None:
                out.append(
                    Finding(
                        rule="regression/undeclared-facet",
                        severity=undeclared,
                        path=f"{registry_path}/{producer.replace(':', '/')}/registry.json",
                        entry=producer,
                        message=f"{producer}'s sample events emit facets its registry.json does "
                        f"not declare: " + ", ".join(c.undeclared),
                        hint="Add them to produced_facets, or stop emitting them.",
                    )
                )
            if c.unseen:
                out.append(
                    Finding(
                        rule="regression/unseen-facet",
                        severity=Severity.NOTICE,
                        path=f"{registry_path}/{producer.replace(':', '/')}/registry.json",
                        entry=producer,
                        message=f"{producer} declares facets its sample events never emit: "
                        + ", ".join(c.unseen),
                        hint="Add a sample event that carries them, or remove them from "
                        "produced_facets.",
                    )
                )
        return out

    def section(self) -> Section:
        return Section(
            title="Regression over sample events", markdown=self.markdown(), data=self.to_json()
        )


def _files(counts: Mapping[str, int], most: int = 5) -> str:
    """Files with their counts (Markdown), the first ``most`` of them."""
    shown = ", ".join(
        code(f, table=False) + (f" ({n})" if n > 1 else "") for f, n in list(counts.items())[:most]
    )
    return shown + (" ..." if len(counts) > most else "")


def _level(value: str, default: Severity) -> Severity | None:
    """A policy value as a severity: ``off`` is None; a value the bot does not know keeps the
    default."""
    if value == "off":
        return None
    try:
        return Severity(value)
    except ValueError:
        return default


def coverage(head: SideSpec, seen: Iterable[tuple[str, str]]) -> dict[str, Coverage]:
    """Per registered producer with events: emitted-but-undeclared and declared-but-unseen facet
    files."""
    emitted: dict[str, set[str]] = defaultdict(set)
    for producer, uri in seen:
        if producer in head.declared:
            emitted[producer].add(unversioned(uri) if uri.startswith("ol:") else uri)
    out: dict[str, Coverage] = {}
    for producer, uris in emitted.items():
        declared = set(head.declared[producer])
        out[producer] = Coverage(undeclared=sorted(uris - declared), unseen=sorted(declared - uris))
    return out


def _naming_problems(side: SideSpec) -> list[str]:
    """The problems of a side's naming files (a file skipped, a pattern refused), as the naming
    check reports them; not its warnings (an unused component changes no verdict)."""
    problems = getattr(side.naming, "problems", ())
    return [f"{p.path}: {p.message}" for p in problems if p.rule != "naming/unused-component"]
