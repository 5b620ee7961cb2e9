"""Which patterns of a set of naming files are too slow, decided once by probing them with long
strings, so that every engine gives the same verdict.

A match from a pull request has a time limit (``patterns.MATCH_TIMEOUT``), and whether one match
passes it depends on the machine: a Spark worker and the one-process engine could disagree on an
identifier near the limit. So a set of rules from a pull request is probed where it is built (the
driver): each form's patterns with long probe strings, alone and with each component in turn a
probe inside a valid example (a slow component after a literal prefix, ``postgres://{host}``, is
reached only that way), and each decision's ``namespacePattern`` alone and after its examples'
namespaces and schemes. What is too slow is ``Decided`` (``patterns``): never run again, on any
engine; the verdict ships with the rules when they are pickled.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from bot.core import budget
from bot.model.naming.model import Form, Source
from bot.model.naming.patterns import MATCH_TIMEOUT, Bounded

if TYPE_CHECKING:
    from bot.model.naming.rules import NamingRules

PROBE_LENGTH = 2000


def bodies() -> tuple[str, ...]:
    """The long probe strings (``PROBE_LENGTH`` read when called)."""
    return (
        "a" * PROBE_LENGTH + "!",
        "." * PROBE_LENGTH,
        "a." * (PROBE_LENGTH // 2) + "\x00",
        "/" * PROBE_LENGTH + "\x00" + "a" * PROBE_LENGTH,
        "0" * PROBE_LENGTH + "x",
    )


def slow_forms(rules: NamingRules) -> dict[tuple[str, int], int]:
    """``(source id, form index)`` of each form too slow to match, with its probe's length."""
    out: dict[tuple[str, int], int] = {}
    for source in (*rules.datasets.values(), *rules.jobs.values()):
        for i, form in enumerate(source.forms):
            probe = too_slow(_form_probes(rules, source, form))
            if probe is not None:
                out[(source.id, i)] = len(probe)
    return out


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
        probe = too_slow((pattern, prefix + body) for prefix in prefixes for body in bodies())
        if probe is not None:
            out[decision.pointer] = len(probe)
    return out


def _form_probes(rules: NamingRules, source: Source, form: Form) -> Iterator[tuple[Any, str]]:
    for body in bodies():
        for compiled in (form.namespace_re, form.name_re, form.both_re):
            yield compiled, body
    example = next(
        (r for r in (_parse(rules, source, e) for e in source.valid) if r.form == form.label),
        None,
    )
    if example is None or not example.ok:
        return
    for slot in form.components():
        for body in bodies():
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
    """The first probe whose match exceeds the time bound, else None."""
    for compiled, probe in probes:
        try:
            if isinstance(compiled, Bounded):
                compiled.fullmatch(probe, MATCH_TIMEOUT)
            else:
                compiled.fullmatch(probe, timeout=budget.timeout(MATCH_TIMEOUT))
        except TimeoutError:
            return probe
    return None
