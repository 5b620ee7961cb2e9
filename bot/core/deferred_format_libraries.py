"""Format libraries that ``jsonschema`` imports at once, left to be imported when first needed.

``jsonschema._format`` imports every optional format library it finds when it loads, whether or not
a schema uses that format: isoduration (with arrow) and rfc3986_validator (which compiles a large
expression) are about 70 of the 120 ms its import costs, paid by every review that explains a
failing example. ``install`` puts a finder on ``sys.meta_path`` that refuses those imports to
``jsonschema._format`` alone (anyone else imports them as usual), so jsonschema registers no checker
for their formats; ``bot.model.schemas_python`` registers the same checks, importing the library on
first use (tests/test_deferred_format_libraries.py holds the two to the same verdicts).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import FrameType, ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import importlib.machinery

# the library and the formats jsonschema checks with it
DEFERRED = {"isoduration": ("duration",), "rfc3986_validator": ("uri", "uri-reference")}
IMPORTER = "jsonschema._format"
# frames between the ``import`` statement and a finder: importlib's own (3.11-3.13: 4 or 5)
_IMPORT_FRAMES = 8


class _Finder:
    """Refuses ``DEFERRED`` to ``IMPORTER``; finds nothing for anyone else."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name in DEFERRED and _imported_by(IMPORTER):
            raise ModuleNotFoundError(f"{name} is imported when first used", name=name)
        return None


_FINDER = _Finder()


def install() -> None:
    """Refuse ``DEFERRED`` to ``jsonschema._format`` from now on (once per process)."""
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
