"""``registry-bot app register``: create the GitHub App from its manifest and keep its credentials.

More in docs/module-notes.md (bot/cli/commands/app.py).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlparse

from bot.cli import UsageError
from bot.github.app_permissions import FEATURES, LEVELS, needed_for

if TYPE_CHECKING:  # the local page's server is imported when it starts, not for --help
    from http.server import BaseHTTPRequestHandler

HELP = (
    "register the GitHub App from app.yml (GitHub's manifest flow) and write its id, key and "
    "secret (0600)"
)
DEFAULT_MANIFEST = Path(__file__).resolve().parents[3] / "app.yml"
# GitHub's manifest codes are short tokens (hex in practice)
CODE = re.compile(r"[A-Za-z0-9_-]{1,200}")
FILES = {
    "id": "github-app-id",
    "secret": "github-webhook-secret",
    "key": "github-app-private-key.pem",
    "env": "registry-bot.env",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    register = sub.add_parser(
        "register", help=HELP, description=HELP, epilog=__doc__.split("\n\n")[1]
    )
    register.add_argument(
        "--webhook-url",
        required=True,
        help="where GitHub will POST deliveries: your web process's /webhook, over https",
    )
    register.add_argument(
        "--manifest", type=Path, default=DEFAULT_MANIFEST, help="the App manifest (YAML or JSON)"
    )
    register.add_argument(
        "--auto-merge",
        action="store_true",
        help="ask also for what delegation.auto_merge needs (contents: write, to merge)",
    )
    register.add_argument(
        "--name", help="the App's name (default: the manifest's; names are unique on GitHub)"
    )
    register.add_argument(
        "--org", help="register the App under this organization instead of your account"
    )
    register.add_argument(
        "--github-url",
        default="https://github.com",
        help="GitHub's web address (GitHub Enterprise Server: https://HOST)",
    )
    register.add_argument(
        "--api-url",
        default="https://api.github.com",
        help="GitHub's API (GitHub Enterprise Server: https://HOST/api/v3)",
    )
    register.add_argument(
        "--out", type=Path, default=Path("secrets"), help="folder for the credentials (0700)"
    )
    register.add_argument("--host", default="127.0.0.1", help="address the local page listens on")
    register.add_argument(
        "--port", type=int, default=8765, help="port of the local page (0: any free one)"
    )
    register.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="seconds to wait for GitHub's redirect (its code is valid for an hour)",
    )


def load_manifest(
    path: Path,
    webhook_url: str,
    redirect_url: str,
    name: str | None = None,
    features: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The manifest as GitHub's form wants it: JSON, with the webhook and redirect URLs filled in
    and the permissions the optional ``features`` need added
    (``bot.github.app_permissions.FEATURES``)."""
    import yaml

    try:
        manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"--manifest {path}: {exc}") from exc
    if not isinstance(manifest, dict):
        raise UsageError(f"--manifest {path}: not a mapping")
    manifest = dict(manifest)
    manifest["hook_attributes"] = {
        **(manifest.get("hook_attributes") or {}),
        "url": webhook_url,
        "active": True,
    }
    manifest["redirect_url"] = redirect_url
    if name:
        manifest["name"] = name
    if features:
        granted = {str(k): str(v) for k, v in (manifest.get("default_permissions") or {}).items()}
        manifest["default_permissions"] = {
            **granted,
            **{
                k: v
                for k, v in needed_for(features).items()
                if LEVELS[v] > LEVELS.get(granted.get(k, "none"), 0)
            },
        }
    return manifest


def permission_lines(permissions: dict[str, str]) -> list[str]:
    """Each permission the manifest asks for and the features that need it (what GitHub's page will
    show)."""
    out = []
    for name, level in sorted(permissions.items()):
        users = [
            f
            for f, needs in FEATURES.items()
            if name in needs and LEVELS[needs[name]] <= LEVELS.get(level, 0)
        ]
        out.append(f"  {name}: {level}" + (f" ({', '.join(users)})" if users else ""))
    return out


def exchange(api_url: str, code: str, timeout: float = 30.0) -> dict[str, Any]:
    """``POST /app-manifests/{code}/conversions``: the new App's id, slug, webhook secret and
    key."""
    import requests

    if not CODE.fullmatch(code):
        raise ValueError("GitHub's redirect carries a code that is not a manifest code")
    response = requests.post(
        f"{api_url.rstrip('/')}/app-manifests/{quote(code, safe='')}/conversions",
        timeout=timeout,
        headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
    )
    if response.status_code != 201:
        raise RuntimeError(
            f"GitHub refused the code ({response.status_code}): {response.text[:300]}"
        )
    data: dict[str, Any] = response.json()
    missing = [k for k in ("id", "pem", "webhook_secret") if not data.get(k)]
    if missing:
        raise RuntimeError(f"GitHub's answer lacks {', '.join(missing)}")
    return data


def write_credentials(out: Path, app: dict[str, Any]) -> dict[str, Path]:
    """Write the credentials, each file created 0600 in a 0700 folder; returns the paths by kind."""
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o700)
    paths = {kind: (out / name).resolve() for kind, name in FILES.items()}
    env = (
        f"GITHUB_APP_ID={app['id']}\nGITHUB_APP_PRIVATE_KEY_PATH={paths['key']}\n"
        f"GITHUB_WEBHOOK_SECRET_PATH={paths['secret']}\n"
    )
    for kind, text in (
        ("id", f"{app['id']}\n"),
        ("secret", f"{app['webhook_secret']}\n"),
        ("key", app["pem"]),
        ("env", env),
    ):
        path = paths[kind]
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    return paths


class Registration:
    """The local page and the callback: ``start()``, open ``url``, then ``wait()`` for the
    credentials."""

    def __init__(self, args: argparse.Namespace) -> None:
        import secrets
        from http.server import ThreadingHTTPServer

        self.args = args
        self.state = secrets.token_urlsafe(24)
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self.done = threading.Event()
        self.server = ThreadingHTTPServer((args.host, args.port), self._handler())
        self.url = f"http://{args.host}:{self.server.server_port}/"
        self.manifest = load_manifest(
            args.manifest,
            args.webhook_url,
            f"{self.url}callback",
            args.name,
            ("auto-merge",) if getattr(args, "auto_merge", False) else (),
        )

    def authority(self) -> str:
        """The ``Host`` a browser sends for ``url``: the only one the page answers."""
        return f"{self.args.host}:{self.server.server_port}".lower()

    def headers(self) -> dict[str, str]:
        """Not framed, not cached, no referrer (the state is in the page), nothing loaded."""
        return {
            "X-Frame-Options": "DENY",
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
        }

    def form_action(self) -> str:
        base = self.args.github_url.rstrip("/")
        where = (
            f"/organizations/{self.args.org}/settings/apps/new"
            if self.args.org
            else "/settings/apps/new"
        )
        return f"{base}{where}?state={self.state}"

    def page(self) -> str:
        manifest = html.escape(json.dumps(self.manifest), quote=True)
        return (
            "<!doctype html><meta charset=utf-8><title>Register the registry bot</title>"
            f"<h1>Register {html.escape(str(self.manifest.get('name', 'the App')))}</h1>"
            f"<p>GitHub shows the App's permissions and events before it creates it.</p>"
            f'<form action="{html.escape(self.form_action(), quote=True)}" method="post">'
            f'<input type="hidden" name="manifest" value="{manifest}">'
            "<button type=submit>Create the GitHub App</button></form>"
        )

    def callback(self, query: dict[str, list[str]]) -> tuple[int, str]:
        if query.get("state", [""])[0] != self.state:
            return (
                400,
                "The state does not match this registration: start again from the first page.",
            )
        code = query.get("code", [""])[0]
        if not code:
            return 400, "GitHub's redirect carries no code."
        if not CODE.fullmatch(code):
            return 400, "GitHub's redirect carries a code that is not a manifest code."
        try:
            app = exchange(self.args.api_url, code)
            paths = write_credentials(self.args.out, app)
        except (RuntimeError, OSError, ValueError) as exc:  # requests' errors are OSErrors
            self.error = str(exc)
            self.done.set()
            return 502, f"The code could not be exchanged: {exc}"
        self.result = {
            "id": app["id"],
            "slug": app.get("slug", ""),
            "html_url": app.get("html_url", ""),
            "files": {k: str(v) for k, v in paths.items()},
        }
        self.done.set()
        install = (
            f"{app.get('html_url', '')}/installations/new"
            if app.get("html_url")
            else "the App's page"
        )
        return 200, (
            f"The App {app.get('slug', app['id'])} is registered; its credentials are in "
            f"{self.args.out}. Now install it on the registry repository: {install}"
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        from http.server import BaseHTTPRequestHandler

        registration = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                if (self.headers.get("Host") or "").lower() != registration.authority():
                    self._send(421, "This page answers only at the address registry-bot printed.")
                elif url.path == "/":
                    self._send(200, registration.page())
                elif url.path == "/callback":
                    status, text = registration.callback(parse_qs(url.query))
                    self._send(
                        status, f"<!doctype html><meta charset=utf-8><p>{html.escape(text)}</p>"
                    )
                else:
                    self._send(404, "not found")

            def _send(self, status: int, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in registration.headers().items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def start(self) -> Registration:
        threading.Thread(target=self.server.serve_forever, name="app-register", daemon=True).start()
        return self

    def wait(self, timeout: float) -> dict[str, Any] | None:
        self.done.wait(timeout)
        self.server.shutdown()
        self.server.server_close()
        return self.result


def run(args: argparse.Namespace) -> int:
    if not args.webhook_url.startswith(("https://", "http://")):
        raise UsageError(f"--webhook-url {args.webhook_url}: not an http(s) URL")
    registration = Registration(args).start()
    print(f"Open {registration.url} in a browser signed in to GitHub and create the App.")
    print("It asks for these permissions (the features that need each; docs/app.md):")
    for line in permission_lines(dict(registration.manifest.get("default_permissions") or {})):
        print(line)
    if not args.auto_merge:
        print(
            "  (delegation.auto_merge also needs contents: write: register with --auto-merge, or "
            "grant it later)"
        )
    sys.stdout.flush()
    result = registration.wait(args.timeout)
    if result is None:
        print(
            f"registry-bot app register: {registration.error or 'no redirect from GitHub in time'}",
            file=sys.stderr,
        )
        return 1
    print(
        f"Registered App {result['slug'] or result['id']} (id {result['id']}). Credentials (mode "
        f"0600):"
    )
    for path in result["files"].values():
        print(f"  {path}")
    print(
        f"Install it on the registry repository: {result['html_url']}/installations/new"
        if result["html_url"]
        else "Install it on the registry repository from the App's settings page."
    )
    return 0
