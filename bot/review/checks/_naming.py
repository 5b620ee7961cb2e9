"""The naming rule family's work (``bot.review.checks.naming`` holds its rules and decides when it
runs).

Runs when a change touches the naming folder (``config.paths.naming``), or on a whole-tree review
when the folder exists. Patterns in the files come from the pull request: they are vetted and every
match made here has a time bound, so a hostile pattern yields a finding, never a hang.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import PurePosixPath

from bot.core import budget
from bot.core.anchors import keyed_pointer
from bot.core.findings import Finding, Severity
from bot.core.jsondoc import JsonDoc, JsonProblem
from bot.core.snapshot import Snapshot, SnapshotError
from bot.model.naming import consistency
from bot.model.naming.loader import BASE_FILE, KINDS, NamingFiles, Problem, read_folder
from bot.model.naming.model import Example, ParseResult, Source
from bot.model.naming.patterns import MATCH_TIMEOUT
from bot.model.naming.rules import NamingRules
from bot.review.input import ReviewInput

DOCS = "https://openlineage.io/docs/spec/naming"
UNCHECKED = "naming/unchecked"


def findings(review: ReviewInput, folder: str) -> Iterator[Finding]:
    """The naming family's findings on ``folder`` of the head side
    (``bot.review.checks.naming.check`` decides whether it runs)."""
    files = read_folder(review.head, folder)
    base = _naming_base(review, files, folder)
    rules = NamingRules(
        ((p, d.value) for p, d in files.docs.items()),
        folder=folder,
        base_schema=base,
        label=f"{review.head.label}:{folder}",
        match_timeout=budget.timeout(MATCH_TIMEOUT),
    )
    context = _Context(files, rules)
    for problem in (*files.problems, *rules.problems):
        yield context.finding(problem)
    yield from _locations(context)
    yield from _shared_schemes(context)
    for source in (*rules.datasets.values(), *rules.jobs.values()):
        yield from _examples(context, source)
        yield from (context.finding(problem) for problem in consistency.problems(source))
    yield from _scheme_decisions(context)
    yield from _ambiguity(context)
    yield from _slow_patterns(context)
    yield from _docs_in_sync(review.head, context, folder)


def _naming_base(review: ReviewInput, files: NamingFiles, folder: str) -> dict[str, object]:
    """The base schema the naming files are judged by: the base branch's, never the pull request's
    (a change to it is reviewed as a change, ``ownership/steering-file-changed``); the bundled one
    without."""
    path = f"{folder}/{BASE_FILE}"
    if review.base is not None:
        try:
            raw = review.base.read(path)
            value = JsonDoc.parse(raw, path).value if raw is not None else None
        except (SnapshotError, JsonProblem):
            value = None
    else:
        doc = files.docs.get(path)
        value = doc.value if doc is not None else None
    return value if isinstance(value, dict) else _bundled_base()


def _bundled_base() -> dict[str, object]:
    from bot.model.naming import _bundled_base as base

    return base()


class _Context:
    def __init__(self, files: NamingFiles, rules: NamingRules) -> None:
        self.files = files
        self.rules = rules

    def finding(
        self, problem: Problem, severity: Severity | None = None, hint: str = ""
    ) -> Finding:
        doc: JsonDoc | None = self.files.docs.get(problem.path)
        line, column = doc.locate(problem.pointer) if doc is not None else (1, 1)
        if severity is None:
            severity = (
                Severity.WARNING if problem.rule == "naming/unused-component" else Severity.ERROR
            )
        return Finding(
            rule=problem.rule,
            severity=severity,
            path=problem.path,
            message=problem.message,
            line=line,
            column=column,
            pointer=problem.pointer,
            hint=hint or f"See naming/CONTRIBUTING.md and {DOCS}.",
            subject=problem.subject,
            # inside a form, an example, a decision: matched at its identity, not its index
            anchor=keyed_pointer(doc.value, problem.pointer) if doc is not None else None,
            # what was not checked of the file stood on it and the base schema alone
            grounds=(problem.path, f"{self.files.folder}/{BASE_FILE}")
            if problem.rule == UNCHECKED
            else (),
        )

    def at(self, rule: str, path: str, pointer: str, message: str) -> Finding:
        return self.finding(Problem(rule, path, pointer, message))


def _locations(ctx: _Context) -> Iterator[Finding]:
    seen: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in ctx.files.source_paths():
        value = ctx.files.docs[path].value
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            continue
        sid = value["id"]
        rel = PurePosixPath(path).relative_to(ctx.files.folder)
        kind = KINDS.get(rel.parts[0], "")
        seen[(kind, sid)].append(path)
        expected = f"{rel.parts[0]}/{sid}/{sid}.json"
        if str(rel) != expected:
            yield ctx.at(
                "naming/file-location",
                path,
                "/id",
                f"a file with id {sid!r} belongs at {ctx.files.folder}/{expected}",
            )
        file_id = value.get("$id")
        if isinstance(file_id, str) and not file_id.endswith(
            f"/{rel.parts[0]}/{sid}/" + file_id.split("/")[-2] + f"/{sid}.json"
        ):
            yield ctx.at(
                "naming/file-location",
                path,
                "/$id",
                f"$id {file_id!r} does not name the id {sid!r}",
            )
    for (kind, sid), paths in seen.items():
        for path in paths[1:]:
            yield ctx.at(
                "naming/duplicate-id",
                path,
                "/id",
                f"{kind} id {sid!r} is already declared in {paths[0]}",
            )


def _shared_schemes(ctx: _Context) -> Iterator[Finding]:
    by_scheme: dict[str, list[Source]] = defaultdict(list)
    for source in ctx.rules.datasets.values():
        if source.scheme:
            by_scheme[source.scheme].append(source)
    for scheme, sources in by_scheme.items():
        if len(sources) < 2:
            continue
        for source in sources:
            declared = set(source.raw.get("sharesScheme", {}).get("with", ()))
            others = {s.id for s in sources if s is not source}
            missing = sorted(others - declared)
            if missing:
                yield ctx.at(
                    "naming/shared-scheme",
                    source.path,
                    "/scheme",
                    f"scheme {scheme!r} is also used by {', '.join(missing)}; say under "
                    f"sharesScheme "
                    "how identifiers of the two are told apart",
                )


def _parse(rules: NamingRules, source: Source, example: Example) -> ParseResult:
    if source.kind == "dataset":
        return rules.parse_dataset(example.namespace, example.name)
    return rules.parse_job(example.namespace, example.name, source.id, example.job_type)


def _examples(ctx: _Context, source: Source) -> Iterator[Finding]:
    rules = ctx.rules
    declared = dict(enumerate(source.raw.get("examples", {}).get("valid", [])))
    for i, example in enumerate(source.valid):
        result = _parse(rules, source, example)
        where = f"{example.namespace!r} / {example.name!r}"
        if not result.ok or result.source != source.id:
            why = result.reason if not result.ok else f"it parses as {result.source}"
            yield ctx.at(
                "naming/round-trip",
                source.path,
                example.pointer,
                f"valid example {where} is rejected: {why}",
            )
            continue
        expected = declared.get(i, {}).get("components")
        if expected is not None and expected != result.components:
            yield ctx.at(
                "naming/round-trip",
                source.path,
                example.pointer + "/components",
                f"valid example {where} parses into {result.components}, not the declared "
                f"{expected}",
            )
        yield from _round_trip(ctx, source, example, result.components, result.form)
    for example in source.invalid:
        result = _parse(rules, source, example)
        where = f"{example.namespace!r} / {example.name!r}"
        if result.ok:
            yield ctx.at(
                "naming/invalid-example-accepted",
                source.path,
                example.pointer,
                f"invalid example {where} is accepted (as {result.source})",
            )
        elif example.expect_reason not in (result.reason or ""):
            yield ctx.at(
                "naming/invalid-example-accepted",
                source.path,
                example.pointer + "/reason",
                f"invalid example {where} is rejected, but not for {example.expect_reason!r}: "
                f"{result.reason}",
            )
    for example in source.decided_valid:
        result = _parse(rules, source, example)
        if not result.ok or result.source != source.id:
            yield ctx.at(
                "naming/decision-mismatch",
                source.path,
                example.pointer,
                f"decided valid, but the parser says: {result.reason or result.source}",
            )
    for example in source.decided_invalid:
        result = _parse(rules, source, example)
        if result.ok or example.expect_reason not in (result.reason or ""):
            yield ctx.at(
                "naming/decision-mismatch",
                source.path,
                example.pointer,
                f"decided invalid ({example.expect_reason or 'any reason'}), but the parser says: "
                f"{'valid' if result.ok else result.reason}",
            )


def _round_trip(
    ctx: _Context, source: Source, example: Example, components: dict[str, str], form: str | None
) -> Iterator[Finding]:
    from bot.model.naming.model import FormatError

    try:
        fmt = ctx.rules.format_dataset if source.kind == "dataset" else ctx.rules.format_job
        made = fmt(source.id, form=form, **components)
    except (FormatError, TimeoutError) as exc:
        yield ctx.at(
            "naming/round-trip",
            source.path,
            example.pointer,
            f"format(parse(x)) fails for {example.namespace!r} / {example.name!r}: {exc}",
        )
        return
    if (made.namespace, made.name) != (example.namespace, example.name):
        yield ctx.at(
            "naming/round-trip",
            source.path,
            example.pointer,
            f"format(parse(x)) gives {made.namespace!r} / {made.name!r}, "
            f"not {example.namespace!r} / {example.name!r}",
        )


def _scheme_decisions(ctx: _Context) -> Iterator[Finding]:
    path = f"{ctx.files.folder}/decisions.json"
    for decision in ctx.rules.decisions:
        for example in decision.examples:
            result = ctx.rules.parse_dataset(example.namespace, example.name)
            if result.ok or decision.reason not in (result.reason or ""):
                yield ctx.at(
                    "naming/decision-mismatch",
                    path,
                    example.pointer,
                    f"{example.namespace!r} / {example.name!r} should be rejected with this "
                    f"decision's reason, but the parser says: "
                    f"{'valid' if result.ok else result.reason}",
                )


def _accepts(source: Source, namespace: str, name: str) -> bool:
    joined = namespace + "\x00" + name
    for form in source.forms:
        try:
            if form.both_re.fullmatch(joined, timeout=budget.timeout(MATCH_TIMEOUT)) is not None:
                return True
        except TimeoutError:
            return False  # reported by the slow-pattern probe
    return False


def _ambiguity(ctx: _Context) -> Iterator[Finding]:
    sources = list(ctx.rules.datasets.values())
    reported: set[frozenset[str]] = set()
    for source in sources:
        for example in (*source.valid, *source.decided_valid):
            for other in sources:
                pair = frozenset((source.id, other.id))
                if other is source or pair in reported:
                    continue
                if other.id in source.wins_over or source.id in other.wins_over:
                    continue
                if _accepts(other, example.namespace, example.name):
                    reported.add(pair)
                    yield ctx.at(
                        "naming/ambiguous",
                        source.path,
                        example.pointer,
                        f"{example.namespace!r} / {example.name!r} is accepted by both {source.id} "
                        f"and {other.id}; add precedence (over) to one of the files, or narrow "
                        f"the patterns",
                    )


def _slow_patterns(ctx: _Context) -> Iterator[Finding]:
    """The forms and decisions whose patterns the rules decided too slow when they were built
    (``bot.model.naming.slow``: probed with long strings, once)."""
    for (source_id, i), length in ctx.rules.slow_forms.items():
        source = ctx.rules.source(source_id)
        slow = f"matching form {source.forms[i].label!r} against a"
        yield ctx.finding(
            Problem(
                "naming/slow-pattern",
                source.path,
                f"/forms/{i}",
                f"{slow} {length:,}-character probe took over {MATCH_TIMEOUT:g} s; "
                "simplify the component patterns",
                # not the probe: which one ran out of time first may vary
                f"{slow} long probe took over {MATCH_TIMEOUT:g} s",
            )
        )
    for pointer, length in ctx.rules.slow_decisions.items():
        yield ctx.finding(
            Problem(
                "naming/slow-pattern",
                f"{ctx.files.folder}/decisions.json",
                pointer + "/namespacePattern",
                f"matching namespacePattern against a {length:,}-character probe took "
                f"over {MATCH_TIMEOUT:g} s; simplify the pattern",
                f"matching namespacePattern against a long probe took over {MATCH_TIMEOUT:g} s",
            )
        )


def _docs_in_sync(snapshot: Snapshot, ctx: _Context, folder: str) -> Iterator[Finding]:
    from bot.model.naming.docs import render

    path = f"{folder}/Naming.md"
    try:
        data = snapshot.read(path)
    except SnapshotError as exc:
        yield ctx.at("naming/docs-out-of-sync", path, "", f"{path} cannot be read: {exc}")
        return
    current = None if data is None else data.decode("utf-8", "replace")
    if current != render(ctx.rules):
        state = "is missing" if current is None else "is out of date"
        yield Finding(
            rule="naming/docs-out-of-sync",
            severity=Severity.ERROR,
            path=path,
            line=1,
            column=1,
            message=f"{path} {state}: it must be what `registry-bot naming docs` generates from "
            f"the files",
            hint=f"Run `registry-bot naming docs --dir {folder}` and commit the result.",
        )
