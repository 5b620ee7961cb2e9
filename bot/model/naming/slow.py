"""Which patterns of a set of naming files are too slow, decided once by probing them with long
strings, so that every engine gives the same verdict.

A match from a pull request has a time limit (``patterns.MATCH_TIMEOUT``), and whether one match
passes it depends on the machine: a Spark worker and the one-process engine could disagree on an
identifier near the limit. So a set of rules from a pull request is probed where it is built (the
driver): each form's patterns with long probe strings, alone and with each component in turn a
probe inside a valid example (a slow component after a literal prefix, ``postgres://{host}``, is
reached only that way), and each decision's ``namespacePattern`` alone and after its examples'
namespaces and schemes. Each component's pattern and quoting's ``unquoted`` are probed alone too
(matched so by the diagnosis and the quoting rules), and besides the fixed probe strings, each
pattern gets a run of every character of its own alphabet (``alphabet``: its literals and class
bounds, in both cases): a pattern slow only on upper case (``(?:[A-Z]|A)+``) fails a lower-case
probe at its first character. What is too slow is ``Decided`` (``patterns``): never run again, on
any engine; the verdict ships with the rules when they are pickled.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from bot.core import budget
from bot.model.naming.model import Form, Source
from bot.model.naming.patterns import _UNICODE_PROPERTY, MATCH_TIMEOUT, Bounded, _sre_parse

if TYPE_CHECKING:
    from bot.model.naming.rules import NamingRules

PROBE_LENGTH = 2000
MAX_ALPHABET = 24  # characters of one pattern's alphabet probed (each a run of PROBE_LENGTH)
# a class's representatives: \d, \w, \s and their negations
_CATEGORY = {"DIGIT": "0", "WORD": "a_0", "SPACE": " ", "NOT_DIGIT": "a", "NOT_WORD": "!"}


def bodies(chars: Iterable[str] = ()) -> tuple[str, ...]:
    """The long probe strings (``PROBE_LENGTH`` read when called), and a run of each of ``chars``
    (a pattern's ``alphabet``) ended by a character patterns do not name."""
    return (
        "a" * PROBE_LENGTH + "!",
        "." * PROBE_LENGTH,
        "a." * (PROBE_LENGTH // 2) + "\x00",
        "/" * PROBE_LENGTH + "\x00" + "a" * PROBE_LENGTH,
        "0" * PROBE_LENGTH + "x",
        *(c * PROBE_LENGTH + "\x01" for c in chars),
    )


def alphabet(*patterns: str) -> tuple[str, ...]:
    """The characters ``patterns`` name (literals, class bounds, a representative of ``\\w``,
    ``\\d``, ``\\s``), each in both cases, in order of appearance; at most ``MAX_ALPHABET``."""
    found: dict[str, None] = {}
    for pattern in patterns:
        try:
            tree = _sre_parse.parse(_UNICODE_PROPERTY.sub(r"\\w", pattern))
        except Exception:  # noqa: BLE001 - checked patterns parse; the fixed probes remain
            continue
        for c in _named(list(tree)):
            for variant in (c, c.upper(), c.lower()):
                if len(variant) == 1:
                    found.setdefault(variant)
    return tuple(found)[:MAX_ALPHABET]


def _named(items: list[Any]) -> Iterator[str]:
    """The characters a parsed pattern names, walking its groups, branches and repeats."""
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            yield chr(arg)
        elif name == "IN":
            for member, value in arg:
                kind = str(member)
                if kind == "LITERAL":
                    yield chr(value)
                elif kind == "RANGE":
                    yield chr(value[0])
                    yield chr(value[1])
                elif kind == "CATEGORY":
                    yield from _CATEGORY.get(str(value).removeprefix("CATEGORY_"), "")
        elif name == "CATEGORY":
            yield from _CATEGORY.get(str(arg).removeprefix("CATEGORY_"), "")
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            yield from _named(list(arg[2]))
        elif name == "SUBPATTERN":
            yield from _named(list(arg[-1]))
        elif name == "BRANCH":
            for branch in arg[1]:
                yield from _named(list(branch))
        elif name in ("ASSERT", "ASSERT_NOT"):
            yield from _named(list(arg[1]))
        elif name == "ATOMIC_GROUP":
            yield from _named(list(arg))


def slow_forms(rules: NamingRules) -> dict[tuple[str, int], int]:
    """``(source id, form index)`` of each form too slow to match, with its probe's length (a form
    with a component or quoting pattern too slow alone is too slow: it cannot be explained)."""
    out: dict[tuple[str, int], int] = {}
    alone: dict[int, str | None] = {}  # by id: a source's forms share its components' patterns
    for source in (*rules.datasets.values(), *rules.jobs.values()):
        for i, form in enumerate(source.forms):
            probe = None
            for compiled in _own_patterns(source, form):
                if id(compiled) not in alone:
                    chars = alphabet(compiled.pattern)
                    alone[id(compiled)] = too_slow((compiled, body) for body in bodies(chars))
                probe = probe or alone[id(compiled)]
            probe = probe or too_slow(_form_probes(rules, source, form))
            if probe is not None:
                out[(source.id, i)] = len(probe)
    return out


def _own_patterns(source: Source, form: Form) -> Iterator[Any]:
    """The patterns a form's components match alone: the diagnosis and the quoting rules do."""
    for name in form.components():
        comp = source.components[name]
        if comp.compiled is not None:
            yield comp.compiled
        if comp.quoting is not None:
            yield comp.quoting.unquoted


def slow_decisions(rules: NamingRules) -> dict[str, int]:
    """The pointer of each decision whose ``namespacePattern`` is too slow, with its probe's
    length."""
    from bot.model.naming.rules import scheme_key

    out: dict[str, int] = {}
    for decision in rules.decisions:
        pattern = decision.pattern
        if pattern is None:
            continue
        prefixes = dict.fromkeys(
            [""]
            + [p for e in decision.examples for p in (e.namespace, scheme_key(e.namespace) + ":")]
        )
        chars = alphabet(pattern.pattern)
        probe = too_slow((pattern, prefix + body) for prefix in prefixes for body in bodies(chars))
        if probe is not None:
            out[decision.pointer] = len(probe)
    return out


def _form_probes(rules: NamingRules, source: Source, form: Form) -> Iterator[tuple[Any, str]]:
    components = [source.components[n] for n in form.components()]
    for body in bodies(alphabet(*(c.pattern for c in components))):
        for compiled in (form.namespace_re, form.name_re, form.both_re):
            yield compiled, body
    example = next(
        (r for r in (_parse(rules, source, e) for e in source.valid) if r.form == form.label),
        None,
    )
    if example is None or not example.ok:
        return
    for slot in form.components():
        for body in bodies(alphabet(source.components[slot].pattern)):
            values = {**example.components, slot: body}
            try:
                namespace, name = form.namespace.render(values), form.name.render(values)
            except KeyError:
                continue
            yield form.namespace_re, namespace
            yield form.name_re, name
            yield form.both_re, namespace + "\x00" + name


def _parse(rules: NamingRules, source: Source, example: Any) -> Any:
    if source.kind == "dataset":
        return rules.parse_dataset(example.namespace, example.name)
    return rules.parse_job(example.namespace, example.name, source.id, example.job_type)


def too_slow(probes: Iterable[tuple[Any, str]]) -> str | None:
    """The first probe whose match exceeds the time bound, else None; ``BudgetSpent`` when the
    review's budget, not the pattern, cut a match short (a match takes at most what is left of it):
    the review's clock never decides a pattern too slow."""
    for compiled, probe in probes:
        try:
            if isinstance(compiled, Bounded):
                compiled.fullmatch(probe, MATCH_TIMEOUT)
            else:
                compiled.fullmatch(probe, timeout=budget.timeout(MATCH_TIMEOUT))
        except TimeoutError:
            budget.check()
            return probe
    return None
