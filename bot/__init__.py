"""OpenLineage registry review bot: the engine, its checks, the GitHub App and the Spark
regression."""

import sys

from bot.core import deferred_format_libraries, uninterrupted_imports

__version__ = "0.1.0"

# jsonschema registers the ``iri``/``iri-reference`` formats when ``rfc3987_syntax`` imports, and
# that module builds its Lark grammars at import: 1.5 s on every command. No OpenLineage schema uses
# those formats, so the bot never imports it; ``uri``, ``uri-reference`` (rfc3986-validator),
# ``uuid`` and ``date-time`` are still checked (tests/test_startup.py).
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

# a Ctrl-C in the moment orjson initialises would crash the process instead of interrupting it
uninterrupted_imports.install()

# jsonschema imports isoduration (and arrow) and rfc3986_validator when it loads: they are imported
# when a value of their format is first checked instead
deferred_format_libraries.install()
