"""Deployment files: Dockerfile, Procfile, gunicorn.conf.py and the App manifest say what the code does."""

from __future__ import annotations

import importlib.util
import shlex

import yaml

from bot.app.events import KNOWN_EVENTS, LOGGED_EVENTS
from tests.conftest import ROOT


def instructions() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile_is_slim_non_root_with_java_and_a_healthcheck() -> None:
    steps = instructions()
    known = {"FROM", "ENV", "RUN", "WORKDIR", "COPY", "USER", "VOLUME", "EXPOSE", "HEALTHCHECK", "ENTRYPOINT", "CMD"}
    assert {word for word, _ in steps} <= known
    assert steps[0][0] == "FROM" and "slim" in steps[0][1]
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    assert "openjdk-17-jre-headless" in runs and "pip install" in runs
    users = [i for i, (word, _) in enumerate(steps) if word == "USER"]
    assert users and steps[users[-1]][1] not in ("root", "0")
    assert all(word != "RUN" for word, _ in steps[users[-1]:])  # nothing runs as root after USER
    assert any(word == "HEALTHCHECK" and "/healthz" in rest for word, rest in steps)
    cmd = next(rest for word, rest in steps if word == "CMD")
    assert "bot.web:create_app()" in cmd


def test_image_carries_the_data_the_checks_read_beside_the_package() -> None:
    """registry/registry.schema.json and naming/ are read relative to the bot package: the image must
    hold them next to an editable install, or every review would end in an internal error."""
    from bot.checks.entry import SCHEMA_PATH
    from bot.naming import bundled_folder

    steps = instructions()
    copied = {rest.split()[0] for word, rest in steps if word == "COPY"}
    for data in (SCHEMA_PATH.parent, bundled_folder()):
        assert data.parent == ROOT and data.name in copied
    assert any(word == "RUN" and "pip install" in rest and " -e ." in rest for word, rest in steps)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "registry" not in ignored and "naming" not in ignored


def test_procfile_runs_web_and_worker_modules_that_exist() -> None:
    entries = dict(line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip())
    assert set(entries) == {"web", "worker"}
    web, worker = shlex.split(entries["web"]), shlex.split(entries["worker"])
    assert web[0] == "gunicorn" and "bot.web:create_app()" in web
    assert worker[:3] == ["python", "-m", "bot.app.worker"]
    assert importlib.util.find_spec("bot.app.worker") is not None


def test_gunicorn_config_uses_the_front_door_worker() -> None:
    """The slow-client-proof worker (bot/app/front.py), and a header deadline (gevent's keepalive)."""
    from gunicorn.util import load_class

    from bot.app.front import FrontDoorWorker

    namespace: dict[str, object] = {}
    exec(compile((ROOT / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), namespace)
    assert load_class(namespace["worker_class"]) is FrontDoorWorker
    assert 0 < int(str(namespace["keepalive"])) < 10 and int(str(namespace["worker_connections"])) >= 100


def test_manifest_asks_for_minimal_permissions_and_the_handled_events() -> None:
    manifest = yaml.safe_load((ROOT / "app.yml").read_text())
    assert manifest["default_permissions"] == {
        "checks": "write", "pull_requests": "write", "issues": "write", "contents": "read", "metadata": "read",
        "members": "read"}
    assert set(manifest["default_events"]) == KNOWN_EVENTS - LOGGED_EVENTS - {"ping"}
    assert manifest["hook_attributes"]["url"].endswith("/webhook")


def test_dockerignore_keeps_secrets_and_queues_out() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {"*.pem", ".env", ".git", "*.sqlite3"} <= set(ignored)
