"""Health checks the containers run: ``python -m bot.service.health web`` or ``worker`` (exit 0 when
healthy).

They live in the image's code, not only in a Dockerfile ``HEALTHCHECK`` (which podman drops when it
builds in the OCI format), so compose's ``healthcheck:`` runs the same command whatever built the
image.

- ``web``: ``GET /healthz`` on ``$PORT`` answers 200.
- ``worker``: the worker's heartbeat file (``$WORKER_HEARTBEAT``) is younger than ``--max-age``
  seconds. The worker writes it at start and after each sweep of the queue (every ``--sweep-every``
  seconds), which reads the open jobs: a worker whose queue is unreachable, or whose sweep thread
  died, goes stale. A problem the worker cannot cure by itself (its host clock so far off that
  GitHub refuses the App's tokens) is written beside the heartbeat (``problem``) and fails the check
  with its reason.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import urllib.request

from bot.core.health_marks import DEFAULT_HEARTBEAT, beat, heartbeat_path, problem

__all__ = ["DEFAULT_HEARTBEAT", "beat", "heartbeat_path", "main", "problem"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.service.health", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("process", choices=("web", "worker"))
    parser.add_argument(
        "--max-age", type=float, default=90.0, help="worker: the heartbeat's oldest age, seconds"
    )
    args = parser.parse_args(argv)
    if args.process == "web":
        url = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=4) as response:
                return 0 if response.status == 200 else 1
        except OSError as exc:
            print(f"{url}: {exc}", file=sys.stderr)
            return 1
    with contextlib.suppress(OSError):
        print(
            heartbeat_path().with_suffix(".problem").read_text(encoding="utf-8").strip(),
            file=sys.stderr,
        )
        return 1
    try:
        age = time.time() - heartbeat_path().stat().st_mtime
    except OSError as exc:
        print(f"no heartbeat: {exc}", file=sys.stderr)
        return 1
    if age > args.max_age:
        print(f"the worker's last heartbeat is {age:.0f} s old", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
