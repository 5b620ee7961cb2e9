"""Gather a regression's inputs from two snapshots and run it in this process or on Spark."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from bot.config import Config
from bot.registry import Registry
from bot.regression.compare import run_records
from bot.regression.events import EventRecord, event_locations, expand_local, file_records, is_remote, sample_records
from bot.regression.result import RegressionResult
from bot.regression.side import SideSpec
from bot.snapshot import Snapshot


@dataclass
class Inputs:
    """Both sides as data, the events this process reads, and the locations only Spark reads."""

    base: SideSpec
    head: SideSpec
    records: list[EventRecord]
    remote: list[str]

    @property
    def empty(self) -> bool:
        return not self.records and not self.remote


def find_events(head: Snapshot, config: Config,
                extra_events: Iterable[str] = ()) -> tuple[list[EventRecord], list[str]]:
    """The head side's ``samples/`` events plus the configured and given local locations; the remote ones."""
    records = list(sample_records(head, Registry(head, config)))
    locations = event_locations(config, extra_events)
    records.extend(file_records(expand_local(p for p in locations if not is_remote(p))))
    return records, [p for p in locations if is_remote(p)]


def gather(base: Snapshot, head: Snapshot, config: Config, extra_events: Iterable[str] = (),
           events: tuple[list[EventRecord], list[str]] | None = None) -> Inputs:
    """Both sides' schemas and the events (``find_events`` unless given)."""
    records, remote = events if events is not None else find_events(head, config, extra_events)
    return Inputs(SideSpec.build(base, config, base.label), SideSpec.build(head, config, head.label), records, remote)


def run_local(inputs: Inputs) -> RegressionResult:
    """The single-process path: the same comparator as the Spark workers, in this process."""
    if inputs.remote:
        raise ValueError(f"{', '.join(inputs.remote)}: only Spark reads these locations (use --master)")
    started = time.monotonic()
    tally = run_records(inputs.records, inputs.base, inputs.head)
    return RegressionResult.from_tally(inputs.base, inputs.head, tally, "one Python process",
                                       time.monotonic() - started)
