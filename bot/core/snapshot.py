"""Read-only views of a repository tree at one commit: a directory, a git ref, or memory.

Checks read files only through a ``Snapshot``, so the same check runs on disk, in git and on
GitHub. Paths are POSIX, relative to the repository root. Reading a path that escapes the tree
(``..``, an absolute path, a symlink pointing outside) raises ``UnsafePath``; the engine turns
that into a finding rather than following it.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
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


# why a path of a tree is not read as a file (``skipped``; a change marks it ``FileChange.unread``)
SYMLINK = "a symlink; the bot does not follow symlinks"
SUBMODULE = "a submodule (a commit of another repository, not a file)"


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

    def __init__(
        self, root: str | os.PathLike[str], label: str | None = None, only: str | None = None
    ) -> None:
        """``only``: the one folder of ``root`` the snapshot holds (the rest is never walked)."""
        self.root = Path(root).resolve()
        self._root_str = str(self.root)
        self.label = label or str(root)
        self._only = check_relative(only) if only else ""
        self._walked: tuple[list[str], dict[str, int], set[str]] | None = None

    def _walk(self) -> tuple[list[str], dict[str, int], set[str]]:
        if self._walked is None:
            sizes: dict[str, int] = {}
            links: set[str] = set()
            start = os.path.join(self._root_str, self._only)
            stack = (
                [(self._only + "/", start)]
                if self._only and os.path.isdir(start)
                else []
                if self._only
                else [("", self._root_str)]
            )
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

    @property
    def skipped(self) -> dict[str, str]:
        """The paths of the folder that no check reads as a file, path -> why: every symlink but a
        link to a file inside the folder (a link to a folder is never walked into, one leaving the
        folder never read). ``check --all`` reports them as a change review does
        (``bot/unread-path``)."""
        _, sizes, links = self._walk()
        out: dict[str, str] = {}
        for path in sorted(links):
            if path in sizes:
                try:
                    if self._target(path) is not None:
                        continue  # followed: read as the file it points to
                except UnsafePath:
                    pass
            out[path] = SYMLINK
        return out

    def size(self, path: str) -> int | None:
        path = check_relative(path)
        _, sizes, links = self._walk()
        if path in links:
            try:
                target = self._target(path)
            except UnsafePath:  # it is there, but ``read`` refuses it (and says why)
                return os.lstat(os.path.join(self._root_str, path)).st_size
            return None if target is None else os.path.getsize(target)
        return sizes.get(path)

    def read(self, path: str) -> bytes | None:
        path = check_relative(path)
        _, sizes, links = self._walk()
        local = os.path.join(self._root_str, path) if path in sizes else None
        target = self._target(path) if path in links else local
        if target is None:
            return None
        try:
            with open(target, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise SnapshotError(f"{path} cannot be read: {exc.strerror or exc}") from None


class GitError(SnapshotError):
    """git refused a command (unknown revision, not a repository, a blob it cannot fetch).

    ``reason`` is git's own one-line explanation, without the command.
    """

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


# a promisor remote asking for a password fails instead of hanging
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0"}


def _one_line(stderr: bytes) -> str:
    """The first meaningful line of git's error output (``fatal: ...``), never a multi-line dump."""
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["no error message"])[0]


def run_git(
    repo: str | os.PathLike[str], *args: str, stdin: bytes | None = None, timeout: float = 300
) -> bytes:
    """Run one git command; any failure (git missing, timeout, non-zero exit) is a one-line
    ``GitError``."""
    command = ["git", "-C", str(repo), *args]
    try:
        proc = subprocess.run(
            command,
            input=stdin,
            capture_output=True,
            check=False,
            timeout=timeout,
            env={**os.environ, **GIT_ENV},
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0] if args else ''} in {repo}: {exc}") from None
    if proc.returncode != 0:
        reason = _one_line(proc.stderr)
        raise GitError(f"git {' '.join(args)}: {reason}", reason)
    return proc.stdout


def _folder(path: str, depth: int = 3) -> str:
    """The group of files whose missing blobs are fetched together: the first ``depth`` folders of a
    path."""
    return "/".join(path.split("/")[:-1][:depth])


class UnknownRevision(GitError):
    """The revision names no commit of the repository (or the folder is not a repository)."""


class GitObjects:
    """What every snapshot of one repository shares within a process: whether it is a partial
    clone (one ``git config`` read) and one ``git cat-file --batch`` resolving its revisions and
    reading its blobs. A change review's base and head then start three git processes fewer
    each."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        self.users = 0
        self._lock = threading.Lock()
        self._cat: subprocess.Popen[bytes] | None = None

    @functools.cached_property
    def promisor(self) -> str | None:
        """The promisor remote of a partial clone (``remote.<name>.promisor``, else
        ``extensions.partialClone``), or None for a complete one."""
        try:
            out = run_git(
                self.repo,
                "config",
                "--get-regexp",
                r"^(remote\..*\.promisor|extensions\.partialclone)$",
            ).decode(errors="replace")
        except GitError:
            return None  # no such key
        remotes: list[str] = []
        extensions: list[str] = []
        for line in out.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("remote.") and value.strip().lower() == "true":
                remotes.append(name[len("remote.") : -len(".promisor")])
            elif name.startswith("extensions.") and value.strip():
                extensions.append(value.strip())
        found = remotes or extensions
        return found[0] if found else None

    def commit(self, rev: str) -> str | None:
        """The commit ``rev`` names (as ``rev-parse --verify rev^{commit}`` resolves it), through
        the same ``cat-file --batch``: no process of its own. None when it names no commit."""
        if not rev or any(c in rev for c in "\n\r\0"):
            return None  # one name per line: never a second request
        try:
            found = self._object(f"{rev}^{{commit}}")
        except GitError:
            return None
        return found[0] if found is not None and found[1] == "commit" else None

    def cat_file(self, sha: str) -> bytes:
        """One blob's content, through the repository's one ``cat-file --batch``."""
        found = self._object(sha)
        if found is None:
            raise GitError(f"git cat-file could not read {sha}")
        return found[2]

    def _object(self, name: str) -> tuple[str, str, bytes] | None:
        """(object id, type, content) of the object ``name`` names, or None when it names none."""
        with self._lock:
            try:
                if self._cat is None or self._cat.poll() is not None:
                    self._cat = subprocess.Popen(
                        ["git", "-C", self.repo, "cat-file", "--batch"],
                        env={**os.environ, **GIT_ENV},
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                    )
                if self._cat.stdin is None or self._cat.stdout is None:
                    raise GitError("git cat-file has no pipes")
                self._cat.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
                self._cat.stdin.flush()
                line = self._cat.stdout.readline()
                if not line:
                    raise GitError(f"git cat-file ended before reading {name}")
                header = line.split()
                if len(header) != 3 or not header[2].isdigit():
                    return None  # "<name> missing" or "<name> ambiguous"
                data = self._cat.stdout.read(int(header[2]))
                self._cat.stdout.read(1)  # the newline after each object
                return header[0].decode(), header[1].decode(), data
            except OSError as exc:
                raise GitError(f"git cat-file failed on {name}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            if self._cat is not None:
                if self._cat.stdin is not None:
                    self._cat.stdin.close()
                self._cat.wait(timeout=5)
                if self._cat.stdout is not None:
                    self._cat.stdout.close()
                self._cat = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # best effort at interpreter shutdown
            self.close()


_OBJECTS: dict[str, GitObjects] = {}
_OBJECTS_LOCK = threading.Lock()


def _acquire(repo: str) -> GitObjects:
    with _OBJECTS_LOCK:
        objects = _OBJECTS.get(repo)
        if objects is None:
            objects = _OBJECTS[repo] = GitObjects(repo)
        objects.users += 1
        return objects


def _release(objects: GitObjects) -> None:
    """One snapshot fewer; the last one closes the repository's ``cat-file``."""
    with _OBJECTS_LOCK:
        objects.users -= 1
        if objects.users > 0:
            return
        if _OBJECTS.get(objects.repo) is objects:
            del _OBJECTS[objects.repo]
    objects.close()


class GitSnapshot:
    """A commit of a local git repository, read with plumbing only (works on a bare clone).

    A complete clone lists its tree with the sizes (``ls-tree -l``). A partial clone
    (``--filter=blob:none``) lists without reading any blob, instantly, and its sizes come from one
    ``cat-file --batch-check``. Blobs are read through the repository's one ``cat-file --batch``
    (``GitObjects``). Blobs the clone lacks are fetched from its promisor remote in one request per
    folder, when a check first asks for one of them; a blob that cannot be fetched has size 0 and
    ``read`` raises ``SnapshotError`` naming the path, which the checks report as an unreadable
    file.
    """

    def __init__(self, repo: str | os.PathLike[str], rev: str) -> None:
        """Raises ``UnknownRevision`` when ``rev`` names no commit of ``repo``."""
        self.repo = str(repo)
        self._shared = _acquire(self.repo)
        self._released = False
        self._lock = threading.Lock()
        commit = self._shared.commit(rev)
        if commit is None:
            self.close()
            raise UnknownRevision(f"{rev} names no commit of {self.repo}")
        self.commit = commit
        self.label = f"{rev} ({self.commit[:12]})"
        self._entries: dict[str, tuple[str, str]] = {}
        # path -> commit: not files of this tree, but part of its change
        self.submodules: dict[str, str] = {}
        self._sizes: dict[str, int] | None = None
        self._missing: dict[str, str] = {}  # blob sha -> why it cannot be read
        try:
            self._list()
        except BaseException:
            self.close()
            raise
        self._sorted = sorted(self._entries)

    def _list(self) -> None:
        """The tree's files; in a complete clone with their sizes (``ls-tree -l``, one process
        instead of two). A partial clone lists without sizes (``-l`` would fetch every blob)."""
        sized = self._shared.promisor is None
        try:
            listing = run_git(
                self.repo,
                "ls-tree",
                "-r",
                "-z",
                "--full-tree",
                *(["-l"] if sized else []),
                self.commit,
            )
        except GitError:
            if not sized:
                raise
            # a blob missing from a damaged clone: listed without sizes, and found missing later
            sized = False
            listing = run_git(self.repo, "ls-tree", "-r", "-z", "--full-tree", self.commit)
        sizes: dict[str, int] = {}
        for record in listing.split(b"\x00"):
            meta, _, raw_name = record.partition(b"\t")
            parts = meta.split()
            if len(parts) < 3:
                continue
            name = raw_name.decode("utf-8", "surrogateescape")
            if parts[1] == b"commit":
                self.submodules[name] = parts[2].decode()
            if parts[1] != b"blob":
                continue
            sha = parts[2].decode()
            self._entries[name] = (parts[0].decode(), sha)
            if sized and len(parts) == 4 and parts[3].isdigit():
                sizes[sha] = int(parts[3])
        if sized:
            self._sizes = sizes

    def files(self, prefix: str = "") -> list[str]:
        return paths_under(self._sorted, prefix)

    @property
    def skipped(self) -> dict[str, str]:
        """The paths of the tree that are not read as files, path -> why: symlinks (never followed,
        to a file or a folder) and submodules."""
        out = {path: SYMLINK for path, (mode, _) in self._entries.items() if mode == "120000"}
        out.update(dict.fromkeys(self.submodules, SUBMODULE))
        return dict(sorted(out.items()))

    def object_id(self, path: str) -> str | None:
        """The object id of ``path`` (a blob, or a submodule's commit), without reading it."""
        entry = self._entries.get(path)
        return entry[1] if entry is not None else self.submodules.get(path)

    def size(self, path: str) -> int | None:
        path = check_relative(path)
        entry = self._entries.get(path)
        if entry is None:
            return None
        sha = entry[1]
        sizes = self._all_sizes()
        if sha not in sizes and sha not in self._missing:
            self._fetch(path)
        return sizes.get(sha, 0)

    def read(self, path: str) -> bytes | None:
        path = check_relative(path)
        entry = self._entries.get(path)
        if entry is None:
            return None
        mode, sha = entry
        if sha not in self._all_sizes():
            self._fetch(path)
        if sha in self._missing:
            raise SnapshotError(
                f"{path} cannot be read at {self.commit[:12]}: {self._missing[sha]}"
            )
        if mode == "120000":
            target = self._cat_file(sha).decode(errors="replace")
            raise UnsafePath(f"{path} is a symlink (to {target}); the bot does not follow symlinks")
        return self._cat_file(sha)

    def _all_sizes(self) -> dict[str, int]:
        """Sizes of every blob of the tree present locally, in one ``cat-file --batch-check``."""
        if self._sizes is None:
            present = sorted({sha for _, sha in self._entries.values()} - self._absent())
            self._sizes = self._blob_sizes(present)
            for sha in present:
                if sha not in self._sizes:
                    self._missing.setdefault(sha, "the blob is missing from the repository")
        return self._sizes

    def _blob_sizes(self, shas: list[str]) -> dict[str, int]:
        """Sizes of the blobs among ``shas`` that the repository holds, in one ``cat-file
        --batch-check``."""
        if not shas:
            return {}
        out = run_git(
            self.repo,
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
            stdin="".join(f"{sha}\n" for sha in shas).encode(),
        )
        sizes: dict[str, int] = {}
        for line in out.decode(errors="replace").splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] == "blob" and fields[2].isdigit():
                sizes[fields[0]] = int(fields[2])
        return sizes

    def _absent(self) -> set[str]:
        """Objects of this tree a partial clone does not hold (listed without fetching them)."""
        if self._shared.promisor is None:
            return set()
        out = run_git(
            self.repo, "rev-list", "--objects", "--no-walk", "--missing=print", self.commit
        )
        return {
            line[1:] for line in out.decode(errors="replace").splitlines() if line.startswith("?")
        }

    def _fetch(self, path: str) -> None:
        """Fetch the missing blobs of ``path``'s folder from the promisor remote in one request."""
        sizes = self._all_sizes()
        folder = _folder(path)
        wanted = sorted(
            {
                sha
                for name, (_, sha) in self._entries.items()
                if sha not in sizes and sha not in self._missing and _folder(name) == folder
            }
        )
        if not wanted:
            return
        remote = self._shared.promisor
        if remote is None:
            self._missing.update(dict.fromkeys(wanted, "the blob is missing from the repository"))
            return
        try:
            run_git(
                self.repo,
                "-c",
                "fetch.negotiationAlgorithm=noop",
                "fetch",
                remote,
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                "--stdin",
                stdin="".join(f"{sha}\n" for sha in wanted).encode(),
                timeout=120,
            )
        except GitError as exc:
            reason = (
                f"the blob is not in this partial clone and fetching it from {remote!r} failed: "
                f"{exc.reason}"
            )
            self._missing.update(dict.fromkeys(wanted, reason))
            return
        sizes.update(self._blob_sizes(wanted))
        for sha in wanted:
            if sha not in sizes:
                self._missing[sha] = "the promisor remote did not send the blob"

    def _cat_file(self, sha: str) -> bytes:
        return self._shared.cat_file(sha)

    def close(self) -> None:
        """Let go of the repository's shared ``cat-file`` (the last snapshot closes it)."""
        with self._lock:
            if self._released:
                return
            self._released = True
        _release(self._shared)

    def __enter__(self) -> GitSnapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # best effort at interpreter shutdown
            self.close()
