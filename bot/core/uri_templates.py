"""RFC 6570 URI Template syntax in linear time, decided as the ``uri_template`` package decides it.

jsonschema's ``uri-template`` format calls ``uri_template.validate``, which splits the template with
``re.split(r'(\\{[^\\}]*\\})')``: quadratic on a run of ``{`` (49 s of CPU on 200,000), in ``re``,
which holds the GIL where no deadline reaches it. The package's own acceptance is kept, extensions
and leniencies included (literals are not checked, ``,`` and ``,+`` operators, ``=default``,
``name/key`` and ``[]`` varspecs); ``tests/test_uri_templates.py`` compares the two.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

VAR_START = frozenset(string.ascii_letters + string.digits + "_")
HEX = frozenset(string.hexdigits)
OPERATORS = frozenset("+#./;?&")
# a trailing joiner the package drops from an expression's variable list
JOINERS = frozenset(",./;&")
# unambiguous (each alternative has its own first character): linear on ``re``
VARNAME = re.compile(r"(?:[A-Za-z0-9_./]|%[0-9A-Fa-f]{2})*")


def is_uri_template(template: str) -> bool:
    """Whether ``template`` is a URI template: literals without braces and valid expressions."""
    return all(
        _expression_is_valid(part) if expression else "{" not in part and "}" not in part
        for part, expression in _parts(template)
    )


def _parts(template: str) -> Iterator[tuple[str, bool]]:
    """The literals and expression bodies (without braces) in order, as ``re.split`` cut them: an
    expression from a ``{`` to the next ``}``; the rest, from a ``{`` with no ``}`` after it, is a
    literal."""
    position = 0
    while True:
        start = template.find("{", position)
        end = template.find("}", start) if start >= 0 else -1
        if end < 0:
            yield template[position:], False
            return
        yield template[position:start], False
        yield template[start + 1 : end], True
        position = end + 1


def _expression_is_valid(body: str) -> bool:
    """Whether ``{body}`` is an expression: an optional operator, then varspecs."""
    if _is_simple(body):
        variables = body
    elif body[:1] in OPERATORS:
        variables = body[1:]
    elif body[:1] == ",":
        variables = body[2:] if body[1:2] == "+" else body[1:]
    else:
        return False
    if variables[-1:] in JOINERS:
        variables = variables[:-1]
    return all(_varspec_is_valid(spec) for spec in variables.split(","))


def _is_simple(body: str) -> bool:
    """The package's test for an expression without operator,
    ``^([a-zA-Z0-9_]|%[0-9a-fA-F][0-9a-fA-F]).*$``: no line break after the first character but a
    final one."""
    if body[:1] in VAR_START:
        rest = body[1:]
    elif body[:1] == "%" and body[1:2] in HEX and body[2:3] in HEX:
        rest = body[3:]
    else:
        return False
    newline = rest.find("\n")
    return newline < 0 or newline == len(rest) - 1


def _varspec_is_valid(spec: str) -> bool:
    """Whether ``spec`` is a varspec: a name, then ``:prefix`` (1-999), ``*`` or ``[]``, then an
    unchecked ``=default``."""
    if spec[:1] not in VAR_START:
        return False
    spec = spec.partition("=")[0]
    if ":" in spec:
        spec, _, prefix = spec.partition(":")
        if not (0 < len(prefix) < 4 and prefix.isascii() and prefix.isdigit() and int(prefix)):
            return False
    elif spec.endswith("*"):
        spec = spec[:-1]
    elif spec.endswith("[]"):
        spec = spec[:-2]
    return VARNAME.fullmatch(spec) is not None
