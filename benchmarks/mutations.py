"""Recall on the real history: plant each kind of defect (tests/mutations.py) into real merged
commits and count how many get a new blocking error from their rule; every control (the same change
made correctly) must pass. Prints one Markdown row per kind, then the review times.

Usage: python benchmarks/mutations.py [--repo PATH] [--commits N]
  (the N newest commits that pass on their own and leave something to plant into; default 6)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from bot.core.findings import State, Verdict
    from bot.review.history import commits
    from tests.history import BUNDLE
    from tests.mutations import KINDS, targets
    from tests.planting import blocking_rules, plant, review_pr

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repo", type=Path, help="a bare clone of the history (default: cloned from the bundle)"
    )
    parser.add_argument("--commits", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            repo = Path(tmp) / "history.git"
            subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
        chosen: list[tuple[str, str]] = []
        for sha, subject, parent in reversed(commits(repo)):
            if len(chosen) == args.commits:
                break
            if (
                parent is not None
                and targets(repo, sha)
                and review_pr(repo, sha).verdict is Verdict.SUCCESS
            ):
                chosen.append((sha, subject))
        seconds: list[float] = []
        lines = [
            "| kind | new | rule | planted | blocked by the rule | controls passed |",
            "| --- | --- | --- | ---: | ---: | ---: |",
        ]
        total = caught_total = 0
        for kind in KINDS:
            planted = caught = passed = 0
            for sha, _ in chosen:
                edits = kind.plant(repo, sha)
                if edits is None:
                    continue
                planted += 1
                for number, change in enumerate(edits):
                    started = time.perf_counter()
                    report = review_pr(repo, plant(repo, sha, change))
                    seconds.append(time.perf_counter() - started)
                    new = {f.rule for f in report.findings if f.state is State.NEW}
                    # a notice kind (``blocks`` false) is caught when the change passes with it
                    if number == 0:
                        caught += (
                            kind.rule in blocking_rules(report)
                            if kind.blocks
                            else kind.rule in new and report.verdict is Verdict.SUCCESS
                        )
                    else:
                        passed += report.verdict is Verdict.SUCCESS and kind.rule not in new
            total, caught_total = total + planted, caught_total + caught
            lines.append(
                f"| {kind.name} | {'yes' if kind.new else 'no'} | `{kind.rule}` | {planted} | "
                f"{caught} | {passed} |"
            )
    subjects = ", ".join(s.rsplit(" ", 1)[-1] for _, s in chosen)
    lines += [
        "",
        f"{len(chosen)} commits ({subjects}); recall {caught_total}/{total}; {len(seconds)} "
        f"reviews: median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s.",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
