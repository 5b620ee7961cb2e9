"""``python -m bot`` is ``registry-bot``."""

from bot.entry import main

raise SystemExit(main())
