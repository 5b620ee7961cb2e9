"""Gather a regression's inputs from two snapshots and run it in this process or on Spark."""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass

from bot.core.config import Config
from bot.core.snapshot import Snapshot
from bot.model.sides import side_model
from bot.review.regression.compare import run_records
from bot.review.regression.discover import Discovered, discover, dropped_records
from bot.review.regression.events import (
    EventRecord,
    dropped_sample_records,
    event_locations,
    file_records,
    refusing_duplicates,
    sample_records,
)
from bot.review.regression.locations import local_files
from bot.review.regression.result import RegressionResult
from bot.review.regression.side import SideSpec


@dataclass
class Events:
    """The repository's own events (the entries' samples and the discovered files), and the event
    locations (read where the regression runs: by Spark's executors, or by this process)."""

    records: list[EventRecord]
    locations: list[str]

    def __post_init__(self) -> None:
        self.records = refusing_duplicates(self.records)

    discovered: Discovered | None = None

    @property
    def empty(self) -> bool:
        return not self.records and not self.locations


@dataclass
class Inputs:
    """Both sides as data, and the events."""

    base: SideSpec
    head: SideSpec
    records: list[EventRecord]
    locations: list[str]


def find_events(
    head: Snapshot, config: Config, extra_events: Iterable[str] = (), base: Snapshot | None = None
) -> Events:
    """The head side's ``samples/`` events and its own event files (``regression.discover``); with
    ``base``, also the base's sample events (of entries the head keeps) and discovered events that
    the head drops; and the configured and given locations (not read here)."""
    registry = side_model(head, config).registry
    samples = list(sample_records(head, registry))
    if base is not None:
        samples += dropped_sample_records(base, side_model(base, config).registry, head, registry)
    globs = config.regression.discover
    found = discover(head, globs, exclude={r.file for r in samples})
    if base is not None:
        found.records += dropped_records(base, head, globs, found, {r.file for r in samples})
    return Events(samples + found.records, event_locations(config, extra_events), found)


def gather(base: Snapshot, head: Snapshot, config: Config, events: Events) -> Inputs:
    """Both sides' schemas, with the events. When the base states its naming rules (has naming
    files), a head without any is judged without naming rules, not by the bundled ones (each
    side's token covers it: the base's naming files decide)."""
    from bot.model.naming import has_naming_files, rules_for  # the naming library, when needed

    stated = has_naming_files(base, config.paths.naming)
    naming = functools.partial(rules_for, stated=stated)
    return Inputs(
        SideSpec.build(base, config, base.label, naming),
        SideSpec.build(head, config, head.label, naming),
        events.records,
        events.locations,
    )


def run_local(inputs: Inputs) -> RegressionResult:
    """The single-process path: the same comparator as the Spark workers, in this process, reading
    the event files one at a time. Raises ``LocationError`` for a location that names no event
    file."""
    files = local_files(inputs.locations)
    started = time.monotonic()
    tally = run_records(
        itertools.chain(inputs.records, file_records(files)), inputs.base, inputs.head
    )
    return RegressionResult.from_tally(
        inputs.base, inputs.head, tally, "one Python process", time.monotonic() - started
    )
