"""``registry-bot fix``: the unified diff of every mechanical fix the checks know; ``--write``
applies it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_ERRORS, EXIT_OK, UsageError, verdict

if TYPE_CHECKING:
    from bot.core.changes import ChangeSet
    from bot.core.snapshot import Snapshot

LAYOUT_RULES = ("format/json",)  # fixes that change a file's layout, never its content
HELP = "print the diff of every available fix of a working tree (--write applies it)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", help="the repository's working tree")
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="optional: fix only these files or folders (relative to REPO or to the current "
        "folder; default: the whole registry)",
    )
    parser.add_argument(
        "--write", action="store_true", help="write the fixes instead of printing the diff"
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="write into files with uncommitted changes (refused by default)",
    )
    parser.add_argument(
        "--base",
        metavar="REV",
        help="judge the working tree as a change from REV (git): adds the fixes that only a change "
        "has, such as a facet's $id version bump, and fixes only what the change introduces",
    )
    parser.add_argument("--author", help="GitHub login that a new entry's CODEOWNERS names")
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="RULE",
        help="fix only findings of this rule (repeatable; default: every rule)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when there is anything to fix (with or without --write)",
    )
    parser.add_argument(
        "--only-layout",
        action="store_true",
        help=f"only the layout fixes ({', '.join(LAYOUT_RULES)}), which never change what a file "
        "means (the pre-commit hook's default)",
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="every fix, also with --only-layout (for the pre-commit hook's args)",
    )


def run(args: argparse.Namespace) -> int:
    from bot.cli.commands import _inputs
    from bot.core.config import load_config
    from bot.core.findings import Finding
    from bot.core.snapshot import DirSnapshot, SnapshotError
    from bot.review.checks import all_rules
    from bot.review.compose import ReviewRequest, run_review
    from bot.review.fixes import fix_until_done, unified_diff

    repo = _inputs.folder(args.repo)
    unknown = [rule for rule in args.rule if rule not in all_rules()]
    if unknown:
        raise UsageError(f"--rule {unknown[0]}: no such rule (registry-bot rules lists them)")
    author = _inputs.login(args.author, "--author")
    root = DirSnapshot(repo)
    _inputs.registry_folder([root], str(repo))
    config, _ = load_config(root)
    scope = [_relative(repo, p) for p in args.paths]
    watched = config.watched()

    layout_only = args.only_layout and not args.semantic

    def allowed(f: Finding) -> bool:
        if (
            f.fix is None
            or (args.rule and f.rule not in args.rule)
            or (layout_only and f.rule not in LAYOUT_RULES)
        ):
            return False
        return all(
            _inside(e.path, watched) and (not scope or _inside(e.path, scope)) for e in f.fix.edits
        )

    base = _base(repo, args.base) if args.base else None
    if base is not None:
        config, _ = load_config(base)

    def findings_of(tree: Snapshot) -> list[Finding]:
        if base is None:
            return [
                f
                for f in run_review(ReviewRequest(head=tree, author=author, config=config)).findings
                if allowed(f)
            ]
        changes = _changes(repo, args.base, base, tree)
        report = run_review(
            ReviewRequest(head=tree, base=base, changes=changes, author=author, config=config)
        )
        return [f for f in report.current() if allowed(f)]

    try:
        changed, fixed = fix_until_done(root, findings_of)
        originals = {path: root.read(path) for path in changed}
    except (SnapshotError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if args.write:
        dirty = [] if args.allow_dirty else _dirty(repo, sorted(changed))
        if dirty:
            raise UsageError(
                f"uncommitted changes in {', '.join(dirty)}; commit or stash them, or pass "
                f"--allow-dirty"
            )
        _inputs.writable_in(repo, sorted(changed))  # every file checked before the first write
        for path, data in changed.items():
            target = repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    else:
        verdict(EXIT_ERRORS if args.check and changed else EXIT_OK)
        for path in sorted(changed):
            old = originals[path]
            sys.stdout.write(
                unified_diff(
                    path,
                    None if old is None else old.decode("utf-8"),
                    changed[path].decode("utf-8"),
                )
            )
    rules = sorted({f.rule for f in fixed})
    verb = "fixed" if args.write else "fixable"
    print(
        f"{len(fixed)} finding(s) {verb} in {len(changed)} file(s)"
        + (f": {', '.join(rules)}" if rules else ""),
        file=sys.stderr,
    )
    return EXIT_ERRORS if args.check and changed else EXIT_OK


def _relative(repo: Path, path: str) -> str:
    """``path`` as a repository-relative path ("" for the whole repository): taken relative to the
    current folder when it exists there, else relative to REPO."""
    root = repo.resolve()
    here = Path(path).resolve()
    full = here if here.exists() else (root / path).resolve()
    if not full.exists():
        raise UsageError(f"{path}: no such file or folder in {repo}")
    try:
        rel = full.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{path} is not inside {repo}") from None
    return "" if rel == "." else rel


def _inside(path: str, folders: list[str] | tuple[str, ...]) -> bool:
    return any(not f or path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _dirty(repo: Path, paths: list[str]) -> list[str]:
    """Files whose working copy differs from git's index, or that git does not track (all of them
    when ``repo`` is not in a git repository)."""
    if not paths:
        return []
    try:
        subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--git-dir"],
            capture_output=True,
            check=True,
            timeout=60,
        )
    except subprocess.CalledProcessError:
        raise UsageError(
            f"{repo} is not in a git repository: fix --write changes only files git tracks, so "
            f"that "
            "every change can be seen and undone (pass --allow-dirty to write anyway)"
        ) from None
    except (OSError, subprocess.SubprocessError):
        return []
    try:
        out = subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--",
                *paths,
            ],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    dirty = []
    for record in out.decode("utf-8", "replace").split("\0"):
        if len(record) > 3 and (record[1] != " " or record[:2] == "??"):
            dirty.append(record[3:])
    return dirty


def _base(repo: Path, rev: str) -> Snapshot:
    from bot.cli.commands import _inputs

    return _inputs.revision(_inputs.git_repository(str(repo)), rev, "--base")


def _changes(repo: Path, rev: str, base: Snapshot, tree: Snapshot) -> ChangeSet:
    """The working tree (with the fixes so far) against ``rev``."""
    from bot.core.worktree import worktree_changes
    from bot.review.fixes import Overlay

    return worktree_changes(
        repo, rev, base, tree, set(tree.changed) if isinstance(tree, Overlay) else None
    )
