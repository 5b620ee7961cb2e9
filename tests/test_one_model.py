"""One review, one model per side: every door composes the same review (``run_review``), each side's
``Registry`` is built once and the configuration loaded once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import bot.core.config
import bot.github.pipeline
import bot.model.registry
import bot.model.schemas
import bot.review.compose
import bot.review.history
from bot.cli import main
from bot.cli.sample import build_sample_repo
from bot.core.findings import Report
from bot.github.local import LocalGitHub
from bot.review.compose import ReviewRequest, Stage
from bot.review.history import replay
from bot.service.worker import review_pull_request
from tests.gitrepo import git

REPO = "example/registry"


class Counts:
    def __init__(self) -> None:
        self.registries = 0
        self.schema_stores = 0
        self.config_loads = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    """Counts ``Registry`` constructions and configuration loads (parses of the configuration
    file)."""
    found = Counts()
    registry_init = bot.model.registry.Registry.__init__
    store_init = bot.model.schemas.SchemaStore.__init__
    parse = bot.core.config.parse_config

    def counted_init(self: bot.model.registry.Registry, *args: object, **kwargs: object) -> None:
        found.registries += 1
        registry_init(self, *args, **kwargs)  # type: ignore[arg-type]

    def counted_store(self: bot.model.schemas.SchemaStore, *args: object, **kwargs: object) -> None:
        found.schema_stores += 1
        store_init(self, *args, **kwargs)  # type: ignore[arg-type]

    def counted_parse(text: str, source: str) -> bot.core.config.Config:
        found.config_loads += 1
        return parse(text, source)

    monkeypatch.setattr(bot.model.registry.Registry, "__init__", counted_init)
    monkeypatch.setattr(bot.model.schemas.SchemaStore, "__init__", counted_store)
    monkeypatch.setattr(bot.core.config, "parse_config", counted_parse)
    yield found


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # it has .github/registry-bot.yml
    return build_sample_repo(tmp_path_factory.mktemp("demo") / "registry").path


def demo_pull(demo_repo: Path, author: str = "dagster-dev") -> LocalGitHub:
    """The in-memory GitHub serving the demo's pull request ``main`` <- ``add-dagster``."""
    return LocalGitHub(demo_repo, "main", "add-dagster", repo=REPO, number=3, author=author)


def test_an_app_review_models_each_side_once(demo_repo: Path, counts: Counts) -> None:
    gh = demo_pull(demo_repo)
    pr = gh.get_pull_request(REPO, 3)
    counts.registries = counts.config_loads = 0
    assert review_pull_request(gh, pr, "d-1") == "failure"
    assert (counts.registries, counts.schema_stores, counts.config_loads) == (2, 2, 1)


def test_check_models_each_side_once(
    demo_repo: Path, counts: Counts, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "check",
                str(demo_repo),
                "--base",
                "main",
                "--head",
                "add-dagster",
                "--author",
                "dagster-dev",
            ]
        )
        == 1
    )
    assert "facets/prefix-key" in capsys.readouterr().out
    assert (counts.registries, counts.schema_stores, counts.config_loads) == (2, 2, 1)


# -- every door composes the same review -----------------------------------------------------------


@pytest.fixture
def reports(monkeypatch: pytest.MonkeyPatch) -> list[Report]:
    """Every report ``run_review`` returns, whichever door called it."""
    seen: list[Report] = []
    real = bot.review.compose.run_review

    def recorded(request: ReviewRequest, stages: Sequence[Stage] = ()) -> Report:
        report = real(request, stages)
        seen.append(report)
        return report

    monkeypatch.setattr(bot.review.compose, "run_review", recorded)
    monkeypatch.setattr(bot.github.pipeline, "run_review", recorded)
    monkeypatch.setattr(bot.review.history, "run_review", recorded)
    return seen


def found(report: Report) -> set[tuple[str, str, str, str]]:
    return {f.fingerprint() for f in report.findings}


def test_every_door_gives_the_same_findings_on_the_demo_pull_request(
    demo_repo: Path,
    tmp_path: Path,
    reports: list[Report],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    author = "dagster-dev"
    # the App
    gh = demo_pull(demo_repo, author)
    assert review_pull_request(gh, gh.get_pull_request(REPO, 3), "d-1") == "failure"
    # check, action (no pull request event: approvals not read), history
    assert (
        main(
            ["check", str(demo_repo), "--base", "main", "--head", "add-dagster", "--author", author]
        )
        == 1
    )
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    assert (
        main(
            [
                "action",
                str(demo_repo),
                "--base",
                "main",
                "--head",
                "add-dagster",
                "--author",
                author,
                "--sarif",
                str(tmp_path / "out.sarif"),
            ]
        )
        == 1
    )
    *_, replayed = replay(demo_repo, "add-dagster", author=author)
    # demo (its own copy of the same sample; no Spark here) and fix (a working tree of the pull
    # request)
    from bot.cli.commands.demo import _review as demo_review

    demo_review(tmp_path / "demo", regression=False)
    work = tmp_path / "work"
    git(demo_repo, "worktree", "add", "-q", str(work), "add-dagster")
    try:
        assert main(["fix", str(work), "--base", "main", "--author", author]) == 0
    finally:
        git(demo_repo, "worktree", "remove", "--force", str(work))
    capsys.readouterr()
    # App, check, action, history, demo; fix: the tree, then the fixed tree
    assert len(reports) == 5 + 2
    app = found(reports[0])
    assert app and any(f.rule == "facets/prefix-key" for f in reports[0].findings)
    assert [found(r) for r in reports[:6]] == [app] * 6
    # fixed in the second round
    assert "facets/prefix-key" not in {f.rule for f in reports[6].findings}
    # what the replay keeps of its report
    assert {f.fingerprint() for f in replayed.findings} == app


def test_every_door_and_the_site_agree_on_the_use_cases_an_entry_may_declare(
    demo_repo: Path,
    tmp_path: Path,
    reports: list[Report],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One bound (``bot.model.presentation``): the App and ``check`` give the same
    ``entry/use-cases`` finding, naming the use cases the published site of the head leaves
    out."""
    import json

    from bot.core.config import load_config
    from bot.core.snapshot import GitSnapshot
    from bot.model.presentation import MAX_USE_CASES
    from bot.outputs.site import build_site

    branch, work = "flood-use-cases", tmp_path / "work"
    git(demo_repo, "worktree", "add", "-q", "-b", branch, str(work), "add-dagster")
    try:
        path = work / "spec/registry/dagster/registry.json"
        doc = json.loads(path.read_text(encoding="utf-8"))
        uris = doc["producer"]["produced_facets"]
        doc["producer"]["produced_facets"] = {
            uri: {"use_cases": [f"case {i}-{n}" for n in range(MAX_USE_CASES)]}
            for i, uri in enumerate(uris)
        }
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        git(work, "commit", "-q", "-am", "use cases")
    finally:
        git(demo_repo, "worktree", "remove", "--force", str(work))
    gh = LocalGitHub(demo_repo, "main", branch, repo=REPO, number=3, author="dagster-dev")
    review_pull_request(gh, gh.get_pull_request(REPO, 3), "d-2")
    main(["check", str(demo_repo), "--base", "main", "--head", branch, "--author", "dagster-dev"])
    capsys.readouterr()
    app, check = ([f for f in r.findings if f.rule == "entry/use-cases"] for r in reports)
    assert len(app) == 1 and [f.fingerprint() for f in app] == [f.fingerprint() for f in check]
    declared = len(uris) * MAX_USE_CASES
    assert f"declares {declared} distinct use cases" in app[0].message
    with GitSnapshot(demo_repo, branch) as head:
        site = build_site(head, load_config(head)[0])
    card = next(c for c in site.entries if c.name == "dagster")
    assert card.hidden_use_cases == declared - MAX_USE_CASES
    assert all(f"'case-0-{n}'" not in app[0].message for n in range(MAX_USE_CASES))
    assert "'case-1-0'" in app[0].message and "case-1-0" not in card.all_use_cases


def test_every_door_leaves_an_untouched_files_could_not_check_standing(
    tmp_path: Path, reports: list[Report], corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A naming file failing NamingBase.json on the base, a change to another naming file: the App
    (GitHub's listing), check (git's), the working tree's door and the history replay judge its
    naming/unchecked alike, pre-existing, and none fails the change for it (before: every door
    failed it)."""
    import shutil

    from bot.core.findings import State
    from bot.model.naming import bundled_folder
    from tests.gitrepo import Repo

    mysql, postgres = (f"spec/naming/datasets/{n}/{n}.json" for n in ("mysql", "postgres"))
    repo = Repo.from_folder(corpus, tmp_path / "openlineage")
    shutil.copytree(bundled_folder(), repo.path / "spec/naming")
    repo.edit_json(mysql, lambda v: v.update(owner="data team"))  # type: ignore[union-attr]
    repo.commit("a naming file failing the base schema", branch="main")
    repo.edit_json(postgres, lambda v: v["examples"]["valid"].append(v["examples"]["valid"][0]))  # type: ignore[index]
    repo.commit("another example of postgres")
    gh = LocalGitHub(repo.path, "main", "pr", repo=REPO, number=5, author="someone")
    review_pull_request(gh, gh.get_pull_request(REPO, 5), "d-1")
    main(["check", str(repo.path), "--base", "main", "--head", "pr", "--author", "someone"])
    main(["check", str(repo.path), "--base", "main", "--worktree", "--author", "someone"])
    *_, replayed = replay(repo.path, "pr", author="someone")
    capsys.readouterr()
    assert len(reports) == 3 + 2  # the replay reviews the base's commit too
    for report in (*reports[:3], reports[-1]):
        unchecked = [f for f in report.findings if f.rule == "naming/unchecked"]
        assert [(f.path, f.state) for f in unchecked] == [(mysql, State.UNCHANGED)]
        assert not report.is_blocking(unchecked[0])
    assert [found(r) for r in reports[1:3]] == [found(reports[0])] * 2
    assert {f.fingerprint() for f in replayed.findings} == found(reports[0])
