"""``python -m bot`` is ``registry-bot``."""

from bot.cli.entry import main

raise SystemExit(main())
