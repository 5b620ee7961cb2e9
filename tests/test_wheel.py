"""The installed bot: a wheel built from this checkout, pip-installed into a new virtual environment
outside it (what pre-commit's ``language: python`` and the Action's ``pip install`` do), runs every
command on the real corpus with nothing read from the source tree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED
from tests.gitrepo import git
from tests.history import newest_passing_registry_change
from tests.installed import Installed, clean_env
from tests.test_cli_writes import CASES, WRITING, files_under, refusal
from tests.test_init import EVENT, dbt_event_files

BUNDLE = SHARED / "corpus" / "openlineage-history" / "openlineage-spec-history.bundle"


def ok(proc: subprocess.CompletedProcess[str], code: int) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "internal-error" not in proc.stdout, proc.stderr[
        -2000:
    ]
    return proc


def test_the_package_comes_from_the_virtual_environment_not_the_checkout(
    installed_bot: Installed,
) -> None:
    proc = subprocess.run(
        [
            str(installed_bot.bin / "python"),
            "-c",
            "import bot, bot.bundled as b; "
            "print(bot.__file__); print(b.path('registry', 'registry.schema.json'))",
        ],
        cwd=installed_bot.workdir,
        capture_output=True,
        text=True,
        env=clean_env(),
        check=True,
    )
    package, schema = proc.stdout.splitlines()
    assert Path(package).is_relative_to(installed_bot.venv) and not Path(package).is_relative_to(
        ROOT
    )
    # a copy in the wheel, not a link back
    assert Path(schema).is_file() and not Path(schema).is_symlink()


def test_check_all_on_the_unchanged_real_registry_passes(
    installed_bot: Installed, corpus: Path
) -> None:
    proc = ok(installed_bot.run("check", str(corpus), "--all"), 0)
    assert proc.stdout.splitlines()[-1].startswith("SUCCESS: 0 error(s)")


def test_the_demo_then_check_and_fix_on_its_repository(
    installed_bot: Installed, tmp_path: Path
) -> None:
    kept = tmp_path / "sample"
    demo = ok(installed_bot.run("demo", "--no-regression", "--keep", str(kept)), 0)
    assert "FAILURE: 9 error(s)" in demo.stdout
    change = ok(
        installed_bot.run(
            "check", str(kept), "--base", "main", "--head", "add-dagster", "--format", "json"
        ),
        1,
    )
    rules = {f["rule"] for f in json.loads(change.stdout)["findings"]}
    assert rules >= {"facets/prefix-key", "owners/missing-codeowners"}
    subprocess.run(["git", "-C", str(kept), "checkout", "-q", "add-dagster"], check=True)
    fixes = ok(installed_bot.run("fix", str(kept), "--base", "main", "--author", "dagster-dev"), 0)
    assert "+* @dagster-dev" in fixes.stdout and "owners/missing-codeowners" in fixes.stderr


def test_naming_check_reads_the_bundled_naming_files(
    installed_bot: Installed, corpus: Path, tmp_path: Path
) -> None:
    event = json.loads(
        (ROOT / "registry/demo-pr/spec/registry/dagster/samples/orders_pipeline.json").read_text()
    )
    (tmp_path / "event.json").write_text(json.dumps(event[0] if isinstance(event, list) else event))
    proc = ok(
        installed_bot.run("naming", "check", str(tmp_path / "event.json"), "--format", "json"), 1
    )
    verdicts = json.loads(proc.stdout)["verdicts"]
    # judged by the postgres file
    assert verdicts.get("invalid") and sum(verdicts.values()) > verdicts["invalid"]
    ok(installed_bot.run("naming", "docs", "--check"), 0)


def test_publish_the_real_registry(installed_bot: Installed, corpus: Path, tmp_path: Path) -> None:
    ok(installed_bot.run("publish", str(corpus), str(tmp_path / "site")), 0)
    assert (tmp_path / "site" / "index.html").is_file() and (
        tmp_path / "site" / "registry-index.json"
    ).is_file()


def test_rewriting_the_readme_needs_a_checkout_one_line_exit_2(installed_bot: Installed) -> None:
    proc = installed_bot.run("rules", "--update-readme")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_check_a_real_change_of_the_history_and_fix_the_real_registry(
    installed_bot: Installed, corpus: Path, tmp_path: Path
) -> None:
    """check --base/--head on a bare clone of OpenLineage's real history (its newest passing
    registry change, approved by the owning team), and fix's diff of the real registry."""
    bare = tmp_path / "ol.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(bare)], check=True)
    commit = newest_passing_registry_change(
        bare, "contributor", frozenset({"OpenLineage/committers"})
    )
    ok(
        installed_bot.run(
            "check",
            str(bare),
            "--base",
            f"{commit}^",
            "--head",
            commit,
            "--author",
            "contributor",
            "--approved-by",
            "OpenLineage/committers",
        ),
        0,
    )
    fixes = ok(installed_bot.run("fix", str(corpus)), 0)
    assert fixes.stdout.startswith("--- a/spec/registry/") and "fixable in" in fixes.stderr


@pytest.mark.parametrize("command", sorted(WRITING))
@pytest.mark.parametrize("case", CASES)
def test_a_refused_write_from_the_wheel_is_one_line_exit_2_and_no_file(
    command: str, case: str, installed_bot: Installed, tmp_path: Path
) -> None:
    """tests/test_cli_writes.py's refusals, by the installed console script."""
    argv = refusal(command, case, tmp_path)
    before = files_under(tmp_path)
    proc = installed_bot.run(*argv)
    assert proc.returncode == 2, (argv, proc.stdout[-2000:], proc.stderr[-2000:])
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, (
        proc.stderr
    )
    assert files_under(tmp_path) == before


def test_the_dbt_draft_from_the_wheel_on_a_clone_of_the_real_repository_passes_check(
    installed_bot: Installed, corpus: Path, tmp_path: Path
) -> None:
    """``init`` from dbt's real test events into a clone of OpenLineage's real history, committed on
    a branch as its hint says, then ``check`` against ``main``: no finding at all."""
    clone = tmp_path / "OpenLineage"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
    drafted = ok(
        installed_bot.run(
            "init", "dbt", *dbt_event_files(corpus), "--owner", "@dbt-labs", "--repo", str(clone)
        ),
        0,
    )
    assert "4 facet(s) drafted" in drafted.stdout, drafted.stdout
    git(clone, "switch", "-q", "-c", "registry-dbt")
    git(clone, "add", "spec/registry/dbt", "CODEOWNERS")
    git(clone, "commit", "-q", "-m", "dbt: a new entry")
    checked = ok(
        installed_bot.run(
            "check",
            str(clone),
            "--base",
            "main",
            "--head",
            "registry-dbt",
            "--author",
            "dbt-labs",
            "--approved-by",
            "OpenLineage/committers",
        ),
        0,
    )
    assert "SUCCESS: 0 error(s), 0 warning(s), 0 notice(s)" in checked.stdout, checked.stdout


def test_ctrl_c_to_the_installed_console_script_is_one_line_and_130(
    installed_bot: Installed, tmp_path: Path
) -> None:
    """SIGINT to the process group (as a terminal sends it) once the demo is writing its sample
    repository."""
    kept = tmp_path / "sample"
    proc = subprocess.Popen(
        [str(installed_bot.bin / "registry-bot"), "demo", "--no-regression", "--keep", str(kept)],
        cwd=installed_bot.workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not kept.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the demo ended before the interrupt"
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err)
    # after what the demo says of itself: one line, no traceback
    assert err.strip().splitlines()[-1] == "registry-bot demo: interrupted", err
    assert "Traceback" not in err, err


HOSTILE_KEYS = ("acme_..%2F..%2Fx", "acme_\u202egnp", "acme_a|b", "acme_a@b", "acme_../x")


def test_init_from_the_wheel_writes_no_hostile_file_name_and_bounds_its_input(
    installed_bot: Installed, tmp_path: Path
) -> None:
    """Issue 28's ``init`` attacks by the installed console script on a clone of OpenLineage's real
    history: facet keys that are no file names are named and skipped, nothing is written outside
    the entry; a million facets are refused in one line, before anything is written."""
    clone = tmp_path / "OpenLineage"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
    hostile = json.loads(json.dumps(EVENT))
    hostile["run"]["facets"].update({key: {"rows": 1} for key in HOSTILE_KEYS})
    (tmp_path / "hostile.json").write_text(json.dumps(hostile), encoding="utf-8")
    drafted = ok(
        installed_bot.run(
            "init", "acme", str(tmp_path / "hostile.json"), "--owner", "@a", "--repo", str(clone)
        ),
        0,
    )
    assert "not a facet key" in drafted.stdout, drafted.stdout
    assert all(key in drafted.stdout for key in HOSTILE_KEYS if key.isprintable()), drafted.stdout
    paths = git(clone, "ls-files", "--others", "--modified", "--exclude-standard").splitlines()
    assert paths and all(p == "CODEOWNERS" or p.startswith("spec/registry/acme/") for p in paths), (
        paths
    )
    assert all(p.isascii() and ".." not in p and "|" not in p and "@" not in p for p in paths)
    many = json.loads(json.dumps(EVENT))
    many["run"]["facets"] = {f"acme_f{i}": {"v": i} for i in range(1_000_000)}
    (tmp_path / "many.json").write_text(json.dumps(many), encoding="utf-8")
    git(clone, "stash", "-q", "--include-untracked")
    refused = installed_bot.run(
        "init", "big", str(tmp_path / "many.json"), "--owner", "@a", "--repo", str(clone)
    )
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""
