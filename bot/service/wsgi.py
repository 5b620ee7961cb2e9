"""``gunicorn 'bot.service.wsgi:create_app()'``: the webhook service (implemented in
``bot.service.web``)."""

from bot.service.web import create_app

__all__ = ["create_app"]
