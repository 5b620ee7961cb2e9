"""The facet key prefix is one rule: the checks (``facets/prefix-key``) and the regression
(``facet-key``) apply the same function (``bot.model.registry.carries_prefix``) and agree on every
spelling, on the real corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.core.changes import ChangeSet, FileChange, Status
from bot.core.config import load_config
from bot.core.findings import State
from bot.core.snapshot import DirSnapshot
from bot.model.registry import camel, key_prefixes
from bot.review.checks import facets
from bot.review.compose import ReviewRequest, run_review
from bot.review.fixes import Overlay
from bot.review.regression.compare import BROKEN, FAIL, PASS, _key_status
from bot.review.regression.side import SideSpec
from tests.regress_helpers import COMPOSER, JOB_FACET, make_tree, outcomes, run

# (entry, its facet file, the key that file defines in the corpus)
FILES = [
    ("gcp:dataproc", "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json", "gcp_dataproc"),
    (
        "gcp:composer",
        "spec/registry/gcp/composer/facets/GcpComposerRunFacet.json",
        "gcp_composer_run",
    ),
]
# spelling -> (how the key is written from the entry name, whether it carries the prefix)
SPELLINGS = {
    "snake": (lambda name: key_prefixes(name)[0] + "_run", True),
    "camel": (lambda name: camel(name) + "_run", True),
    "folded": (lambda name: key_prefixes(name)[2] + "_run", True),
    "pascal": (lambda name: camel(name)[:1].upper() + camel(name)[1:] + "_run", False),
    "last part only": (lambda name: name.rsplit(":", 1)[-1] + "_run", False),
    "no prefix": (lambda name: "run", False),
}
PROBES = [(name, path, old, spelling) for name, path, old in FILES for spelling in SPELLINGS]


def renamed(corpus: Path, path: str, old: str, new: str) -> Overlay:
    """The corpus with facet key ``old`` of ``path`` renamed ``new`` (the schema only)."""
    tree = DirSnapshot(corpus)
    text = (tree.read(path) or b"").decode()
    assert f'"{old}"' in text
    return Overlay(tree, {path: text.replace(f'"{old}"', f'"{new}"').encode()})


def check_verdict(tree: Overlay, path: str, key: str) -> str:
    report = run_review(ReviewRequest(head=tree, checks=(facets.check,)))
    flagged = [f for f in report.findings if f.rule == "facets/prefix-key" and f.path == path]
    assert all(f.pointer == f"/properties/{key}" for f in flagged)
    return FAIL if flagged else PASS


def regression_verdict(tree: Overlay, path: str, key: str) -> str:
    spec = SideSpec.build(tree, load_config(tree)[0], "head")
    url = spec.by_filename[path.rsplit("/", 1)[-1]]
    status, message = _key_status(spec, url, "", key)
    # the key is the schema's: only the prefix is judged
    assert status == PASS or "prefix" in message, message
    return status


@pytest.mark.parametrize(
    ("name", "path", "old", "spelling"),
    PROBES,
    ids=[f"{name}-{spelling}" for name, _, _, spelling in PROBES],
)
def test_checks_and_regression_agree_on_the_prefix(
    corpus: Path, name: str, path: str, old: str, spelling: str
) -> None:
    spell, carries = SPELLINGS[spelling]
    key = spell(name)
    tree = renamed(corpus, path, old, key)
    expected = PASS if carries else FAIL
    assert (check_verdict(tree, path, key), regression_verdict(tree, path, key)) == (
        expected,
        expected,
    )


# a prefix ends a word: the key ends there or goes on with `_` or an upper-case letter
BOUNDARIES = {
    "gcp_composer": PASS,
    "gcp_composer_run": PASS,
    "gcpComposerRun": PASS,
    "gcp_composerRun": PASS,
    "gcp_composers_run": FAIL,  # `gcp_composer` followed by a letter: another word
    "gcp_composer2_run": FAIL,
    "gcpcomposerx": FAIL,
}


@pytest.mark.parametrize("key", sorted(BOUNDARIES))
def test_the_prefix_ends_a_word_in_checks_and_regression(corpus: Path, key: str) -> None:
    _, path, old = FILES[1]
    tree = renamed(corpus, path, old, key)
    assert (check_verdict(tree, path, key), regression_verdict(tree, path, key)) == (
        BOUNDARIES[key],
        BOUNDARIES[key],
    )


def taken(tree: Overlay, path: str) -> list[tuple[str, str, str]]:
    report = run_review(ReviewRequest(head=tree, checks=(facets.check,)))
    return sorted(
        (f.rule, f.pointer or "", f.message)
        for f in report.findings
        if f.path == path and f.rule.startswith("facets/prefix")
    )


def test_a_key_or_name_with_another_entrys_prefix_is_taken(corpus: Path) -> None:
    """A key that starts with another registered entry's prefix is that entry's, whatever the own
    prefix says: `gcp_lineage_run` in gcp:composer, `iceberg_composerRun` too."""
    _, path, old = FILES[1]
    for key, holder, carried in (
        ("gcp_lineage_run", "gcp:lineage", "gcp_lineage"),
        ("icebergComposerRun", "iceberg", "iceberg"),
    ):
        tree = renamed(corpus, path, old, key)
        assert taken(tree, path) == [
            (
                "facets/prefix-taken",
                f"/properties/{key}",
                f"facet key {key!r} carries {carried!r}, the prefix of the registered name "
                f"{holder!r}; a key of 'gcp:composer' carries 'gcp_composer'",
            )
        ]
        assert regression_verdict(tree, path, key) == FAIL
    text = (DirSnapshot(corpus).read(path) or b"").decode()
    tree = Overlay(
        DirSnapshot(corpus), {path: text.replace("GcpComposerRunFacet", "IcebergRunFacet").encode()}
    )
    [(rule, pointer, message)] = taken(tree, path)
    assert (rule, pointer) == ("facets/prefix-taken", "/$defs/IcebergRunFacet")
    assert "the PascalCase of the registered name 'iceberg'" in message


def test_the_longest_registered_prefix_decides(corpus: Path) -> None:
    """With `gcp` registered beside `gcp:composer`, `gcp_composer_x` belongs to gcp:composer: `gcp`
    may not define it, and gcp:composer's own keys stay its own."""
    snapshot = DirSnapshot(corpus)
    _, path, old = FILES[1]
    text = (snapshot.read(path) or b"").decode()
    squat = "spec/registry/gcp/facets/GcpComposerSecretsRunFacet.json"
    own = "spec/registry/gcp/facets/GcpCommonRunFacet.json"
    tree = Overlay(
        snapshot,
        {
            "spec/registry/gcp/registry.json": b'{"producer": {"produced_facets": []}}\n',
            squat: text.replace("GcpComposerRunFacet", "GcpComposerSecretsRunFacet")
            .replace(old, "gcp_composer_secrets")
            .encode(),
            own: text.replace("GcpComposerRunFacet", "GcpCommonRunFacet")
            .replace(old, "gcp_common")
            .encode(),
        },
    )
    assert [(rule, pointer) for rule, pointer, _ in taken(tree, squat)] == [
        ("facets/prefix-taken", "/$defs/GcpComposerSecretsRunFacet"),
        ("facets/prefix-taken", "/properties/gcp_composer_secrets"),
    ]
    assert taken(tree, own) == []
    assert taken(tree, path) == []


SCAN = "spec/registry/iceberg-commit/registry.json"
SCAN_JSON = b'{"producer": {"root_doc_URL": "https://iceberg.apache.org/docs/latest/"}}\n'
REPORT = "spec/registry/iceberg/facets/IcebergCommitReportOutputDatasetFacet.json"


def registered_after(corpus: Path, base: Overlay | DirSnapshot) -> list[tuple[str, str, State]]:
    """(rule, path, subject, state) of the prefix findings of a change adding
    ``iceberg-commit``."""
    head = Overlay(DirSnapshot(corpus), {SCAN: SCAN_JSON})
    change = ChangeSet(
        (FileChange(SCAN, Status.ADDED if base.size(SCAN) is None else Status.MODIFIED),)
    )
    report = run_review(ReviewRequest(head=head, base=base, changes=change, checks=(facets.check,)))
    return sorted(
        (f.rule, f.path, f.subject, f.state)
        for f in report.findings
        if f.rule.startswith("facets/prefix")
    )


def test_a_name_registered_after_a_facet_carries_its_prefix_is_a_new_clash(corpus: Path) -> None:
    """iceberg's real `icebergCommitReport` / `IcebergCommitReportOutputDatasetFacet` carry
    `iceberg-commit`'s prefix (`icebergCommit`, then an upper-case letter): registering it takes
    them, and iceberg, which the change does not touch, is not reviewed. The change that registers
    it is told, on its registry.json, as a new error; the whole tree reports it on iceberg's file as
    before."""
    found = registered_after(corpus, DirSnapshot(corpus))
    assert found == [
        ("facets/prefix-taken", SCAN, f"{REPORT} facet key icebergCommitReport", State.NEW),
        (
            "facets/prefix-taken",
            SCAN,
            f"{REPORT} facet name IcebergCommitReportOutputDatasetFacet",
            State.NEW,
        ),
    ]
    # a clash already at the base stays pre-existing
    again = registered_after(corpus, Overlay(DirSnapshot(corpus), {SCAN: b'{"producer": {}}\n'}))
    assert {(rule, path, state) for rule, path, _, state in again} == {
        ("facets/prefix-taken", SCAN, State.UNCHANGED)
    }
    whole = run_review(
        ReviewRequest(head=Overlay(DirSnapshot(corpus), {SCAN: SCAN_JSON}), checks=(facets.check,))
    )
    assert sorted(
        (f.path, f.pointer) for f in whole.findings if f.rule == "facets/prefix-taken"
    ) == [
        (REPORT, "/$defs/IcebergCommitReportOutputDatasetFacet"),
        (REPORT, "/properties/icebergCommitReport"),
    ]


def test_a_sample_facet_whose_key_another_name_takes_fails_the_regression(
    corpus: Path, tmp_path: Path
) -> None:
    """The regression's `facet-key` applies the taken-prefix rule too: registering
    `gcp:composer:job` makes composer's real `gcp_composer_job` key its prefix, so the sample events
    carrying it pass at base and fail at head (broken), as `facets/prefix-taken` says of the
    schema."""
    base = make_tree(corpus, tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / COMPOSER / "job").mkdir()
    (head / COMPOSER / "job" / "registry.json").write_text('{"producer": {}}\n')
    tally = run(base, head)
    broken = {(rule, subject) for _, _, subject, rule in outcomes(tally, BROKEN)}
    assert broken == {("facet-key", "job.facets.gcp_composer_job")}
    [message] = {r.message for r in tally.rows if r.outcome == BROKEN}
    assert "'gcp_composer_job', the prefix of the registered name 'gcp:composer:job'" in message
    # the checks say the same of the schema
    assert ("facets/prefix-taken", "/properties/gcp_composer_job") in {
        (rule, pointer) for rule, pointer, _ in taken(Overlay(DirSnapshot(head), {}), JOB_FACET)
    }
