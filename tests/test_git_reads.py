"""A review reads git with as few processes as it can, and reads the same thing as before.

``ChangeSet.from_git`` lists a change with one ``git diff --raw -M`` (statuses, renames, and the
modes that mark symlinks and submodules), where it took a ``--name-status -M`` and a ``--raw
--no-renames``; the two answers are compared here with what those two commands say on a change that
has every kind of record. Both sides of a review share one ``cat-file --batch`` and one read of the
repository's partial-clone settings, and a complete clone lists its sizes with ``ls-tree -l``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.core.changes import ChangeSet, Status
from bot.core.snapshot import GitSnapshot, UnknownRevision
from tests.gitrepo import GIT_ENV, Repo, git

NOT_FILES = {"120000": "a symlink", "160000": "a submodule"}


def every_kind_of_change(tmp_path: Path) -> Repo:
    """main, then ``pr``: a modification, an addition, a deletion, a rename with an edit, a file
    turned into a symlink, a symlink renamed, a submodule added and one removed."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "kept.json").write_text('{"a": 1}\n')
    (source / "gone.json").write_text('{"gone": true}\n')
    (source / "old name.json").write_text("".join(f'{{"line": {n}}}\n' for n in range(40)))
    (source / "becomes-link.json").write_text('{"b": 2}\n')
    (source / "link-before").symlink_to("kept.json")
    repo = Repo.from_folder(source, tmp_path / "repo")
    submodule = git(repo.path, "rev-parse", "HEAD")  # any commit id serves as a gitlink
    git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{submodule},vendored")
    git(repo.path, "commit", "-q", "-m", "a submodule")
    git(repo.path, "checkout", "-q", "-B", "pr")
    repo.write("kept.json", '{"a": 2}\n')
    repo.write("added.json", '{"new": true}\n')
    repo.delete("gone.json")
    (repo.path / "dir").mkdir()
    git(repo.path, "mv", "old name.json", "dir/new name.json")
    repo.write("dir/new name.json", "".join(f'{{"line": {n}}}\n' for n in range(41)))
    repo.delete("becomes-link.json")
    (repo.path / "becomes-link.json").symlink_to("kept.json")
    git(repo.path, "mv", "link-before", "link-after")
    git(repo.path, "add", "-A")
    git(repo.path, "update-index", "--force-remove", "vendored")
    git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{submodule},vendored-again")
    git(repo.path, "commit", "-q", "-m", "every kind of change")
    return repo


def test_one_raw_diff_lists_what_name_status_and_a_raw_diff_without_renames_listed(
    tmp_path: Path,
) -> None:
    repo = every_kind_of_change(tmp_path)
    changes = ChangeSet.from_git(repo.path, "main", "pr")
    # the oracle: the two commands the listing took before
    status = git(repo.path, "diff", "--name-status", "-M", "-z", "main", "pr").split("\x00")
    expected: dict[str, tuple[str, str | None]] = {}
    i = 0
    while i < len(status) and status[i]:
        if status[i][0] in "RC":
            expected[status[i + 2]] = (status[i][0], status[i + 1])
            i += 3
        else:
            expected[status[i + 1]] = (status[i][0], None)
            i += 2
    letters = {Status.ADDED: "A", Status.DELETED: "D", Status.MODIFIED: "M", Status.RENAMED: "R"}
    listed = {
        f.path: ("T" if expected.get(f.path, ("",))[0] == "T" else letters[f.status], f.old_path)
        for f in changes.files
    }
    assert listed == expected
    assert {"R"} <= {code for code, _ in expected.values()}  # the change has a rename
    raw = git(repo.path, "diff", "--raw", "--no-renames", "-z", "main", "pr").split("\x00")
    base: dict[str, str] = {}
    head: dict[str, str] = {}
    for meta, path in zip(raw[0::2], raw[1::2], strict=False):
        old_mode, new_mode = meta.lstrip(":").split()[:2]
        if old_mode in NOT_FILES:
            base[path] = NOT_FILES[old_mode]
        if new_mode in NOT_FILES:
            head[path] = NOT_FILES[new_mode]
    assert base and head  # symlinks and submodules on both sides
    for f in changes.files:
        reason = (f.status is not Status.DELETED and head.get(f.path)) or base.get(
            f.old_path or f.path
        )
        if reason:
            assert f.unread is not None and f.unread.startswith(reason), f
        else:
            assert not f.unread, f
    renamed = changes.get("dir/new name.json")
    assert renamed is not None and renamed.old_path == "old name.json" and renamed.patch


def test_both_sides_share_one_cat_file_and_a_complete_clone_lists_sizes_with_its_tree(
    tmp_path: Path,
) -> None:
    repo = every_kind_of_change(tmp_path)
    base, head = GitSnapshot(repo.path, "main"), GitSnapshot(repo.path, "pr")
    assert base._shared is head._shared
    assert base.read("kept.json") == b'{"a": 1}\n' and head.read("kept.json") == b'{"a": 2}\n'
    process = base._shared._cat
    assert process is not None and process.poll() is None
    assert head.size("dir/new name.json") == len(head.read("dir/new name.json") or b"")
    assert head.size("vendored-again") is None and "vendored-again" in head.submodules
    base.close()
    assert process.poll() is None  # the head still reads through it
    assert head.read("added.json") == b'{"new": true}\n'
    head.close()
    assert process.wait(timeout=5) == 0
    again = GitSnapshot(repo.path, "pr")  # a new review starts its own
    assert again._shared is not base._shared and again.read("added.json") == b'{"new": true}\n'
    again.close()


def test_a_revision_resolves_through_the_shared_cat_file_as_rev_parse_resolves_it(
    tmp_path: Path,
) -> None:
    repo = every_kind_of_change(tmp_path)
    subprocess.run(["git", "-C", str(repo.path), "tag", "-a", "-m", "v", "v1", "pr"], check=True)
    for rev in ("main", "pr", "pr^", "pr~0", "v1", "HEAD"):
        expected = subprocess.run(
            ["git", "-C", str(repo.path), "rev-parse", "--verify", f"{rev}^{{commit}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        snapshot = GitSnapshot(repo.path, rev)
        assert snapshot.commit == expected, rev
        snapshot.close()


def test_a_revision_that_names_no_commit_is_an_unknown_revision(tmp_path: Path) -> None:
    repo = every_kind_of_change(tmp_path)
    names = ("no-such-branch", "main:kept.json", "--output=/tmp/x", "main^{tree}", "main\npr", "")
    for rev in names:
        try:
            GitSnapshot(repo.path, rev)
        except UnknownRevision as exc:
            assert exc.reason
        else:
            raise AssertionError(f"{rev} named a commit")


def test_a_change_review_starts_eight_git_processes_with_one_cat_file(
    tmp_path: Path, corpus_pr_repo: Path
) -> None:
    """Was 18: each side verified its revision twice, read the partial-clone settings twice and
    ran its own ``cat-file --batch-check`` and ``--batch``; the change took three diffs. Then 10:
    each side verified its revision with a ``rev-parse`` of its own (now: the shared
    ``cat-file``)."""
    trace = tmp_path / "trace"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "check",
            str(corpus_pr_repo),
            "--base",
            "main",
            "--head",
            "pr",
        ],
        env={**os.environ, **GIT_ENV, "GIT_TRACE": str(trace)},
        capture_output=True,
        check=False,
    )
    started = [
        line.split("built-in: ", 1)[1]
        for line in trace.read_text().splitlines()
        if "built-in: " in line
    ]
    assert sum("cat-file --batch" in line for line in started) == 1, started
    assert len(started) <= 8, started
