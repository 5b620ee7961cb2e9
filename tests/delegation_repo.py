"""A copy of the real OpenLineage repository where two registry entries have owners without write
access.

``main``: the corpus plus ``spec/registry/gcp/dataproc/CODEOWNERS`` (``@dataproc-owner``) and
``spec/registry/iceberg/CODEOWNERS`` (``@iceberg-owner``), and the bot's configuration with
auto-merge on. Each other branch is one pull request's head, built on ``main``:

- ``pr``: a contributor edits the dataproc entry (its documentation URL); ``pr2``: one more commit
  on ``pr``;
- ``two``: the dataproc and the iceberg entries both;
- ``facets``, ``rootco``, ``config``, ``entryco``: the dataproc edit plus a core facet, the root
  CODEOWNERS, the bot's configuration, or the entry's own CODEOWNERS.
"""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import Repo, git

DATAPROC = "spec/registry/gcp/dataproc"
ICEBERG = "spec/registry/iceberg"
DATAPROC_OWNER, ICEBERG_OWNER, AUTHOR = "dataproc-owner", "iceberg-owner", "contributor"
CONFIG = ".github/registry-bot.yml"
CONFIG_TEXT = "delegation:\n  auto_merge: true\n  merge_method: SQUASH\n"
CORE_FACET = "spec/facets/DocumentationJobFacet.json"


def _doc_url(repo: Repo, folder: str, suffix: str) -> None:
    def edit(data: object) -> None:
        assert isinstance(data, dict)
        data["producer"]["root_doc_URL"] += suffix

    repo.edit_json(f"{folder}/registry.json", edit)


def _branch(repo: Repo, name: str, start: str = "main") -> None:
    git(repo.path, "checkout", "-q", "-B", name, start)


def build(corpus: Path, target: Path) -> Repo:
    repo = Repo.from_folder(corpus, target)
    repo.write(f"{DATAPROC}/CODEOWNERS", f"# Owners of gcp:dataproc\n* @{DATAPROC_OWNER}\n")
    repo.write(f"{ICEBERG}/CODEOWNERS", f"* @{ICEBERG_OWNER}\n")
    repo.write(CONFIG, CONFIG_TEXT)
    repo.commit("entry owners and the bot's configuration", branch="main")
    _branch(repo, "pr")
    _doc_url(repo, DATAPROC, "#v2")
    repo.commit("gcp:dataproc: new documentation anchor", branch="pr")
    _doc_url(repo, DATAPROC, "-again")
    repo.commit("gcp:dataproc: another push", branch="pr2")
    _branch(repo, "two")
    _doc_url(repo, DATAPROC, "#v2")
    _doc_url(repo, ICEBERG, "#v2")
    repo.commit("two entries", branch="two")
    extra = {
        "facets": (CORE_FACET, lambda text: text + "\n"),
        "rootco": ("CODEOWNERS", lambda text: text + f"{DATAPROC} @{DATAPROC_OWNER}\n"),
        "config": (CONFIG, lambda text: text + "  entries: ['*']\n"),
        "entryco": (
            f"{DATAPROC}/CODEOWNERS",
            lambda text: text + f"* @{DATAPROC_OWNER} @{AUTHOR}\n",
        ),
    }
    for branch, (path, edit) in extra.items():
        _branch(repo, branch)
        _doc_url(repo, DATAPROC, "#v2")
        repo.write(path, edit((repo.path / path).read_text(encoding="utf-8")))
        repo.commit(f"dataproc plus {path}", branch=branch)
    git(repo.path, "checkout", "-q", "main")
    return repo
