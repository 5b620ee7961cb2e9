"""Writing the published site: in parallel shards or in one process, into a new folder or over an
earlier output, the same files with the same bytes; the field rows rendered in Python as the
template rendered them."""

from __future__ import annotations

import signal
from pathlib import Path

import jinja2
import pytest

from benchmarks.registry_gen import generate
from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.outputs.site import build_site
from bot.outputs.site.build import MARKER, site_files, write_site
from bot.outputs.site.fields import Field
from bot.outputs.site.model import Site
from bot.outputs.site.pages import field_row


def site_of(repo: Path) -> Site:
    snapshot = DirSnapshot(repo, label="registry")
    return build_site(snapshot, load_config(snapshot)[0])


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Site, Site]:
    """The real registry and a generated one of 30 entries (150 facet pages)."""
    return site_of(corpus), site_of(generate(tmp_path_factory.mktemp("gen") / "registry", 30))


def test_parallel_shards_write_exactly_what_one_process_writes(
    sites: tuple[Site, Site], tmp_path: Path
) -> None:
    for n, site in enumerate(sites):
        expected = {**site_files(site), MARKER: b""}
        for workers in (1, 2, 3):
            out = tmp_path / f"site{n}-{workers}"
            assert write_site(site, out, workers=workers) == len(expected)
            written = tree(out)
            assert written.keys() == expected.keys(), workers
            assert all(written[p] == expected[p] for p in expected if p != MARKER), workers


def test_publishing_over_an_earlier_output_leaves_what_a_new_folder_gets(
    sites: tuple[Site, Site], tmp_path: Path
) -> None:
    real, generated = sites
    fresh = tmp_path / "fresh"
    write_site(real, fresh)
    out = tmp_path / "out"
    write_site(generated, out, workers=2)
    # folders where files go
    for path in ("facets/core/ColumnLineageDatasetFacet.html", "naming.html"):
        (out / path).unlink(missing_ok=True)
        (out / path).mkdir(parents=True)
        (out / path / "inside.html").write_text("old", encoding="utf-8")
    (out / "stale/deeper").mkdir(parents=True)
    (out / "stale/deeper/old.html").write_text("old", encoding="utf-8")
    # unchanged: not written again
    (out / "compat.html").write_bytes((fresh / "compat.html").read_bytes())
    (out / "spec").rename(out / "spec-moved")
    (out / "spec").write_text("a file where the new output has a folder", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside", encoding="utf-8")
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(outside)  # never written through
    before = (out / "compat.html").stat()
    write_site(real, out)
    assert tree(out) == tree(fresh)
    assert not [p for p in out.rglob("*") if p.is_dir() and not any(p.iterdir())], (
        "a folder left empty"
    )
    assert (
        outside.read_text(encoding="utf-8") == "outside" and not (out / "index.html").is_symlink()
    )
    after = (out / "compat.html").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    changed = out / "index.html"
    inode = changed.stat().st_ino
    write_site(generated, out, workers=2)  # a changed file is rewritten into the same inode
    assert changed.stat().st_ino == inode and tree(out).keys() == {*site_files(generated), MARKER}


def test_a_folder_that_is_not_an_earlier_output_is_refused_and_kept(
    sites: tuple[Site, Site], tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(FileExistsError):
        write_site(sites[1], mine, workers=2)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


# The row as facet.html rendered it before rows were rendered in Python.
ROW = jinja2.Environment(autoescape=True).from_string(
    '<tr{% if x.inherited %} class="inherited"{% endif %}><td class="indent-{{ [x.depth, 4]|min '
    '}}"><code><span class="parent">{{ x.parent }}</span><strong>{{ x.leaf '
    "}}</strong></code></td><td>{{ x.type }}"
    "{% if x.format %} <small>({{ x.format }})</small>{% endif %}{% if x.enum %}<br><small>one of "
    "{% for v in x.enum %}<code>{{ v }}</code>{% if not loop.last %}, {% endif %}{% endfor "
    "%}</small>{% endif %}"
    '</td><td>{% if x.required %}<span class="req">required</span>{% else %}<span '
    'class="opt">optional</span>{% endif %}</td><td>{% if x.deprecated %}<span '
    'class="req">deprecated</span> {% endif %}{{ x.description }}'
    "{% for n in x.notes %}<br><small>{{ n }}</small>{% endfor %}{% if x.default "
    "%}<br><small>default <code>{{ x.default }}</code></small>{% endif %}{% if x.inherited %} "
    "<small>(from {{ x.inherited }})</small>{% endif %}</td></tr>"
)


def test_field_rows_are_the_templates_rows(sites: tuple[Site, Site]) -> None:
    hostile = "<script>&\"'{x}"
    rows = [
        Field(
            path=f"a.b.c.d.e.{hostile}",
            type=hostile,
            required=True,
            description=hostile,
            format=hostile,
            enum=(hostile, "x"),
            inherited=hostile,
            default=hostile,
            deprecated=True,
            notes=(hostile, "n"),
        ),
        Field(path="plain", type="string", required=False),
    ]
    rows += [
        x for site in sites for f in site.facets.values() for d in f.definitions for x in d.fields
    ]
    assert len(rows) > 500
    for x in rows:
        assert field_row(x) == ROW.render(x=x), x


def _handlers_of_a_writer(shard: tuple[int, int]) -> list[str]:
    """Stands in for a forked writer's share: what SIGTERM and SIGHUP do there."""
    return [f"{shard[0]}:{signal.getsignal(s)}" for s in (signal.SIGTERM, signal.SIGHUP)]


def test_forked_writers_die_on_sigterm_whatever_the_command_line_set(
    sites: tuple[Site, Site], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding: `registry-bot publish` sets SIGTERM and SIGHUP to raise where the command is, and
    the forked writers inherited it; the pool ends its writers with SIGTERM when it closes, and a
    writer that raised inside the pool's queue code instead of dying could wait for good on a lock
    another writer held when it died, the parent waiting on it (a CI run hung so). The writers now
    start with the default handlers: SIGTERM kills them."""
    from bot.cli import _on_termination
    from bot.outputs.site import build

    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    for s in saved:
        signal.signal(s, signal.SIG_DFL)
    _on_termination()  # what the command line sets before `publish` runs
    assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
    monkeypatch.setattr(build, "_write_shard", _handlers_of_a_writer)
    written: list[str] = []
    monkeypatch.setattr(build, "finish", lambda _out, _earlier, paths: written.extend(paths) or 0)
    try:
        write_site(sites[0], tmp_path / "site", workers=2)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    seen = sorted(p for p in written if p.startswith(("0:", "1:")))  # the writers' shares
    default = str(signal.SIG_DFL)
    assert seen == [f"0:{default}", f"0:{default}", f"1:{default}", f"1:{default}"]
