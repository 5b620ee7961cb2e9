"""The only code that writes to GitHub: check run, pull request review, summary comment.

Idempotent: a re-run or a redelivered webhook leaves one summary comment, never posts the same
review twice, and every check run it starts ends in a terminal state.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from itertools import pairwise

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Finding, Report, Severity, State, Verdict
from bot.core.inert import UNSAFE_IN_TEXT, plain, shorten
from bot.github import limits as github_limits
from bot.github.api import (
    Annotation,
    AnnotationLevel,
    CheckConclusion,
    CheckRunOutput,
    CheckStatus,
    GitHubAPI,
    GitHubError,
    InlineComment,
    PullRequest,
    ReviewInfo,
    base_line,
    base_of,
)
from bot.github.refusals import Refusals
from bot.outputs.render.markdown import (
    GITHUB_TEXT_LIMIT,
    MESSAGE_LIMIT,
    Row,
    backtick_fence,
    code,
    cut_lines,
    escape,
    fit,
    headline,
    render_markdown,
    utf8_size,
)

log = logging.getLogger(__name__)

CHECK_NAME = "OpenLineage registry"
ANNOTATIONS_PER_REQUEST = github_limits.ANNOTATIONS_PER_REQUEST
MAX_ANNOTATIONS = 1000
# plus a 500-character hint and the notes of their lengths: under 4,000
ANNOTATION_MESSAGE_LIMIT = 3_400
INLINE_MESSAGE_LIMIT = 4_000  # characters of a message in an inline comment (GitHub takes 65,536)
REVIEW_BODY_LIMIT = 60_000
SUMMARY_MARKER = "<!-- registry-bot:summary -->"
# the entries whose owners must still approve (the dashboard reads it)
WAITING_MARKER = "<!-- registry-bot:waiting "
_ENTRY_NAME = re.compile(r"[a-z0-9][a-z0-9:_-]{0,199}")
FLIP_MARKER = "<!-- registry-bot:verdict-changed {sha} -->"
RERUN_ACTION = {
    "label": "Re-run",
    "description": "Review this pull request again",
    "identifier": "rerun",
}
_LEVEL: dict[Severity, AnnotationLevel] = {
    Severity.ERROR: "failure",
    Severity.WARNING: "warning",
    Severity.NOTICE: "notice",
}
_VERDICT_WORD = {Verdict.SUCCESS: "passed", Verdict.FAILURE: "failed", Verdict.NEUTRAL: "neutral"}
REFUSED_SUMMARY = (
    "GitHub refused this review's summary; the verdict above stands. `registry-bot check` prints "
    "the findings, and those on files are annotations."
)
_CONCLUSION: dict[Verdict, CheckConclusion] = {
    Verdict.SUCCESS: "success",
    Verdict.FAILURE: "failure",
    Verdict.NEUTRAL: "neutral",
}
_KNOWN = frozenset(v.value for v in Verdict)
REVIEWING = CheckRunOutput(title="Reviewing", summary="The review is running.")


@dataclass(frozen=True)
class Suggestion:
    """Lines ``start``..``end`` of a file replaced by ``text`` (GitHub's suggested change)."""

    start: int
    end: int
    text: str


TITLE_LIMIT = github_limits.ANNOTATION_TITLE_CHARS
TITLE_ROOM = TITLE_LIMIT - 30  # ``shorten`` adds an ellipsis and the full length


def to_annotations(findings: Iterable[Finding], gone: Collection[str] = ()) -> list[Annotation]:
    """One annotation per finding that names a file (line 1 when the finding has no line), but not
    on a path the head no longer has (``gone``: deleted, renamed away): GitHub shows an annotation
    on a file the commit lacks on no file (actions/toolkit#470, #2223), so such a finding is in the
    summary's tables only.

    A pre-existing finding is a notice whatever its severity: it is shown, never blocking.
    """
    out = []
    for f in findings:
        if not f.path or f.path in gone:
            continue
        line = f.line or 1
        message = plain(f.message, ANNOTATION_MESSAGE_LIMIT) + (
            f"\n\n{plain(f.hint, 500)}" if f.hint else ""
        )
        level, title = _LEVEL[f.severity], plain(f.rule, 200)
        if f.state is State.UNCHANGED:
            level, title = "notice", f"pre-existing {f.severity.value}: {title}"
        if f.waived is not None:
            level, title = "notice", f"{f.waived.label()}: {title}"
            message += (
                f"\n\n{plain(f.waived.label(), 100)} by {plain(f.waived.granted_by, 100)}: "
                f"{plain(f.waived.reason, 500)}"
            )
        out.append(
            Annotation(
                path=f.path,
                start_line=line,
                end_line=line,
                level=level,
                message=message,
                # GitHub's 255 characters, whatever the prefixes added to the cut rule id
                title=shorten(title, TITLE_ROOM) if len(title) > TITLE_LIMIT else title,
            )
        )
    return out


# -- check run -----------------------------------------------------------------------------------
def start_check(gh: GitHubAPI, pr: PullRequest, delivery: str) -> int:
    """Create the in-progress check run. Its ``external_id`` is the delivery id, so that a job
    recovered after a crash finds (and adopts) the run it created even when it died before learning
    its id."""
    return gh.create_check_run(
        pr.repo, pr.head_sha, CHECK_NAME, "in_progress", external_id=delivery, output=REVIEWING
    )


def pause_check(
    gh: GitHubAPI, repo: str, check_id: int, until: float, secondary: bool = False
) -> None:
    """Say on the check run that the review waits for GitHub's rate limit: still in progress for the
    hourly quota; ``queued`` again, with the reason, for a secondary limit (the installation is
    paused, the review starts over when the pause ends)."""
    at = datetime.fromtimestamp(until, UTC).strftime("%H:%M:%S UTC")
    if secondary:
        gh.update_check_run(
            repo,
            check_id,
            status="queued",
            output=CheckRunOutput(
                title=f"Queued: GitHub's secondary rate limit pauses the bot until {at}",
                summary=f"GitHub asked the bot to slow down (a secondary rate limit) for this "
                f"installation. The review is queued and resumes at {at}, then concludes.",
            ),
        )
        return
    gh.update_check_run(
        repo,
        check_id,
        status="in_progress",
        output=CheckRunOutput(
            title=f"Waiting for GitHub's rate limit (until {at})",
            summary=f"GitHub's API rate limit for this installation is exhausted. The review "
            f"resumes at {at} "
            "and then concludes.",
        ),
    )


def could_not_finish(
    gh: GitHubAPI, repo: str, check_id: int, delivery: str, reason: str, note: str = ""
) -> None:
    """Conclude a review that cannot be done: failure, reason first, with a button to retry. Never
    neutral: GitHub counts a neutral required check as passing, and nothing was reviewed. ``note``:
    the run's text (what GitHub refused beside it)."""
    gh.update_check_run(
        repo,
        check_id,
        status="completed",
        conclusion="failure",
        actions=[RERUN_ACTION],
        output=CheckRunOutput(
            title=f"Could not finish: {reason}"[:255],
            summary=(
                f"The bot could not finish this review (delivery {code(delivery)}): "
                f"{escape(reason)}. "
                "Nothing was decided about the change. Use **Re-run** to try again."
            ),
            text=cut_lines(note, GITHUB_TEXT_LIMIT, "(cut to fit GitHub's size limit)"),
        ),
    )


def concluded_as(report: Report) -> tuple[CheckConclusion, str]:
    """The conclusion and title ``complete_check`` gives ``report``'s run."""
    return _CONCLUSION[report.verdict], headline(report)


def complete_check(
    gh: GitHubAPI,
    repo: str,
    check_id: int,
    report: Report,
    sent: int = 0,
    gone: Collection[str] = (),
    base_sha: str = "",
) -> CheckRunOutput:
    """Conclude the check run with the summary and every annotation, 50 per request, leaving out the
    first ``sent`` (an interrupted attempt sent them: GitHub appends annotations, it would show them
    twice) and those on ``gone`` paths (the head no longer has them: in the summary only). The
    summary's hidden first line names ``base_sha``, the base the verdict judged (``base_line``:
    reconciliation reviews a head again whose pull request's base moved since). Returns the
    concluded title and summary (without annotations)."""
    conclusion, title = concluded_as(report)
    first = f"{base_line(base_sha)}\n" if base_sha else ""
    limit = GITHUB_TEXT_LIMIT - len(first)
    summary = first + render_markdown(report, limit=limit, title=False)
    notes = to_annotations(report.findings, gone)
    if len(notes) > MAX_ANNOTATIONS:
        summary = (
            first
            + render_markdown(report, limit=limit - 200, title=False)
            + (
                f"\n\n> Only the first {MAX_ANNOTATIONS} of {len(notes)} findings are shown as "
                f"annotations.\n"
            )
        )
        notes = notes[:MAX_ANNOTATIONS]
    notes = notes[sent:]
    batches = [
        notes[i : i + ANNOTATIONS_PER_REQUEST]
        for i in range(0, len(notes), ANNOTATIONS_PER_REQUEST)
    ] or [[]]
    for batch in batches[:-1]:
        summary = _send_output(
            gh, repo, check_id, CheckRunOutput(title, summary, annotations=tuple(batch))
        )
    summary = _send_output(
        gh,
        repo,
        check_id,
        CheckRunOutput(title, summary, annotations=tuple(batches[-1])),
        status="completed",
        conclusion=conclusion,
        actions=[RERUN_ACTION],
    )
    return CheckRunOutput(title, summary)


def _send_output(
    gh: GitHubAPI,
    repo: str,
    check_id: int,
    output: CheckRunOutput,
    status: CheckStatus | None = None,
    conclusion: CheckConclusion | None = None,
    actions: Sequence[Mapping[str, str]] = (),
) -> str:
    """Update the run with ``output``; when GitHub refuses the output itself (422: a limit it counts
    otherwise than documented), send it again with a short summary, so that the verdict is concluded
    all the same. Returns the summary sent."""
    update = partial(gh.update_check_run, repo, check_id, status, conclusion, actions=actions)
    base = base_of(output.summary)  # the hidden first line stays
    short = f"{base_line(base)}\n{REFUSED_SUMMARY}" if base else REFUSED_SUMMARY
    try:
        update(output=output)
        return output.summary
    except GitHubError as exc:
        if exc.status != 422 or output.summary == short:
            raise
        log.warning("GitHub refused the check run's summary (%s); sending a short one", exc)
    update(output=CheckRunOutput(output.title, short, annotations=output.annotations))
    return short


def note_on_check(
    gh: GitHubAPI, repo: str, check_id: int, concluded: CheckRunOutput, note: str
) -> None:
    """Add ``note`` to a concluded check run's text, leaving its status and conclusion as they are
    (what the bot could not say in the summary comment, because GitHub refused the comment)."""
    text = cut_lines(note, GITHUB_TEXT_LIMIT, "(cut to fit GitHub's size limit)")
    gh.update_check_run(
        repo, check_id, output=CheckRunOutput(concluded.title, concluded.summary, text=text)
    )


def fail_check(
    gh: GitHubAPI, repo: str, check_id: int, delivery: str, error: BaseException, note: str = ""
) -> None:
    """Conclude a review that failed: failure, with a button to retry; ``note``: the run's text
    (what GitHub refused beside it)."""
    summary = (
        f"The bot hit an internal error while reviewing this pull request (delivery "
        f"{code(delivery)}: {code(type(error).__name__)}). Nothing was decided about the change. "
        f"Use **Re-run** to try "
        "again; if it keeps failing, report the delivery id to the bot's maintainers."
    )
    gh.update_check_run(
        repo,
        check_id,
        status="completed",
        conclusion="failure",
        actions=[RERUN_ACTION],
        output=CheckRunOutput(
            title="The bot hit an internal error",
            summary=summary,
            text=cut_lines(note, GITHUB_TEXT_LIMIT, "(cut to fit GitHub's size limit)"),
        ),
    )


def supersede_check(
    gh: GitHubAPI,
    repo: str,
    check_id: int,
    newer_sha: str,
    listed_other: str = "",
    reviewers: Sequence[str] = (),
    base: tuple[str, str] | None = None,
) -> None:
    """Conclude a run whose commit is no longer the head: ``cancelled``, never ``neutral``. GitHub
    counts a required check as passing when it is successful, skipped or neutral
    (docs/hostile-input.md), and this commit was not reviewed: a force-push back to it must not find
    a passing run waiting. ``listed_other``: the head is the same, but GitHub's list of its files
    was of another commit (``bot.github.listing``), so nothing was judged either; ``reviewers``:
    the head is the same, but these reviewers changed the reviews the App was about to approve on
    (their review's delivery, or a reconciliation round, has it reviewed again); ``base``: the
    head is the same, but the base branch changed (old, new) during the review: what was judged
    against the old base's CODEOWNERS is not the change into the new one."""
    output = CheckRunOutput(
        title="Superseded by a newer push",
        summary=f"The pull request moved to {code(newer_sha[:12])} during the review; that "
        f"commit is "
        "reviewed instead.",
    )
    if listed_other:
        output = CheckRunOutput(
            title="Superseded: the files listed were another commit's",
            summary=f"{listed_other}. Nothing was judged; the bot reviews this commit again.",
        )
    if reviewers:
        output = CheckRunOutput(
            title="Superseded: the reviews changed during the review",
            summary=f"{', '.join(code('@' + r) for r in reviewers)} changed their review while "
            "the bot reviewed this commit. Nothing was judged, approved or merged; the bot reviews "
            "this commit again with the reviews as they are now.",
        )
    if base is not None:
        output = CheckRunOutput(
            title="Superseded: the base branch changed",
            summary=f"The pull request's base changed from {code(base[0])} to {code(base[1])} "
            "while the bot reviewed it. Nothing was judged, approved or merged; the bot reviews "
            f"it again against {code(base[1])}.",
        )
    _cancel(gh, repo, check_id, output)


def close_check(gh: GitHubAPI, repo: str, check_id: int) -> None:
    """Conclude the run of a review whose pull request was closed before it finished:
    ``cancelled`` (not passing), so that no run stays in progress; reopening it reviews it again."""
    output = CheckRunOutput(
        title="The pull request was closed",
        summary="It was closed before the review finished; nothing was judged. Reopening it "
        "reviews it again.",
    )
    _cancel(gh, repo, check_id, output)


def _cancel(gh: GitHubAPI, repo: str, check_id: int, output: CheckRunOutput) -> None:
    """Conclude a run nothing was judged in: ``cancelled``, which no required check counts as
    passing."""
    gh.update_check_run(repo, check_id, status="completed", conclusion="cancelled", output=output)


# -- pull request review -------------------------------------------------------------------------
def inline_comment_body(f: Finding, suggestion: Suggestion | None = None) -> str:
    body = (
        f"**{f.severity.value}** {code(f.rule, table=False)}: "
        f"{escape(f.message, INLINE_MESSAGE_LIMIT)}"
    )
    if f.waived is not None:
        body += (
            f" (**{f.waived.label()}** by {escape(f.waived.granted_by, 100)}: "
            f"{escape(f.waived.reason, 500)})"
        )
    body += f"\n\n{escape(f.hint, MESSAGE_LIMIT)}" if f.hint else ""
    if suggestion is not None and f.fix is not None:
        fence = backtick_fence(suggestion.text, 3)
        body += (
            f"\n\nSuggested fix "
            f"({escape(f.fix.description, 300)}):\n\n{fence}suggestion\n{suggestion.text}{fence}"
        )
    elif f.fix is not None:
        body += f"\n\n`registry-bot fix` applies the fix: {escape(f.fix.description, 300)}."
    return body


def suggestion_for(f: Finding, changes: ChangeSet) -> Suggestion | None:
    """The finding's fix as a GitHub suggestion: contiguous whole-line edits of its own file, on
    lines of one hunk of the diff (a suggestion replaces exactly the lines it is attached to), with
    nothing invisible in it."""
    if f.fix is None or not f.fix.edits:
        return None
    edits = sorted(f.fix.edits, key=lambda e: e.start_line)
    if any(e.path != f.path or e.end_line < e.start_line for e in edits):
        return None
    if any(b.start_line != a.end_line + 1 for a, b in pairwise(edits)):
        return None
    start, end = edits[0].start_line, edits[-1].end_line
    text = "".join(e.text for e in edits)
    # A suggestion is committed as is, so it is never escaped: one holding a control, bidi or
    # invisible character is not offered (the fix command still applies it, showing the diff).
    if UNSAFE_IN_TEXT.search(text) or len(text) > INLINE_MESSAGE_LIMIT:
        return None
    if start == end and not changes.commentable(f.path, end):
        return None
    if start < end and not changes.commentable_range(f.path, start, end):
        return None
    return Suggestion(start, end, text)


def plan_review(
    report: Report, changes: ChangeSet, limit: int
) -> tuple[list[InlineComment], list[Finding]]:
    """Inline comments for findings on diff lines (at most ``limit``); the rest go in the body.

    A finding with a fix that fits the diff carries it as a suggestion, attached to the lines it
    replaces.
    """
    inline: list[InlineComment] = []
    rest: list[Finding] = []
    seen: set[tuple[str, int, str]] = set()
    for f in report.current():  # pre-existing findings stay in the check run, off the diff
        if f.line is not None and changes.commentable(f.path, f.line) and len(inline) < limit:
            suggestion = suggestion_for(f, changes)
            if suggestion is None:
                comment = InlineComment(f.path, f.line, inline_comment_body(f))
            else:
                comment = InlineComment(
                    f.path,
                    suggestion.end,
                    inline_comment_body(f, suggestion),
                    suggestion.start if suggestion.start < suggestion.end else None,
                )
            if (comment.path, comment.line, comment.body) not in seen:
                seen.add((comment.path, comment.line, comment.body))
                inline.append(comment)
            continue
        rest.append(f)
    return inline, rest


def review_body(report: Report, rest: Sequence[Finding], sha: str) -> str:
    lines = [
        f"**{headline(report)}** for {code(sha[:12])}. Details are in the "
        f"**{CHECK_NAME}** check run."
    ]
    if rest:
        lines += ["", "Findings not on a line of this diff:", ""]
        note = "(list cut to fit GitHub's size limit; findings on files are also annotations)"
        kept, left_out = fit(
            [Row(partial(_review_line, f), f.message) for f in rest],
            REVIEW_BODY_LIMIT - utf8_size("\n".join(lines)) - utf8_size(note) - 100,
        )
        lines += kept
        if left_out:
            lines += ["", f"{left_out:,} more not shown {note}"]
    return cut_lines("\n".join(lines), REVIEW_BODY_LIMIT, "(cut to fit GitHub's size limit)")


def _review_line(f: Finding, cap: int) -> str:
    return (
        f"- {f.severity.value} {code(f.rule, table=False)} "
        f"{code(f.path or '(repository)', table=False)}"
        + (f" line {f.line}" if f.line else "")
        + f": {escape(f.message, cap)}"
        + (f" ({f.waived.label()})" if f.waived is not None else "")
    )


def publish_review(
    gh: GitHubAPI,
    pr: PullRequest,
    report: Report,
    changes: ChangeSet,
    config: Config,
    reviews: Sequence[ReviewInfo] | None = None,
    refusals: Refusals | None = None,
) -> int | None:
    """Dismiss the bot's blocking reviews of older commits, then post this head's review once.

    ``reviews``: the pull request's reviews as read for this review (listed again when not given).
    Only the bot's own matter here, and no other job reviews this pull request meanwhile (the
    queue's lock). A dismissal GitHub refuses is recorded in ``refusals`` (raised without one) and
    the review is still posted.
    """
    me = gh.bot_login()
    if reviews is None:
        reviews = gh.list_reviews(pr.repo, pr.number)
    for r in reviews:
        if (
            r.user == me
            and r.commit_id != pr.head_sha
            and r.state in ("CHANGES_REQUESTED", "APPROVED")
        ):

            def dismiss(r: ReviewInfo = r) -> None:
                gh.dismiss_review(
                    pr.repo, pr.number, r.id, f"Superseded by the review of {pr.head_sha[:12]}."
                )

            if refusals is None:
                dismiss()
            else:
                refusals.done("dismiss", dismiss)
    if not report.current():
        return None
    inline, rest = plan_review(report, changes, config.review.max_inline_comments)
    body = review_body(report, rest, pr.head_sha)
    if any(r.user == me and r.commit_id == pr.head_sha and r.body == body for r in reviews):
        return None  # a re-run or a redelivery: this review is already there
    # an inline comment belongs to a review: none without one
    if any(r.user == me for r in reviews):
        posted = {
            (c.path, c.line, c.body)
            for c in gh.list_review_comments(pr.repo, pr.number)
            if c.user == me
        }
        inline = [c for c in inline if (c.path, c.line, c.body) not in posted]
    event = config.review.event_on_errors if report.has_errors else "COMMENT"
    if event not in ("REQUEST_CHANGES", "COMMENT"):
        event = "REQUEST_CHANGES"
    return gh.create_review(pr.repo, pr.number, pr.head_sha, event, body, inline)  # type: ignore[arg-type]


# -- summary comment -----------------------------------------------------------------------------
def waiting_line(report: Report) -> str:
    """A hidden line naming the entries waiting on their owners' approval (names the folder rule
    allows only). Always written, empty when nothing waits, as the third line of the summary
    comment: the only place ``waiting_of`` reads."""
    names = [e for e in report.required_approvals() if _ENTRY_NAME.fullmatch(e)]
    return f"{WAITING_MARKER}{''.join(n + ' ' for n in names)}-->\n"


def waiting_of(body: str) -> list[str]:
    """The entries a summary comment says wait on their owners: its ``waiting_line``, read at its
    place in the header (after the summary and verdict markers), never elsewhere in the body,
    whose quoted file names may hold any text."""
    lines = body.split("\n", 3)
    if len(lines) < 4 or lines[0] != SUMMARY_MARKER:
        return []
    line = lines[2]
    if not (line.startswith(WAITING_MARKER) and line.endswith("-->")):
        return []  # a comment from before the line was always written: nothing waited
    return [n for n in line[len(WAITING_MARKER) : -3].split() if _ENTRY_NAME.fullmatch(n)]


def _verdict_of(body: str) -> str | None:
    start = body.find("<!-- registry-bot:verdict=")
    if start < 0:
        return None
    return (
        body[start + len("<!-- registry-bot:verdict=") :]
        .split(" ", 1)[0]
        .split("-->", 1)[0]
        .strip()
    )


def publish_summary(gh: GitHubAPI, pr: PullRequest, report: Report) -> int:
    """Edit the one summary comment (found by its marker); on a verdict flip also post a short
    notice."""
    me = gh.bot_login()
    verdict = report.verdict.value
    header = f"{SUMMARY_MARKER}\n<!-- registry-bot:verdict={verdict} -->\n" + waiting_line(report)
    footer = (
        f"\n\n<sub>Reviewed commit {code(pr.head_sha[:12])}. Comment `/registry-bot recheck` to "
        f"run again.</sub>\n"
    )
    body = (
        header
        + render_markdown(report, limit=GITHUB_TEXT_LIMIT - utf8_size(header) - utf8_size(footer))
        + footer
    )
    comments = gh.list_issue_comments(pr.repo, pr.number)
    mine = [c for c in comments if c.user == me and SUMMARY_MARKER in c.body]
    if not mine:
        return gh.create_issue_comment(pr.repo, pr.number, body)
    current = mine[-1]
    previous = _verdict_of(current.body)
    if current.body != body:
        gh.edit_issue_comment(pr.repo, current.id, body)
    flip = FLIP_MARKER.format(sha=pr.head_sha)
    if (
        previous in _KNOWN
        and previous != verdict
        and not any(c.user == me and flip in c.body for c in comments)
    ):
        gh.create_issue_comment(
            pr.repo,
            pr.number,
            (
                f"{flip}\nThe registry review changed from **{_VERDICT_WORD[Verdict(previous)]}** "
                f"to **{_VERDICT_WORD[report.verdict]}** at {code(pr.head_sha[:12])}; the summary "
                f"above is updated."
            ),
        )
    return current.id
