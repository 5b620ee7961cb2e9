"""``NamingRules``: parse and format dataset and job identifiers by the naming files.

Parsing is the hot path (the Spark regression calls it for every identifier of every event): it
dispatches on the namespace's scheme to the few forms that can match, runs two precompiled
patterns, and only when nothing matches runs the slower diagnosis that explains why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import regex

from bot.core import budget
from bot.model.naming.loader import Problem, build_sources
from bot.model.naming.model import (
    Form,
    FormatError,
    Identifier,
    ParseResult,
    SchemeDecision,
    Source,
)
from bot.model.naming.patterns import MATCH_TIMEOUT, Decided, DecidedSlow, compile_full
from bot.model.naming.template import Template

MAX_IDENTIFIER_CHARS = 8192
CACHE_SIZE = 65536  # identifiers repeat heavily in real event streams
_RELAXED = ".+?"
TOO_SLOW = "matching took too long: a pattern of the naming files is too slow"
# a pattern decided too slow when the rules were built (``bot.model.naming.slow``): the same verdict
# on every engine, where TOO_SLOW is one match past its time limit on this machine
SLOW_PATTERN = "a pattern of the naming files is too slow to match (naming/slow-pattern)"
_new_result = tuple.__new__  # ParseResult(...) without the named tuple's Python-level __new__


def scheme_key(namespace: str) -> str:
    """What the dispatch table is keyed on: the scheme, or the whole namespace when it has none."""
    i = namespace.find(":")
    return namespace if i < 0 else namespace[:i]


class NamingRules:
    """All naming conventions of one folder. Immutable, picklable, cheap to call."""

    def __init__(
        self,
        documents: Iterable[tuple[str, Any]],
        folder: str = "naming",
        base_schema: Mapping[str, Any] | None = None,
        label: str = "naming",
        match_timeout: float | None = None,
    ) -> None:
        """``match_timeout``: rules from a pull request match on ``regex`` with this limit per match
        (past it, no match, and the bounded slow path says why), never on the unbounded fast path
        (see docs/hostile-input.md)."""
        self._documents = tuple(documents)
        self._folder = folder
        self._base_schema = base_schema
        self.label = label
        self.match_timeout = match_timeout
        # each file's base-schema problems, judged here once (a time limit: see build_sources)
        self._judged: dict[str, tuple[Problem, ...]] = {}
        sources, decisions, problems = build_sources(
            self._documents, folder, base_schema, match_timeout, self._judged
        )
        self._setup(sources, decisions, problems)
        # (source id, form index) and decision pointer -> the length of the probe too slow for it
        self.slow_forms: dict[tuple[str, int], int] = {}
        self.slow_decisions: dict[str, int] = {}
        if match_timeout is not None:  # from a pull request: decided here, once for every engine
            from bot.model.naming.slow import slow_decisions, slow_forms

            self._decide_slow(slow_forms(self), slow_decisions(self))

    def _setup(
        self, sources: list[Source], decisions: list[SchemeDecision], problems: list[Problem]
    ) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.decisions: tuple[SchemeDecision, ...] = tuple(decisions)
        self.datasets: dict[str, Source] = {}
        self.jobs: dict[str, Source] = {}
        for source in sources:
            table = self.datasets if source.kind == "dataset" else self.jobs
            table.setdefault(source.id, source)  # duplicates are reported by the checks
        self._by_scheme: dict[str, list[Form]] = {}
        for source in self.datasets.values():
            for form in source.forms:
                self._by_scheme.setdefault(scheme_key(_literal_prefix(form.namespace)), []).append(
                    form
                )
        self._dispatch()
        self._job_forms = [form for source in self.jobs.values() for form in source.forms]
        # jobType facet integration (upper case) -> job kind
        self._by_integration: dict[str, str] = {}
        for source in self.jobs.values():
            integration = source.raw.get("integration")
            if isinstance(integration, str):
                self._by_integration.setdefault(integration.upper(), source.id)
        self._relaxed: dict[tuple[int, str, str], regex.Pattern[str]] = {}
        self._cache: dict[tuple[str, str], ParseResult] = {}
        self._seen: set[int] = set()  # hashes of identifiers parsed once

    def _dispatch(self) -> None:
        """The hot path's matchers of each scheme's forms."""
        self._hot: dict[str, tuple[tuple[Callable[[str], Any], Form], ...]] = {
            scheme: tuple((_hot_matcher(form, self.match_timeout), form) for form in forms)
            for scheme, forms in self._by_scheme.items()
        }

    def _decide_slow(self, forms: dict[tuple[str, int], int], decisions: dict[str, int]) -> None:
        """Make the patterns decided too slow raise at once (``patterns.Decided``)."""
        self.slow_forms, self.slow_decisions = forms, decisions
        if not forms and not decisions:
            return
        for source_id, index in forms:
            self.source(source_id).forms[index].decide_slow()
        self.decisions = tuple(
            replace(d, pattern=Decided(f"decision {d.pointer}")) if d.pointer in decisions else d
            for d in self.decisions
        )
        self._dispatch()
        self.clear_cache()

    # Pickling: ship the documents, the base schema and each file's verdict by it (a file failing
    # it, or whose validation ran out of time here, is skipped on every engine: never validated
    # again against a worker's clock) and the patterns decided too slow (never timed again),
    # rebuild the compiled patterns on the other side.
    def __getstate__(self) -> dict[str, Any]:
        return {
            "documents": self._documents,
            "folder": self._folder,
            "base_schema": self._base_schema,
            "judged": self._judged,
            "label": self.label,
            "match_timeout": self.match_timeout,
            "slow": (self.slow_forms, self.slow_decisions),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._documents = state["documents"]
        self._folder = state["folder"]
        self._base_schema = state.get("base_schema")
        self.label = state["label"]
        self.match_timeout = state.get("match_timeout")
        self._judged = dict(state.get("judged", {}))
        self._setup(
            *build_sources(
                self._documents, self._folder, self._base_schema, self.match_timeout, self._judged
            )
        )
        self._decide_slow(*state.get("slow", ({}, {})))

    def __repr__(self) -> str:
        return (
            f"NamingRules({self.label!r}, {len(self.datasets)} dataset sources, {len(self.jobs)} "
            f"job kinds)"
        )

    def source(self, source_id: str) -> Source:
        found = self.datasets.get(source_id) or self.jobs.get(source_id)
        if found is None:
            raise KeyError(f"no naming convention {source_id!r}")
        return found

    # ---- parsing -------------------------------------------------------------------------------

    def parse_dataset(self, namespace: str, name: str) -> ParseResult:
        """Which source a dataset identifier belongs to, with its components, or why it is
        invalid."""
        cache = self._cache
        try:
            # a tuple: strings from events keep their hash, no joining
            hit = cache.get((namespace, name))
            joined = namespace + "\x00" + name if hit is None else ""
        except TypeError:
            return ParseResult(False, reason="namespace and name must be strings")
        if hit is None:  # inlined: this runs for every identifier of every event
            if len(joined) > MAX_IDENTIFIER_CHARS or joined.count("\x00") != 1:
                hit = _refuse(joined)
            else:
                i = namespace.find(":")
                forms = self._hot.get(namespace if i < 0 else namespace[:i], ())
                for fullmatch, form in forms:
                    m = fullmatch(joined)
                    if m is not None:
                        hit = (
                            _new_result(
                                ParseResult, (True, form.source, m.groupdict(), None, form.label)
                            )
                            if form.plain
                            else _finish(form, m.groupdict())
                        )
                        break
                else:
                    hit = self._explain(
                        self._by_scheme.get(namespace if i < 0 else namespace[:i], []),
                        namespace,
                        name,
                        "dataset",
                    )
            # Only an identifier seen before is cached: holding a result costs more than parsing a
            # one-off (allocation, garbage collector), and copying it is needless the first time.
            # (A failure's components are the class default, shared: a caller gets a copy of those.)
            seen = self._seen
            key_hash = hash((namespace, name))
            if key_hash not in seen:
                if len(seen) >= CACHE_SIZE:
                    seen.clear()
                seen.add(key_hash)
                if hit[0]:
                    return hit
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[namespace, name] = hit
        # a copy of the components, so that no caller can change what the cache holds
        return _new_result(ParseResult, (hit[0], hit[1], hit[2].copy(), hit[3], hit[4]))

    def accepts_dataset(self, namespace: str, name: str) -> bool:
        """Whether ``parse_dataset`` accepts the identifier by a form without optional parts, case
        or quoting rules, found without building its components (the regression needs only the
        verdict of an identifier that passes). False may still be valid: ask ``parse_dataset``."""
        joined = namespace + "\x00" + name
        if len(joined) > MAX_IDENTIFIER_CHARS or joined.count("\x00") != 1:
            return False
        i = namespace.find(":")
        for fullmatch, form in self._hot.get(namespace if i < 0 else namespace[:i], ()):
            if fullmatch(joined) is not None:  # the form parse_dataset takes
                return form.plain
        return False

    def clear_cache(self) -> None:
        """Forget every cached result (benchmarks measure the uncached path this way)."""
        self._cache.clear()
        self._seen.clear()

    def parse_job(
        self, namespace: str, name: str, kind: str | None = None, job_type: str | None = None
    ) -> ParseResult:
        """The job kind (``airflow``...) an identifier follows, or why it follows none.

        ``kind`` limits the forms to one job kind, ``job_type`` (the jobType facet's value) to its
        forms for that job type (see ``job_forms``); without ``kind``, every form of every kind is
        tried.
        """
        try:
            joined = namespace + "\x00" + name
        except TypeError:
            return ParseResult(False, reason="namespace and name must be strings")
        if len(joined) > MAX_IDENTIFIER_CHARS or joined.count("\x00") != 1:
            return _refuse(joined)
        if kind is not None:
            if kind not in self.jobs:
                return ParseResult(
                    False,
                    reason=f"no job naming convention {kind!r} (known: {', '.join(self.jobs)})",
                )
            forms = self.job_forms(kind, job_type)
            if not forms:
                return ParseResult(
                    False,
                    source=kind,
                    reason=f"the {kind} job naming convention has no form for jobType {job_type!r}",
                )
        else:
            forms = self._job_forms
        for form in forms:
            m = (
                form.hot_re.fullmatch(joined)
                if self.match_timeout is None
                else _bounded(form.both_re, joined, self.match_timeout)
            )
            if m is not None:
                return (
                    _finish(form, m.groupdict())
                    if not form.plain
                    else ParseResult(True, form.source, m.groupdict(), None, form.label)
                )
        return self._explain(forms, namespace, name, "job")

    def job_kind(self, integration: str) -> str | None:
        """The job kind whose naming file states this jobType facet ``integration``
        (case-insensitive)."""
        return self._by_integration.get(integration.upper())

    def job_forms(self, kind: str, job_type: str | None = None) -> list[Form]:
        """The forms of a job kind for a jobType facet value: the forms listing it in ``jobTypes``,
        else the forms that list none (they serve any job type); every form without ``job_type``."""
        source = self.jobs.get(kind)
        if source is None:
            return []
        if job_type is None:
            return list(source.forms)
        wanted = job_type.upper()
        listed = [f for f in source.forms if any(t.upper() == wanted for t in f.job_types)]
        return listed or [f for f in source.forms if not f.job_types]

    def covers_namespace(self, namespace: str) -> bool:
        """Whether a rule speaks to a dataset namespace: a source uses its scheme (in any case), a
        decision rejects it, or it has no scheme at all (a namespace names its data source).
        Otherwise a failed parse is *unknown*: no rule covers that data source yet.

        A decision decided too slow covers it (a failure, never unknown, on every engine); one
        that ran past its time limit here, undecided, raises ``TimeoutError``: whether it covers
        the namespace depends on the machine (``events.judge`` gives no verdict then)."""
        scheme = scheme_key(namespace)
        if ":" not in namespace or scheme.lower() in self._by_scheme:
            return True
        try:
            return any(d.matches(namespace, scheme) for d in self.decisions)
        except DecidedSlow:
            return True

    # ---- formatting ----------------------------------------------------------------------------

    def format_dataset(self, source: str, form: str | None = None, **components: str) -> Identifier:
        """Build a dataset identifier from components, applying the source's case and quoting
        rules."""
        found = self.datasets.get(source)
        if found is None:
            raise FormatError(f"no dataset naming convention {source!r}")
        return _format(found, form, components)

    def format_job(self, kind: str, form: str | None = None, **components: str) -> Identifier:
        found = self.jobs.get(kind)
        if found is None:
            raise FormatError(f"no job naming convention {kind!r}")
        return _format(found, form, components)

    # ---- typed objects -------------------------------------------------------------------------

    def dataset_type(self, source: str) -> type:
        """A frozen dataclass for one source, fields from its components (see
        ``bot.model.naming.typed``)."""
        from bot.model.naming.typed import type_for

        return type_for(self, self.source(source))

    # ---- diagnosis (slow path) -------------------------------------------------------------------

    def _explain(self, forms: list[Form], namespace: str, name: str, kind: str) -> ParseResult:
        try:
            return ParseResult(False, reason=self._reason(forms, namespace, name, kind))
        except TimeoutError as exc:
            return ParseResult(False, reason=_too_slow(exc))

    def _reason(self, forms: list[Form], namespace: str, name: str, kind: str) -> str:
        if kind == "dataset" and not forms:
            return self._unknown_namespace(namespace)
        namespace_reasons: list[str] = []
        for form in forms:
            why = self._why(form, "namespace", namespace)
            if why is not None:
                namespace_reasons.append(
                    why
                    if why.startswith("namespace")
                    else f"namespace matches {_label(form)} but {why}"
                )
                continue
            why = self._why(form, "name", name)
            if why is None:  # both parts match: a case or quoting rule failed
                return _post_reason(form, self._components(form, namespace, name))
            return f"namespace matches {_label(form)} but {why}"
        if kind == "dataset":
            decided = self._decision(namespace)
            if decided is not None:
                return decided
        if kind == "job" and len(forms) > 1:
            return (
                f"job {namespace!r} / {name!r} follows none of the job naming conventions: "
                + "; ".join(namespace_reasons[:4])
            )
        return "; ".join(dict.fromkeys(namespace_reasons[:3]))

    def _decision(self, namespace: str) -> str | None:
        scheme = scheme_key(namespace)
        for decision in self.decisions:
            if decision.matches(namespace, scheme):
                return f"namespace {namespace!r}: {decision.reason}"
        return None

    def _unknown_namespace(self, namespace: str) -> str:
        scheme = scheme_key(namespace)
        decided = self._decision(namespace)
        if decided is not None:
            return decided
        if scheme.lower() in self._by_scheme and scheme != scheme.lower():
            return f"namespace {namespace!r}: the scheme must be lower case ({scheme.lower()!r})"
        if ":" not in namespace:
            bare = sorted(
                k
                for k, forms in self._by_scheme.items()
                if any(f.namespace.text == k for f in forms)
            )
            return (
                f"namespace {namespace!r} has no scheme and is not one of the namespaces without "
                f"one ({', '.join(bare)}); a dataset namespace names its data source, like "
                f"postgres://host:5432"
            )
        return f"no dataset naming convention uses the scheme {scheme!r} (namespace {namespace!r})"

    def _why(self, form: Form, part: str, value: str) -> str | None:
        """None when ``value`` matches the form's template for ``part``, else what is wrong.

        To name the culprit, each component in turn is relaxed to "anything but its neighbouring
        separators"; among the relaxations that match, the one blaming the shortest value wins.
        """
        template = form.namespace if part == "namespace" else form.name
        compiled = form.namespace_re if part == "namespace" else form.name_re
        if compiled.fullmatch(value, timeout=budget.timeout(MATCH_TIMEOUT)) is not None:
            return None
        comps = self.source(form.source).components
        names = list(template.slots())
        blamed: list[tuple[int, str, str]] = []
        for relaxed_name in names:
            relaxed = self._relax(form, part, template, (relaxed_name,))
            m = relaxed.fullmatch(value, timeout=budget.timeout(MATCH_TIMEOUT))
            if m is not None and m.group(relaxed_name) is not None:
                blamed.append((len(m.group(relaxed_name)), relaxed_name, m.group(relaxed_name)))
        if not blamed:
            m = self._relax(form, part, template, tuple(names)).fullmatch(
                value, timeout=budget.timeout(MATCH_TIMEOUT)
            )
            if m is not None:
                for n in names:
                    got = m.group(n)
                    compiled_n = comps[n].compiled
                    if (
                        got is not None
                        and compiled_n is not None
                        and compiled_n.fullmatch(got, timeout=budget.timeout(MATCH_TIMEOUT)) is None
                    ):
                        blamed.append((len(got), n, got))
                        break
        if blamed:
            _, culprit, got = min(blamed)
            return comps[culprit].describe_failure(got)
        return f"{part} {value!r} does not have the shape {template.text} ({_label(form)})"

    def _relax(
        self, form: Form, part: str, template: Template, names: tuple[str, ...]
    ) -> regex.Pattern[str]:
        key = (id(form), part, ",".join(names))
        compiled = self._relaxed.get(key)
        if compiled is None:
            comps = self.source(form.source).components
            around = separators(template)

            def pattern_of(n: str) -> str:
                if n not in names:
                    return comps[n].pattern
                stop = around.get(n, "")
                return f"[^{regex.escape(stop)}]+?" if stop else ".+?"

            compiled = compile_full(template.regex_source(pattern_of))
            self._relaxed[key] = compiled
        return compiled

    def _components(self, form: Form, namespace: str, name: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for m in (
            form.namespace_re.fullmatch(namespace, timeout=budget.timeout(MATCH_TIMEOUT)),
            form.name_re.fullmatch(name, timeout=budget.timeout(MATCH_TIMEOUT)),
        ):
            if m is not None:
                out.update({k: v for k, v in m.groupdict().items() if v is not None})
        return out


def separators(template: Template) -> dict[str, str]:
    """For each component, the literal characters right before and after it (its delimiters)."""
    from bot.model.naming.template import Literal, Optional, Slot

    flat: list[Literal | Slot] = []

    def walk(parts: tuple[Literal | Slot | Optional, ...]) -> None:
        for p in parts:
            if isinstance(p, Optional):
                walk(p.parts)
            else:
                flat.append(p)

    walk(template.parts)
    out: dict[str, str] = {}
    for i, p in enumerate(flat):
        if isinstance(p, Slot):
            chars = ""
            if i > 0 and isinstance(flat[i - 1], Literal):
                chars += flat[i - 1].text[-1]  # type: ignore[union-attr]
            if i + 1 < len(flat) and isinstance(flat[i + 1], Literal):
                chars += flat[i + 1].text[0]  # type: ignore[union-attr]
            out[p.name] = "".join(dict.fromkeys(chars))
    return out


def _bounded(pattern: regex.Pattern[str], joined: str, timeout: float) -> Any:
    """``pattern.fullmatch`` with a time limit; None past it (``_explain``, bounded too, gives the
    reason)."""
    try:
        return pattern.fullmatch(joined, timeout=budget.timeout(timeout))
    except TimeoutError:
        return None


def _hot_matcher(form: Form, timeout: float | None = None) -> Callable[[str], Any]:
    """``fullmatch`` of a form's hot pattern; the stdlib twin for ASCII input when the pattern needs
    ``regex``.

    With ``timeout``, the bounded ``regex`` pattern instead: ``check_pattern`` cannot reject every
    catastrophic pattern (``(a|aa)+`` passes it), and ``re`` holds the GIL for as long as it runs.
    """
    if timeout is not None:
        both = form.both_re

        def bounded(joined: str) -> Any:
            return _bounded(both, joined, timeout)

        return bounded
    if form.hot_ascii is None:
        return form.hot_re.fullmatch
    ascii_match, full_match = form.hot_ascii.fullmatch, form.hot_re.fullmatch

    def fullmatch(joined: str) -> Any:
        return ascii_match(joined) if joined.isascii() else full_match(joined)

    return fullmatch


def _literal_prefix(template: Template) -> str:
    from bot.model.naming.template import Literal

    first = template.parts[0] if template.parts else None
    return first.text if isinstance(first, Literal) else ""


def _label(form: Form) -> str:
    return form.source if form.label == "default" else f"{form.source} ({form.label})"


def _refuse(joined: str) -> ParseResult:
    if len(joined) > MAX_IDENTIFIER_CHARS:
        return ParseResult(False, reason=f"identifier is over {MAX_IDENTIFIER_CHARS:,} characters")
    return ParseResult(False, reason="identifier contains a NUL character")


def _finish(form: Form, components: dict[str, str]) -> ParseResult:
    """A match of a form with optional parts or case and quoting rules: drop gaps, verify the rules.

    ``components`` is the match's own fresh dict: it is updated in place with the stored names.
    A quoting pattern too slow to decide (``Bounded``, from a pull request) makes it invalid.
    """
    try:
        return _finish_checked(form, components)
    except TimeoutError as exc:
        return ParseResult(False, source=form.source, form=form.label, reason=_too_slow(exc))


def _too_slow(exc: TimeoutError) -> str:
    """The reason of a match that did not finish: decided slow (every engine), or past its time
    limit here."""
    return SLOW_PATTERN if isinstance(exc, DecidedSlow) else TOO_SLOW


def _finish_checked(form: Form, components: dict[str, str]) -> ParseResult:
    if form.has_optional:
        components = {k: v for k, v in components.items() if v is not None}
    changed: dict[str, str] | None = None
    for comp in form.checked:
        value = components.get(comp.name)
        if value is not None:
            stored = comp.stored(value)
            if stored is None:
                return ParseResult(
                    False,
                    source=form.source,
                    form=form.label,
                    reason=_post_reason(form, components),
                )
            if stored != value:
                changed = {comp.name: stored} if changed is None else {**changed, comp.name: stored}
    if changed is not None:
        components.update(changed)
    return _new_result(ParseResult, (True, form.source, components, None, form.label))


def _post_reason(form: Form, components: dict[str, str]) -> str:
    for comp in form.checked:
        value = components.get(comp.name)
        if value is None:
            continue
        written = comp.written(value)
        if written != value:
            if comp.quoting is not None:
                return (
                    f"{form.source} {comp.name} {value!r} is not in its simplest form: write "
                    f"{written} (unquoted parts resolve to {comp.quoting.resolves} case; quote "
                    f"only when needed)"
                )
            return f"{form.source} {comp.name} {value!r} must be {comp.case} case ({written!r})"
    return f"{form.source}: a case or quoting rule failed"


def _format(source: Source, form_label: str | None, given: Mapping[str, str]) -> Identifier:
    values = {k: v for k, v in given.items() if v is not None and v != ""}
    unknown = sorted(set(values) - set(source.components))
    if unknown:
        raise FormatError(
            f"{source.id} has no component {unknown[0]!r} (components: "
            f"{', '.join(source.components)})"
        )
    form = _choose_form(source, form_label, values)
    written: dict[str, str] = {}
    for name in form.components():
        if name not in values:
            continue
        comp = source.components[name]
        value = str(values[name])
        value = comp.quoting.simplest(value) if comp.quoting is not None else comp.normalise(value)
        if (
            comp.compiled is not None
            and comp.compiled.fullmatch(value, timeout=budget.timeout(MATCH_TIMEOUT)) is None
        ):
            raise FormatError(f"{source.id}: {comp.describe_failure(value)}")
        written[name] = value
    namespace = form.namespace.render(written)
    name = form.name.render(written)
    return Identifier(source.id, namespace, name, source.make_uri(namespace, name))


def _choose_form(source: Source, label: str | None, values: Mapping[str, str]) -> Form:
    if label is not None:
        for form in source.forms:
            if form.label == label:
                return form
        raise FormatError(
            f"{source.id} has no form {label!r} (forms: {', '.join(f.label for f in source.forms)})"
        )
    for form in source.forms:
        names = set(form.components())
        required = set(form.namespace.required()) | set(form.name.required())
        if set(values) <= names and required <= set(values):
            return form
    needed = " or ".join("{" + ", ".join(f.components()) + "}" for f in source.forms)
    raise FormatError(
        f"{source.id} needs the components {needed}; got {{{', '.join(sorted(values))}}}"
    )
