"""Read-only views of a repository tree at one commit: a directory, a git ref, or memory.

Checks read files only through a ``Snapshot``, so the same check runs on disk, in git and on
GitHub. Paths are POSIX, relative to the repository root. Reading a path that escapes the tree
(``..``, an absolute path, a symlink pointing outside) raises ``UnsafePath``; the engine turns
that into a finding rather than following it.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable


class SnapshotError(Exception):
    """A file of the snapshot cannot be read safely."""


class UnsafePath(SnapshotError):
    """A path or symlink that would leave the repository."""


def check_relative(path: str) -> str:
    """Normalise a repository path, refusing absolute paths and ``..`` segments."""
    if path.startswith("/") or "\x00" in path:
        raise UnsafePath(f"path {path!r} leaves the repository")
    parts = [p for p in path.split("/") if p and p != "."]
    if ".." in parts:
        raise UnsafePath(f"path {path!r} leaves the repository")
    return "/".join(parts)


@runtime_checkable
class Snapshot(Protocol):
    """A read-only tree of files at one commit."""

    label: str

    def files(self, prefix: str = "") -> list[str]:
        """Every file path under ``prefix`` (a folder), sorted."""
        ...

    def size(self, path: str) -> int | None:
        """Size in bytes, or ``None`` when the file does not exist."""
        ...

    def read(self, path: str) -> bytes | None:
        """File content, ``None`` when absent; raises ``SnapshotError`` when unsafe to read."""
        ...


def paths_under(paths: list[str], prefix: str) -> list[str]:
    """The paths inside folder ``prefix``, from a sorted list, by bisection."""
    prefix = prefix.strip("/")
    if not prefix:
        return list(paths)
    folder = prefix + "/"
    start = bisect.bisect_left(paths, folder)
    end = bisect.bisect_left(paths, prefix + "0")  # "0" sorts right after "/"
    return paths[start:end]


class MemorySnapshot:
    """A snapshot held in a dict; used by the GitHub client and by tests."""

    def __init__(self, files: Mapping[str, bytes], label: str = "memory") -> None:
        self._files = {check_relative(k): v for k, v in files.items()}
        self._sorted = sorted(self._files)
        self.label = label

    def files(self, prefix: str = "") -> list[str]:
        return paths_under(self._sorted, prefix)

    def size(self, path: str) -> int | None:
        data = self._files.get(check_relative(path))
        return None if data is None else len(data)

    def read(self, path: str) -> bytes | None:
        return self._files.get(check_relative(path))


class DirSnapshot:
    """The working tree of a folder on disk. Symlinks are followed only inside the folder.

    One directory walk records every file with its size and which paths are symlinks, so reads need
    no further ``stat``; only symlinks are resolved, and refused when they leave the folder.
    """

    def __init__(self, root: str | os.PathLike[str], label: str | None = None) -> None:
        self.root = Path(root).resolve()
        self._root_str = str(self.root)
        self.label = label or str(root)
        self._walked: tuple[list[str], dict[str, int], set[str]] | None = None

    def _walk(self) -> tuple[list[str], dict[str, int], set[str]]:
        if self._walked is None:
            sizes: dict[str, int] = {}
            links: set[str] = set()
            stack = [("", self._root_str)]
            while stack:
                rel, folder = stack.pop()
                with os.scandir(folder) as it:
                    for item in it:
                        path = rel + item.name
                        if item.is_symlink():
                            links.add(path)
                            if item.is_file():
                                sizes[path] = -1  # resolved (and checked) when read
                        elif item.is_dir():
                            if item.name != ".git":
                                stack.append((path + "/", item.path))
                        elif item.is_file():
                            sizes[path] = item.stat().st_size
            self._walked = (sorted(sizes), sizes, links)
        return self._walked

    def files(self, prefix: str = "") -> list[str]:
        return paths_under(self._walk()[0], prefix)

    def _target(self, path: str) -> str | None:
        """The real path of a symlink inside the folder; raises ``UnsafePath`` outside it."""
        full = os.path.join(self._root_str, path)
        real = os.path.realpath(full)
        if real != self._root_str and not real.startswith(self._root_str + os.sep):
            raise UnsafePath(f"{path} is a symlink to {os.readlink(full)}, outside the repository")
        return real if os.path.isfile(real) else None

    def size(self, path: str) -> int | None:
        path = check_relative(path)
        _, sizes, links = self._walk()
        if path in links:
            target = self._target(path)
            return None if target is None else os.path.getsize(target)
        return sizes.get(path)

    def read(self, path: str) -> bytes | None:
        path = check_relative(path)
        _, sizes, links = self._walk()
        local = os.path.join(self._root_str, path) if path in sizes else None
        target = self._target(path) if path in links else local
        if target is None:
            return None
        with open(target, "rb") as handle:
            return handle.read()


class GitError(SnapshotError):
    """git refused a command (unknown revision, not a repository)."""


def run_git(repo: str | os.PathLike[str], *args: str) -> bytes:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


class GitSnapshot:
    """A commit of a local git repository, read with plumbing only (works on a bare clone)."""

    def __init__(self, repo: str | os.PathLike[str], rev: str) -> None:
        self.repo = str(repo)
        self.commit = run_git(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").decode().strip()
        self.label = f"{rev} ({self.commit[:12]})"
        self._entries: dict[str, tuple[str, str, int]] = {}
        listing = run_git(repo, "ls-tree", "-r", "-l", "-z", "--full-tree", self.commit)
        for record in listing.split(b"\x00"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, sha, size = meta.split()
            if kind != b"blob":
                continue  # submodules (commits) are not files of this tree
            self._entries[name.decode("utf-8", "surrogateescape")] = (
                mode.decode(), sha.decode(), int(size) if size != b"-" else 0)
        self._sorted = sorted(self._entries)
        self._cat: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def files(self, prefix: str = "") -> list[str]:
        return paths_under(self._sorted, prefix)

    def size(self, path: str) -> int | None:
        entry = self._entries.get(check_relative(path))
        return None if entry is None else entry[2]

    def read(self, path: str) -> bytes | None:
        entry = self._entries.get(check_relative(path))
        if entry is None:
            return None
        mode, sha, _ = entry
        if mode == "120000":
            target = self._cat_file(sha).decode(errors="replace")
            raise UnsafePath(f"{path} is a symlink (to {target}); the bot does not follow symlinks")
        return self._cat_file(sha)

    def _cat_file(self, sha: str) -> bytes:
        with self._lock:
            if self._cat is None or self._cat.poll() is not None:
                self._cat = subprocess.Popen(
                    ["git", "-C", self.repo, "cat-file", "--batch"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                )
            assert self._cat.stdin is not None and self._cat.stdout is not None
            self._cat.stdin.write(sha.encode() + b"\n")
            self._cat.stdin.flush()
            header = self._cat.stdout.readline().split()
            if len(header) < 3:
                raise GitError(f"git cat-file could not read {sha}")
            data = self._cat.stdout.read(int(header[2]))
            self._cat.stdout.read(1)  # the newline after each object
            return data

    def close(self) -> None:
        with self._lock:
            if self._cat is not None:
                if self._cat.stdin is not None:
                    self._cat.stdin.close()
                self._cat.wait(timeout=5)
                if self._cat.stdout is not None:
                    self._cat.stdout.close()
                self._cat = None

    def __enter__(self) -> GitSnapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # best effort at interpreter shutdown
            self.close()
