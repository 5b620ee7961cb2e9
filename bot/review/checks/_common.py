"""Small helpers the checks share: locating findings in JSON files."""

from __future__ import annotations

import json
import re

from bot.core.anchors import keyed_pointer
from bot.core.findings import Edit, Finding, Fix, Severity
from bot.core.jsondoc import JsonDoc
from bot.model.registry import Loaded


def at(
    rule: str,
    severity: Severity,
    doc: JsonDoc,
    pointer: str,
    message: str,
    hint: str = "",
    entry: str | None = None,
    key: bool = False,
    fix: Fix | None = None,
    subject: str = "",
    anchor: str | None = None,
) -> Finding:
    """A finding on the line of the JSON node at ``pointer`` (its member name when ``key``);
    ``subject`` and ``anchor`` say what it is about and where it is matched (``Finding``): inside
    a list item, by default, at the item's identity (``bot.core.anchors``)."""
    if anchor is None:
        anchor = keyed_pointer(doc.value, pointer)
    line, column = doc.locate_key(pointer) if key else doc.locate(pointer)
    return Finding(
        rule=rule,
        severity=severity,
        path=doc.path,
        line=line,
        column=column,
        pointer=pointer,
        message=message,
        hint=hint,
        entry=entry,
        fix=fix,
        subject=subject,
        anchor=anchor,
    )


def unreadable(
    rule: str, severity: Severity, loaded: Loaded, what: str, entry: str | None = None
) -> Finding:
    """A finding for a JSON file that could not be loaded (bad UTF-8, syntax, size, depth, unsafe
    path)."""
    problem = loaded.problem
    line, column = (problem.line, problem.column) if problem else (None, None)
    reason = problem.message if problem else "the file is missing"
    return Finding(
        rule=rule,
        severity=severity,
        path=loaded.path,
        line=line,
        column=column,
        message=f"{what} cannot be read: {reason}",
        entry=entry,
        hint="Fix the file so that it is valid UTF-8 JSON under 10 MB and 128 levels deep.",
    )


def json_pointer(path: object) -> str:
    """RFC 6901 pointer from a jsonschema error path (a deque of keys and indexes)."""
    from bot.core.jsondoc import escape_pointer_token

    return "".join("/" + escape_pointer_token(p) for p in path)  # type: ignore[attr-defined]


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def token_fix(
    doc: JsonDoc, pointer: str, new: str, description: str, key: bool = False
) -> Fix | None:
    """A fix replacing the string at ``pointer`` (its member name when ``key``) by ``new``, on its
    own line.

    ``None`` when the node is not a string written on one line where the document says it is.
    """
    line, column = doc.locate_key(pointer) if key else doc.locate(pointer)
    lines = doc.text.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    match = _STRING.match(text, column - 1)
    if match is None:
        return None
    replaced = text[: match.start()] + json.dumps(new, ensure_ascii=False) + text[match.end() :]
    return Fix(
        description,
        (Edit(doc.path, line, line, replaced if replaced.endswith("\n") else replaced + "\n"),),
    )


def append_to_array_fix(doc: JsonDoc, pointer: str, item: str, description: str) -> Fix | None:
    """A fix appending the string ``item`` to the array at ``pointer``, keeping its one-line or
    per-line layout."""
    line, column = doc.locate(pointer)
    lines = doc.text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: line - 1]) + column - 1
    if doc.text[start : start + 1] != "[":
        return None
    end = start + 1
    while doc.text[end] != "]":  # the document parsed: strings are closed and the array ends
        string = _STRING.match(doc.text, end)
        end = string.end() if string else end + 1
    inner = doc.text[start + 1 : end]
    quoted = json.dumps(item, ensure_ascii=False)
    body = inner.rstrip()
    if not body.strip():
        new_inner = quoted
    elif "\n" in inner:
        last_line = body[body.rfind("\n") + 1 :]
        indent = last_line[: len(last_line) - len(last_line.lstrip())]
        new_inner = f"{body},\n{indent}{quoted}{inner[len(body) :]}"
    else:
        new_inner = f"{body}, {quoted}"
    first_line_start = start - (column - 1)
    last_line_end = doc.text.find("\n", end)
    last_line_end = len(doc.text) if last_line_end < 0 else last_line_end + 1
    end_line = doc.text.count("\n", 0, end) + 1
    replaced = doc.text[first_line_start : start + 1] + new_inner + doc.text[end:last_line_end]
    if not replaced.endswith("\n"):
        replaced += "\n"
    return Fix(description, (Edit(doc.path, line, end_line, replaced),))
