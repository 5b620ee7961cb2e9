"""Input checks shared by the commands: each bad path or revision is one ``UsageError`` before work
starts."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from bot.cli import UsageError

if TYPE_CHECKING:
    from bot.core.config import Config
    from bot.core.snapshot import GitSnapshot, Snapshot


def existing(path: str, what: str = "path") -> Path:
    """``path`` exists (a file or a folder)."""
    if not os.path.lexists(path):
        raise UsageError(f"{path}: no such {what}")
    return Path(path)


def folder(path: str) -> Path:
    """``path`` is a folder."""
    existing(path, "folder")
    if not Path(path).is_dir():
        raise UsageError(f"{path}: not a folder (a repository or a registry tree is expected)")
    return Path(path)


def git_repository(path: str) -> Path:
    """``path`` is a git repository, bare or not (its top level or any folder inside it)."""
    from bot.core.snapshot import GitError, run_git

    folder(path)
    if shutil.which("git") is None:
        raise UsageError(
            "git is not installed or not on PATH (--base/--head read a git repository)"
        )
    try:
        run_git(path, "rev-parse", "--git-dir")
    except GitError:
        raise UsageError(
            f"{path}: not a git repository (--base/--head name revisions of one)"
        ) from None
    return Path(path)


def revision(repo: Path, rev: str, option: str) -> GitSnapshot:
    """The commit ``rev`` names in ``repo``, or an error saying which option named what."""
    from bot.core.snapshot import GitSnapshot, UnknownRevision

    try:
        return GitSnapshot(repo, rev)
    except UnknownRevision:
        raise UsageError(f"{option} {rev}: no such branch, tag or commit in {repo}") from None


def staged(repo: Path, base: str) -> str:
    """A commit of the index on top of ``base`` (``check --staged``), or an error saying why not."""
    from bot.core.snapshot import GitError, run_git
    from bot.core.worktree import staged_commit

    try:
        run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{base}^{{commit}}")
    except GitError:
        raise UsageError(f"--base {base}: no such branch, tag or commit in {repo}") from None
    try:
        return staged_commit(repo, base)
    except GitError as exc:  # unmerged paths, a bare repository
        raise UsageError(
            f"--staged: the index of {repo} cannot be read as a tree ({exc})"
        ) from None


def registry_folder(snapshots: list[Snapshot], where: str, config: Config | None = None) -> None:
    """At least one side holds the registry folder the configuration names (``spec/registry`` by
    default); otherwise the input is not a registry and the review would pass over nothing."""
    from bot.core.config import CONFIG_PATHS, Paths, load_config
    from bot.core.snapshot import DirSnapshot

    first = snapshots[0]
    if isinstance(first, DirSnapshot) and not any((first.root / p).exists() for p in CONFIG_PATHS):
        # no configuration: decide without listing the whole tree
        wanted, core = Paths().registry, Paths().facets
        if any(
            (first.root / d).is_dir() and any((first.root / d).iterdir()) for d in (wanted, core)
        ):
            return
    else:
        if config is None:
            config, _ = load_config(first)
        wanted, core = config.paths.registry.strip("/"), config.paths.facets.strip("/")
        # core facets alone are a registry: the layouts before spec/registry existed are reviewed
        # too
        if any(snapshot.files(wanted) or snapshot.files(core) for snapshot in snapshots):
            return
    raise UsageError(
        f"no registry found: {where} has no {wanted}/ folder with entries and no core facets in "
        f"{core}/ (an OpenLineage "
        f"repository keeps one folder per registered name in {wanted}/<name>/, or set "
        f"paths.registry in .github/registry-bot.yml)"
    )


def writable_in(repo: Path, paths: Iterable[str]) -> None:
    """Each repository-relative path in ``paths`` can be written inside ``repo``: checked for all of
    them before the first is written, so that a refusal writes no file. No part of a path (a folder
    on the way or the file itself) is a symlink, a folder on the way is a folder and the file is not
    one, and nothing leaves ``repo`` (``..``, an absolute path, a configured path outside it)."""
    root = repo.resolve()
    for path in paths:
        parts = PurePosixPath(path).parts
        if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
            raise UsageError(f"{path}: not a path inside {repo}; nothing written")
        current = repo
        for index, part in enumerate(parts):
            current = current / part
            shown = "/".join(parts[: index + 1])
            if current.is_symlink():
                raise UsageError(f"{shown} is a symlink (to {current.readlink()}); nothing written")
            if not current.exists():
                break  # created below the last existing folder, which is checked
            last = index == len(parts) - 1
            if not last and not current.is_dir():
                raise UsageError(f"{shown} is not a folder; cannot write {path}")
            if last and current.is_dir():
                raise UsageError(f"{path} is a folder; cannot write a file there")
        if not (repo / path).resolve().is_relative_to(root):
            raise UsageError(f"{path} is outside {repo}; nothing written")


def login(value: str | None, option: str, bot: bool = False) -> str | None:
    """A GitHub login (``@`` optional), or an error naming the option; None when not given. ``bot``:
    a GitHub App's login too (``dependabot[bot]``), as GitHub names the author of an App's pull
    request (never an owner: CODEOWNERS cannot name one)."""
    from bot.model.codeowners import BOT_LOGIN, USER_OWNER

    if value is None or value == "":
        return None
    name = value.strip().removeprefix("@")
    if not (USER_OWNER.fullmatch("@" + name) or (bot and BOT_LOGIN.fullmatch(name))):
        raise UsageError(
            f"{option} {value!r}: not a GitHub login (letters, digits and hyphens, and an "
            "Enterprise Managed User's _shortcode, at most 39"
            + (", or an App's NAME[bot]" if bot else "")
            + ")"
        )
    return name


def logins(value: str, option: str) -> frozenset[str]:
    """A comma-separated list of GitHub logins and ``org/team`` slugs (``@`` optional), or an error
    naming the first malformed item."""
    from bot.model.codeowners import TEAM_OWNER, USER_OWNER

    if not value.strip():
        return frozenset()
    found: list[str] = []
    for item in value.split(","):
        name = item.strip().removeprefix("@")
        if not (USER_OWNER.fullmatch("@" + name) or TEAM_OWNER.fullmatch("@" + name)):
            raise UsageError(
                f"{option} {value!r}: {item.strip()!r} is neither a GitHub login nor an org/team "
                f"slug "
                "(a comma-separated list such as alice,my-org/my-team)"
            )
        found.append(name)
    return frozenset(found)
