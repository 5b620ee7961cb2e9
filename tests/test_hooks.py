"""Where contributors already are: the pre-commit hooks and the GitHub Action, run as their hosts run them.

pre-commit is the real one (from PyPI), in a temporary git repository of the real corpus. It takes the
hooks from ``.pre-commit-hooks.yaml`` as they are, except ``language: system`` in place of ``python``, so
that it uses the installed ``registry-bot`` instead of building an environment from the network. The
action's review step runs its own ``run`` script with bash, with its ``env`` resolved from the inputs as
GitHub resolves ``${{ inputs.* }}``, and must leave the SARIF file the upload step names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.gitrepo import GIT_ENV, Repo, git

ENTRY = "spec/registry/gcp/dataproc/registry.json"
BIN = str(Path(sys.executable).parent)


def hooks() -> list[dict[str, Any]]:
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
           "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"), "PIP_NO_INDEX": "1"}
    return subprocess.run([BIN + "/pre-commit", *args], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=300, check=False)


@pytest.fixture
def repo(tmp_path: Path, corpus: Path) -> Repo:
    made = Repo.from_folder(corpus, tmp_path / "repo")
    local = [{**hook, "language": "system"} for hook in hooks()]
    made.write(".pre-commit-config.yaml", yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    made.commit("pre-commit", branch="main")
    return made


def test_the_hooks_are_the_published_ones() -> None:
    by_id = {h["id"]: h for h in hooks()}
    assert set(by_id) == {"registry-bot", "registry-bot-fix"}
    assert all(h["language"] == "python" for h in by_id.values())  # what users get: pre-commit installs the bot
    assert by_id["registry-bot"]["pass_filenames"] is False


def test_the_fix_hook_lays_out_a_staged_file_and_the_check_hook_stops_a_broken_one(repo: Repo) -> None:
    original = (repo.path / ENTRY).read_text(encoding="utf-8").replace("/lineage", "/lineage#openlineage")
    (repo.path / ENTRY).write_text(original.replace('"producer": {', '"producer" :{   ').replace("\n", "\r\n"))
    git(repo.path, "add", ENTRY)
    first = pre_commit(repo.path, "run")
    assert first.returncode == 1, first.stdout + first.stderr
    assert re.search(r"registry-bot fix.*Failed", first.stdout) and "files were modified by this hook" in first.stdout
    assert (repo.path / ENTRY).read_bytes().decode() == original  # the corpus layout again, the edit kept
    git(repo.path, "add", ENTRY)
    second = pre_commit(repo.path, "run")
    assert second.returncode == 0, second.stdout + second.stderr
    assert re.search(r"registry-bot check.*Passed", second.stdout)

    broken = json.loads(original)
    broken["producer"]["produced_facets"].append("ol:gcp:dataproc:GcpDataprocMissingFacet.json")
    (repo.path / ENTRY).write_text(json.dumps(broken, indent=2) + "\n", encoding="utf-8")
    git(repo.path, "add", ENTRY)
    third = pre_commit(repo.path, "run")
    assert third.returncode == 1 and re.search(r"registry-bot check.*Failed", third.stdout)
    assert "uris/unresolved" in third.stdout


# -- the GitHub Action --------------------------------------------------------------------------
def action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def run_review_step(repo: Path, tmp_path: Path, inputs: dict[str, str]) -> tuple[int, dict[str, str], Path]:
    """The action's review step as the runner runs it: ``bash --noprofile --norc -eo pipefail`` on the script,
    in the workspace, with the step's env resolved from the inputs (defaults where not given)."""
    spec = action()
    values = {name: str(i.get("default", "")) for name, i in spec["inputs"].items()} | inputs
    [step] = [s for s in spec["runs"]["steps"] if s.get("id") == "check"]
    env = {}
    for name, expression in step["env"].items():
        match = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", expression)
        assert match, f"{name}: the script reads inputs only through env, never by expression"
        env[name] = values[match[1]]
    output, summary = tmp_path / "github_output", tmp_path / "step_summary"
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=repo, env={
        **os.environ, **GIT_ENV, **env, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
        "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}, capture_output=True, text=True,
        timeout=300, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    [upload] = [s for s in spec["runs"]["steps"] if "upload-sarif" in s.get("uses", "")]
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif }}"
    return proc.returncode, outputs, repo / values["sarif"]


def test_the_action_reviews_the_pull_request_and_leaves_sarif_with_fixes_for_code_scanning(
        repo: Repo, tmp_path: Path) -> None:
    original = (repo.path / ENTRY).read_text(encoding="utf-8")
    repo.change({ENTRY: original.replace('"root_doc_URL"', '"root_doc_url"').replace(
        '["ol:gcp:dataproc:GcpDataprocRunFacet.json"]', '["ol:gcp:dataproc:GcpDataprocRunFacet.json", "ol:x:Y.json"]')})
    base, head = git(repo.path, "rev-parse", "main"), git(repo.path, "rev-parse", "pr")
    code, outputs, sarif = run_review_step(repo.path, tmp_path, {"base": base, "head": head, "author": "contributor"})
    assert code == 0 and outputs == {"exit-code": "1"}  # the step records the verdict; the last step fails the job
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["uris/unknown-name"]["baselineState"] == "new" and by_rule["uris/unknown-name"]["level"] == "error"
    assert by_rule["entry/legacy-key"]["fixes"][0]["artifactChanges"][0]["artifactLocation"]["uri"] == ENTRY
    assert "FAILURE" in (tmp_path / "step_summary").read_text() or "failed" in (tmp_path / "step_summary").read_text()

    repo.change({ENTRY: original})  # the pull request put right
    code, outputs, sarif = run_review_step(repo.path, tmp_path, {
        "base": base, "head": git(repo.path, "rev-parse", "pr"), "author": "contributor"})
    # only the owners' approval is missing (an error the action cannot lift): nothing else is new
    rules = {r["ruleId"] for r in json.loads(sarif.read_text())["runs"][0]["results"] if r["level"] == "error"}
    assert rules <= {"owners/approval-required"}

    code, outputs, _ = run_review_step(repo.path, tmp_path, {"base": "no-such-rev", "head": "HEAD"})
    assert code == 0 and outputs == {"exit-code": "2"}
