"""Waivers: base-side data granted by an entry's owners, expiring, shown as waived in every output.

Pull requests on a git repository of the real corpus: one adds a facet without examples to an entry
of the registry (a new ``examples/missing`` error), and a waiver on the base side accepts or fails
to accept it.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.core.changes import ChangeSet
from bot.core.findings import Finding, Report, Verdict
from bot.core.snapshot import DirSnapshot, GitSnapshot
from bot.core.waivers import parse_file
from bot.github.publish import to_annotations
from bot.outputs.render import render
from bot.review.compose import ReviewRequest, run_review
from tests.gitrepo import Repo, git

TODAY = datetime.date(2026, 6, 1)
EXPIRES = "2026-12-31"


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    return Repo.from_folder(corpus, tmp_path / "openlineage")


def entry_folder(repo: Repo) -> Path:
    """A registry entry without its own CODEOWNERS and with facets: the root CODEOWNERS owns it."""
    for registry_json in sorted((repo.path / "spec/registry").rglob("registry.json")):
        folder = registry_json.parent
        if (
            folder.name != "core"
            and not (folder / "CODEOWNERS").exists()
            and any((folder / "facets").glob("*.json"))
        ):
            return folder
    raise AssertionError("no such entry in the corpus")


def root_owner(repo: Repo) -> str:
    lines = [
        line.split()
        for line in (repo.path / "CODEOWNERS").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return next(parts[1] for parts in lines if parts[0] == "*")


def rel(repo: Repo, path: Path) -> str:
    return path.relative_to(repo.path).as_posix()


def new_facet_change(repo: Repo) -> str:
    """On ``pr``: a copy of one of the entry's facets under a new name, declared, without
    examples."""
    folder = entry_folder(repo)
    source = sorted((folder / "facets").glob("*.json"))[0]
    doc = json.loads(source.read_text())
    old = source.stem
    new = copy_name(old)
    text = source.read_text().replace(old, new)
    key = next(iter(doc["properties"]))
    name = rel(repo, folder).removeprefix("spec/registry/").replace("/", ":")
    text = text.replace(f'"{key}"', f'"{name.replace(":", "_")}_copy"')
    target = folder / "facets" / f"{new}.json"
    repo.change({rel(repo, target): text})
    repo.edit_json(
        rel(repo, folder / "registry.json"),
        lambda r: r["producer"]["produced_facets"].append(f"ol:{name}:{new}.json"),
    )
    repo.commit("a facet without examples")
    return rel(repo, target)


def copy_name(stem: str) -> str:
    """``XRunFacet`` -> ``XCopyRunFacet``: the facet suffix kept."""
    return re.sub(r"(?=(Run|Job|InputDataset|OutputDataset|Dataset)Facet$)", "Copy", stem, count=1)


def waiver(
    path: str, granted_by: str, expires: str = EXPIRES, rule: str = "examples/missing"
) -> dict[str, str]:
    return {
        "rule": rule,
        "path": path,
        "pointer": "",
        "reason": "examples come with the next release",
        "granted_by": granted_by,
        "expires": expires,
    }


def on_base(repo: Repo, folder: Path, *waivers: dict[str, str]) -> None:
    repo.write(
        rel(repo, folder / "waivers.json"), json.dumps({"waivers": list(waivers)}, indent=2) + "\n"
    )
    repo.commit("waivers", branch="main")


def review_pr(repo: Repo, today: datetime.date = TODAY, author: str = "someone") -> Report:
    owner = root_owner(repo).removeprefix("@")
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        changes = ChangeSet.from_git(repo.path, "main", "pr")
        return run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=changes,
                author=author,
                approvers=frozenset({"someone", owner}),
                today=today,
            )
        )


def of(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def test_an_owners_waiver_turns_the_finding_into_waived_in_every_output_and_the_change_passes(
    repo: Repo,
) -> None:
    owner = root_owner(repo)
    target = new_path(repo)
    report = review_pr_after(repo, entry_folder(repo), [waiver(target, owner)])
    waived = [f for f in of(report, "examples/missing") if f.path == target]
    assert waived and all(f.waived is not None and f.waived.expires == EXPIRES for f in waived)
    assert report.verdict is Verdict.SUCCESS and report.summary()["waived"] == len(waived)
    label = f"waived until {EXPIRES}"
    assert label in render(report, "text") and label in render(report, "markdown")
    data = json.loads(render(report, "json"))
    assert [
        f["waived"]["granted_by"]
        for f in data["findings"]
        if f["rule"] == "examples/missing" and f["path"] == target
    ] == [owner]
    sarif = json.loads(render(report, "sarif"))["runs"][0]["results"]
    suppressed = [r for r in sarif if r.get("suppressions")]
    assert suppressed and label in suppressed[0]["suppressions"][0]["justification"]
    notes = [
        a for a in to_annotations(report.findings) if a.path == target and a.title.startswith(label)
    ]
    assert notes and notes[0].level == "notice"
    assert not of(report, "waivers/unmatched") and not of(report, "waivers/not-owner")


def review_pr_after(
    repo: Repo, folder: Path, waivers: list[dict[str, str]] | None, today: datetime.date = TODAY
) -> Report:
    if waivers is not None:
        on_base(repo, folder, *waivers)
    new_facet_change(repo)
    return review_pr(repo, today)


def new_path(repo: Repo) -> str:
    folder = entry_folder(repo)
    source = sorted((folder / "facets").glob("*.json"))[0]
    return rel(repo, folder / "facets" / f"{copy_name(source.stem)}.json")


def test_a_waiver_granted_by_someone_else_is_refused(repo: Repo) -> None:
    report = review_pr_after(repo, entry_folder(repo), [waiver(new_path(repo), "@mallory")])
    assert report.verdict is Verdict.FAILURE
    assert not report.waived()
    refused = of(report, "waivers/not-owner")
    assert refused and "@mallory" in refused[0].message and refused[0].line


def test_an_expired_waiver_waives_nothing_and_is_a_finding(repo: Repo) -> None:
    owner = root_owner(repo)
    report = review_pr_after(
        repo, entry_folder(repo), [waiver(new_path(repo), owner, expires="2026-05-31")]
    )
    assert report.verdict is Verdict.FAILURE and not report.waived()
    assert [f.severity.value for f in of(report, "waivers/expired")] == ["warning"]


def test_expiry_is_inclusive_by_the_review_clock(repo: Repo) -> None:
    owner = root_owner(repo)
    on_base(repo, entry_folder(repo), waiver(new_path(repo), owner, expires=TODAY.isoformat()))
    new_facet_change(repo)
    assert review_pr(repo, TODAY).verdict is Verdict.SUCCESS
    assert review_pr(repo, TODAY + datetime.timedelta(days=1)).verdict is Verdict.FAILURE


def test_a_waiver_added_in_the_pull_request_it_would_waive_does_not_apply(repo: Repo) -> None:
    folder = entry_folder(repo)
    target = new_path(repo)
    new_facet_change(repo)
    repo.write(
        rel(repo, folder / "waivers.json"),
        json.dumps({"waivers": [waiver(target, root_owner(repo))]}) + "\n",
    )
    repo.commit("waive it too")
    report = review_pr(repo)
    assert report.verdict is Verdict.FAILURE and not report.waived()


def test_a_waiver_changed_in_the_pull_request_keeps_its_base_version(repo: Repo) -> None:
    owner = root_owner(repo)
    folder = entry_folder(repo)
    on_base(repo, folder, waiver(new_path(repo), owner, expires="2026-01-01"))
    new_facet_change(repo)
    repo.write(
        rel(repo, folder / "waivers.json"),
        json.dumps({"waivers": [waiver(new_path(repo), owner)]}) + "\n",
    )
    repo.commit("renew it")
    report = review_pr(repo)
    assert report.verdict is Verdict.FAILURE and not report.waived()


def test_a_pull_request_adding_a_non_owner_waiver_is_told_so(repo: Repo) -> None:
    folder = entry_folder(repo)
    new_facet_change(repo)
    repo.write(
        rel(repo, folder / "waivers.json"),
        json.dumps({"waivers": [waiver(new_path(repo), "@mallory")]}),
    )
    repo.commit("self-service")
    refused = of(review_pr(repo), "waivers/not-owner")
    assert refused and all(f.state is not None and f.state.value == "new" for f in refused)


def test_adding_waivers_json_needs_the_entrys_owners_approval(repo: Repo) -> None:
    """waivers.json is a file of the entry: the ownership rules cover it like any other."""
    folder = entry_folder(repo)
    repo.change({rel(repo, folder / "waivers.json"): json.dumps({"waivers": []}) + "\n"})
    with GitSnapshot(repo.path, "main") as base, GitSnapshot(repo.path, "pr") as head:
        report = run_review(
            ReviewRequest(
                head=head,
                base=base,
                changes=ChangeSet.from_git(repo.path, "main", "pr"),
                author="mallory",
                approvers=frozenset({"mallory"}),
                today=TODAY,
            )
        )
    needed = of(report, "owners/approval-required")
    assert needed and root_owner(repo) in needed[0].owners and report.verdict is Verdict.FAILURE


def whole_tree(tree: Path, today: datetime.date = TODAY) -> Report:
    return run_review(ReviewRequest(head=DirSnapshot(tree), today=today))


def test_a_waiver_pointing_at_nothing_is_a_finding(corpus_copy: Path) -> None:
    folder = next(
        p.parent
        for p in sorted((corpus_copy / "spec/registry").rglob("registry.json"))
        if p.parent.name != "core"
    )
    (folder / "waivers.json").write_text(
        json.dumps(
            {
                "waivers": [
                    waiver(
                        f"{folder.relative_to(corpus_copy).as_posix()}/facets/Nothing.json",
                        "@nobody-checks-this",
                    )
                ]
            }
        )
    )
    report = whole_tree(corpus_copy)
    assert of(report, "waivers/not-owner")  # a non-owner first: refused before it could match
    owner = root_owner(Repo(corpus_copy))
    (folder / "waivers.json").write_text(
        json.dumps(
            {
                "waivers": [
                    waiver(
                        f"{folder.relative_to(corpus_copy).as_posix()}/facets/Nothing.json", owner
                    )
                ]
            }
        )
    )
    unmatched = of(whole_tree(corpus_copy), "waivers/unmatched")
    assert len(unmatched) == 1 and "Nothing.json" in unmatched[0].message


def test_an_entry_waiver_cannot_reach_another_entrys_files(corpus_copy: Path) -> None:
    entries = [p.parent for p in sorted((corpus_copy / "spec/registry").rglob("registry.json"))]
    mine, other = entries[0], entries[-1]
    target = next(iter(sorted(other.rglob("*.json")))).relative_to(corpus_copy).as_posix()
    (mine / "waivers.json").write_text(
        json.dumps({"waivers": [waiver(target, root_owner(Repo(corpus_copy)))]})
    )
    refused = of(whole_tree(corpus_copy), "waivers/not-owner")
    assert refused and "not a file of entry" in refused[0].message


def test_a_registry_wide_waiver_is_granted_by_the_registrys_owners(corpus_copy: Path) -> None:
    report = whole_tree(corpus_copy)
    finding = next(f for f in report.findings if f.pointer)
    entry: dict[str, Any] = {
        "rule": finding.rule,
        "path": finding.path,
        "pointer": finding.pointer,
        "reason": "accepted",
        "expires": "2027-01-01",
    }
    config = corpus_copy / ".github" / "registry-bot.yml"
    config.parent.mkdir(exist_ok=True)
    for granted_by, waived in ((root_owner(Repo(corpus_copy)), True), ("@mallory", False)):
        config.write_text(json.dumps({"waivers": [{**entry, "granted_by": granted_by}]}))
        again = whole_tree(corpus_copy)
        hit = [f for f in again.findings if f.fingerprint() == finding.fingerprint()]
        assert (hit[0].waived is not None) is waived
        assert bool(of(again, "waivers/not-owner")) is not waived


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"waivers": [{"rule": "examples/missing"}]}', "/waivers/0"),
        (
            '{"waivers": [{"rule": "x/y", "path": "a", "pointer": "", "reason": "r", "granted_by": '
            '"@a",\n "expires": "2026-02-30"}]}',
            "/waivers/0/expires",
        ),
        (
            '{"waivers": [\n{"rule": "x/y", "path": "a", "reason": "r", "granted_by": "nobody", '
            '"expires": "2026-01-01"}]}',
            "/waivers/0",
        ),
        ('{"waivers": [}', ""),
    ],
)
def test_malformed_waivers_are_refused_with_where_and_why(text: str, where: str) -> None:
    waivers, problems = parse_file(text.encode(), "spec/registry/x/waivers.json", "x")
    assert waivers == [] and problems and all(p.rule == "waivers/invalid" for p in problems)
    assert all(p.line for p in problems)
    assert where == "" or any(p.pointer == where for p in problems)


def test_a_malformed_file_waives_nothing_at_all(corpus_copy: Path) -> None:
    base = whole_tree(corpus_copy)
    finding = next(f for f in base.findings if f.entry not in (None, "core"))
    folder = corpus_copy / "spec/registry" / finding.entry.replace(":", "/")  # type: ignore[union-attr]
    good = waiver(finding.path, root_owner(Repo(corpus_copy)), rule=finding.rule)
    good["pointer"] = finding.pointer
    (folder / "waivers.json").write_text(json.dumps({"waivers": [good, {"rule": "broken"}]}))
    report = whole_tree(corpus_copy)
    assert not report.waived() and of(report, "waivers/invalid")
    (folder / "waivers.json").write_text(json.dumps({"waivers": [good]}))
    assert len(whole_tree(corpus_copy).waived()) >= 1


def test_a_change_review_shows_only_the_waiver_problems_of_the_entries_it_touches(
    repo: Repo,
) -> None:
    folder = entry_folder(repo)
    others = [
        p.parent
        for p in sorted((repo.path / "spec/registry").rglob("registry.json"))
        if p.parent not in (folder, repo.path / "spec/registry/core")
    ]
    other = others[0]
    facet = next(iter(sorted((other / "facets").glob("*.json"))))
    stale = waiver(rel(repo, facet), root_owner(repo), expires="2020-01-01")
    repo.write(rel(repo, other / "waivers.json"), json.dumps({"waivers": [stale]}) + "\n")
    repo.commit("an old waiver elsewhere", branch="main")
    new_facet_change(repo)
    assert not of(review_pr(repo), "waivers/expired")
    repo.write(rel(repo, other / "README.md"), "touched\n")
    repo.commit("touch the other entry too")
    expired = of(review_pr(repo), "waivers/expired")
    assert expired and all(f.state is not None and f.state.value == "unchanged" for f in expired)


def test_a_real_finding_waived_by_its_owners_shows_as_waived_in_every_cli_output(
    corpus_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    assert main(["check", "--all", "--format", "json", str(corpus_copy)]) == 0
    real = next(
        f
        for f in json.loads(capsys.readouterr().out)["findings"]
        if f.get("entry") not in (None, "core") and f["pointer"]
    )
    folder = corpus_copy / "spec/registry" / real["entry"].replace(":", "/")
    granted = {
        "rule": real["rule"],
        "path": real["path"],
        "pointer": real["pointer"],
        "reason": "keys in use",
        "granted_by": root_owner(Repo(corpus_copy)),
        "expires": "2999-12-31",
    }
    (folder / "waivers.json").write_text(json.dumps({"waivers": [granted]}))
    label = "waived until 2999-12-31"
    for fmt in ("text", "json", "sarif", "markdown"):
        assert main(["check", "--all", "--format", fmt, str(corpus_copy)]) == 0
        out = capsys.readouterr().out
        assert label in out or (fmt == "json" and '"expires": "2999-12-31"' in out), fmt
    assert main(["dashboard", str(corpus_copy)]) == 0
    assert label in capsys.readouterr().out


@pytest.mark.parametrize("granted_by", ["owner", "@mallory"])
def test_the_app_passes_the_pull_request_only_under_an_owners_waiver(
    repo: Repo, granted_by: str
) -> None:
    """The App's whole pipeline on the in-memory GitHub: check run, annotations, review and summary
    comment."""
    from bot.github.events import Job
    from bot.github.local import LocalGitHub
    from bot.service.worker import Worker

    target = new_path(repo)
    owner = root_owner(repo)
    review_pr_after(
        repo, entry_folder(repo), [waiver(target, owner if granted_by == "owner" else granted_by)]
    )
    gh = LocalGitHub(
        repo.path,
        "main",
        "pr",
        number=3,
        author="member",
        team_members={owner.removeprefix("@"): ["member"]},
    )  # an owner opens it

    class One:
        def for_installation(self, installation_id: int) -> LocalGitHub:
            return gh

    head = git(repo.path, "rev-parse", "pr")
    Worker(One()).handle(Job("d-waive", "pull_request", "opened", 1, gh.repo, 3, head))
    [run] = gh.runs_for(head)
    label = f"waived until {EXPIRES}"
    notes = [a for a in run.annotations if a["path"] == target and a["title"].startswith(label)]
    summary = next(c.body for c in gh.issue_comments if "registry-bot:summary" in c.body)
    if granted_by == "owner":
        assert run.conclusion == "success" and notes and notes[0]["level"] == "notice"
        assert label in summary and label in run.summary
    else:
        assert run.conclusion == "failure" and not notes and label not in summary


def test_a_new_entry_cannot_bring_its_own_waivers(repo: Repo) -> None:
    """Nobody owns an entry on the base branch before it exists there: its first waivers are
    refused."""
    repo.change(
        {
            "spec/registry/newcomer/registry.json": '{"producer": {"root_doc_URL": '
            '"https://example.com"}}\n',
            "spec/registry/newcomer/waivers.json": json.dumps(
                {
                    "waivers": [
                        waiver(
                            "spec/registry/newcomer/registry.json",
                            root_owner(repo),
                            rule="owners/missing-codeowners",
                        )
                    ]
                }
            )
            + "\n",
        }
    )
    report = review_pr(repo)
    refused = of(report, "waivers/not-owner")
    assert refused and "not on the base branch" in refused[0].message and not report.waived()


def test_an_owners_waiver_cannot_let_an_unread_path_pass(repo: Repo) -> None:
    """Finding: ``bot/unread-path`` could be waived: owners merged a waiver for a path of their
    entry, and a later change put a symlink there, never read, and passed. A waiver on the base
    cannot vouch for what a change puts there unread: it waives nothing and is unmatched."""
    folder = entry_folder(repo)
    path = rel(repo, folder / "facets" / "examples" / "linked.json")
    on_base(repo, folder, waiver(path, root_owner(repo), rule="bot/unread-path"))
    target = repo.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to("../../../../../../etc/passwd")
    git(repo.path, "add", "-A")
    repo.commit("a symlink")
    report = review_pr(repo)
    [unread] = of(report, "bot/unread-path")
    assert unread.path == path and unread.waived is None
    assert report.verdict is Verdict.FAILURE and not report.waived()
