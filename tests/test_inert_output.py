"""Everything quoted from a pull request is inert in every output (docs/output-safety.md).

The Markdown is read back with cmark-gfm, GitHub's own parser (``cmarkgfm``), with raw HTML let
through so that any HTML an input smuggled in shows: the test fails on any tag, attribute, link or
comment the bot did not write, on a mention, email or issue reference GitHub would link in the text,
and on a table cell whose text is not exactly what was quoted (a ``|`` that split a cell moves text
from one cell to the next, and GFM silently drops the extra cells).
"""

from __future__ import annotations

import datetime
import functools
import json
import re
import string
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.findings import Finding, Report, Section, Severity
from bot.core.inert import ZWJ, json_safe, shorten, visible
from bot.core.quoting import file_url
from bot.github.publish import (
    GITHUB_TEXT_LIMIT,
    REVIEW_BODY_LIMIT,
    inline_comment_body,
    review_body,
    to_annotations,
)
from bot.github.teams import TeamMembership
from bot.outputs.dashboard import Dashboard, EntryBoard
from bot.outputs.render import render
from bot.outputs.render.dashboard import MARKER as DASHBOARD_MARKER
from bot.outputs.render.dashboard import render_markdown as render_dashboard
from bot.outputs.render.markdown import (
    MESSAGE_LIMIT,
    NAME_LIMIT,
    code,
    cut_lines,
    escape,
    render_markdown,
)
from bot.outputs.render.text import render_text
from bot.review.regression.compare import BROKEN, Row
from bot.review.regression.result import Coverage, RegressionResult

# Fragments that attack one construct each; hypothesis strings them together with arbitrary text.
HOSTILE = [
    "@OpenLineage/committers",
    "@someone",
    " @a",
    "x@y",
    "<img src=x onerror=alert(1)>",
    "<b>",
    "</td>",
    "<br>",
    "<!--",
    "-->",
    "<https://evil.example>",
    "|",
    "\\|",
    "\\",
    "\\\\|",
    "`",
    "``",
    "```",
    "~~~",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\x00",
    "\x1b[31m",
    "\x9b",
    "\u202e",
    "\u2066",
    "\u200b",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u2028",
    "\u3164",
    "\U000e0041",
    "\ud800",
    "\U0001f600",
    "&#64;",
    "&commat;",
    "&amp;",
    "&",
    "http://evil.example/x",
    "https://evil.example",
    "ftp://evil.example",
    "www.evil.example",
    "WWW.evil.example",
    "a@b.example",
    "mailto:a@b.example",
    "#1",
    "org/repo#2",
    "GH-3",
    "[x](http://evil.example)",
    "![i](http://e/i.png)",
    "[!NOTE]",
    "[^1]",
    "*",
    "**",
    "_",
    "~~",
    "$",
    "$x^2$",
    "> ",
    "# ",
    "- ",
    "+ ",
    "1. ",
    "2) ",
    "---",
    "===",
    "    ",
    " ",
    ":+1:",
    "| ✅ no problem here |",
    "\u00a0",
    "é",
    "ÿ",
    "'",
    '"',
]
fragment = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=4),
    st.text(alphabet=string.punctuation + " a1", max_size=6),
)
hostile = st.lists(fragment, max_size=6).map("".join)
nonempty = st.lists(fragment, min_size=1, max_size=6).map("".join).filter(lambda s: s.strip() != "")

SETTINGS = settings(
    derandomize=True,
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

finding = st.builds(
    Finding,
    rule=nonempty,
    severity=st.sampled_from(list(Severity)),
    path=hostile,
    message=hostile,
    line=st.one_of(st.none(), st.integers(1, 10_000)),
    hint=hostile,
    entry=st.one_of(st.none(), nonempty),
    owners=st.lists(nonempty, max_size=3).map(tuple),
)


# -- reading Markdown as GitHub does -------------------------------------------------------------
TAGS = {
    "h2",
    "h3",
    "h4",
    "p",
    "ul",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "code",
    "br",
    "sub",
    # details: the folded pre-existing and fixed findings
    "strong",
    "blockquote",
    "details",
    "summary",
}
# GitHub links @login and @org/team after a non-word
MENTION = re.compile(r"(?<!\w)@[a-z0-9]", re.IGNORECASE)
ISSUE = re.compile(r"(?<!\w)#\d|[\w.-]/[\w.-]+#\d")  # #1 and owner/repo#1 cross-reference an issue


class Page(HTMLParser):
    """The parts of cmark-gfm's HTML the assertions need: tags, text outside code, table cells, code
    spans."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.prose: list[str] = []
        self.codes: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.comments: list[str] = []
        self.links: list[str] = []
        self._in_code = 0
        self._cell: list[str] | None = None
        self._code: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "code":
            self._in_code += 1
            self._code = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "code":
            self._in_code -= 1
            self.codes.append("".join(self._code))

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_code:
            self._code.append(data)
        else:
            self.prose.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def read(markdown: str, links: bool = False) -> Page:
    """Check the Markdown is inert as GitHub reads it, and return what GitHub would show. With
    ``links``, ``<a href>`` is allowed (the caller checks ``page.links``, the bot's own)."""
    shown = markdown.replace("@" + ZWJ, "@").replace("#" + ZWJ, "#")
    assert visible(shown) == shown.replace("\n", "\\n"), (
        "a control, bidi or invisible character got through"
    )
    page = Page()
    page.feed(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))
    page.close()
    assert not page.comments
    for tag, attrs in page.tags:
        if links and tag == "a":
            assert [name for name, _ in attrs] == ["href"], f"<a {attrs}> in the output"
            continue
        assert tag in TAGS, f"<{tag}> in the output"
        assert all(name == "align" and tag in ("th", "td") for name, _ in attrs), (
            f"<{tag} {attrs}> in the output"
        )
    for text in page.prose:
        assert not MENTION.search(text), f"a mention GitHub would link: {text!r}"
        assert not ISSUE.search(text), f"an issue reference GitHub would link: {text!r}"
    return page


def shown(text: str, limit: int = NAME_LIMIT) -> str:
    """What a quoted text looks like on the page: its visible form, shortened past ``limit``."""
    return shorten(visible(text), limit)


def cell(text: str) -> str:
    return text.replace(ZWJ, "").strip(" ")


# -- properties ----------------------------------------------------------------------------------
@pytest.mark.no_cover
@SETTINGS
@given(
    findings=st.lists(finding, max_size=5),
    entries=st.lists(nonempty, max_size=3),
    reason=st.one_of(st.none(), hostile),
    title=hostile,
)
def test_the_summary_quotes_every_text_exactly_and_nothing_else(
    findings: list[Finding], entries: list[str], reason: str | None, title: str
) -> None:
    report = Report.build(
        findings, entries, neutral_reason=reason, sections=[Section(title, escape(title) + "\n")]
    )
    page = read(render_markdown(report))
    rows = [row for table in page.tables for row in table[1:]]
    assert len(rows) == len(report.findings)
    for row, f in zip(rows, report.findings, strict=True):
        where = shown(f.path or "(repository)") + (f" line {f.line}" if f.line else "")
        # each quoted prose text loses its leading blanks (four would start an indented code block)
        message = "".join(shown(text, MESSAGE_LIMIT).lstrip(" \t") for text in (f.message, f.hint))
        assert [cell(c) for c in row[1:]] == [cell(shown(f.rule)), cell(where), cell(message)]
    for name in (
        *report.entries,
        *(o for owners in report.required_approvals().values() for o in owners),
    ):
        assert shown(name) in page.codes


@pytest.mark.no_cover
@SETTINGS
@given(findings=st.lists(finding, min_size=1, max_size=5), sha=hostile)
def test_review_body_and_inline_comments_are_inert(findings: list[Finding], sha: str) -> None:
    report = Report.build(findings)
    read(review_body(report, report.findings, sha))
    for f in report.findings:
        page = read(inline_comment_body(f))
        assert shown(f.rule) in page.codes


@pytest.mark.no_cover
@SETTINGS
@given(
    texts=st.lists(hostile, min_size=9, max_size=9),
    index=st.integers(0, 99),
    count=st.integers(1, 9),
)
def test_regression_and_team_sections_are_inert(texts: list[str], index: int, count: int) -> None:
    producer, rule, facet, subject, message, file, base, head, team = texts
    row = Row(
        producer, rule, facet, "schema", subject, BROKEN, "ok", "broken", message, file, index
    )
    group = (producer, rule, facet, BROKEN)
    result = RegressionResult(
        base,
        head,
        "spark",
        10,
        {group: count},
        {group: [row]},
        {producer: Coverage([facet], [subject])},
    )
    page = read(result.markdown())
    problem = page.tables[0][1]
    assert [cell(c) for c in problem[1:4]] == [
        cell(shown(producer)),
        cell(shown(rule)),
        cell(shown(facet)) if facet else "—",
    ]
    assert not file or shown(file) in page.codes
    teams = TeamMembership(unverified=((team, message),)).section()
    assert teams is not None
    assert shown("@" + team) in read(teams.markdown).codes


@pytest.mark.no_cover
@SETTINGS
@given(
    findings=st.lists(finding, max_size=5),
    entries=st.lists(hostile, max_size=3),
    reason=st.one_of(st.none(), hostile),
    color=st.booleans(),
)
def test_text_output_is_one_visible_line_per_finding(
    findings: list[Finding], entries: list[str], reason: str | None, color: bool
) -> None:
    report = Report.build(
        findings, entries, neutral_reason=reason, sections=[Section("t\u202e", "a\nb\u200b")]
    )
    out = render_text(report, color=color)
    if color:
        out = re.sub(r"\x1b\[(?:3[136]|0)m", "", out)
    assert visible(out) == out.replace("\n", "\\n")
    lines = out.splitlines()
    groups = len({f.entry or "" for f in report.findings})  # findings are sorted by entry
    approvals = len(report.required_approvals())
    assert (
        len(lines)
        == groups
        + len(report.findings)
        + sum(1 for f in report.findings if f.hint)
        + 3
        + approvals
        + 1
    )
    for f in report.findings:
        assert any(line.endswith(f" {visible(f.rule)} {visible(f.message)}") for line in lines)


@pytest.mark.no_cover
@SETTINGS
@given(findings=st.lists(finding, max_size=5), entries=st.lists(hostile, max_size=3))
def test_json_and_sarif_are_lossless_and_inert(findings: list[Finding], entries: list[str]) -> None:
    report = Report.build(findings, entries)
    out = render(report, "json")
    assert visible(out) == out.replace("\n", "\\n")
    assert json.loads(out) == json.loads(json.dumps(report.to_json()))  # the same strings come back
    sarif = render(report, "sarif")
    assert visible(sarif) == sarif.replace("\n", "\\n")
    for result in json.loads(sarif)["runs"][0]["results"]:
        text = result["message"]["text"]
        assert not re.search(r"(?<!\\)(?:\\\\)*[\[\]]", text), (
            "an unescaped bracket starts a SARIF embedded link"
        )
        for location in result.get("locations", []):
            assert re.fullmatch(
                r"[A-Za-z0-9/%._~-]*", location["physicalLocation"]["artifactLocation"]["uri"]
            )


@pytest.mark.no_cover
@SETTINGS
@given(findings=st.lists(finding, max_size=5))
def test_annotation_titles_and_messages_are_plain_single_texts(findings: list[Finding]) -> None:
    for note in to_annotations(findings):
        assert visible(note.title or "") == note.title
        # the one break is the bot's, before the hint
        message, _, hint = note.message.partition("\n\n")
        assert visible(message) == message and visible(hint) == hint
        assert len(note.message) <= 4_000 and len(note.title or "") <= 255


# -- the cases of the issue ----------------------------------------------------------------------
@pytest.mark.no_cover
@SETTINGS
@given(findings=st.lists(finding, min_size=1, max_size=5))
def test_the_dashboard_issue_links_each_file_and_nothing_else(findings: list[Finding]) -> None:
    """Each finding of the dashboard issue links to its file where GitHub shows it (the name
    percent-encoded), and a hostile file name adds no link, tag, mention or comment."""
    base = "https://github.com/owner/registry/blob/" + "0123456789" * 4
    board = Dashboard(
        (EntryBoard("x", ("@a",), "CODEOWNERS", defects=tuple(findings)),),
        datetime.date(2026, 6, 1),
        totals=dict.fromkeys(("entries", "findings", "defects", "adoption_gaps", "waived"), 0),
    )
    markdown = render_dashboard(board, link=functools.partial(file_url, base))
    page = read(markdown.removeprefix(DASHBOARD_MARKER), links=True)  # the bot's own comment
    expected = [file_url(base, f.path, f.line) for f in findings if f.path]
    assert page.links == [url for url in expected if url and not re.search(r"[\s()<>\\`]", url)]
    for f in findings:
        assert shown(f.path or "<repository>") + (f":{f.line}" if f.line else "") in page.codes


def test_a_file_url_encodes_every_name() -> None:
    """A name that is not UTF-8 (a lone surrogate) is linked too; the site's page raised
    ``UnicodeEncodeError`` on it before."""
    base = "https://github.com/o/r/blob/" + "a" * 40
    assert file_url(base, "a b)/\udcff#?.json", 3) == f"{base}/a%20b%29/%FF%23%3F.json#L3"
    assert file_url(base, "\ud800.json") == f"{base}/%ED%A0%80.json"
    assert file_url(base, "") is None and file_url("", "x") is None
    assert file_url("javascript:alert(1)//", "x") is None


@pytest.mark.parametrize(
    "path",
    [
        "spec/registry/x|@OpenLineage/committers/registry.json",
        "spec/registry/facets/b|<img src=x onerror=alert(1)>.json",
        "spec/registry/c| ✅ no problem here |.json",
    ],
)
def test_file_names_of_the_issue_stay_in_their_cell(path: str) -> None:
    f = Finding("facets/unknown", Severity.ERROR, path, "the real message", entry="x")
    page = read(render_markdown(Report.build([f])))
    assert page.tables[0][1][1:] == ["facets/unknown", path, "the real message"]


def test_an_encoded_at_sign_is_shown_not_decoded() -> None:
    page = read(escape("&#64;OpenLineage/committers and &commat;someone"))
    assert (
        "".join(page.prose).replace(ZWJ, "").strip()
        == "&#64;OpenLineage/committers and &commat;someone"
    )


def test_code_spans_take_any_backticks_and_keep_edge_spaces() -> None:
    for text in ["`", "a``b", " x ", "`a`", "``"]:
        assert read(code(text, table=False)).codes == [text]


def test_bidi_and_newlines_are_visible_in_the_terminal() -> None:
    f = Finding(
        "facets/x",
        Severity.ERROR,
        "facets/a\u202egpj.json\nFAKE: ok",
        "m\x1b[2J",
        hint="h\u200bi",
        entry="e\n",
    )
    out = render_text(Report.build([f]))
    assert "a\\u202egpj.json\\nFAKE: ok" in out and "m\\x1b[2J" in out and "h\\u200bi" in out
    assert len(out.splitlines()) == 4  # entry, finding, hint, verdict


def test_json_escapes_bidi_losslessly() -> None:
    assert (
        json_safe(json.dumps({"a": "x\u202ey\u2028\U000e0041"}, ensure_ascii=False))
        == '{"a": "x\\u202ey\\u2028\\udb40\\udc41"}'
    )


# -- size: no finding hides the others ------------------------------------------------------------
def many(n: int, long_at: int, long: int) -> list[Finding]:
    return [
        Finding(
            "facets/unknown",
            Severity.ERROR,
            f"spec/registry/gcp/dataproc/facets/F{i:05}.json",
            "x" * long if i == long_at else f"facet F{i:05} is not declared",
            entry="gcp:dataproc",
        )
        for i in range(n)
    ]


def test_one_huge_message_is_shortened_and_every_finding_keeps_its_row() -> None:
    findings = many(30, 7, 108_937)
    summary = render_markdown(Report.build(findings))
    assert len(summary) < GITHUB_TEXT_LIMIT
    rows = read(summary).tables[0][1:]
    assert len(rows) == 30 and "(108,937 characters)" in rows[7][3]
    assert "not shown" not in summary


def test_10092_findings_show_as_many_rows_as_fit_and_count_the_rest() -> None:
    findings = many(10_092, 7, 108_937)
    report = Report.build(findings)
    summary = render_markdown(report)
    assert utf8_size(summary) <= GITHUB_TEXT_LIMIT  # each row's icon is 3-6 bytes
    shown_rows = len(read(summary).tables[0]) - 1
    assert shown_rows > 300
    assert f"> {10_092 - shown_rows:,} more findings not shown" in summary
    assert f"; {shown_rows:,} of 10,092 shown)" in summary
    body = review_body(report, report.findings, "0" * 40)
    assert utf8_size(body) <= REVIEW_BODY_LIMIT and "more not shown" in body
    assert len(inline_comment_body(findings[7])) < 5_000


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def test_a_report_of_wide_characters_fits_githubs_limits_in_bytes() -> None:
    """Finding: the summary was cut to 65,535 characters, but GitHub counts a check run's summary
    in bytes (422 "summary exceeds a maximum bytesize of 65535"): 40 findings quoting long CJK
    values rendered to 43,445 characters and 122,565 bytes, and the run concluded "internal
    error" instead of its verdict."""
    findings = [
        Finding(
            "facets/unknown",
            Severity.ERROR,
            f"spec/registry/gcp/dataproc/facets/F{i:05}.json",
            "名前空間の値" * 160,
            entry="gcp:dataproc",
        )
        for i in range(40)
    ]
    report = Report.build(findings)
    summary = render_markdown(report)
    assert 60_000 < utf8_size(summary) <= GITHUB_TEXT_LIMIT
    assert len(read(summary).tables[0]) - 1 == 40  # every row kept, its message shortened
    body = review_body(report, report.findings, "0" * 40)
    assert utf8_size(body) <= REVIEW_BODY_LIMIT
    cut = cut_lines("\n".join(["é" * 100] * 1_000), 1_000, "(cut)")
    assert utf8_size(cut) <= 1_000 and cut.endswith("\n(cut)")
    assert set(cut.removesuffix("\n(cut)")) <= {"é", "\n"}


@pytest.mark.no_cover
@settings(SETTINGS, max_examples=40)
@given(
    sizes=st.lists(st.integers(0, 30_000), min_size=1, max_size=60),
    limit=st.integers(3_000, 20_000),
    text=nonempty,
)
def test_every_row_or_a_count_of_the_rest_within_any_limit(
    sizes: list[int], limit: int, text: str
) -> None:
    findings = [
        Finding("r", Severity.WARNING, f"f{i:03}", (text * n)[:n], entry="e")
        for i, n in enumerate(sizes)
    ]
    summary = render_markdown(Report.build(findings), limit=limit)
    assert utf8_size(summary) <= limit
    rows = len(read(summary).tables[0]) - 1 if "| --- |" in summary else 0
    cut = re.search(r"> ([\d,]+) more findings not shown", summary)
    assert rows + (int(cut.group(1).replace(",", "")) if cut else 0) == len(findings)


def test_replay_shows_posted_markdown_without_joiners_and_with_hostile_characters_visible() -> None:
    from bot.core.inert import markdown_line

    line = escape("@team") + " " + code("a\u202eb", table=False)
    assert markdown_line(line) == "\\@team `a\\u202eb`"
    assert markdown_line("raw \x1b[2J\u200b") == "raw \\x1b[2J\\u200b"


@pytest.mark.parametrize("text", ["    @mallory", "\t\t<b>x</b>", "     - item", "        1. one"])
def test_leading_whitespace_never_makes_a_code_block(text: str) -> None:
    """Four leading spaces (or a tab) start an indented code block: an escaped text never does
    (Hypothesis found a section title of four spaces and a mention rendered as <pre>)."""
    page = read(escape(text) + "\n")
    assert "pre" not in {tag for tag, _ in page.tags}
