"""The command line's last edges: every usage problem of fix, publish, check, replay and action
(unknown path or rule, bad revision, malformed logins) is one line on stderr and exit 2, never a
silent exit 0; Ctrl-C ends every command with 130 within a second. (regress without Java and Ctrl-C
during Spark's start-up: tests/test_regress*.)"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cli import main
from bot.cli.sample import build_sample_repo
from tests.interrupts import Started, ctrl_c_inside_init


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's repository: main, and the pull request branch add-dagster checked out."""
    repo = build_sample_repo(tmp_path_factory.mktemp("edges") / "sample").path
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "add-dagster"], check=True)
    return repo


def cases(repo: str, tmp: str) -> list[tuple[list[str], str]]:
    return [
        (["fix", repo, "spec/nope.json"], "spec/nope.json: no such file or folder"),
        (["fix", repo, "--rule", "no/such-rule"], "--rule no/such-rule: no such rule"),
        (
            ["fix", repo, "--base", "no-such-rev"],
            "--base no-such-rev: no such branch, tag or commit",
        ),
        (["fix", repo, "--author", "not a login"], "--author 'not a login': not a GitHub login"),
        # a new entry's CODEOWNERS cannot name an App; a pull request's author can be one (check,
        # action: tests/test_action.py)
        (["fix", repo, "--author", "dependabot[bot]"], "not a GitHub login"),
        (["fix", f"{tmp}/missing"], "no such folder"),
        (
            ["publish", repo, f"{tmp}/site", "--rev", "no-such-rev"],
            "--rev no-such-rev: no such branch, tag or commit",
        ),
        (["check", repo, "--all", "--approved-by", "alice,,bob"], "'' is neither a GitHub login"),
        (
            ["check", repo, "--all", "--approved-by", "alice bob"],
            "'alice bob' is neither a GitHub login",
        ),
        (
            ["check", repo, "--all", "--approved-by", "org/team/extra"],
            "neither a GitHub login nor an org/team",
        ),
        (
            ["check", repo, "--base", "main", "--author=-dash-"],
            "--author '-dash-': not a GitHub login",
        ),
        (["check", repo, "--base", "main", "--author", "x" * 40], "not a GitHub login"),
        (
            ["replay", "--repo", repo, "--approved-by", "a;b", f"{tmp}/missing.json"],
            "'a;b' is neither",
        ),
        (
            ["action", repo, "--base", "no-such-rev", "--sarif", f"{tmp}/r.sarif"],
            "--base no-such-rev: no such",
        ),
        (
            ["action", repo, "--base", "main", "--author", "@@", "--sarif", f"{tmp}/r.sarif"],
            "not a GitHub login",
        ),
        (["action", repo, "--base", "main", "--sarif", f"{tmp}/missing/r.sarif"], "does not exist"),
    ]


def test_every_usage_problem_is_one_line_and_exit_2(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, says in cases(str(sample), str(tmp_path)):
        code = main(args)
        captured = capsys.readouterr()
        assert code == 2, (args, captured.err, captured.out[-500:])
        assert len(captured.err.strip().splitlines()) == 1 and says in captured.err, (
            args,
            captured.err,
        )
        # no raw git text either
        assert "Traceback" not in captured.err and "fatal:" not in captured.err
    assert not (tmp_path / "site").exists() and not (tmp_path / "r.sarif").exists()


def test_well_formed_logins_and_teams_are_taken(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other side of the table: the forms the README documents (``@`` optional) are accepted."""
    assert (
        main(
            [
                "check",
                str(sample),
                "--base",
                "main",
                "--author",
                "@dagster-dev",
                "--approved-by",
                "alice, @OpenLineage/committers,MarquezProject/committers",
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    # both owners approved; what is left are the planted mistakes
    assert "approval needed" not in out
    assert (
        main(
            [
                "fix",
                str(sample),
                "--rule",
                "owners/missing-codeowners",
                "--base",
                "main",
                "--author",
                "dagster-dev",
            ]
        )
        == 0
    )
    assert "+* @dagster-dev" in capsys.readouterr().out


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """Inputs that keep each command busy for seconds on a quiet machine (a real registry takes 0.3
    s, which an interrupt at a fixed moment would race): a generated registry of 150 entries, and
    10,000 copies of a real event of the corpus for ``naming check``."""
    from benchmarks.registry_gen import generate

    root = tmp_path_factory.mktemp("large")
    generate(root / "registry", 150)
    event = (corpus / "spec/tests/example_full_event.json").read_text(encoding="utf-8")
    (root / "events").mkdir()
    for n in range(10_000):
        (root / "events" / f"{n}.json").write_text(event, encoding="utf-8")
    return root


def interrupt(args: list[str], started: Callable[[], bool]) -> tuple[int, float, str]:
    """Run the command in its own process group and, once the interpreter imports the bot
    (``tests.interrupts.Started``) and ``started()`` says it is at work, press Ctrl-C (SIGINT to
    the group, as a terminal does)."""
    run = Started(["-m", "bot", *args])
    proc = run.proc
    deadline = time.monotonic() + 30
    while not started() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if proc.poll() is not None:
        pytest.fail(f"{args} ended before the interrupt: make the input larger")
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        err = run.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, time.monotonic() - sent, err


def after(seconds: float) -> Callable[[], bool]:
    until = time.monotonic() + seconds
    return lambda: time.monotonic() >= until


@pytest.mark.parametrize("command", ["check", "fix", "publish", "naming", "demo"])
def test_ctrl_c_ends_every_command_with_130_within_a_second(
    command: str, large: Path, tmp_path: Path
) -> None:
    registry, demo = str(large / "registry"), tmp_path / "demo"
    args = {
        "check": ["check", registry, "--all"],
        "fix": ["fix", registry],
        "publish": ["publish", registry, str(tmp_path / "site")],
        "naming": ["naming", "check", str(large / "events")],
        "demo": ["demo", "--no-regression", "--keep", str(demo)],
    }[command]
    # past the imports (a Ctrl-C before Python has loaded the command is Python's own); the demo,
    # too short for a fixed moment, is interrupted once it has begun writing its sample repository
    code, took, err = interrupt(args, demo.exists if command == "demo" else after(0.5))
    assert code == 130 and took < 1.0, (code, took, err)
    assert (
        err.strip().splitlines()[-1] == f"registry-bot {args[0]}: interrupted"
        and "Traceback" not in err
    ), err


@pytest.mark.parametrize(
    ("command", "target", "forget"),
    [
        # publish imports orjson once it has read the registry (the SIGSEGV of ijl/orjson#310)
        ("publish", "orjson.orjson", "uuid"),
        # found by CI: fix imports jsonschema-rs once it has read the registry (a Rust panic)
        ("fix", "jsonschema_rs.jsonschema_rs", "decimal"),
    ],
)
def test_ctrl_c_while_a_native_module_initialises_is_an_interruption(
    command: str, target: str, forget: str, tmp_path: Path
) -> None:
    """The Ctrl-C under the command line is held until the module has loaded (tests/
    test_uninterrupted_imports.py finds which modules need it), then the command's one line and
    exit 130."""
    argv = {
        "publish": ["registry-bot", "publish", "registry/reference", str(tmp_path / "site")],
        "fix": ["registry-bot", "fix", str(shutil.copytree("registry/reference", tmp_path / "r"))],
    }[command]
    run = f"import runpy\nsys.argv = {argv!r}\nrunpy.run_module('bot', run_name='__main__')\n"
    proc = subprocess.run(
        # bot first: its finder is on sys.meta_path before the one that presses Ctrl-C
        [sys.executable, "-c", "import bot\n" + ctrl_c_inside_init(target, forget) + run],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert proc.stderr.strip().splitlines() == [f"registry-bot {command}: interrupted"], proc.stderr


# In a fresh interpreter: the first time a dataclass field named ``paths`` is given its name (the
# configuration's, which every command loads), this process is sent SIGINT, as a Ctrl-C landing in
# that moment would. Python 3.11 wraps what ``__set_name__`` raises in a RuntimeError.
CTRL_C_INSIDE_A_DATACLASS = """
import dataclasses, os, signal
set_name = dataclasses.Field.__set_name__
def ctrl_c_once(field, owner, name):
    if name == "paths" and not getattr(ctrl_c_once, "done", False):
        ctrl_c_once.done = True
        os.kill(os.getpid(), signal.SIGINT)
    return set_name(field, owner, name)
dataclasses.Field.__set_name__ = ctrl_c_once
"""


@pytest.mark.parametrize("entry", ["bot", "bot.entry"])
def test_ctrl_c_while_a_dataclass_is_defined_is_an_interruption(entry: str) -> None:
    """Found by CI: a Ctrl-C while ``bot.core.config`` defined ``Config`` printed a traceback
    (``RuntimeError: Error calling __set_name__``) and exited 1. Both doors, ``python -m bot`` and
    the console script's ``bot.entry``, end with the command's one line and 130."""
    argv = ["registry-bot", "naming", "check", "naming/reference"]
    start = (
        "runpy.run_module('bot', run_name='__main__')"
        if entry == "bot"
        else "import bot.entry; sys.exit(bot.entry.main())"
    )
    run = f"import runpy, sys\nsys.argv = {argv!r}\n{start}\n"
    proc = subprocess.run(
        [sys.executable, "-c", CTRL_C_INSIDE_A_DATACLASS + run],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert proc.stderr.strip().splitlines() == ["registry-bot naming: interrupted"], proc.stderr


def test_a_ctrl_c_inside_a_schema_retriever_is_not_swallowed() -> None:
    """jsonschema-rs turns what a retriever raises into a ValidationError ("retrieving it failed:
    KeyboardInterrupt"), which a caller reads as an unresolvable reference and goes on: the Ctrl-C
    would be lost. ``rs_validator`` raises it again once compiling returns."""
    import jsonschema_rs

    from bot.model.schemas import rs_validator

    def ctrl_c(uri: str) -> object:
        raise KeyboardInterrupt

    schema = {"$ref": "https://example.com/elsewhere.json"}
    # the hazard itself: if this fails, jsonschema-rs passes it on now and the wrapper can go
    with pytest.raises(jsonschema_rs.ValidationError, match="KeyboardInterrupt"):
        jsonschema_rs.validator_for(schema, retriever=ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        rs_validator(schema, retrieve=ctrl_c)
