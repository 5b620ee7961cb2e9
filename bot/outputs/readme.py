"""Keep generated blocks of README.md in sync (``<!-- name:start -->`` ... ``<!-- name:end
-->``)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent.parent / "README.md"


def block(text: str, name: str) -> str:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    if match is None:
        raise ValueError(f"README has no {name} block")
    return match.group(1)


def replace_block(text: str, name: str, content: str) -> str:
    if not content.endswith("\n"):
        content += "\n"
    return re.sub(
        rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)",
        lambda m: m.group(1) + content + m.group(2),
        text,
        count=1,
        flags=re.S,
    )
