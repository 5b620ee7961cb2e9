"""``registry-bot publish``: build the registry's static site, Docusaurus pages and discovery
index."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_OK, UsageError
from bot.cli.commands import _inputs

if TYPE_CHECKING:
    from bot.core.snapshot import Snapshot

HELP = (
    "build the published registry (ecosystem, facet pages, schemas, discovery index) into a folder"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "repo", help="a registry repository: a folder, or a git repository with --rev"
    )
    parser.add_argument("out", help="the output folder (created; an earlier output is replaced)")
    parser.add_argument("--rev", help="build from this git revision instead of the working tree")
    parser.add_argument(
        "--no-markdown", action="store_true", help="skip the Docusaurus Markdown (docusaurus/)"
    )
    parser.add_argument(
        "--source-url",
        metavar="URL",
        help="where the repository's files are browsed, for example "
        "https://github.com/OpenLineage/OpenLineage/blob/SHA: the dashboard page links each "
        "finding to its file and line there",
    )
    parser.add_argument(
        "--draft-presentation",
        metavar="PARTNERS",
        nargs="+",
        help="instead of the site, draft the presentation fields (organisation, display name, "
        "description, homepage, logo, categories) of the entries partner lists place, into "
        "OUT: JSON, or the hand-written page's producers.tsx and consumers.tsx",
    )
    parser.add_argument(
        "--entries",
        metavar="MAP.json",
        help="with --draft-presentation: which entries each partner owns, "
        '{"Google": ["gcp:dataproc", "gcp:lineage"]}',
    )


def run(args: argparse.Namespace) -> int:
    import dataclasses
    import datetime

    from bot.core.config import load_config
    from bot.core.snapshot import DirSnapshot, GitError
    from bot.outputs.dashboard import for_tree
    from bot.outputs.site import build_site
    from bot.outputs.site.build import write_site
    from bot.outputs.site.model import SiteError

    repo, out = Path(args.repo), Path(args.out)
    if args.source_url is not None and not args.source_url.startswith(("https://", "http://")):
        raise UsageError(f"--source-url {args.source_url!r} is not an https:// or http:// URL")
    if not repo.is_dir():
        raise UsageError(f"{repo} is not a folder")
    if out.resolve() == repo.resolve() or (
        repo.resolve() in out.resolve().parents and not args.rev
    ):
        raise UsageError(
            f"{out} is inside the repository it is built from; choose a folder outside it"
        )
    try:
        snapshot: Snapshot = (
            _inputs.revision(_inputs.git_repository(args.repo), args.rev, "--rev")
            if args.rev
            else DirSnapshot(repo, label=repo.resolve().name)
        )
        _inputs.registry_folder([snapshot], str(repo))
        if args.draft_presentation:
            return _draft(
                snapshot,
                [Path(p) for p in args.draft_presentation],
                Path(args.entries) if args.entries else None,
                out,
            )
        config = load_config(snapshot)[0]
        today = datetime.datetime.now(datetime.UTC).date()
        site = dataclasses.replace(
            build_site(snapshot, config),
            dashboard=for_tree(snapshot, config, today),
            source_url=args.source_url or "",
        )
        count = write_site(site, out, markdown=not args.no_markdown)
    except (GitError, FileExistsError, SiteError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {exc.filename or out}: {exc.strerror or exc}") from None
    print(
        f"{count} files: {len(site.entries)} registered names, {len(site.facets)} facet pages, "
        f"{len(site.schema_files)} schema files. Open {(out / 'index.html').resolve().as_uri()}",
        file=sys.stderr,
    )
    return EXIT_OK


def _draft(snapshot: Snapshot, lists: list[Path], entries: Path | None, out: Path) -> int:
    """``--draft-presentation``: drafted registry.json files and logos under ``out``
    (bot.outputs.site.migrate)."""
    import json

    from bot.core.config import load_config
    from bot.outputs.site.build import write_files
    from bot.outputs.site.migrate import draft_presentation, read_partner_list

    partners: list[object] = []
    for path in lists:
        try:
            partners += read_partner_list(path)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read the partner list {path}: {exc}") from None
    try:
        mapping = json.loads(entries.read_text(encoding="utf-8")) if entries is not None else None
        if mapping is not None and not (
            isinstance(mapping, dict)
            and all(
                isinstance(v, list) and all(isinstance(n, str) for n in v) for v in mapping.values()
            )
        ):
            raise ValueError('expected {"partner": ["entry", ...]}')
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the entries map {entries}: {exc}") from None
    drafts = draft_presentation(
        snapshot, load_config(snapshot)[0], partners, lists[0].parent, mapping
    )
    count = write_files(drafts.files, out)
    for note in drafts.notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"{len(drafts.placed)} of {len(partners)} partners placed, {count} files drafted under "
        f"{out}: review "
        "them, then copy them into the repository",
        file=sys.stderr,
    )
    return EXIT_OK


DEMO_SITE = "registry-bot-demo-site"


def demo_site(snapshot: Snapshot) -> str:
    """Build the site of ``snapshot`` into ``<tmp>/registry-bot-demo-site`` (replaced each run) for
    ``registry-bot demo``; returns the line that says where to open it (or why it was not built)."""
    import tempfile

    from bot.core.config import load_config
    from bot.outputs.site import build_site
    from bot.outputs.site.build import write_site
    from bot.outputs.site.model import SiteError

    out = Path(tempfile.gettempdir()) / DEMO_SITE
    try:
        write_site(build_site(snapshot, load_config(snapshot)[0]), out)
    except (OSError, SiteError) as exc:
        return f"The published site of the sample was not built: {exc}"
    return f"Published site of the sample (registry-bot publish): {(out / 'index.html').as_uri()}"
