"""Replay a repository's history commit by commit, each commit reviewed as the pull request it was.

This is the fairness test of the bot: every merged pull request of a real registry is a change that
maintainers accepted, so an error on one is either a defect the change introduced or a false alarm.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.core.changes import ChangeSet
from bot.core.config import Config
from bot.core.findings import Finding, Severity, State
from bot.core.snapshot import GitSnapshot, run_git
from bot.review.compose import ReviewRequest, run_review


@dataclass(frozen=True)
class CommitReview:
    """The review of one commit against its first parent."""

    commit: str
    subject: str
    findings: tuple[Finding, ...] = ()
    fixed: tuple[Finding, ...] = ()
    crash: str | None = None
    seconds: float = 0.0
    blocking: tuple[Finding, ...] = field(default=())

    def count(self, state: State) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR and f.state is state)

    @property
    def new_errors(self) -> int:
        return self.count(State.NEW)

    @property
    def pre_existing_errors(self) -> int:
        return self.count(State.UNCHANGED)

    @property
    def fixed_errors(self) -> int:
        return sum(1 for f in self.fixed if f.severity is Severity.ERROR)


def commits(repo: str | os.PathLike[str], rev: str = "HEAD") -> list[tuple[str, str, str | None]]:
    """``(sha, subject, first parent)`` of every commit reachable from ``rev``, oldest first."""
    out = run_git(repo, "log", "--reverse", "--format=%H%x00%P%x00%s", rev).decode(
        "utf-8", "replace"
    )
    rows = []
    for line in out.splitlines():
        sha, parents, subject = line.split("\x00", 2)
        rows.append((sha, subject, parents.split()[0] if parents else None))
    return rows


def replay(
    repo: str | os.PathLike[str],
    rev: str = "HEAD",
    config: Config | None = None,
    author: str | None = None,
) -> Iterator[CommitReview]:
    """Review every commit with a parent as a pull request from its first parent (by ``author``,
    when known: the owners' approval is then judged)."""
    for sha, subject, parent in commits(repo, rev):
        if parent is None:
            continue
        started = time.perf_counter()
        try:
            with GitSnapshot(repo, parent) as base, GitSnapshot(repo, sha) as head:
                changes = ChangeSet.from_git(repo, base.commit, head.commit)
                report = run_review(
                    ReviewRequest(
                        head=head, base=base, changes=changes, config=config, author=author
                    )
                )
        except Exception as exc:  # noqa: BLE001 - the replay reports a crash instead of stopping
            yield CommitReview(
                sha,
                subject,
                crash=f"{type(exc).__name__}: {exc}",
                seconds=time.perf_counter() - started,
            )
            continue
        yield CommitReview(
            sha,
            subject,
            report.findings,
            report.fixed,
            seconds=time.perf_counter() - started,
            blocking=tuple(f for f in report.findings if report.is_blocking(f)),
        )


def table(rows: list[CommitReview]) -> str:
    """The per-commit table (only commits with errors of any state) and the totals, as Markdown."""
    lines = [
        "| commit | subject | new errors | pre-existing | fixed | rules of the new errors |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        if not (r.new_errors or r.pre_existing_errors or r.fixed_errors or r.crash):
            continue
        rules = Counter(
            f.rule for f in r.findings if f.severity is Severity.ERROR and f.state is State.NEW
        )
        cell = r.crash or ", ".join(
            f"{rule} x{n}" if n > 1 else rule for rule, n in sorted(rules.items())
        )
        subject = r.subject.replace("|", "\\|")[:70]
        lines.append(
            f"| {r.commit[:7]} | {subject} | {r.new_errors} | {r.pre_existing_errors} | "
            f"{r.fixed_errors} | {cell} |"
        )
    blocked = sum(1 for r in rows if r.blocking)
    slowest = max(rows, key=lambda r: r.seconds, default=None)
    lines += [
        "",
        f"{len(rows)} commits replayed in {sum(r.seconds for r in rows):.1f} s "
        f"(slowest review {slowest.seconds if slowest else 0:.2f} s, "
        f"{slowest.commit[:7] if slowest else '-'}): {sum(1 for r in rows if r.crash)} crashed, "
        f"{blocked} blocked, {sum(r.new_errors for r in rows)} new errors, "
        f"{sum(r.pre_existing_errors for r in rows)} pre-existing, "
        f"{sum(r.fixed_errors for r in rows)} fixed.",
    ]
    return "\n".join(lines) + "\n"
