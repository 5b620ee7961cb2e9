"""Identifier templates: ``postgres://{host}:{port}``, optional parts in brackets
(``{host}[:{port}]``).

A template is parsed once into a small tree; from it the bot builds the matching regular expression
(each ``{component}`` becomes a named group with the component's pattern) and renders identifiers
back from components.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import regex

_TOKEN = re.compile(r"\{([^{}]*)\}|\[|\]|\\(.)|[^{}\[\]\\]+|(.)", re.DOTALL)
_COMPONENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TemplateError(ValueError):
    """A template that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Literal:
    text: str


@dataclass(frozen=True, slots=True)
class Slot:
    name: str


@dataclass(frozen=True, slots=True)
class Optional:
    parts: tuple[Node, ...]


Node = Literal | Slot | Optional


@dataclass(frozen=True)
class Template:
    """A parsed template: its source text and its tree."""

    text: str
    parts: tuple[Node, ...]

    @classmethod
    def parse(cls, text: str) -> Template:
        if not isinstance(text, str) or not text:
            raise TemplateError("a template must be a non-empty string")
        stack: list[list[Node]] = [[]]
        for m in _TOKEN.finditer(text):
            token = m.group(0)
            if m.group(3) is not None:
                raise TemplateError(
                    f"unexpected {token!r} at position {m.start() + 1}; write \\{token} for a "
                    f"literal"
                )
            if m.group(1) is not None:
                name = m.group(1)
                if not _COMPONENT_NAME.fullmatch(name):
                    raise TemplateError(
                        f"{{{name}}} is not a component name (letters, digits, underscores)"
                    )
                stack[-1].append(Slot(name))
            elif token == "[":
                stack.append([])
            elif token == "]":
                if len(stack) == 1:
                    raise TemplateError(f"']' at position {m.start() + 1} closes nothing")
                inner = stack.pop()
                if not any(isinstance(p, Slot | Optional) for p in inner):
                    raise TemplateError(
                        f"the optional part ending at position {m.start() + 1} has no component"
                    )
                stack[-1].append(Optional(tuple(inner)))
            else:
                literal = m.group(2) if m.group(2) is not None else token
                if stack[-1] and isinstance(stack[-1][-1], Literal):
                    stack[-1][-1] = Literal(stack[-1][-1].text + literal)
                else:
                    stack[-1].append(Literal(literal))
        if len(stack) != 1:
            raise TemplateError("an optional part '[' is never closed")
        template = cls(text, tuple(stack[0]))
        names = list(template.slots())
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise TemplateError(f"component {{{duplicates[0]}}} appears twice")
        return template

    def slots(self) -> Iterator[str]:
        """Component names in order of appearance."""
        yield from _slots(self.parts)

    def required(self) -> list[str]:
        return [p.name for p in self.parts if isinstance(p, Slot)]

    def regex_source(self, pattern_of: Callable[[str], str]) -> str:
        """The regular expression matching this template, one named group per component."""
        return _regex(self.parts, pattern_of)

    def render(self, values: Mapping[str, str | None]) -> str:
        """Fill the template; an optional part appears when all its own components have values."""
        missing = [n for n in self.required() if not values.get(n)]
        if missing:
            raise KeyError(missing[0])
        return _render(self.parts, values)

    def shape(self) -> str:
        return self.text


def _slots(parts: tuple[Node, ...]) -> Iterator[str]:
    for p in parts:
        if isinstance(p, Slot):
            yield p.name
        elif isinstance(p, Optional):
            yield from _slots(p.parts)


def _regex(parts: tuple[Node, ...], pattern_of: Callable[[str], str]) -> str:
    out: list[str] = []
    for p in parts:
        if isinstance(p, Literal):
            out.append(regex.escape(p.text))
        elif isinstance(p, Slot):
            out.append(f"(?P<{p.name}>{pattern_of(p.name)})")
        else:
            out.append(f"(?:{_regex(p.parts, pattern_of)})?")
    return "".join(out)


def _render(parts: tuple[Node, ...], values: Mapping[str, str | None]) -> str:
    out: list[str] = []
    for p in parts:
        if isinstance(p, Literal):
            out.append(p.text)
        elif isinstance(p, Slot):
            out.append(str(values[p.name]))
        elif all(values.get(n) for n in (s.name for s in p.parts if isinstance(s, Slot))):
            out.append(_render(p.parts, values))
    return "".join(out)
