"""``registry-bot app register`` against the stand-in: GitHub's manifest flow, end to end.

Finding (issue 21): the docs said GitHub returns the App id, key and secret after the manifest is
posted; it redirects with ``?code=`` that must be exchanged at ``POST
/app-manifests/{code}/conversions`` within an hour. Nothing did that, ``redirect_url`` pointed at a
route that did not exist, and ``app.yml`` is YAML where the form needs JSON. The test plays the
browser: it opens the command's page, posts its form to the stand-in's github.com page, follows the
redirect back, and then uses what the command wrote.
"""

from __future__ import annotations

import html
import re
import stat
import subprocess
import sys
from pathlib import Path

import requests
import yaml

from bot.github.client import AppClientFactory
from bot.github.local import LocalGitHub
from bot.service.settings import Settings
from tests.conftest import ROOT
from tests.gitrepo import Repo
from tests.standin.server import StandIn


def test_register_exchanges_the_code_and_writes_the_credentials_0600(tmp_path: Path) -> None:
    repo = Repo.from_folder(ROOT / "registry", tmp_path / "repo")
    repo.change({"x.json": "{}\n"})
    out = tmp_path / "secrets"
    with StandIn(LocalGitHub(repo.path, "main", "pr")) as github:
        command = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bot",
                "app",
                "register",
                "--webhook-url",
                "https://bot.example.org/webhook",
                "--github-url",
                github.url,
                "--api-url",
                github.url,
                "--port",
                "0",
                "--out",
                str(out),
                "--timeout",
                "60",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert command.stdout is not None
        page_url = re.search(r"Open (http://\S+/) ", command.stdout.readline())
        assert page_url, "the command did not say where its page is"
        browser = requests.Session()
        page = browser.get(page_url.group(1), timeout=10).text
        action = html.unescape(re.search(r'<form action="([^"]+)" method="post">', page).group(1))  # type: ignore[union-attr]
        manifest = html.unescape(re.search(r'name="manifest" value="([^"]+)"', page).group(1))  # type: ignore[union-attr]
        assert action.startswith(f"{github.url}/settings/apps/new?state=")
        # GitHub redirects to the callback
        done = browser.post(action, data={"manifest": manifest}, timeout=30)
        stdout, stderr = command.communicate(timeout=30)
        assert command.returncode == 0, stderr
        assert done.status_code == 200 and "is registered" in done.text
        registered = github.state.registered
        assert registered["manifest"]["hook_attributes"]["url"] == "https://bot.example.org/webhook"
        assert registered["manifest"]["redirect_url"] == f"{page_url.group(1)}callback"
        assert (
            registered["manifest"]["default_permissions"]
            == yaml.safe_load((ROOT / "app.yml").read_text())["default_permissions"]
        )  # app.yml's YAML, sent as JSON

        files = sorted(out.iterdir())
        assert [f.name for f in files] == [
            "github-app-id",
            "github-app-private-key.pem",
            "github-webhook-secret",
            "registry-bot.env",
        ]
        assert (
            all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
            and stat.S_IMODE(out.stat().st_mode) == 0o700
        )
        assert (
            registered["webhook_secret"] not in stdout + stderr
            and "PRIVATE KEY" not in stdout + stderr
        )
        env = dict(
            line.split("=", 1) for line in (out / "registry-bot.env").read_text().splitlines()
        )
        # what the web and the worker read
        settings = Settings.from_env({**env, "GITHUB_API_URL": github.url})
        assert settings.webhook_secrets == (registered["webhook_secret"],)
        factory = AppClientFactory(
            settings.app_id, settings.private_key, github.url, seconds_between_writes=0
        )
        # the key signs a JWT GitHub accepts
        assert factory.bot_login() == f"{github.state.slug}[bot]"

        code = re.search(r"code=(\w+)", done.url or "")
        replay = requests.post(
            f"{github.url}/app-manifests/{code.group(1) if code else 'x'}/conversions", timeout=10
        )
        assert replay.status_code == 404  # a code is exchanged once


def test_the_page_answers_only_its_own_host_is_not_framed_and_quotes_the_code(
    tmp_path: Path,
) -> None:
    """Issue 28: the code went into the conversion URL unquoted (``../../../../evil/path?x=`` posted
    to ``/evil/path?x=/conversions`` and saved the answer as credentials), and the page (with the
    state) answered any ``Host`` (DNS rebinding) with no framing headers."""
    repo = Repo.from_folder(ROOT / "registry", tmp_path / "repo")
    repo.change({"x.json": "{}\n"})
    out = tmp_path / "secrets"
    with StandIn(LocalGitHub(repo.path, "main", "pr")) as github:
        command = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bot",
                "app",
                "register",
                "--webhook-url",
                "https://bot.example.org/webhook",
                "--github-url",
                github.url,
                "--api-url",
                github.url,
                "--port",
                "0",
                "--out",
                str(out),
                "--timeout",
                "20",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert command.stdout is not None
            found = re.search(r"Open (http://\S+/) ", command.stdout.readline())
            assert found
            url = found.group(1)
            page = requests.get(url, timeout=10)
            assert page.status_code == 200 and page.headers["X-Frame-Options"] == "DENY"
            assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
            assert (
                page.headers["Cache-Control"] == "no-store"
                and page.headers["Referrer-Policy"] == "no-referrer"
            )
            rebound = requests.get(url, headers={"Host": "attacker.example"}, timeout=10)
            assert rebound.status_code == 421 and "state=" not in rebound.text
            state = re.search(r"state=([\w-]+)", html.unescape(page.text))
            assert state
            before = len(github.state.requests)
            evil = requests.get(
                f"{url}callback",
                params={"state": state.group(1), "code": "../../../../evil/path?x="},
                timeout=10,
            )
            assert evil.status_code == 400 and "not a manifest code" in evil.text
            # nothing was posted
            assert not any("evil" in str(r) for r in github.state.requests[before:])
            assert not out.exists()
        finally:
            command.kill()
            command.communicate(timeout=10)
