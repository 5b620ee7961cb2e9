"""What a validation error is about (an example's against its facet, a file's against the schema of
its kind): its subject, which matches it across a change.

Not its message: python-jsonschema quotes the schema's values (an enum's list, a bound, a pattern,
the patterns beside ``additionalProperties``) and, for most keywords, the whole offending value, so
a change to the schema that leaves the error as it was (an enum value added), or an edit inside an
offending object, made it new. The subject is the failing keyword at its place in the schema, and
of the value: a scalar itself (a digest when long); of an object or array, the members the error
names (the required property missing, the unexpected fields), the errors of each ``anyOf``/``oneOf``
branch, or else its type (a ``type``, ``enum``, ``const`` or ``not`` error on an object is about
the object being there, whatever it holds). The example's path and the instance pointer are the
finding's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.core.anchors import MAX_IDENTITY_CHARS, bounded, digest
from bot.core.jsondoc import pointer_from, resolve_pointer

if TYPE_CHECKING:
    from bot.model.explanations import Explanation

# keywords whose message names the members concerned, and quotes neither the value nor the schema
_NAMES_MEMBERS = frozenset(
    {"required", "dependentRequired", "dependencies", "unevaluatedProperties", "propertyNames"}
)
_JSON_TYPES = {dict: "an object", list: "an array"}


def about(error: Explanation, document: Any) -> str:
    """The subject of ``error``, one of the errors of ``document``."""
    return f"{error.keyword} at {'/'.join(map(str, error.schema_path))}: {_what(error, document)}"


def _what(error: Explanation, document: Any) -> str:
    value = resolve_pointer(document, pointer_from(error.path))
    if not isinstance(value, dict | list):
        return bounded(value)
    if error.keyword in _NAMES_MEMBERS:
        return _short(error.message)
    if error.keyword == "additionalProperties" and isinstance(value, dict):
        extras = _unexpected(error.message, value)
        return _short(error.message) if extras is None else "unexpected " + bounded(extras)
    kind = _JSON_TYPES[type(value)]
    if error.context:  # anyOf, oneOf: what each branch found wrong, where under the value
        here = len(error.path)  # not where the value is: a list item inserted before it moves that
        branches = sorted(
            {f"{pointer_from(e.path[here:])} {about(e, document)}" for e in error.context}
        )
        return f"{kind}, because " + bounded(branches)
    return kind


def _short(text: str) -> str:
    """``text``, or its digest past ``MAX_IDENTITY_CHARS``."""
    return text if len(text) <= MAX_IDENTITY_CHARS else digest(text)


def _unexpected(message: str, value: dict[str, Any]) -> list[str] | None:
    """The fields an ``additionalProperties`` message names, as python-jsonschema writes them
    (``'a', 'b' do not match any of the regexes: ...`` beside ``patternProperties``, else
    ``Additional properties are not allowed ('a', 'b' were unexpected)``), or None when the message
    is not one of them."""
    named = sorted(k for k in value if repr(k) in message)
    joined = ", ".join(map(repr, named))
    verbs = ("does", "was") if len(named) == 1 else ("do", "were")
    if message.startswith(f"{joined} {verbs[0]} not match any of the regexes: "):
        return named
    by_str = ", ".join(map(repr, sorted(named, key=str)))
    if message == f"Additional properties are not allowed ({by_str} {verbs[1]} unexpected)":
        return named
    return None
