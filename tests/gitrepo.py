"""Build real git repositories for tests: a base commit from a folder, then a change on a branch."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=GIT_ENV, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


class Repo:
    """A work tree with a ``main`` branch; ``change()`` commits edits on a ``pr`` branch."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def from_folder(cls, source: Path, target: Path) -> Repo:
        shutil.copytree(source, target)
        for p in target.rglob("*"):
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        target.chmod(0o755)
        git(target, "init", "-q", "-b", "main")
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", "base")
        return cls(target)

    def write(self, path: str, content: str | bytes) -> None:
        full = self.path / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            full.write_bytes(content)
        else:
            full.write_text(content, encoding="utf-8")

    def delete(self, path: str) -> None:
        full = self.path / path
        if full.is_dir():
            shutil.rmtree(full)
        else:
            full.unlink()

    def edit_json(self, path: str, edit: Callable[[object], object]) -> None:
        import json

        full = self.path / path
        data = json.loads(full.read_text(encoding="utf-8"))
        result = edit(data)  # edits in place; a returned dict replaces the document
        full.write_text(
            json.dumps(result if isinstance(result, dict) else data, indent=2) + "\n",
            encoding="utf-8",
        )

    def commit(self, message: str = "change", branch: str = "pr") -> str:
        current = git(self.path, "rev-parse", "--abbrev-ref", "HEAD")
        if current != branch:
            git(self.path, "checkout", "-q", "-B", branch)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def change(self, files: Mapping[str, str | bytes | None], message: str = "change") -> str:
        """Write (or with None delete) files on the ``pr`` branch and commit; returns the sha."""
        git(self.path, "checkout", "-q", "-B", "pr")
        for path, content in files.items():
            if content is None:
                self.delete(path)
            else:
                self.write(path, content)
        return self.commit(message)

    def bare_clone(self, target: Path) -> Path:
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(self.path), str(target)], check=True, env=GIT_ENV
        )
        return target
