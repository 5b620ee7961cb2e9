"""End to end over real HTTP, on the real registry: a waiver granted by an entry's owners turns one
real finding into "waived until DATE" in the App's outputs and the pull request passes; the same
waiver granted by someone else, or expired, waives nothing and the pull request fails.

The finding is one ``check --all`` reports on the corpus, chosen by what it is, never by name: a
finding of a registry entry whose rule is one of the configured adoption gaps (a warning in the
whole tree, an error when a change brings it), alone in its file. ``main`` lacks that file; each
pull request brings it back exactly as the registry has it, so the real finding is the change's
own, on top of a base whose ``waivers.json`` waives it (owner, non-owner or expired). The author is
a member of the team that owns the entry (root CODEOWNERS), so no approval is missing. The review's
clock is the real one; the expiry dates are fixed far on either side of it (no sleeping).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.core.config import Config
from tests.gitrepo import Repo, git
from tests.test_e2e import Service, wait_for
from tests.test_e2e_dashboard import deliver_push

pytestmark = pytest.mark.e2e

VALID, EXPIRED = "2999-12-31", "2020-01-01"
LABEL = f"waived until {VALID}"
AUTHOR, MALLORY = "carol", "@mallory"


def real_finding(corpus: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The first finding of ``check --all`` on the corpus that a change bringing its file would
    make an error: an entry's adoption gap, alone in a file other than the entry's registry.json."""
    assert main(["check", "--all", "--format", "json", str(corpus)]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    per_file = Counter(f["path"] for f in findings)
    gaps = Config().verdict.adoption_gaps
    return next(
        f
        for f in findings
        if f.get("entry") not in (None, "core")
        and f["rule"] in gaps
        and not f["path"].endswith("/registry.json")
        and per_file[f["path"]] == 1
    )


def root_owner(repo: Path) -> str:
    return next(
        line.split()[1]
        for line in (repo / "CODEOWNERS").read_text(encoding="utf-8").splitlines()
        if line.split()[:1] == ["*"]
    )


def build(corpus: Path, target: Path, real: dict[str, Any]) -> tuple[Repo, str]:
    """``main`` without the finding's file; per case, ``base-CASE`` (main plus a ``waivers.json``
    waiving the finding) and ``pr-CASE`` (that base plus the file, as the registry has it)."""
    repo = Repo.from_folder(corpus, target)
    owner = root_owner(repo.path)
    original = (repo.path / real["path"]).read_bytes()
    repo.delete(real["path"])
    before = repo.commit("before the file", branch="main")
    folder = "spec/registry/" + real["entry"].replace(":", "/")
    cases = {"non-owner": (MALLORY, VALID), "expired": (owner, EXPIRED), "owner": (owner, VALID)}
    for case, (granted_by, expires) in cases.items():
        git(repo.path, "checkout", "-q", "-B", f"base-{case}", before)
        waiver = {
            "rule": real["rule"],
            "path": real["path"],
            "pointer": real["pointer"],
            "reason": "accepted by the entry's owners for now",
            "granted_by": granted_by,
            "expires": expires,
        }
        repo.write(f"{folder}/waivers.json", json.dumps({"waivers": [waiver]}, indent=2) + "\n")
        repo.commit(f"waivers: {case}", branch=f"base-{case}")
        repo.write(real["path"], original)
        repo.commit("bring the file", branch=f"pr-{case}")
    git(repo.path, "checkout", "-q", "--detach")  # main may move under the running stand-in
    git(repo.path, "branch", "pr", before)  # the stand-in's pull request, until its first push
    return repo, owner


def review(service: Service, repo: Path, case: str) -> tuple[dict[str, Any], str]:
    """Move ``main`` to the case's base (a push to the default branch), then the pull request's head
    to its branch; the completed check run and the summary comment of that head."""
    git(repo, "update-ref", "refs/heads/main", git(repo, "rev-parse", f"base-{case}"))
    head = service.push(f"pr-{case}")
    assert service.deliver("synchronize", head) == 202
    run = service.completed_run(head, timeout=180)
    state = service.summary_for(head, timeout=60)
    summary = next(
        c["body"]
        for c in reversed(state["issue_comments"])
        if "registry-bot:summary" in c["body"] and head[:12] in c["body"]
    )
    return run, summary


def at(run: dict[str, Any], path: str) -> list[tuple[str, str]]:
    return [(a["level"], a["title"]) for a in run["annotations"] if a["path"] == path]


def test_an_owners_waiver_of_a_real_finding_passes_the_pull_request_and_no_other_does(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = real_finding(corpus, capsys)
    repo, owner = build(corpus, tmp_path / "repo", real)
    team = owner.removeprefix("@")
    service = Service(
        tmp_path,
        worker_args=("--no-regression", "--sweep-every", "1"),
        standin_args=("--author", AUTHOR, "--team-member", f"{team}={AUTHOR}"),
    )
    try:
        service.start(repo.path)
        # someone else's waiver, and the owners' expired one, waive nothing: the change brings an
        # error
        for case, refusal in (("non-owner", "waivers/not-owner"), ("expired", "waivers/expired")):
            run, summary = review(service, repo.path, case)
            assert run["conclusion"] == "failure", case
            assert ("failure", real["rule"]) in at(run, real["path"]), case
            assert refusal in run["summary"] and refusal in summary, case
            assert "waived until" not in run["summary"] + summary, case
            assert not any(title.startswith("waived") for _, title in at(run, real["path"]))

        run, summary = review(service, repo.path, "owner")
        assert run["conclusion"] == "success"
        notes = at(run, real["path"])
        assert notes and all(
            level == "notice" and title.startswith(LABEL) for level, title in notes
        ), notes
        assert LABEL in run["summary"] and LABEL in summary
        assert "waivers/" not in run["summary"] + summary  # no refused, expired or stray waiver

        # merged: the dashboard issue of the default branch shows it waived, with who granted it
        merged = git(repo.path, "rev-parse", "pr-owner")
        git(repo.path, "update-ref", "refs/heads/main", merged)
        assert deliver_push(service, merged) == 202

        def dashboard() -> str | None:
            issues = service.state()["issues"]
            body = str(issues[0]["body"]) if issues else ""
            return body if merged[:12] in body else None

        body = wait_for(dashboard, 120, "the dashboard issue of the merge")
        line = next(line for line in body.splitlines() if real["path"] in line and LABEL in line)
        assert real["rule"] in line and team in line  # shown, never mentioned (``@\u200d``)
        assert f"/blob/{merged}/{real['path']}" in line
    finally:
        service.close()
