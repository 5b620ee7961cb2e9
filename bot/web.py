"""``gunicorn 'bot.web:create_app()'``: the webhook service (implemented in ``bot.app.web``)."""

from bot.app.web import create_app

__all__ = ["create_app"]
