"""``/registry-bot waive RULE PATH#POINTER REASON``: answered with the waiver to add, never applied.

Anyone may ask; the answer is one reply comment naming the file an owner would change (the entry's
``waivers.json`` or the configuration's ``waivers:`` list) and the waiver itself, or why no such
waiver can be proposed (a rule never waived, a waiver ``registry/waivers.schema.json`` rejects).
Only a waiver merged to the default branch and granted by the owners ever waives
(``bot.review.waiving``), so this command changes no state.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from dataclasses import dataclass

from bot.core.config import CONFIG_PATHS, Config, ConfigError, parse_config
from bot.core.quoting import backtick_fence, code, escape
from bot.core.waivers import FILE_NAME, never_waived, schema_problems
from bot.github.api import GitHubAPI, GitHubError, PullRequest
from bot.github.lazy_snapshot import TreeSnapshot
from bot.model.registry import Registry

USAGE = (
    "`/registry-bot waive RULE PATH#POINTER REASON...` (for example `/registry-bot waive "
    "examples/missing spec/registry/NAME/facets/XRunFacet.json# examples come with the next "
    "release`)"
)
DAYS = 90  # the expiry proposed: an owner may choose another
# the reply's first line: the delivery it answers, so that a job run again (a crash after GitHub
# took the reply, a Redis stall waited out) finds its reply instead of posting another
REPLY_MARKER = "<!-- registry-bot:waive delivery={} -->"
_DELIVERY = re.compile(r"[A-Za-z0-9._:-]{1,200}")


class Unread(Exception):
    """A file the proposal needs that GitHub does not serve (over its size): no waiver is
    proposed, and the reply says which file."""


@dataclass(frozen=True)
class Request:
    rule: str
    path: str
    pointer: str
    reason: str


def parse(command: str) -> Request | str:
    """The waiver a command asks for, or why it cannot be read."""
    parts = command.split(None, 4)
    if len(parts) < 5:
        return f"a waiver needs a rule, a place and a reason: {USAGE}"
    _, _, rule, place, reason = parts
    path, _, pointer = place.partition("#")
    if (
        "/" not in rule
        or path.startswith("/")
        or ".." in path.split("/")
        or (pointer and not pointer.startswith("/"))
    ):
        return f"{command.split(None, 2)[-1][:80]!r} is not RULE PATH#POINTER: {USAGE}"
    return Request(rule, path, pointer, reason.strip())


def _config(gh: GitHubAPI, pr: PullRequest) -> Config:
    for path in CONFIG_PATHS:
        try:
            data = gh.read_file(pr.repo, pr.base_sha, path)
        except GitHubError as exc:
            if exc.status != 413:
                raise
            raise Unread(
                f"the configuration {code(path, table=False)} on the base branch could not be "
                f"read: it is over the size GitHub serves ({escape(str(exc), 200)})"
            ) from None
        if data is not None:
            try:
                return parse_config(data.decode("utf-8", "replace"), path)
            except ConfigError:
                return Config(source=path)
    return Config()


def target_file(gh: GitHubAPI, pr: PullRequest, path: str) -> str:
    """Where the waiver would live on the base branch: the entry's ``waivers.json`` (the entry
    ``path`` belongs to there, as a review judges a waiver: ``Registry.entry_for``), else the
    configuration. One listing of the registry folder, whatever the path: never a read per folder
    of a path the commenter chose."""
    config = _config(gh, pr)
    registry = config.paths.registry
    if path.startswith((config.paths.facets + "/", config.paths.tests + "/")):
        return f"{registry}/core/{FILE_NAME}"
    if path.startswith(registry + "/"):
        listing = gh.read_tree(pr.repo, pr.base_sha, (registry,))  # paths only: nothing is read
        entry = Registry(TreeSnapshot(listing, pr.base_sha[:12]), config).entry_for(path)
        if entry is not None:
            return f"{entry.folder}/{FILE_NAME}"
    return f"{config.source or CONFIG_PATHS[0]} (waivers:)"


def reply_marker(delivery: str) -> str:
    """The hidden line that names the delivery a reply answers: the delivery as it is when it is a
    GUID-like name (GitHub's are), else its SHA-256 (the header is not signed: it must not end the
    HTML comment)."""
    name = (
        delivery
        if _DELIVERY.fullmatch(delivery)
        else "sha256-" + hashlib.sha256(delivery.encode("utf-8", "replace")).hexdigest()
    )
    return REPLY_MARKER.format(name)


def reply(gh: GitHubAPI, pr: PullRequest, command: str, asked_by: str, today: datetime.date) -> str:
    """The reply to a waive command: the proposed waiver, or how to write the command."""
    wanted = parse(command)
    if isinstance(wanted, str):
        return f"Cannot propose a waiver: {escape(wanted, 500)}"
    waiver = {
        "rule": wanted.rule,
        "path": wanted.path,
        "pointer": wanted.pointer,
        "reason": wanted.reason,
        "granted_by": "@OWNER",
        "expires": (today + datetime.timedelta(days=DAYS)).isoformat(),
    }
    # never a waiver the review would refuse: one of a rule never waived, or one the schema rejects
    why = never_waived(wanted.rule) or "; ".join(schema_problems(waiver))
    if why:
        return f"Cannot propose a waiver: {escape(why, 500)}"
    block = json.dumps(waiver, indent=2, ensure_ascii=True)
    fence = backtick_fence(block, 3)
    try:
        where = target_file(gh, pr, wanted.path)
    except Unread as exc:
        return f"Cannot propose a waiver: {exc}"
    return "\n".join(
        [
            f"Proposed waiver, asked for by {escape('@' + asked_by, 100)}. **This comment changes "
            f"nothing**: a waiver applies only once an owner adds it to {code(where, table=False)} "
            f"on the default branch, in a pull request "
            "their ownership rules review, granted in their own name (`granted_by`), and never to "
            "the pull request that adds it.",
            "",
            f"{fence}json",
            block,
            fence,
        ]
    )
