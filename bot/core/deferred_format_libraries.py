"""Format libraries that ``jsonschema`` imports at once, left to be imported when first needed.

``jsonschema._format`` imports every optional format library it finds when it loads, whether or not
a schema uses that format: isoduration (with arrow) and rfc3986_validator (which compiles a large
expression) are about 70 of the 120 ms its import costs, paid by every review that explains a
failing example. ``install`` puts a finder on ``sys.meta_path`` that refuses those two imports to
``jsonschema._format`` alone (anyone else imports them as usual) and, once that module has loaded,
registers the same checks jsonschema would have, on the same drafts' checkers, each importing its
library when a value of its format is first checked. Every user of jsonschema in the process sees
the checkers it always had (tests/test_deferred_format_libraries.py compares them with a process
without the finder).
"""

from __future__ import annotations

import importlib.machinery
import re
import sys
from collections.abc import Callable, Sequence
from types import FrameType, ModuleType
from typing import Any

IMPORTER = "jsonschema._format"
# frames between the ``import`` statement and a finder: importlib's own (3.11-3.13: 4 or 5)
_IMPORT_FRAMES = 8

# A strict subset of RFC 3986 URIs (scheme, ``//``, a reg-name host, an optional port, path, query
# and fragment: the rfc3986_validator grammar without user info and IP literals): such a value is a
# URI, and a URI reference, whatever the full grammar says; any other value goes to
# rfc3986_validator (most registries' URIs never need it).
_PLAIN_URI = re.compile(
    r"[a-zA-Z][a-zA-Z0-9+.-]*://(?:[a-zA-Z0-9_.~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(?::[0-9]*)?"
    r"(?:/(?:[a-zA-Z0-9_.~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})*)*"
    r"(?:\?(?:[a-zA-Z0-9_.~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?"
    r"(?:#(?:[a-zA-Z0-9_.~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?"
)


def rfc3986(rule: str) -> Callable[[str], bool]:
    """rfc3986_validator's check of a string against ``rule``, imported only for a value outside
    the plain grammar."""

    def check(value: str) -> bool:
        if _PLAIN_URI.fullmatch(value):
            return True
        from rfc3986_validator import validate_rfc3986

        return bool(validate_rfc3986(value, rule=rule))

    return check


def _strings(check: Callable[[str], bool]) -> Callable[[object], bool]:
    """A format check that, as jsonschema's, passes any value that is not a string."""
    return lambda instance: not isinstance(instance, str) or check(instance)


def _is_duration(instance: object) -> bool:
    """jsonschema's ``duration`` check: isoduration's parser, and a designator last."""
    if not isinstance(instance, str):
        return True
    import isoduration

    isoduration.parse_duration(instance)
    return instance.endswith(tuple("DMYWHMS"))


_DRAFTS = ("draft3", "draft4", "draft6", "draft7", "draft201909", "draft202012")
# format: (check, what it raises for an invalid value, the drafts jsonschema checks it in), as
# jsonschema._format declares them (isoduration's DurationParsingException is a ValueError)
CHECKS: dict[str, tuple[Callable[[object], bool], Any, tuple[str, ...]]] = {
    "duration": (_is_duration, ValueError, ("draft201909", "draft202012")),
    "uri": (_strings(rfc3986("URI")), (), _DRAFTS),
    "uri-reference": (_strings(rfc3986("URI_reference")), ValueError, _DRAFTS[2:]),
}
# the libraries ``CHECKS`` import when first needed
DEFERRED = ("isoduration", "rfc3986_validator")


def _register(module: ModuleType) -> None:
    """The deferred checks on the checkers of ``jsonschema._format`` that lack them."""
    checkers: dict[str, Any] = module._draft_checkers
    for name, (check, raises, drafts) in CHECKS.items():
        for draft in drafts:
            if name not in checkers[draft].checkers:
                checkers[draft].checks(name, raises)(check)
        if name not in module.FormatChecker.checkers:
            module.FormatChecker._cls_checks(name, raises)(check)


class _Finder:
    """Refuses ``DEFERRED`` to ``IMPORTER``, and completes ``IMPORTER`` once it has loaded."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name in DEFERRED and _imported_by(IMPORTER):
            raise ModuleNotFoundError(f"{name} is imported when first used", name=name)
        if name != IMPORTER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = spec.loader if spec is not None else None
        if loader is not None:
            # this spec's own loader (PathFinder makes one per spec): its module, then the checks
            load = loader.exec_module

            def load_and_register(module: ModuleType) -> None:
                load(module)
                _register(module)

            loader.exec_module = load_and_register  # type: ignore[method-assign]
        return spec


_FINDER = _Finder()


def install() -> None:
    """Defer ``DEFERRED`` from now on (once per process; a jsonschema loaded already keeps its
    own checks)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def _imported_by(module: str) -> bool:
    """Whether the import under way is a statement of ``module``'s (not of code it calls)."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(_IMPORT_FRAMES):
        if frame is None:
            return False
        name = frame.f_globals.get("__name__")
        if name == module:
            return True
        if not (name or "").startswith(("importlib", "_frozen_importlib")):
            return False
        frame = frame.f_back
    return False
