"""Every implementation of ``GitHubAPI`` matches the Protocol, checked by mypy as python-jsonschema
checks its validators against its ``Validator`` protocol: a module that assigns each implementation
to the Protocol type must type-check, and one that assigns a class lacking a method must not (so the
check can fail)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

from bot.github import limits as github_limits
from bot.outputs.render.markdown import GITHUB_TEXT_LIMIT

ROOT = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = """
from bot.github.api import GitHubAPI, GitHubClientFactory
from bot.github.client import AppClientFactory, GitHubClient
from bot.github.local import LocalGitHub
from bot.cli.commands.replay import _Single


def rest(gh: GitHubClient) -> GitHubAPI:
    return gh


def in_memory(gh: LocalGitHub) -> GitHubAPI:
    return gh


def factories(app: AppClientFactory, single: _Single) -> list[GitHubClientFactory]:
    return [app, single]
"""
BROKEN = """
from bot.github.api import GitHubAPI
from bot.github.local import LocalGitHub


class Partial(LocalGitHub):
    def create_review(self, repo: str) -> int:  # GitHub's signature has more
        return 0


def partial(gh: Partial) -> GitHubAPI:
    return gh
"""


def mypy(tmp_path: Path, source: str) -> tuple[str, int]:
    module = tmp_path / "conformance.py"
    module.write_text(source, encoding="utf-8")
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--no-incremental",
            "--follow-imports",
            "silent",
            str(module),
        ]
    )
    return out + err, status


def test_every_implementation_matches_the_protocol(tmp_path: Path) -> None:
    report, status = mypy(tmp_path, IMPLEMENTATIONS)
    assert status == 0, report


def test_a_mismatch_is_caught(tmp_path: Path) -> None:
    report, status = mypy(tmp_path, BROKEN)
    assert status == 1 and "incompatible" in report.lower() and "create_review" in report, report


def test_the_renderers_text_limit_is_githubs() -> None:
    assert GITHUB_TEXT_LIMIT == github_limits.OUTPUT_BYTES
