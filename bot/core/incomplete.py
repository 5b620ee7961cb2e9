"""A review that could not finish: a blocking finding with its reason, never a passing verdict.

GitHub counts a ``neutral`` conclusion as passing for a required check, so a review the bot could
not complete (a stage past its budget, the review's whole time budget spent, GitHub refusing a read,
a process killed while reviewing) must not end neutral or successful: it ends with one of these
errors, whose message is the reason and becomes the first line of the verdict (``headline``).
"""

from __future__ import annotations

from bot.core.findings import Finding, Report, Severity, State

INCOMPLETE = "bot/incomplete-review"
REGRESSION_UNFINISHED = "bot/regression-did-not-finish"

RULES: dict[str, str] = {
    INCOMPLETE: "The review could not finish (its time budget ran out, GitHub refused a read, the "
    "process reviewing it was killed): an error whose message is the reason, so that no unfinished "
    "review can pass. A required check with a `neutral` conclusion counts as passing on GitHub, so "
    "the bot never concludes neutral for an unfinished review. Re-run once the cause is gone, or "
    "split the pull request.",
    REGRESSION_UNFINISHED: "The Spark regression over the sample events did not finish (past its "
    "time budget, or it failed): an error on the changed facet schemas and sample events it was "
    "validating, because an unfinished regression cannot show that the change breaks nothing.",
}

# the edge of what the review read (``bot.review.checks.edge``): a changed path it could not read as
# a file, a change it could not list whole
UNREAD = "bot/unread-path"
NOT_LISTED = "bot/change-not-listed"

# an example whose validation stopped (``bot.review.checks.examples``): past its time budget, at a
# reference that does not resolve offline, in a recursion without end, at a schema that is not a
# valid one; nothing of its content was validated, whatever it holds
NOT_VALIDATED = frozenset(
    {"examples/timeout", "examples/unresolved-ref", "examples/recursion", "examples/unchecked"}
)

# a naming file not checked against its base schema (``bot.review.checks.naming``), a CODEOWNERS
# line the bot could not match within its limits (``bot.review.checks.owners``): what the file
# holds, who owns what the line matches, was not judged
UNCHECKED_PATTERN = "owners/unchecked-pattern"
NOT_CHECKED = frozenset({"naming/unchecked", UNCHECKED_PATTERN})

# Findings that say part of the review did not happen: a check that crashed or stopped at a file it
# could not read computed nothing for the change, a path or change the bot could not read may hold
# anything, and an example not validated may be invalid in any way. Not matched against the base
# side (the same crash there is no pre-existing problem: the check's findings on the change are
# unknown; the same timeout at an example says nothing of what the change wrote there), except a
# finding naming every file its checking read (``Finding.grounds``: a naming file and its base
# schema, an example and the schemas it stands on) when the change touches none of them: what was
# not checked there is that file's standing problem, the change cannot alter it
# (``bot.review.engine.standing``). Never waived (an owner's waiver on the base cannot vouch for
# what a later change puts there unread), and their severity is not configurable.
UNJUDGED_RULES = frozenset(
    {
        *RULES,
        "bot/internal-error",
        "bot/unreadable-file",
        UNREAD,
        NOT_LISTED,
        *NOT_VALIDATED,
        *NOT_CHECKED,
    }
)


def incomplete(reason: str, path: str = "", hint: str = "", rule: str = INCOMPLETE) -> Finding:
    """The blocking finding of a review that could not finish, ``reason`` first."""
    return Finding(
        rule=rule,
        severity=Severity.ERROR,
        path=path,
        message=reason,
        state=State.NEW,
        hint=hint
        or "Nothing was decided about the change. Re-run the review once the cause is "
        "gone, or split the pull request.",
        subject=path or "review",
    )


def unfinished_reason(report: Report) -> str | None:
    """The reason of the first could-not-finish finding of ``report``, if any."""
    for f in report.current():
        if f.rule in RULES:
            return f.message
    return None
