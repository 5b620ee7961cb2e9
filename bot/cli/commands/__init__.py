"""Subcommands of ``registry-bot`` (see ``bot.cli``)."""
