"""The facet key prefix is one rule: the checks (``facets/prefix-key``) and the regression
(``facet-key``) apply the same function (``bot.model.registry.carries_prefix``) and agree on every
spelling, on the real corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.config import load_config
from bot.core.snapshot import DirSnapshot
from bot.model.registry import camel, key_prefixes
from bot.review.checks import facets
from bot.review.compose import ReviewRequest, run_review
from bot.review.fixes import Overlay
from bot.review.regression.compare import FAIL, PASS, _key_status
from bot.review.regression.side import SideSpec

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
