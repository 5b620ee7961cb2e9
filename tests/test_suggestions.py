"""Fixes on GitHub and in SARIF: a suggestion only where GitHub can commit it, exactly the fix's
lines."""

from __future__ import annotations

from bot.core.changes import ChangeSet, FileChange, Status, diff_lines
from bot.core.findings import Edit, Finding, Fix, Report, Severity, State
from bot.github.publish import inline_comment_body, plan_review, suggestion_for
from bot.outputs.render.sarif import render_sarif

PATH = "spec/registry/acme/registry.json"
# head lines 1-6 and 20-22 are in the diff, in two hunks
PATCH = "@@ -1,5 +1,6 @@\n {\n-  a\n+  b\n+  c\n   d\n   e\n   f\n@@ -19,3 +20,3 @@\n x\n-y\n+z\n w"


def changes() -> ChangeSet:
    return ChangeSet(
        files=(FileChange(PATH, Status.MODIFIED, lines=diff_lines(PATCH), patch=PATCH),)
    )


def finding(*edits: Edit, line: int = 2, path: str = PATH) -> Finding:
    return Finding(
        rule="format/json",
        severity=Severity.ERROR,
        path=path,
        message="m",
        line=line,
        column=1,
        state=State.NEW,
        fix=Fix("lay it out", edits),
    )


def test_a_multi_line_fix_inside_one_hunk_is_a_suggestion_on_its_lines() -> None:
    f = finding(Edit(PATH, 2, 3, '  "b": 1,\n  "c": 2\n'))
    [comment], rest = plan_review(Report.build([f]), changes(), 30)
    assert rest == [] and (comment.start_line, comment.line) == (2, 3)
    assert comment.body.endswith('```suggestion\n  "b": 1,\n  "c": 2\n```')


def test_a_one_line_fix_is_a_plain_line_comment_and_a_deletion_suggests_nothing_in_place() -> None:
    [comment], _ = plan_review(
        Report.build([finding(Edit(PATH, 21, 21, "q\n"), line=21)]), changes(), 30
    )
    assert (comment.start_line, comment.line) == (None, 21) and comment.body.endswith(
        "```suggestion\nq\n```"
    )
    [comment], _ = plan_review(
        Report.build([finding(Edit(PATH, 21, 21, ""), line=21)]), changes(), 30
    )
    assert comment.body.endswith("```suggestion\n```")


def test_no_suggestion_across_hunks_outside_the_diff_in_another_file_or_with_invisible_characters() -> (  # noqa: E501
    None
):
    cases = [
        finding(Edit(PATH, 5, 20, "x\n")),  # spans two hunks
        finding(Edit(PATH, 2, 8, "x\n")),  # lines 7-8 are not in the diff
        finding(Edit("spec/registry/acme/CODEOWNERS", 1, 0, "* @a\n")),  # another (new) file
        finding(Edit(PATH, 2, 2, "\u202eevil\n")),  # a bidi control would be committed as is
        finding(Edit(PATH, 2, 2, "a\n"), Edit(PATH, 4, 4, "b\n")),  # not contiguous
    ]
    for f in cases:
        assert suggestion_for(f, changes()) is None, f.fix
        [comment], _ = plan_review(Report.build([f]), changes(), 30)
        assert (
            "suggestion" not in comment.body
            and "`registry-bot fix` applies the fix" in comment.body
        )
        assert comment.start_line is None and comment.line == 2


def test_a_fence_longer_than_any_backtick_run_of_the_fix() -> None:
    f = finding(Edit(PATH, 2, 2, '  "a": "```` x"\n'))
    suggestion = suggestion_for(f, changes())
    assert suggestion is not None
    assert inline_comment_body(f, suggestion).endswith('`````suggestion\n  "a": "```` x"\n`````')


def test_pre_existing_findings_get_no_inline_comment_even_with_a_fix() -> None:
    f = finding(Edit(PATH, 2, 3, "x\n"))
    from dataclasses import replace

    inline, rest = plan_review(Report.build([replace(f, state=State.UNCHANGED)]), changes(), 30)
    assert inline == [] and rest == []


def test_sarif_carries_the_fix_as_whole_line_replacements() -> None:
    f = finding(Edit(PATH, 2, 3, "x\n"), Edit("spec/registry/acme/CODEOWNERS", 1, 0, "* @a\n"))
    [result] = render_sarif(Report.build([f]))["runs"][0]["results"]
    [fix] = result["fixes"]
    assert fix["description"] == {"text": "lay it out"}
    assert fix["artifactChanges"] == [
        {
            "artifactLocation": {"uri": PATH},
            "replacements": [
                {
                    "deletedRegion": {
                        "startLine": 2,
                        "startColumn": 1,
                        "endLine": 4,
                        "endColumn": 1,
                    },
                    "insertedContent": {"text": "x\n"},
                }
            ],
        },
        {
            "artifactLocation": {"uri": "spec/registry/acme/CODEOWNERS"},
            "replacements": [
                {
                    "deletedRegion": {
                        "startLine": 1,
                        "startColumn": 1,
                        "endLine": 1,
                        "endColumn": 1,
                    },
                    "insertedContent": {"text": "* @a\n"},
                }
            ],
        },
    ]


def test_the_fixable_count_is_in_the_summary_and_the_text_verdict_line() -> None:
    from bot.outputs.render.text import render_text

    report = Report.build(
        [finding(Edit(PATH, 2, 3, "x\n")), Finding("a/b", Severity.WARNING, PATH, "m")]
    )
    assert report.summary()["fixable"] == 1
    assert render_text(report).splitlines()[-1].endswith("; 1 fixable (registry-bot fix)")
    assert "fixable" not in render_text(Report.build([])).splitlines()[-1]
