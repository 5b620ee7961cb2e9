"""A folder a command replaces with its output (``publish OUT``, ``regress --parquet DIR``): absent,
empty, or an earlier output of the same command, which a marker file in it says.

Anything else is refused before work starts, so that a mistyped folder (the checkout, a home folder)
is never deleted.
"""

from __future__ import annotations

from pathlib import Path


def replaceable(out: Path, marker: str) -> bool:
    """``out`` is absent, an empty folder or a folder holding ``marker``."""
    return not out.exists() or (
        out.is_dir() and (not any(out.iterdir()) or (out / marker).is_file())
    )


def mark(out: Path, marker: str, text: str) -> None:
    """Say in ``out`` that it holds an output the next run may replace."""
    (out / marker).write_text(text, encoding="utf-8")
