"""Deployment files: Dockerfile, Procfile, gunicorn.conf.py and the App manifest say what the code does."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from bot.app.events import KNOWN_EVENTS, LOGGED_EVENTS
from tests.conftest import ROOT
from tests.test_locks import SPARK_ONLY as SPARK_MODULES


def instructions(text: str | None = None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    text = (ROOT / "Dockerfile").read_text() if text is None else text
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def stages() -> dict[str, list[tuple[str, str]]]:
    """The Dockerfile's stages by name (``FROM ... AS name``), each with its instructions, FROM first."""
    out: dict[str, list[tuple[str, str]]] = {}
    for word, rest in instructions():
        if word == "FROM":
            name = rest.split(" AS ")[1]
            out[name] = []
        out[name].append((word, rest))
    return out


def image(target: str) -> list[tuple[str, str]]:
    """The instructions that make ``target``: its stage after those of the stages it is built FROM."""
    steps = stages()[target]
    parent = steps[0][1].split(" AS ")[0]
    return (image(parent) if parent in stages() else []) + steps


def test_dockerfile_has_a_web_target_without_java_and_a_worker_target_with_it() -> None:
    known = {"FROM", "ENV", "RUN", "WORKDIR", "COPY", "USER", "VOLUME", "EXPOSE", "HEALTHCHECK", "ENTRYPOINT", "CMD"}
    assert {word for word, _ in instructions()} <= known
    assert instructions()[0] == ("FROM", "python:3.11-slim-bookworm AS base")
    for target, command in (("web", "bot.web:create_app()"), ("worker", '"bot.app.worker"')):
        steps = image(target)
        runs = " ".join(rest for word, rest in steps if word == "RUN")
        assert ("openjdk-17-jre-headless" in runs) == (target == "worker") and "pip install" in runs
        users = [i for i, (word, _) in enumerate(steps) if word == "USER"]
        assert users and steps[users[-1]][1] not in ("root", "0")
        assert all(word != "RUN" for word, _ in steps[users[-1]:])  # nothing runs as root after USER
        assert command in [rest for word, rest in steps if word == "CMD"][-1]
    assert any(word == "HEALTHCHECK" and "/healthz" in rest for word, rest in image("web"))


def test_image_carries_the_data_the_checks_read_beside_the_package() -> None:
    """registry/registry.schema.json and naming/ are read relative to the bot package: the image must
    hold them next to an editable install, or every review would end in an internal error."""
    from bot.checks.entry import SCHEMA_PATH
    from bot.naming import bundled_folder

    copied = {rest.split()[0] for word, rest in stages()["source"] if word == "COPY"}
    for data in (SCHEMA_PATH.parent, bundled_folder()):
        assert data.parent == ROOT and data.name in copied
    for target in ("web", "worker"):
        steps = image(target)
        assert ("COPY", "--from=source /app /app") in steps
        assert any(word == "RUN" and "pip install" in rest and " -e ." in rest for word, rest in steps)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "registry" not in ignored and "naming" not in ignored and "requirements" not in ignored


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


def environment_names() -> set[str]:
    """Every environment variable the service's code and its gunicorn settings read."""
    code = [*(ROOT / "bot").rglob("*.py"), ROOT / "gunicorn.conf.py"]
    pattern = re.compile(r'(?:environ|env)\.get\("([A-Z_]+)"')
    return {name for path in code for name in pattern.findall(path.read_text(encoding="utf-8"))}


def test_compose_file_runs_web_worker_and_redis_read_only() -> None:
    """compose.yaml, the self-hoster's copy (docs/app.md): the two targets, Redis as the queue, read-only."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"web", "worker", "redis"}
    for name in ("web", "worker"):
        service = services[name]
        assert service["build"] == {"context": ".", "target": name} and name in stages()
        assert service["read_only"] is True and service["tmpfs"] == ["/tmp"]
        env = service["environment"]
        assert set(env) <= environment_names()
        assert {"GITHUB_APP_ID", "GITHUB_WEBHOOK_SECRET", "GITHUB_APP_PRIVATE_KEY"} <= set(env)
        assert env["BOT_QUEUE_URL"] == "redis://redis:6379/0" and service["depends_on"] == ["redis"]
    assert services["web"]["ports"] == ["8000:8000"] and "ports" not in services["worker"]
    redis = services["redis"]
    assert redis["read_only"] is True and "--appendonly" in redis["command"]
    volume = redis["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in compose["volumes"]
    assert "compose.yaml" in (ROOT / "docs" / "app.md").read_text(encoding="utf-8")


def test_the_web_process_imports_neither_spark_nor_its_libraries(tmp_path: Path) -> None:
    """The web image has no PySpark, pyarrow or pandas (requirements/web.txt): creating the app and answering
    /healthz must not import them, nor anything that pulls them in."""
    probe = ("import sys; from bot.web import create_app; client = create_app().test_client(); "
             "assert client.get('/healthz').status_code == 200; "
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(SPARK_MODULES)!r}))")
    env = {**os.environ, "GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_ID": "1", "BOT_QUEUE_URL": str(tmp_path / "q"),
           "GITHUB_APP_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\\nunused\\n-----END PRIVATE KEY-----"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=60, check=True).stdout
    assert out.strip() == "[]"
