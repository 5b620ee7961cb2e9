"""Read-only views of a repository tree at one commit: a directory, a git ref, or memory.

Checks read files only through a ``Snapshot``, so the same check runs on disk, in git and on
GitHub. Paths are POSIX, relative to the repository root. Reading a path that escapes the tree
(``..``, an absolute path, a symlink pointing outside) raises ``UnsafePath``; the engine turns
that into a finding rather than following it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable


class SnapshotError(Exception):
    """A file of the snapshot cannot be read safely."""


class UnsafePath(SnapshotError):
    """A path or symlink that would leave the repository."""


def check_relative(path: str) -> str:
    """Normalise a repository path, refusing absolute paths and ``..`` segments."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\x00" in path:
        raise UnsafePath(f"path {path!r} leaves the repository")
    return str(pure) if str(pure) != "." else ""


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


def _under(paths: Iterable[str], prefix: str) -> list[str]:
    prefix = prefix.strip("/")
    if not prefix:
        return sorted(paths)
    folder = prefix + "/"
    return sorted(p for p in paths if p.startswith(folder))


class MemorySnapshot:
    """A snapshot held in a dict; used by the GitHub client and by tests."""

    def __init__(self, files: Mapping[str, bytes], label: str = "memory") -> None:
        self._files = {check_relative(k): v for k, v in files.items()}
        self.label = label

    def files(self, prefix: str = "") -> list[str]:
        return _under(self._files, prefix)

    def size(self, path: str) -> int | None:
        data = self._files.get(check_relative(path))
        return None if data is None else len(data)

    def read(self, path: str) -> bytes | None:
        return self._files.get(check_relative(path))


class DirSnapshot:
    """The working tree of a folder on disk. Symlinks are followed only inside the folder."""

    def __init__(self, root: str | os.PathLike[str], label: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.label = label or str(root)
        self._listing: list[str] | None = None
        self._resolved: dict[str, Path] = {}

    def _all(self) -> list[str]:
        if self._listing is None:
            found: list[str] = []
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                rel = Path(dirpath).relative_to(self.root)
                found.extend(str(PurePosixPath(*rel.parts, name)) for name in filenames)
            self._listing = sorted(found)
        return self._listing

    def files(self, prefix: str = "") -> list[str]:
        return _under(self._all(), prefix)

    def _resolve(self, path: str) -> Path | None:
        cached = self._resolved.get(path)
        if cached is not None:
            return cached
        real = self._resolve_uncached(path)
        if real is not None:
            self._resolved[path] = real
        return real

    def _resolve_uncached(self, path: str) -> Path | None:
        full = self.root / check_relative(path)
        if not full.exists() and not full.is_symlink():
            return None
        real = full.resolve()
        if real != self.root and self.root not in real.parents:
            raise UnsafePath(f"{path} is a symlink to {full.readlink() if full.is_symlink() else real}, "
                             "outside the repository")
        return real if real.is_file() else None

    def size(self, path: str) -> int | None:
        real = self._resolve(path)
        return None if real is None else real.stat().st_size

    def read(self, path: str) -> bytes | None:
        real = self._resolve(path)
        return None if real is None else real.read_bytes()


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
        self._cat: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def files(self, prefix: str = "") -> list[str]:
        return _under(self._entries, prefix)

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


def iter_folders(paths: Iterable[str]) -> Iterator[str]:
    """Every folder that contains one of ``paths`` (ancestors included)."""
    seen: set[str] = set()
    for path in paths:
        parent = PurePosixPath(path).parent
        while str(parent) not in (".", "") and str(parent) not in seen:
            seen.add(str(parent))
            yield str(parent)
            parent = parent.parent
