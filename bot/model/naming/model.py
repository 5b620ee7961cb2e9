"""The naming model built from the files: components, forms, sources, and the results of parsing."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import regex

from bot.model.naming.patterns import Bounded, Decided, compile_full
from bot.model.naming.template import Template


class FormatError(ValueError):
    """Components that do not make a valid identifier of a source."""


class ParseResult(NamedTuple):
    """The verdict on one identifier: the source and its components, or the reason it is invalid.

    A named tuple: immutable, picklable and cheap to create millions of times.
    """

    ok: bool
    source: str | None = None
    components: dict[str, str] = {}  # noqa: RUF012 - never mutated; each result gets its own dict
    reason: str | None = None
    form: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ok": self.ok, "source": self.source}
        if self.ok:
            data["form"] = self.form
            data["components"] = dict(self.components)
        else:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, slots=True)
class Identifier:
    """A dataset or job identifier built by ``format_*``."""

    source: str
    namespace: str
    name: str
    uri: str


@dataclass(frozen=True, slots=True)
class Quoting:
    """How a source writes identifier parts that need quotes (Snowflake: ``"My Table"``)."""

    quote: str
    # a part needing no quotes, in canonical case (hot path)
    unquoted: re.Pattern[str] | regex.Pattern[str] | Bounded
    resolves: str  # what an unquoted part resolves to: "upper", "lower" or "preserve"

    def canonical(self, written: str) -> str:
        """The stored name of a part as written in an identifier."""
        q = self.quote
        if len(written) >= 2 and written[0] == q and written[-1] == q:
            return written[1:-1].replace(q + q, q)
        return _apply_case(written, self.resolves)

    def simplest(self, canonical: str) -> str:
        """The simplest way to write a stored name: bare when that resolves to it, quoted
        otherwise."""
        if (
            self.unquoted.fullmatch(canonical)
            and _apply_case(canonical, self.resolves) == canonical
        ):
            return canonical
        q = self.quote
        return q + canonical.replace(q, q + q) + q

    def stored(self, written: str) -> str | None:
        """``canonical(written)`` when ``written`` is its simplest form (``simplest(canonical(w)) ==
        w``), else None.

        The same verdict with fewer steps, for the hot path: a bare part is simplest exactly when it
        is in the resolved case and needs no quotes; a quoted one when quoting its stored name gives
        it back.
        """
        q = self.quote
        if len(written) >= 2 and written[0] == q and written[-1] == q:
            canonical = written[1:-1].replace(q + q, q)
            return canonical if self.simplest(canonical) == written else None
        if _apply_case(written, self.resolves) == written and self.unquoted.fullmatch(written):
            return written
        return None


def _apply_case(value: str, case: str) -> str:
    if case == "upper":
        return value.upper()
    if case == "lower":
        return value.lower()
    return value


@dataclass(frozen=True, slots=True)
class Component:
    """One named part of a namespace or name."""

    name: str
    pattern: str
    description: str = ""
    expect: str = ""
    case: str = "preserve"
    quoting: Quoting | None = None
    compiled: regex.Pattern[str] | None = None

    @property
    def quoted(self) -> bool:
        return self.quoting is not None

    def written(self, value: str) -> str:
        """How a value must be written: its simplest quoted form, or in the component's case."""
        if self.quoting is not None:
            return self.quoting.simplest(self.quoting.canonical(value))
        return _apply_case(value, self.case)

    def stored(self, value: str) -> str | None:
        """The stored name of a value written as the rules want (see ``written``), else None."""
        if self.quoting is not None:
            return self.quoting.stored(value)
        return value if _apply_case(value, self.case) == value else None

    def describe_failure(self, value: str) -> str:
        what = self.expect or f"matching {self.pattern}"
        return f"{self.name} {value!r} is not {what}"

    def normalise(self, value: str) -> str:
        return _apply_case(value, self.case)


@dataclass(frozen=True)
class Form:
    """One way to write a source's identifiers (Snowflake has two, Pub/Sub two, most sources
    one)."""

    source: str
    label: str
    namespace: Template
    name: Template
    # the sources of ``namespace_re``, ``name_re`` and ``both_re``: compiled on first use (the
    # ``regex`` compiler is slow, and a run of the regression parses identifiers of a few sources
    # only)
    namespace_source: str
    name_source: str
    both_source: str
    # ``both_re``, for parse_* (see patterns.compile_hot)
    hot_re: re.Pattern[str] | regex.Pattern[str]
    has_optional: bool
    checked: tuple[Component, ...]  # components with case or quoting rules to verify after a match
    # when hot_re needs ``regex``: a stdlib twin for ASCII identifiers
    hot_ascii: re.Pattern[str] | None
    job_types: tuple[str, ...] = ()  # jobs: the jobType facet values this form is for (empty: any)
    # no gaps to drop, no rules to verify: a match's groups are the components
    plain: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", not self.has_optional and not self.checked)

    def components(self) -> list[str]:
        return [*self.namespace.slots(), *self.name.slots()]

    def decide_slow(self) -> None:
        """Make every match of this form raise at once (``patterns.Decided``: decided too slow by
        probing, ``bot.model.naming.slow``)."""
        for name in ("namespace_re", "name_re", "both_re"):
            object.__setattr__(self, name, Decided(f"{self.source} form {self.label!r}"))

    @functools.cached_property
    def namespace_re(self) -> regex.Pattern[str]:
        return compile_full(self.namespace_source)

    @functools.cached_property
    def name_re(self) -> regex.Pattern[str]:
        return compile_full(self.name_source)

    @functools.cached_property
    def both_re(self) -> regex.Pattern[str]:
        """namespace, NUL, name: matched with a timeout by the checks."""
        return compile_full(self.both_source)


@dataclass(frozen=True)
class Example:
    namespace: str
    name: str
    pointer: str
    expect_reason: str = ""  # invalid examples: a phrase the parser's reason must contain
    job_type: str | None = None  # jobs: the jobType facet value the example is judged with


@dataclass(frozen=True)
class Source:
    """A dataset source or a job kind, as one naming file describes it."""

    id: str
    kind: str  # "dataset" or "job"
    title: str
    path: str
    scheme: str | None
    forms: tuple[Form, ...]
    components: dict[str, Component]
    quoting: Quoting | None
    uri: str
    raw: dict[str, Any]
    valid: tuple[Example, ...] = ()
    invalid: tuple[Example, ...] = ()
    decided_valid: tuple[Example, ...] = ()
    decided_invalid: tuple[Example, ...] = ()
    wins_over: frozenset[str] = frozenset()

    def make_uri(self, namespace: str, name: str) -> str:
        return self.uri.replace("{namespace}", namespace).replace("{name}", name)


@dataclass(frozen=True)
class SchemeDecision:
    """A namespace outside the conventions that real events use, and why it is rejected."""

    pointer: str
    reason: str
    scheme: str | None = None
    pattern: regex.Pattern[str] | Bounded | None = None
    examples: tuple[Example, ...] = ()

    def matches(self, namespace: str, scheme: str) -> bool:
        if self.scheme is not None:
            return scheme == self.scheme
        return self.pattern is not None and self.pattern.fullmatch(namespace) is not None
