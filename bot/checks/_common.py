"""Small helpers the checks share: locating findings in JSON files."""

from __future__ import annotations

from bot.findings import Finding, Severity
from bot.jsondoc import JsonDoc
from bot.registry import Loaded


def at(rule: str, severity: Severity, doc: JsonDoc, pointer: str, message: str, hint: str = "",
       entry: str | None = None, key: bool = False) -> Finding:
    """A finding on the line of the JSON node at ``pointer`` (its member name when ``key``)."""
    line, column = doc.locate_key(pointer) if key else doc.locate(pointer)
    return Finding(rule=rule, severity=severity, path=doc.path, line=line, column=column, pointer=pointer,
                   message=message, hint=hint, entry=entry)


def unreadable(rule: str, severity: Severity, loaded: Loaded, what: str, entry: str | None = None) -> Finding:
    """A finding for a JSON file that could not be loaded (bad UTF-8, syntax, size, depth, unsafe path)."""
    problem = loaded.problem
    line, column = (problem.line, problem.column) if problem else (None, None)
    reason = problem.message if problem else "the file is missing"
    return Finding(rule=rule, severity=severity, path=loaded.path, line=line, column=column,
                   message=f"{what} cannot be read: {reason}", entry=entry,
                   hint="Fix the file so that it is valid UTF-8 JSON under 10 MB and 128 levels deep.")


def json_pointer(path: object) -> str:
    """RFC 6901 pointer from a jsonschema error path (a deque of keys and indexes)."""
    from bot.jsondoc import escape_pointer_token

    return "".join("/" + escape_pointer_token(p) for p in path)  # type: ignore[attr-defined]
