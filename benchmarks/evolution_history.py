"""Schema evolution on the real history: how maintainers bumped each class of change, and what it
costs.

For every merged commit that changes a versioned facet schema (same facet ``$id`` on both sides),
the change is classified (bot/model/evolution/classes.py) and its actual bump read from the two
``$id``s. Prints, per class that set the digit, the bumps maintainers used; for an optional field
added to an open object, the count behind the default of ``versions.open_model_optional_add``; how
many merged commits each policy would block; and the time of one comparison with its witness search.
Usage: python benchmarks/evolution_history.py [--bundle PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BUNDLE = (
    next(p / "shared" for p in ROOT.parents if (p / "shared").is_dir())
    / "corpus/openlineage-history/openlineage-spec-history.bundle"
)


def main() -> int:
    from bot.core.changes import ChangeSet, Status
    from bot.core.config import Config
    from bot.core.snapshot import GitSnapshot
    from bot.model.evolution.classes import Bump
    from bot.model.evolution.schema_diff import actual_bump
    from bot.model.evolution.verdict import compare
    from bot.model.registry import Registry
    from bot.model.schemas import SchemaStore
    from bot.review.engine import review
    from bot.review.history import commits

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    args = parser.parse_args()
    by_class: dict[str, Counter[str]] = {}
    blocked: dict[str, set[str]] = {"addition": set(), "revision": set()}
    seconds: list[float] = []
    reviews: list[tuple[float, str]] = []  # whole reviews of commits that change a facet version
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "history.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(args.bundle), str(repo)], check=True)
        for sha, subject, parent in commits(repo):
            if parent is None:
                continue
            with GitSnapshot(repo, parent) as base, GitSnapshot(repo, sha) as head:
                changes = ChangeSet.from_git(repo, base.commit, head.commit)
                config = Config()
                old_reg, new_reg = Registry(base, config), Registry(head, config)
                old_store, new_store = SchemaStore(base, config), SchemaStore(head, config)
                old_by_path = {s.path: s for s in old_reg.schemas()}
                for schema in new_reg.schemas():
                    change = changes.get(schema.path)
                    if change is None or (change.status is Status.ADDED and not change.old_path):
                        continue
                    old = old_by_path.get(change.old_path or schema.path)
                    if (
                        old is None
                        or old.version is None
                        or schema.version is None
                        or old.value == schema.value
                    ):
                        continue
                    if (
                        old.schema_id
                        and schema.schema_id
                        and old.schema_id.rsplit("/", 1)[-1] != schema.schema_id.rsplit("/", 1)[-1]
                    ):
                        continue  # a new facet
                    actual = (
                        actual_bump(old.version, schema.version)
                        if old.version != schema.version
                        else Bump.NONE
                    )

                    def resolver(store: SchemaStore) -> object:
                        return lambda url: (
                            found.schema if (found := store.lookup(url)) is not None else None
                        )

                    started = time.perf_counter()
                    evolution = compare(
                        old.value,
                        schema.value,
                        resolver(old_store),
                        resolver(new_store),  # type: ignore[arg-type]
                        Bump.REVISION,
                    )
                    seconds.append(time.perf_counter() - started)
                    needed = evolution.backward
                    top = sorted({c.kind for c in needed.reasons})
                    for kind in top:
                        by_class.setdefault(kind, Counter())[
                            actual.name if actual is not None else "DECREASED"
                        ] += 1
                    lowered = compare(
                        old.value,
                        schema.value,
                        resolver(old_store),
                        resolver(new_store),  # type: ignore[arg-type]
                        Bump.ADDITION,
                        witnesses=(False, False),
                    ).backward.bump
                    for policy, digit in (("revision", needed.bump), ("addition", lowered)):
                        if actual is not None and digit > actual:
                            blocked[policy].add(f"{sha[:7]} {subject[:50]}")
                    if actual is not Bump.NONE and not any(s == sha[:7] for _, s in reviews):
                        started = time.perf_counter()
                        review(head=head, base=base, changes=changes)
                        reviews.append((time.perf_counter() - started, sha[:7]))
    print("| class that set the digit | bumps maintainers used |")
    print("| --- | --- |")
    for kind, counts in sorted(by_class.items()):
        print(f"| `{kind}` | {', '.join(f'{k} x{n}' for k, n in counts.most_common())} |")
    print()
    for policy, rows in blocked.items():
        print(
            f"versions.open_model_optional_add: {policy} -> {len(rows)} merged commit(s) needing "
            f"more than they bumped" + "".join(f"\n  {r}" for r in sorted(rows))
        )
    seconds.sort()
    if seconds:
        print(
            f"\n{len(seconds)} comparisons with witness search: median "
            f"{seconds[len(seconds) // 2] * 1000:.1f} ms, max {seconds[-1] * 1000:.1f} ms"
        )
    print(f"held-out #4092 rebuilt on today's corpus, whole review: {_held_out_review():.2f} s")
    if reviews:
        reviews.sort()
        print(
            f"{len(reviews)} whole reviews of a commit changing a facet version: median "
            f"{reviews[len(reviews) // 2][0]:.2f} s, max {reviews[-1][0]:.2f} s ({reviews[-1][1]})"
        )
    return 0


def _held_out_review() -> float:
    """#4092 rebuilt from the published copies in a git copy of today's corpus; the best of three
    reviews."""
    import shutil

    from bot.core.changes import ChangeSet
    from bot.core.snapshot import GitSnapshot
    from bot.review.engine import review

    corpus = BUNDLE.parent.parent / "openlineage"
    mirror = "website/static/spec/facets"
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "ol"
        shutil.copytree(corpus, repo)

        def git(*args: str) -> None:
            subprocess.run(
                ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b", *args],
                check=True,
                capture_output=True,
            )

        git("init", "-q", "-b", "main")
        head = {}
        for name, new in (
            ("IcebergScanReportInputDatasetFacet.json", "1-0-1"),
            ("IcebergCommitReportOutputDatasetFacet.json", "1-0-2"),
        ):
            path = repo / "spec/registry/iceberg/facets" / name
            path.write_text((repo / mirror / "1-0-0" / name).read_text())
            head[path] = (repo / mirror / new / name).read_text()
            (repo / mirror / new / name).unlink()
        git("add", "-A")
        git("commit", "-q", "-m", "base")
        git("checkout", "-q", "-b", "pr")
        for path, text in head.items():
            path.write_text(text)
        git("commit", "-q", "-am", "#4092")
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            with GitSnapshot(repo, "main") as base, GitSnapshot(repo, "pr") as pr:
                review(head=pr, base=base, changes=ChangeSet.from_git(repo, base.commit, pr.commit))
            best = min(best, time.perf_counter() - started)
        return best


if __name__ == "__main__":
    raise SystemExit(main())
