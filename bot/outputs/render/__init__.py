"""Turn a report into text, JSON, SARIF 2.1.0 or Markdown."""

from __future__ import annotations

import json

from bot.core.findings import Report
from bot.core.inert import json_safe
from bot.outputs.render.markdown import render_markdown
from bot.outputs.render.sarif import render_sarif
from bot.outputs.render.text import render_text

FORMATS = ("text", "json", "sarif", "markdown")


def render(report: Report, fmt: str, color: bool = False) -> str:
    if fmt == "text":
        return render_text(report, color=color)
    if fmt == "json":
        return json_safe(json.dumps(report.to_json(), indent=2, ensure_ascii=False)) + "\n"
    if fmt == "sarif":
        return json_safe(json.dumps(render_sarif(report), indent=2, ensure_ascii=False)) + "\n"
    if fmt == "markdown":
        return render_markdown(report)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
