"""The service's settings, read from the environment once, when a process starts (never at
import)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_QUEUE_URL = "registry-bot-queue.sqlite3"


class SettingsError(RuntimeError):
    """A required setting is missing or unusable; the message says which and how to fix it."""


@dataclass(frozen=True)
class Settings:
    app_id: int
    private_key: str
    webhook_secrets: tuple[str, ...]
    api_url: str = DEFAULT_API_URL
    queue_url: str = DEFAULT_QUEUE_URL

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        need_app: bool = True,
        need_webhook: bool = True,
    ) -> Settings:
        """Build settings from ``env`` (default ``os.environ``).

        The web process needs only the webhook secrets (``need_webhook``; it never calls GitHub);
        the worker needs only the App id and key (``need_app``). A secret may come from a file
        instead (``GITHUB_WEBHOOK_SECRET_PATH``, ``GITHUB_APP_PRIVATE_KEY_PATH``: compose
        ``secrets:``, or what ``registry-bot app register`` wrote). Every missing required variable
        is named in one message.
        """
        env = os.environ if env is None else env
        problems: list[str] = []
        raw_secrets = env.get("GITHUB_WEBHOOK_SECRET", "")
        secret_path = env.get("GITHUB_WEBHOOK_SECRET_PATH", "").strip()
        if not raw_secrets.strip() and secret_path:
            try:
                raw_secrets = Path(secret_path).read_text(encoding="utf-8").replace("\n", ",")
            except OSError as exc:
                problems.append(
                    f"GITHUB_WEBHOOK_SECRET_PATH={secret_path} cannot be read: {exc.strerror}"
                )
        secrets = tuple(s.strip() for s in raw_secrets.split(",") if s.strip())
        if need_webhook and not secrets and not secret_path:
            problems.append(
                "GITHUB_WEBHOOK_SECRET or GITHUB_WEBHOOK_SECRET_PATH is not set (the webhook "
                "secret of the App, or the file holding it; several, comma-separated, while "
                "rotating)"
            )
        app_id = 0
        raw_id = env.get("GITHUB_APP_ID", "").strip()
        id_path = env.get("GITHUB_APP_ID_PATH", "").strip()
        if not raw_id and id_path:
            try:
                raw_id = Path(id_path).read_text(encoding="utf-8").strip()
            except OSError as exc:
                problems.append(f"GITHUB_APP_ID_PATH={id_path} cannot be read: {exc.strerror}")
                raw_id = "0"
        if raw_id:
            if not raw_id.isdigit():
                problems.append(f"GITHUB_APP_ID must be a number, got {raw_id!r}")
            else:
                app_id = int(raw_id)
        elif need_app:
            problems.append(
                "GITHUB_APP_ID or GITHUB_APP_ID_PATH is not set (the App's numeric id, on its "
                "settings page, or the file holding it)"
            )
        private_key = env.get("GITHUB_APP_PRIVATE_KEY", "").replace("\\n", "\n").strip()
        key_path = env.get("GITHUB_APP_PRIVATE_KEY_PATH", "").strip()
        if not private_key and key_path:
            try:
                private_key = Path(key_path).read_text(encoding="utf-8").strip()
            except OSError as exc:
                problems.append(
                    f"GITHUB_APP_PRIVATE_KEY_PATH={key_path} cannot be read: {exc.strerror}"
                )
        if need_app and not private_key and not key_path:
            problems.append(
                "GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_PATH is not set "
                "(the App's PEM private key, or the path of the .pem file)"
            )
        elif private_key and "PRIVATE KEY" not in private_key:
            problems.append("the App private key is not a PEM key (no 'PRIVATE KEY' header)")
        api_url = env.get("GITHUB_API_URL", "").strip().rstrip("/") or DEFAULT_API_URL
        if not api_url.startswith(("https://", "http://")):
            problems.append(
                f"GITHUB_API_URL must be an http(s) URL such as https://HOST/api/v3, got "
                f"{api_url!r}"
            )
        if problems:
            raise SettingsError("registry-bot cannot start:\n  - " + "\n  - ".join(problems))
        return cls(
            app_id=app_id,
            private_key=private_key,
            webhook_secrets=secrets,
            api_url=api_url,
            queue_url=env.get("BOT_QUEUE_URL", "").strip() or DEFAULT_QUEUE_URL,
        )
