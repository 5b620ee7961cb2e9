"""``registry-bot init NAME EVENT...``: draft a new registry entry from sample events
(``bot.model.draft``).

Writes ``spec/registry/<name>/`` (``gcp:composer`` -> ``gcp/composer``): a CODEOWNERS naming the
``--owner``s, a ``registry.json`` declaring the entry's facets, and for each facet of the events
keyed with the entry's prefix a schema and an example. It writes nothing unless everything is valid:
a missing repository, a folder without a registry, an existing entry, a file without events,
events without a facet to draft, two facets drafted under one file name, or a symlink on the way
to a file it would write (a symlinked registry folder or ``.github``: files outside the
repository) are refused (one line, exit 2) before the first file is written.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bot.cli import EXIT_OK, UsageError, verdict

HELP = (
    "draft a new registry entry (CODEOWNERS, registry.json, facet schemas and examples) from "
    "sample events"
)
DEFAULT_SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
MAX_INPUT_BYTES = 8 * 1024 * 1024  # all event files together (dbt's whole test suite: 1 MiB)
MAX_SCHEMA_FILES = 5000  # repository files read looking for existing facet schemas
MAX_SCHEMA_BYTES = 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", help="the name to register (lower case; ':' nests, as in gcp:composer)"
    )
    parser.add_argument(
        "events",
        nargs="+",
        metavar="EVENT",
        help="sample OpenLineage events (JSON, JSON arrays or JSON lines files)",
    )
    parser.add_argument(
        "--owner",
        action="append",
        required=True,
        metavar="@LOGIN|@ORG/TEAM",
        help="an owner of the entry (repeatable): the entry's CODEOWNERS names them",
    )
    parser.add_argument(
        "--repo", default=".", help="the registry repository to write into (default: .)"
    )
    parser.add_argument(
        "--producer",
        metavar="URL",
        help="the _producer of the examples (default: the events' own producer URL)",
    )
    parser.add_argument(
        "--doc-url",
        metavar="URL",
        help="the entry's documentation (registry.json root_doc_URL; default: the producer URL)",
    )


def run(args: argparse.Namespace) -> int:
    from bot.cli.commands import _inputs
    from bot.core.config import load_config
    from bot.core.snapshot import DirSnapshot
    from bot.model import draft

    if not draft.NAME.fullmatch(args.name):
        raise UsageError(
            f"{args.name!r} is not a registry name: lower-case ASCII letters and digits, '-' "
            f"between "
            "them, ':' nesting (as in gcp:composer)"
        )
    from bot.model.codeowners import LOGIN, NAME

    owner = re.compile(
        rf"@(?:{LOGIN}|{NAME}/[A-Za-z0-9._-]{{1,100}})|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+"
    )
    bad = [o for o in args.owner if not owner.fullmatch(o)]
    if bad:
        raise UsageError(
            f"owners are @login, @org/team or an e-mail address, not {', '.join(map(repr, bad))}"
        )
    for option, url in (("--producer", args.producer), ("--doc-url", args.doc_url)):
        if url is not None and not draft.HTTP_URL.fullmatch(url):
            raise UsageError(f"{option} {url!r}: not an http(s) URL")
    repo = _inputs.folder(args.repo)
    snapshot = DirSnapshot(repo)
    _inputs.registry_folder([snapshot], str(repo))
    config, _ = load_config(snapshot)
    registry = config.paths.registry.strip("/")
    folder = repo / registry / args.name.replace(":", "/")
    if folder.exists():
        raise UsageError(f"{folder} exists: init drafts a new entry only")
    prefix = draft.prefix_of(args.name)
    try:
        sampled = draft.collect(_documents(args.events), prefix)
    except draft.DraftError as exc:
        raise UsageError(str(exc)) from None
    if not sampled.samples:
        skipped = (
            "; ".join(f"{len(keys)} {why}" for why, keys in sampled.skipped.items())
            or "no facets at all"
        )
        raise UsageError(
            f"nothing to draft: no facet keyed {prefix}_... in {sampled.events} event(s) "
            f"({skipped})"
        )
    producer = args.producer or _most_common(sampled.producers)
    if producer is None:
        raise UsageError("the events name no producer URL: give --producer URL (and --doc-url URL)")
    keys = {key for key, _ in sampled.samples}
    existing = draft.existing_schemas(
        _facet_schemas(repo, (registry, config.paths.mirror_folder)), keys
    )
    try:
        result = draft.draft(
            args.name,
            args.owner,
            sampled,
            _spec_url(repo / config.paths.spec),
            producer,
            args.doc_url or producer,
            existing,
            registry,
        )
    except draft.DraftError as exc:
        raise UsageError(str(exc)) from None
    files = {**result.files, **_root_routing(repo, registry, args.name, args.owner)}
    # every target checked first: nothing written through a symlinked folder (to outside the
    # repository) and no refusal after the first file
    _inputs.writable_in(repo, files)
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    verdict(EXIT_OK)  # written: a reader that stops early changes nothing
    for path in files:
        print(f"{'updated' if path not in result.files else 'wrote'} {path}")
    for note in result.notes:
        print(f"note: {note}")
    if not args.doc_url:
        print(
            f"note: root_doc_URL is the producer URL {producer}; give --doc-url for the "
            f"integration's documentation"
        )
    written = [folder.relative_to(repo).as_posix(), *sorted(set(files) - set(result.files))]
    print(
        f"{args.name}: {result.facets} facet(s) drafted from {sampled.events} event(s); write "
        f"their descriptions, then {next_step(repo, written)}"
    )
    return EXIT_OK


def _root_routing(repo: Path, registry: str, name: str, owners: list[str]) -> dict[str, str]:
    """The root CODEOWNERS GitHub reads, with a last line routing the entry to its owners (as the
    ``owners/root-mismatch`` rule asks); nothing when the repository has none."""
    from bot.model.codeowners import ROOT_LOCATIONS

    for location in ROOT_LOCATIONS:
        path = repo / location
        if path.is_file() and not path.is_symlink():
            text = path.read_text(encoding="utf-8")
            line = f"/{registry}/{name.replace(':', '/')}/ {' '.join(owners)}\n"
            return {location: text + ("" if not text or text.endswith("\n") else "\n") + line}
    return {}


def _documents(paths: list[str]) -> Iterator[Any]:
    """The JSON documents of every event file, each file required to hold at least one event."""
    from bot.model.naming.events import EventsProblem, document_kind, read_events

    total = 0
    for path in paths:
        file = Path(path)
        try:
            total += file.stat().st_size
            if total > MAX_INPUT_BYTES:
                raise UsageError(
                    f"the event files are over {MAX_INPUT_BYTES // (1024 * 1024)} MiB together: "
                    "a few samples per facet are enough"
                )
            documents = read_events(file)
        except EventsProblem as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        if not any(document_kind(d) in ("RunEvent", "JobEvent", "DatasetEvent") for d in documents):
            raise UsageError(f"{path} holds no OpenLineage event")
        yield from documents


def _most_common(counts: Any) -> str | None:
    top = counts.most_common(1)
    return str(top[0][0]) if top else None


def _spec_url(path: Path) -> str:
    try:
        value = json.loads(path.read_bytes()).get("$id")
    except (OSError, ValueError, AttributeError):
        return DEFAULT_SPEC
    return value if isinstance(value, str) and value.startswith("https://") else DEFAULT_SPEC


def _facet_schemas(repo: Path, skip: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """Facet schema files of the repository outside the registry and the published mirror (an
    integration's own ``*facet*.json``), bounded in number and size."""
    seen = 0
    for root, dirs, names in os.walk(repo):
        rel_root = Path(root).relative_to(repo).as_posix()
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d != "node_modules"
            and (f"{rel_root}/{d}".lstrip("./") not in skip)
        )
        for name in sorted(names):
            if not (name.endswith(".json") and "facet" in name.lower()):
                continue
            seen += 1
            if seen > MAX_SCHEMA_FILES:
                return
            path = Path(root) / name
            try:
                if path.is_symlink() or path.stat().st_size > MAX_SCHEMA_BYTES:
                    continue
                yield (path.relative_to(repo).as_posix(), json.loads(path.read_bytes()))
            except (OSError, ValueError, RecursionError):
                continue


def next_step(repo: Path, paths: list[str]) -> str:
    """What to run next: a review of the draft as a pull request would get it, from the branch it
    will be merged into (a draft on that branch itself is first moved to a branch of its own)."""
    from bot.core.snapshot import GitError, run_git

    entry = " ".join(paths)
    name = paths[0].rsplit("/", 1)[-1]
    try:
        run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except (GitError, OSError):
        return (
            f"run `registry-bot check {repo} --all` (not a git repository with a commit: the whole "
            f"tree)"
        )
    try:
        current = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD").decode().strip()
    except GitError:
        current = ""
    target = _default_branch(repo) or current or "main"
    branch = f"registry-{name}"
    # main, or the clone's origin/main
    on_target = current in (target, target.removeprefix("origin/"))
    if not current or on_target:
        return (
            f"commit it on a branch of its own (`git -C {repo} switch -c {branch} && git -C {repo} "
            f"add {entry} && git -C {repo} commit`) and run `registry-bot check {repo} --base "
            f"{target}`"
        )
    return (
        f"commit it (`git -C {repo} add {entry} && git -C {repo} commit`) and run `registry-bot "
        f"check {repo} --base {target}`"
    )


def _default_branch(repo: Path) -> str | None:
    """The branch pull requests go to: origin's HEAD, else main, else master (None when none
    exists)."""
    from bot.core.snapshot import GitError, run_git

    try:
        return (
            run_git(repo, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
            .decode()
            .strip()
        )
    except GitError:
        pass
    for branch in ("main", "master"):
        try:
            run_git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
        except GitError:
            continue
        return branch
    return None
