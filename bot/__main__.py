"""``python -m bot`` is ``registry-bot``."""

from bot.cli import main

raise SystemExit(main())
