"""Deployment files: Dockerfile, Procfile, gunicorn.conf.py and the App manifest say what the code
does."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from bot.github.events import KNOWN_EVENTS, LOGGED_EVENTS
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
    """The Dockerfile's stages by name (``FROM ... AS name``), each with its instructions, FROM
    first."""
    out: dict[str, list[tuple[str, str]]] = {}
    for word, rest in instructions():
        if word == "FROM":
            name = rest.split(" AS ")[1]
            out[name] = []
        out[name].append((word, rest))
    return out


def image(target: str) -> list[tuple[str, str]]:
    """The instructions that make ``target``: its stage after those of the stages it is built
    FROM."""
    steps = stages()[target]
    parent = steps[0][1].split(" AS ")[0]
    return (image(parent) if parent in stages() else []) + steps


def test_dockerfile_has_a_web_target_without_java_and_a_worker_target_with_it() -> None:
    known = {
        "FROM",
        "ENV",
        "RUN",
        "WORKDIR",
        "COPY",
        "USER",
        "VOLUME",
        "EXPOSE",
        "HEALTHCHECK",
        "ENTRYPOINT",
        "CMD",
    }
    assert {word for word, _ in instructions()} <= known
    assert instructions()[0] == ("FROM", "python:3.11-slim-bookworm AS base")
    for target, command in (
        ("web", "bot.service.wsgi:create_app()"),
        ("worker", '"bot.service.worker"'),
    ):
        steps = image(target)
        runs = " ".join(rest for word, rest in steps if word == "RUN")
        assert ("openjdk-17-jre-headless" in runs) == (target == "worker") and "pip install" in runs
        users = [i for i, (word, _) in enumerate(steps) if word == "USER"]
        assert users and steps[users[-1]][1] not in ("root", "0")
        # nothing runs as root after USER
        assert all(word != "RUN" for word, _ in steps[users[-1] :])
        assert command in [rest for word, rest in steps if word == "CMD"][-1]
    assert any(word == "HEALTHCHECK" and "/healthz" in rest for word, rest in image("web"))


def test_image_carries_the_data_the_checks_read_beside_the_package() -> None:
    """registry/registry.schema.json and naming/ are read relative to the bot package: the image
    must hold them next to an editable install, or every review would end in an internal error."""
    from bot.model.naming import bundled_folder
    from bot.review.checks.entry import SCHEMA_PATH

    copied = {rest.split()[0] for word, rest in stages()["source"] if word == "COPY"}
    for data in (SCHEMA_PATH.parent, bundled_folder()):
        assert data.parent == ROOT and data.name in copied
    for target in ("web", "worker"):
        steps = image(target)
        assert ("COPY", "--from=source /app /app") in steps
        assert any(
            word == "RUN" and "pip install" in rest and " -e ." in rest for word, rest in steps
        )
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "registry" not in ignored and "naming" not in ignored and "requirements" not in ignored


def test_procfile_runs_web_and_worker_modules_that_exist() -> None:
    entries = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip()
    )
    assert set(entries) == {"web", "worker"}
    web, worker = shlex.split(entries["web"]), shlex.split(entries["worker"])
    assert web[0] == "gunicorn" and "bot.service.wsgi:create_app()" in web
    assert worker[:3] == ["python", "-m", "bot.service.worker"]
    assert importlib.util.find_spec("bot.service.worker") is not None


def test_gunicorn_config_uses_the_front_door_worker() -> None:
    """The slow-client-proof worker (bot/service/front.py), and a header deadline (gevent's
    keepalive)."""
    from gunicorn.util import load_class

    from bot.service.front import FrontDoorWorker

    namespace: dict[str, object] = {}
    exec(compile((ROOT / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), namespace)
    assert load_class(namespace["worker_class"]) is FrontDoorWorker
    assert (
        0 < int(str(namespace["keepalive"])) < 10
        and int(str(namespace["worker_connections"])) >= 100
    )


def test_manifest_asks_for_minimal_permissions_and_the_handled_events() -> None:
    manifest = yaml.safe_load((ROOT / "app.yml").read_text())
    assert manifest["default_permissions"] == {
        "checks": "write",
        "pull_requests": "write",
        "issues": "write",
        "contents": "read",
        "metadata": "read",
        "members": "read",
        "statuses": "read",  # the Merge section's commit-status fallback
    }
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
    """compose.yaml, the self-hoster's copy (docs/app.md): the two targets, Redis as the queue,
    read-only; credentials as secret files, each process given only its own; healthchecks for all
    three; only the webhook port published (issue 21's findings: the key as an environment variable,
    the web refusing to start without it, /metrics and /readyz on the public port, no healthcheck
    for the worker or Redis)."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"web", "worker", "redis"}
    secrets = compose["secrets"]
    for name in ("web", "worker"):
        service = services[name]
        assert service["build"] == {"context": ".", "target": name} and name in stages()
        # no anonymous volume
        assert service["read_only"] is True and service["tmpfs"] == ["/tmp", "/data"]
        env = service["environment"]
        assert set(env) <= environment_names()
        assert not any(
            key in env
            for key in ("GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID")
        )
        for key, value in env.items():  # each *_PATH names a secret the service mounts
            if key.endswith("_PATH"):
                secret = value.removeprefix("/run/secrets/")
                assert secret in service["secrets"] and secret in secrets, key
        assert env["BOT_QUEUE_URL"] == "redis://redis:6379/0"
        assert service["depends_on"] == {"redis": {"condition": "service_healthy"}}
        assert service["healthcheck"]["test"] == ["CMD", "python", "-m", "bot.service.health", name]
    assert set(services["web"]["secrets"]) == {"github_webhook_secret"}  # never the App's key
    assert set(services["worker"]["secrets"]) == {"github_app_id", "github_app_private_key"}
    assert services["web"]["ports"] == ["8000:8000"] and "ports" not in services["worker"]
    assert services["web"]["environment"]["WEB_ADMIN_PORT"] not in "".join(services["web"]["ports"])
    for secret in secrets.values():
        assert secret["file"].startswith("./secrets/")
    ignored = (ROOT / ".gitignore").read_text().split()
    assert {".env", "*.pem", "secrets/"} <= set(ignored)
    redis = services["redis"]
    assert redis["read_only"] is True and "--appendonly" in redis["command"]
    # docs/app.md
    assert redis["command"][redis["command"].index("--maxmemory-policy") + 1] == "noeviction"
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    volume = redis["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in compose["volumes"]
    assert "compose.yaml" in (ROOT / "docs" / "app.md").read_text(encoding="utf-8")


def test_the_health_checks_say_healthy_and_unhealthy(tmp_path: Path) -> None:
    heartbeat = tmp_path / "heartbeat"
    # nothing listens on port 9
    env = {**os.environ, "WORKER_HEARTBEAT": str(heartbeat), "PORT": "9"}

    def check(*args: str) -> int:
        return subprocess.run(
            [sys.executable, "-m", "bot.service.health", *args],
            env=env,
            capture_output=True,
            timeout=30,
        ).returncode

    assert check("worker") == 1  # no heartbeat yet
    from bot.service.health import beat

    beat(heartbeat)
    assert check("worker") == 0
    os.utime(heartbeat, (0, 0))
    assert check("worker", "--max-age", "60") == 1
    assert check("web") == 1


def test_the_web_process_imports_neither_spark_nor_its_libraries(tmp_path: Path) -> None:
    """The web image has no PySpark, pyarrow or pandas (requirements/web.txt): creating the app and
    answering /healthz must not import them, nor anything that pulls them in."""
    probe = (
        "import sys; from bot.service.wsgi import create_app; client = create_app().test_client(); "
        "assert client.get('/healthz').status_code == 200; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(SPARK_MODULES)!r}))"
    )
    env = {
        **os.environ,
        "GITHUB_WEBHOOK_SECRET": "s",
        "GITHUB_APP_ID": "1",
        "BOT_QUEUE_URL": str(tmp_path / "q"),
        "GITHUB_APP_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\\nunused\\n-----END PRIVATE "
        "KEY-----",
    }
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_deploy_podman_tolerates_concurrent_calls(tmp_path: Path) -> None:
    """Finding: `podman-compose up --build` failed: deploy/podman rewrote its configuration on every
    call, and a concurrent call read it half-written. Each call here runs a stand-in `podman` that
    reads the files."""
    fake = tmp_path / "bin" / "podman"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\ngrep -q "^cgroup_manager" "$CONTAINERS_CONF" && grep -q "^runroot" '
        '"$CONTAINERS_STORAGE_CONF" && grep -q "short-name-mode" "$CONTAINERS_REGISTRIES_CONF"\n'
    )
    fake.chmod(0o755)
    state = tmp_path / "state"
    env = {
        **os.environ,
        "PATH": f"{fake.parent}:{os.environ['PATH']}",
        "REGISTRY_BOT_PODMAN_DIR": str(state),
    }
    script = str(ROOT / "deploy" / "podman")
    assert subprocess.run([script, "info"], env=env, timeout=30).returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in state.glob("*.conf")}
    calls = [subprocess.Popen([script, "info"], env=env) for _ in range(20)]
    assert [c.wait(timeout=60) for c in calls] == [0] * 20
    # unchanged: not rewritten
    assert {p.name: p.stat().st_mtime_ns for p in state.glob("*.conf")} == before
    assert not [p for p in state.iterdir() if ".conf." in p.name]  # no temporary file left


def test_gunicorn_binds_the_admin_port_where_bind_says_and_serves_only_admin_paths(
    tmp_path: Path,
) -> None:
    """Issue 28: the admin port was bound on 0.0.0.0 whatever ``BIND`` said, and served ``/webhook``
    too."""
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    from tests.test_e2e import free_port

    public, admin = free_port(), free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "BIND": f"127.0.0.1:{public}",
        "WEB_ADMIN_PORT": str(admin),
        "GITHUB_WEBHOOK_SECRET": "s",
        "BOT_QUEUE_URL": str(tmp_path / "q.sqlite3"),
        "WEB_CONCURRENCY": "1",
    }
    log = tmp_path / "web.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "gunicorn.conf.py"),
                "bot.service.wsgi:create_app()",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )

    def status(port: int, path: str, data: bytes | None = None) -> int:
        try:
            return int(
                urllib.request.urlopen(
                    urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data), timeout=5
                ).status
            )
        except urllib.error.HTTPError as exc:
            return exc.code

    try:
        for _ in range(200):
            try:
                if status(admin, "/readyz") == 200:
                    break
            except OSError:
                time.sleep(0.1)
        text = log.read_text(encoding="utf-8")
        assert (
            f"http://127.0.0.1:{public},http://127.0.0.1:{admin} " in text and "0.0.0.0" not in text
        )
        assert status(admin, "/metrics") == 200
        assert status(admin, "/webhook", b"{}") == 404 and status(admin, "/healthz") == 404
        assert status(public, "/webhook", b"{}") == 401 and status(public, "/metrics") == 404
    finally:
        proc.terminate()
        proc.wait(timeout=20)
