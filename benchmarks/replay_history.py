"""Replay the real OpenLineage history: every merged commit reviewed as the pull request it was.

Prints the per-commit table (new errors, pre-existing, fixed, the rules of the new errors) and the
totals, in Markdown, as docs/fairness.md shows it.
Usage: python benchmarks/replay_history.py [--bundle PATH | --repo PATH] [--all-commits]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BUNDLE = ROOT.parent / "shared/corpus/openlineage-history/openlineage-spec-history.bundle"


def main() -> int:
    from bot.review.history import replay, table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=BUNDLE, help="a git bundle of the history")
    parser.add_argument("--repo", type=Path, help="an existing (bare) clone instead of the bundle")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            repo = Path(tmp) / "history.git"
            subprocess.run(
                ["git", "clone", "-q", "--bare", str(args.bundle), str(repo)], check=True
            )
        rows = list(replay(repo))
    sys.stdout.write(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
