"""Every rule applied to one event at base and at head, and the outcome of the pair.

More in docs/module-notes.md (bot/review/regression/compare.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.model.naming.events import (
    EVENT_KINDS,
    INVALID,
    PLACEHOLDER,
    VALID,
    Found,
    Identity,
    document_kind,
    identifiers,
    judge,
    shallow_identities,
)
from bot.model.naming.rules import TOO_SLOW
from bot.model.registry import carried_prefix, carries_prefix, prefix_holder
from bot.model.schemas import ValidationTimeout
from bot.review.regression.events import (
    EVENT_FIELDS,
    EventError,
    EventRecord,
    has_placeholders,
    is_placeholder,
    might_hold_placeholders,
    parse_event,
)
from bot.review.regression.side import Compiled, SideSpec, Validators

PASS, FAIL, UNKNOWN = "pass", "fail", "unknown"
OK, BROKEN, FIXED, STILL_FAILING, UNKNOWN_SCHEMA = (
    "ok",
    "broken",
    "fixed",
    "still_failing",
    "unknown_schema",
)
OUTCOMES = (BROKEN, FIXED, STILL_FAILING, UNKNOWN_SCHEMA, OK)
RULES = (
    "event-readable",
    "event-schema",
    "facet-schema",
    "facet-key",
    "facet-producer",
    "dataset-name",
    "job-name",
)
# failures per group and file explained with pure-Python jsonschema (the rest: jsonschema-rs)
EXPLAINED_PER_GROUP = 3

Status = tuple[str, str]  # (pass | fail | unknown, message)
PASSED: Status = (PASS, "")
_MISSING: Any = object()  # absent from a memo (``None`` is a memoised answer)
_PLACEHOLDER: Any = object()  # a memoised producer that is a test-suite placeholder
_EVENT_FIELDS = frozenset(EVENT_FIELDS)
NAME_RULES = {"job": "job-name", "dataset": "dataset-name"}  # an identifier's role -> its rule
# entries per memo: past it the memo starts afresh (memory stays flat on any input)
MEMO_BOUND = 100_000


def classify(base: str, head: str) -> str:
    """The outcome of a (base, head) pair of statuses."""
    if base == PASS:
        return OK if head == PASS else BROKEN
    if head == PASS:
        return FIXED
    if head == FAIL:
        return STILL_FAILING
    return UNKNOWN_SCHEMA


@dataclass(slots=True)
class Row:
    """One (event, subject, rule) whose outcome is not ``ok``."""

    producer: str
    rule: str
    facet: str
    schema: str
    subject: str
    outcome: str
    base: str
    head: str
    message: str
    file: str
    index: int


@dataclass
class Tally:
    """What a batch of events produced: non-ok rows, counts per group, facets seen per producer."""

    rows: list[Row] = field(default_factory=list)
    # (producer, rule, facet, outcome)
    counts: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    seen: set[tuple[str, str]] = field(default_factory=set)  # (producer, facet short URI or URL)
    events: int = 0
    # facets that passed every rule on both sides, counted in one step: (producer, key, producer
    # rule ran)
    passed_facets: Counter[tuple[str, str, bool]] = field(default_factory=Counter)
    # the fast path's passing facets, counted per ``FastCheck`` and folded into ``passed_facets``
    # and ``seen``
    fast_hits: dict[FastCheck, int] = field(default_factory=dict)
    # file -> JSON documents that are not events
    skipped: Counter[str] = field(default_factory=Counter)
    # file -> event templates (``template`` below)
    incomplete: Counter[str] = field(default_factory=Counter)
    # _producer URLs no registered producer covers (on both sides) -> facets naming them, first
    # (file, index)
    unregistered: Counter[str] = field(default_factory=Counter)
    unregistered_first: dict[str, tuple[str, int]] = field(default_factory=dict)

    def note_unregistered(self, producer: str, file: str, index: int, n: int = 1) -> None:
        self.unregistered[producer] += n
        first = self.unregistered_first.get(producer)
        if first is None or (file, index) < first:
            self.unregistered_first[producer] = (file, index)

    def settle(self) -> Tally:
        """Fold the one-step counts of passing facets into ``counts`` and ``seen`` (call before
        reading them)."""
        for check, n in self.fast_hits.items():
            self.passed_facets[check.count] += n
            self.seen.add(check.seen)
        self.fast_hits.clear()
        for (producer, key, with_producer), n in self.passed_facets.items():
            self.counts[(producer, "facet-schema", key, OK)] += n
            self.counts[(producer, "facet-key", key, OK)] += n
            if with_producer:
                self.counts[(producer, "facet-producer", key, OK)] += n
        self.passed_facets.clear()
        return self

    def merge(self, other: Tally) -> None:
        self.settle()
        other.settle()
        self.rows.extend(other.rows)
        self.counts.update(other.counts)
        self.seen |= other.seen
        self.events += other.events
        self.skipped.update(other.skipped)
        self.incomplete.update(other.incomplete)
        for producer, n in other.unregistered.items():
            self.note_unregistered(producer, *other.unregistered_first[producer], n=n)


def template(event: dict[str, Any], record: EventRecord) -> bool:
    """An event template from an event location: an event by shape that lacks required event fields.
    It is reported once per file and its event schema is not judged (a template is not an event that
    failed); its facets are judged as a partial expected event's, its identifiers as any. Discovered
    test fixtures are judged as partial events already, and an entry's ``samples/`` hold complete
    events (a template there fails)."""
    return record.entry is None and not record.expected and not event.keys() >= _EVENT_FIELDS


def _dataset_containers(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for side in ("inputs", "outputs"):
        items = event.get(side)
        if isinstance(items, list):
            for i, ds in enumerate(items):
                if isinstance(ds, dict):
                    yield f"{side}[{i}]", ds
    if isinstance(event.get("dataset"), dict):
        yield "dataset", event["dataset"]


def _facet_maps(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name in ("run", "job"):
        holder = event.get(name)
        if isinstance(holder, dict) and isinstance(holder.get("facets"), dict):
            yield f"{name}.facets", holder["facets"]
    for where, ds in _dataset_containers(event):
        for slot in ("facets", "inputFacets", "outputFacets"):
            if isinstance(ds.get(slot), dict):
                yield f"{where}.{slot}", ds[slot]


def _facet_holders(event: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """``_facet_maps`` without writing out where each map is: (a way to write it, the map), in the
    same order."""
    for name in ("run", "job"):
        holder = event.get(name)
        if type(holder) is dict:
            facets = holder.get("facets")
            if type(facets) is dict:
                yield name, facets
    for side in ("inputs", "outputs"):
        items = event.get(side)
        if type(items) is list:
            for i, ds in enumerate(items):
                if type(ds) is dict:
                    for slot in ("facets", "inputFacets", "outputFacets"):
                        facets = ds.get(slot)
                        if type(facets) is dict:
                            yield (side, i, slot), facets
    ds = event.get("dataset")
    if type(ds) is dict:
        for slot in ("facets", "inputFacets", "outputFacets"):
            facets = ds.get(slot)
            if type(facets) is dict:
                yield ("dataset", None, slot), facets


def _holder_where(holder: Any) -> str:
    """How ``_facet_maps`` writes where a map of ``_facet_holders`` is."""
    if isinstance(holder, str):
        return f"{holder}.facets"
    side, i, slot = holder
    return f"{side}.{slot}" if i is None else f"{side}[{i}].{slot}"


def _has_unicode_escape(text: str) -> bool:
    """``"\\u" in text``, found from the backslashes (rare in events; ``u`` is in every other word,
    and the substring search stops at each)."""
    at = text.find("\\")
    while at != -1:
        if text.startswith("u", at + 1):
            return True
        at = text.find("\\", at + 1)
    return False


def _placeholders(event: dict[str, Any], record: EventRecord) -> bool:
    """Whether a parsed event holds a placeholder (then it is a partial expected event), tested on
    its text first."""
    return might_hold_placeholders(record.text) and has_placeholders(event)


def _event_fragment(event: dict[str, Any]) -> str:
    kind = document_kind(event)
    return f"/$defs/{kind if kind in EVENT_KINDS else 'RunEvent'}"


class Comparator:
    """Applies every rule to events at base and head. Build one per partition, reuse for every
    event."""

    def __init__(self, base: SideSpec, head: SideSpec, fast: bool = True) -> None:
        """``fast=False`` takes the general path for every event (the reference the fast paths must
        match)."""
        pool: dict[tuple[str, str], Compiled | None] = {}
        self.base = Validators(base, pool)
        self.head = Validators(head, pool)
        self._explained: Counter[tuple[str, str, str, str]] = Counter()
        self._explaining: str | None = None  # the file whose failures ``_explained`` counts
        self._plans: dict[tuple[str, str | None, str | None], FacetPlan] = {}
        self._same_naming = (
            base.naming_digest == head.naming_digest
            and base.dataset_schemes == head.dataset_schemes
        )
        self.fast = fast
        # fast paths, memoised: what a passing event or facet costs once its plan is known
        self._fast_events: dict[Any, FastCheck | None] = {}
        self._fast_facets: dict[tuple[Any, ...], FastCheck | None] = {}
        self._producer_names: dict[str, Any] = {}
        self._name_pairs: dict[Identity, tuple[Status, Status] | None] = {}

    # --- one event -------------------------------------------------------------------------------

    def check(self, record: EventRecord, tally: Tally) -> None:
        if record.error is not None:
            tally.events += 1
            self._emit(
                tally,
                record,
                record.entry or "(unknown)",
                "event-readable",
                "",
                "",
                "event",
                (FAIL, record.error),
                (FAIL, record.error),
            )
            return
        try:
            event = parse_event(record.text)
        except EventError as exc:
            tally.events += 1
            self._emit(
                tally,
                record,
                record.entry or "(unknown)",
                "event-readable",
                "",
                "",
                "event",
                (FAIL, str(exc)),
                (FAIL, str(exc)),
            )
            return
        # a config.json, a schema
        if "eventType" not in event and document_kind(event) not in EVENT_KINDS:
            if record.entry is None:
                tally.skipped[record.file] += 1
                return
            # an entry's samples/ folder holds its sample events: anything else is a mistake
            tally.events += 1
            why = (
                FAIL,
                "not an OpenLineage event (no eventType, run and job, or dataset or job with "
                "eventTime, producer or schemaURL): a registry entry's samples/ folder holds "
                "events only",
            )
            self._emit(tally, record, record.entry, "event-readable", "", "", "event", why, why)
            return
        tally.events += 1
        incomplete = template(event, record)
        if incomplete:
            tally.incomplete[record.file] += 1
        producer = self._event_producer(event, record)
        if self.fast and not incomplete and not record.expected:
            self._fast(event, record, producer, tally)
        else:
            partial = incomplete or record.expected or _placeholders(event, record)
            memo: dict[tuple[Any, ...], Status] = {}
            # a template's event schema is not judged: it is reported once as incomplete
            if not incomplete:
                self._event_schema(event, partial, memo, record, producer, tally)
            for where, facets in _facet_maps(event):
                for key, facet in facets.items():
                    if isinstance(facet, dict):
                        self._facet(where, key, facet, partial, memo, record, producer, tally)
        self._naming(event, record, producer, tally)

    def _fast(
        self, event: dict[str, Any], record: EventRecord, producer: str, tally: Tally
    ) -> None:
        """The event schema and every facet of a complete event: one memo lookup and one or two
        ``is_valid`` calls per passing facet (the common case), the general path for the rest.
        Whether the event holds placeholders (a partial event) decides only how a failure is judged,
        so it is looked for at the first."""
        memo: dict[tuple[Any, ...], Status] = {}
        partial: bool | None = None
        if not self._event_passes(event, producer, tally):
            partial = _placeholders(event, record)
            self._event_schema(event, partial, memo, record, producer, tally)
        checks = self._fast_facets
        hits = tally.fast_hits
        for holder, facets in _facet_holders(event):
            for key, facet in facets.items():
                if type(facet) is not dict:
                    continue
                get = facet.get
                memo_key = (key, get("_schemaURL"), get("_producer"), producer)
                try:
                    check = checks[memo_key]
                except KeyError:
                    check = self._new_facet_check(memo_key)
                # an unhashable _schemaURL or _producer: the general path explains it
                except TypeError:
                    check = None
                if (
                    check is not None
                    and check.first(facet)
                    and (check.second is None or check.second(facet))
                ):
                    hits[check] = hits.get(check, 0) + 1
                    if check.unregistered is not None:
                        tally.note_unregistered(check.unregistered, record.file, record.index)
                    continue
                if partial is None:
                    partial = _placeholders(event, record)
                self._facet(
                    _holder_where(holder), key, facet, partial, memo, record, producer, tally
                )

    def _new_facet_check(self, memo_key: tuple[str, Any, Any, str]) -> FastCheck | None:
        if len(self._fast_facets) > 50_000:
            self._fast_facets.clear()
        check = self._fast_facets[memo_key] = self._facet_check(*memo_key)
        return check

    def _event_passes(self, event: dict[str, Any], producer: str, tally: Tally) -> bool:
        """Count the event schema as ok when the event validates on both sides (the common case)."""
        raw = event.get("schemaURL")
        if not isinstance(raw, str):
            return False
        check = self._fast_events.get(raw, _MISSING)
        if check is _MISSING:
            check = self._fast_events[raw] = self._event_check(raw)
        if check is None or not (
            check.first(event) and (check.second is None or check.second(event))
        ):
            return False
        tally.counts[(producer, "event-schema", "", OK)] += 1
        return True

    def _event_check(self, raw: str) -> FastCheck | None:
        validators = []
        for side in (self.base, self.head):
            resolved = None if is_placeholder(raw) else side.spec.resolve(raw)
            compiled = side.compiled(*resolved) if resolved else None
            if compiled is None:
                return None
            validators.append(compiled.rs)
        return FastCheck(*_distinct(validators))

    def _facet_check(
        self, key: str, schema_url: Any, raw_producer: Any, event_producer: str
    ) -> FastCheck | None:
        plan = self._plan(key, schema_url, raw_producer)
        validators = []
        for side, target in zip((self.base, self.head), plan.targets, strict=True):
            if not plan.static_ok or target is None:
                return None
            url, fragments = target
            compiled = side.compiled(url, fragments[0]) if len(fragments) == 1 else None
            if compiled is None:
                return None
            validators.append(compiled.rs)
        producer = plan.producer or event_producer
        return FastCheck(
            *_distinct(validators),
            (producer, key, plan.producer_status is not None),
            (producer, plan.shown),
            plan.unregistered,
        )

    def _event_producer(self, event: dict[str, Any], record: EventRecord) -> str:
        raw = event.get("producer")
        if not isinstance(raw, str):
            return record.entry or "(unknown)"
        name = self._producer_names.get(raw, _MISSING)  # the registered name, None, or _PLACEHOLDER
        if name is _MISSING:
            if len(self._producer_names) > 10_000:
                self._producer_names.clear()
            name = self._producer_names[raw] = (
                _PLACEHOLDER if is_placeholder(raw) else self.head.spec.producer_name(raw)
            )
        if name is _PLACEHOLDER:
            return record.entry or "(unknown)"
        return name or record.entry or raw[:120]

    def _emit(
        self,
        tally: Tally,
        record: EventRecord,
        producer: str,
        rule: str,
        facet: str,
        schema: str,
        subject: str | tuple[str, str],
        base: Status,
        head: Status,
        explain: tuple[str, str, Any, bool] | None = None,
    ) -> None:
        """Count one result; keep a row when it is not ok. ``subject`` may be (where, key), joined
        lazily."""
        outcome = OK if base[0] == PASS and head[0] == PASS else classify(base[0], head[0])
        tally.counts[(producer, rule, facet, outcome)] += 1
        if outcome == OK:
            return
        if isinstance(subject, tuple):
            subject = f"{subject[0]}.{subject[1]}"
        message = head[1] if head[0] != PASS else base[1]
        group = (producer, rule, facet, outcome)
        if explain is not None:
            if record.file != self._explaining:
                # counted per file: a file's events are one run in every engine (Spark sorts a
                # partition by file), whatever partition or reused worker reads it, so the same rows
                # are explained everywhere
                self._explaining = record.file
                self._explained.clear()
            if self._explained[group] < EXPLAINED_PER_GROUP:
                self._explained[group] += 1
                side = self.head if head[0] == FAIL else self.base
                message = self._explain(side, *explain) or message
        tally.rows.append(
            Row(
                producer,
                rule,
                facet,
                schema,
                subject,
                outcome,
                base[0],
                head[0],
                message,
                record.file,
                record.index,
            )
        )

    # --- schemas ---------------------------------------------------------------------------------

    def _validate(
        self,
        side: Validators,
        url: str,
        fragments: Sequence[str],
        instance: Any,
        partial: bool,
        memo: dict[tuple[Any, ...], Status],
    ) -> tuple[Status, Compiled | None]:
        """Pass when ``instance`` is valid against one of ``fragments`` of ``url``."""
        first: Compiled | None = None
        failure: Status | None = None
        for fragment in fragments:
            compiled = side.compiled(url, fragment)
            if compiled is None:
                failure = failure or (UNKNOWN, f"{url}#{fragment} cannot be compiled offline")
                continue
            first = first or compiled
            key = (compiled.key, id(instance))
            status = memo.get(key)
            if status is None:
                if compiled.rs.is_valid(instance):
                    status = PASSED
                else:
                    errors = side.errors_rs(compiled, instance, partial)
                    status = (FAIL, _rs_message(errors[0])) if errors else (PASS, "")
                memo[key] = status
            if status[0] == PASS:
                return status, compiled
            failure = status if failure is None or failure[0] == UNKNOWN else failure
        return failure or (UNKNOWN, f"{url} defines no facet"), first

    def _explain(
        self, side: Validators, url: str, fragment: str, instance: Any, partial: bool
    ) -> str:
        """Pure-Python ``jsonschema`` errors for a failing instance (a few per group: it is
        slow)."""
        compiled = side.compiled(url, fragment) if url in side.spec.digests else None
        if compiled is None:
            return ""
        try:
            errors = side.explain(compiled, instance, partial)
        except (RecursionError, ValidationTimeout):  # the jsonschema-rs message stands
            return ""
        return "; ".join(_py_message(e) for e in errors[:3])

    def _event_schema(
        self,
        event: dict[str, Any],
        partial: bool,
        memo: dict[tuple[Any, ...], Status],
        record: EventRecord,
        producer: str,
        tally: Tally,
    ) -> None:
        raw = event.get("schemaURL")
        statuses: list[Status] = []
        target = ("", "")
        for side in (self.base, self.head):
            if isinstance(raw, str) and not is_placeholder(raw):
                resolved = side.spec.resolve(raw)
            else:
                resolved = (side.spec.spec_url, _event_fragment(event))
            if resolved is None:
                statuses.append((UNKNOWN, f"schemaURL {raw!r} names no schema of this side"))
                continue
            target = resolved
            statuses.append(
                self._validate(side, resolved[0], [resolved[1]], event, partial, memo)[0]
            )
        self._emit(
            tally,
            record,
            producer,
            "event-schema",
            "",
            target[0],
            "event",
            statuses[0],
            statuses[1],
            (target[0], target[1], event, partial),
        )

    # --- facets ----------------------------------------------------------------------------------

    def _facet(
        self,
        where: str,
        key: str,
        facet: dict[str, Any],
        partial: bool,
        memo: dict[tuple[Any, ...], Status],
        record: EventRecord,
        event_producer: str,
        tally: Tally,
    ) -> None:
        plan = self._plan(key, facet.get("_schemaURL"), facet.get("_producer"))
        producer = plan.producer or event_producer
        if plan.unregistered is not None:
            tally.note_unregistered(plan.unregistered, record.file, record.index)
        if plan.targets[1] is not None:
            tally.seen.add((producer, plan.shown))
        results: list[Status] = []
        target = plan.targets[1]
        # identical schemas on both sides: one verdict serves both
        if plan.same and target is not None:
            compiled = (
                self.head.compiled(target[0], target[1][0])
                if len(target[1]) == 1 and not partial
                else None
            )
            if compiled is not None and compiled.rs.is_valid(facet):
                status = PASSED
            else:
                status = self._validate(self.head, target[0], target[1], facet, partial, memo)[0]
            if status is PASSED and plan.static_ok:
                tally.passed_facets[(producer, key, plan.producer_status is not None)] += 1
                return
            results = [status, status]
        else:
            for side, side_target, reason in zip(
                (self.base, self.head), plan.targets, plan.unresolved, strict=True
            ):
                if side_target is None:
                    results.append((UNKNOWN, reason))
                else:
                    results.append(
                        self._validate(side, side_target[0], side_target[1], facet, partial, memo)[
                            0
                        ]
                    )
        subject = (where, key)
        target = plan.targets[1] or plan.targets[0]
        explain = (target[0], target[1][0], facet, partial) if target else None
        self._emit(
            tally,
            record,
            producer,
            "facet-schema",
            key,
            plan.shown,
            subject,
            results[0],
            results[1],
            explain,
        )
        self._emit(tally, record, producer, "facet-key", key, plan.shown, subject, *plan.key_status)
        if plan.producer_status is not None:
            self._emit(
                tally,
                record,
                producer,
                "facet-producer",
                key,
                plan.shown,
                subject,
                *plan.producer_status,
            )

    def _plan(self, key: str, schema_url: Any, raw_producer: Any) -> FacetPlan:
        """What a facet's key, ``_schemaURL`` and ``_producer`` resolve to on each side
        (memoised)."""
        memo_key = (
            key,
            schema_url if isinstance(schema_url, str) else None,
            raw_producer if isinstance(raw_producer, str) else None,
        )
        plan = self._plans.get(memo_key)
        if plan is None:
            if len(self._plans) > 50_000:
                self._plans.clear()
            plan = self._plans[memo_key] = _make_plan(self.base.spec, self.head.spec, *memo_key)
        return plan

    # --- naming ----------------------------------------------------------------------------------

    def _naming(
        self, event: dict[str, Any], record: EventRecord, producer: str, tally: Tally
    ) -> None:
        """Every identifier of the event, found and judged as ``registry-bot naming check`` does;
        the (base, head) statuses are memoised per identifier and job type."""
        # at most this many objects have a namespace key (an escape could hide one: then walk all)
        text = record.text
        candidates = None if _has_unicode_escape(text) else text.count('"namespace"')
        if candidates == 0 or (
            self.fast
            and candidates is not None
            and self._names_pass(event, candidates, producer, tally)
        ):
            return
        pairs = self._name_pairs
        counts = tally.counts
        for found in identifiers(event, candidates, ordered=False):
            identity = (found.role, found.namespace, found.name, found.integration, found.job_type)
            pair = pairs.get(identity, _MISSING)
            if pair is _MISSING:
                pair = self._name_pair(identity)
            if pair is None:
                continue
            rule = NAME_RULES[found.role]
            if pair[0] is PASSED and pair[1] is PASSED:
                counts[(producer, rule, "", OK)] += 1
            else:
                self._emit(
                    tally,
                    record,
                    producer,
                    rule,
                    "",
                    f"{found.namespace} {found.name}"[:200],
                    found.subject,
                    pair[0],
                    pair[1],
                )

    def _names_pass(
        self, event: dict[str, Any], candidates: int, producer: str, tally: Tally
    ) -> bool:
        """Count the event's identifiers when they all lie where events keep them and all pass on
        both sides (the common case): one memo lookup each, and no location written out. False,
        counting nothing, otherwise (the full walk then finds and reports them)."""
        found, seen = shallow_identities(event, candidates)
        if seen != candidates:
            return False
        pairs = self._name_pairs
        jobs = datasets = 0
        for identity in found:
            pair = pairs.get(identity, _MISSING)
            if pair is _MISSING:
                pair = self._name_pair(identity)
            if pair is None:
                continue
            if pair[0] is not PASSED or pair[1] is not PASSED:
                return False
            if identity[0] == "job":
                jobs += 1
            else:
                datasets += 1
        if jobs:
            tally.counts[(producer, "job-name", "", OK)] += jobs
        if datasets:
            tally.counts[(producer, "dataset-name", "", OK)] += datasets
        return True

    def _name_pair(self, identity: Identity) -> tuple[Status, Status] | None:
        """One identifier's (base, head) statuses, memoised; None for a placeholder or a side
        without rules."""
        found = Found(identity[0], identity[1], identity[2], None, identity[3], identity[4])
        base = self._naming_status(self.base.spec, found)
        head = base if self._same_naming else self._naming_status(self.head.spec, found)
        pair = (base, head) if base is not None and head is not None else None
        if len(self._name_pairs) >= MEMO_BOUND:
            self._name_pairs.clear()
        self._name_pairs[identity] = pair
        return pair

    @staticmethod
    def _naming_status(spec: SideSpec, found: Found) -> Status | None:
        """``bot.model.naming.events.judge`` as a status: valid passes, invalid fails, unknown is
        unknown; None for a placeholder (never an identifier) or a side without naming rules."""
        if spec.naming is None:
            return None
        # most identifiers: a valid dataset, known without its components
        if (
            found.role == "dataset"
            and not is_placeholder(found.namespace)
            and not is_placeholder(found.name)
            and spec.naming.accepts_dataset(found.namespace, found.name)
        ):
            return PASSED
        verdict, result = judge(spec.naming, found)
        if result.reason == TOO_SLOW:
            raise NamingTimeout(found.namespace, found.name)
        if verdict == VALID:
            return PASSED
        if verdict == PLACEHOLDER:
            return None
        if verdict == INVALID:
            return FAIL, result.reason or "does not follow the naming rule"
        return UNKNOWN, result.reason or "no naming rule covers it"


class NamingTimeout(RuntimeError):
    """One match of an identifier ran past its time limit on this engine, with a pattern the rules
    did not decide too slow when they were built: whether it does depends on the machine, so it is
    no verdict (another engine could pass it), and the regression does not finish."""

    def __init__(self, namespace: str, name: str) -> None:
        super().__init__(
            f"matching {namespace[:100]!r} / {name[:100]!r} by the naming files ran past its time "
            "limit on this engine (a pattern too slow for it); no verdict is given that another "
            "machine could reverse"
        )


@dataclass(frozen=True, slots=True, eq=False)
class FastCheck:
    """The ``is_valid`` calls that decide a passing event or facet (``second`` is None when both
    sides share the schema), and what a pass adds to the tally (facets only). Hashed by identity:
    ``Tally.fast_hits`` counts passes per check."""

    first: Callable[[Any], bool]
    second: Callable[[Any], bool] | None
    count: tuple[str, str, bool] = ("", "", False)  # the key of ``Tally.passed_facets``
    seen: tuple[str, str] = ("", "")  # (producer, schema) for ``Tally.seen``
    unregistered: str | None = None  # the facet's _producer, when no registered producer covers it


def _distinct(validators: list[Any]) -> tuple[Callable[[Any], bool], Callable[[Any], bool] | None]:
    """Bound ``is_valid`` methods of the base and head validators (the second None when they are
    one)."""
    first, second = validators
    return first.is_valid, (None if second is first else second.is_valid)


@dataclass(frozen=True, slots=True)
class FacetPlan:
    """The side-specific facts of a (key, ``_schemaURL``, ``_producer``) triple, computed once."""

    producer: str | None  # the registered producer ``_producer`` names (head side)
    shown: str  # the schema as shown in reports: a short URI when registered
    # (url, fragments)
    targets: tuple[tuple[str, tuple[str, ...]] | None, tuple[str, tuple[str, ...]] | None]
    unresolved: tuple[str, str]  # why a side has no target
    key_status: tuple[Status, Status]
    producer_status: tuple[Status, Status] | None
    # a _producer URL no registered producer covers on either side (one notice each)
    unregistered: str | None
    same: bool  # both sides validate against the same compiled schemas
    static_ok: bool  # the key and producer rules pass on both sides


def _make_plan(
    base: SideSpec, head: SideSpec, key: str, schema_url: str | None, raw_producer: str | None
) -> FacetPlan:
    facet = {} if schema_url is None else {"_schemaURL": schema_url}
    targets: list[tuple[str, tuple[str, ...]] | None] = []
    reasons: list[str] = []
    keys: list[Status] = []
    shown = ""
    for spec in (base, head):
        resolved, why = _resolve_facet(spec, key, facet)
        reasons.append(why)
        if resolved is None:
            targets.append(None)
            keys.append((UNKNOWN, why))
            continue
        url, fragment = resolved
        file = spec.files.get(url)
        shown = file.short_uri if file and file.short_uri else url
        fragments = (
            [fragment]
            if fragment
            else [f"/$defs/{n}" for n in (file.defs_for(key) if file else [])]
        )
        if not fragments:
            fragments = [f"/$defs/{file.defs[0][1]}"] if file and len(file.defs) == 1 else [""]
        targets.append((url, tuple(fragments)))
        keys.append(_key_status(spec, url, fragment, key))
    producer_status: tuple[Status, Status] | None = None
    producer = None
    unregistered = None
    if raw_producer is not None and not is_placeholder(raw_producer):
        producer = head.producer_name(raw_producer)
        b, h = (
            (PASS, "") if ok else (FAIL, why)
            for ok, why in (s.producer_ok(raw_producer) for s in (base, head))
        )
        if b[0] == FAIL and h[0] == FAIL and not raw_producer.startswith("ol:"):
            # not a registry name on either side: a notice, not a failure per facet
            unregistered = raw_producer
        else:
            producer_status = (b, h)
    same = (
        targets[0] is not None
        and targets[0] == targets[1]
        and base.digests.get(targets[0][0]) == head.digests.get(targets[0][0])
    )
    static_ok = all(k[0] == PASS for k in keys) and (
        producer_status is None or all(p[0] == PASS for p in producer_status)
    )
    return FacetPlan(
        producer,
        shown,
        (targets[0], targets[1]),
        (reasons[0], reasons[1]),
        (keys[0], keys[1]),
        producer_status,
        unregistered,
        same,
        static_ok,
    )


def _resolve_facet(
    spec: SideSpec, key: str, facet: dict[str, Any]
) -> tuple[tuple[str, str] | None, str]:
    raw = facet.get("_schemaURL")
    if isinstance(raw, str) and not is_placeholder(raw):
        resolved = spec.resolve(raw)
        return (
            resolved,
            "" if resolved else f"_schemaURL {raw[:200]!r} names no schema of this side",
        )
    url = spec.by_key.get(key)
    if url is None:
        return None, f"no _schemaURL, and no schema of this side defines the key {key!r}"
    return (url, ""), ""


def _key_status(spec: SideSpec, url: str, fragment: str, key: str) -> Status:
    file = spec.files.get(url)
    if file is None or file.owner is None:  # its keys and owner are not the registry's to judge
        return (
            UNKNOWN,
            f"{url} is not a registered facet schema of this side: its keys cannot be checked",
        )
    keys = file.keys_for(fragment)
    if key not in keys:
        return (
            FAIL,
            f"facet key {key!r} is not the key its schema defines "
            f"({', '.join(sorted(keys)) or 'none'})",
        )
    if not file.prefix:  # core's keys carry no prefix
        return PASS, ""
    holder = prefix_holder(key, spec.names, file.owner)
    if holder is not None and holder != file.owner:
        return (
            FAIL,
            f"facet key {key!r} carries {carried_prefix(key, holder)!r}, the prefix of the "
            f"registered name {holder!r}, not its owner's {file.prefix!r}",
        )
    if not carries_prefix(key, file.owner):
        return FAIL, f"facet key {key!r} does not carry its owner's prefix {file.prefix!r}"
    return PASS, ""


def _where(path: Any) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "(root)"


def _rs_message(error: Any) -> str:
    return f"{_where(error.instance_path)}: {error.message}"[:500]


def _py_message(error: Any) -> str:
    return f"{_where(error.absolute_path)}: {error.message}"[:500]


def run_records(
    records: Any, base: SideSpec, head: SideSpec, comparator: Comparator | None = None
) -> Tally:
    """Check every record in this process (the single-process path)."""
    comparator = comparator or Comparator(base, head)
    tally = Tally()
    for record in records:
        comparator.check(record, tally)
    return tally.settle()
