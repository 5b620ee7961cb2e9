"""The command line's contract: every bad input is one line on stderr and exit 2, never a traceback;
a folder that is not a registry is an error; colour follows --color, NO_COLOR and TERM=dumb."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main, use_color
from tests.gitrepo import Repo

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
        env=env,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with one commit and no registry folder."""
    repo = Repo.from_folder(ROOT / "naming", tmp_path_factory.mktemp("contract") / "notaregistry")
    return repo.path


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory: pytest.TempPathFactory, git_repo: Path) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("inputs")
    (tmp / "empty.json").write_text("{}\n")
    (tmp / "malformed.json").write_text('{"eventType": "START",\n')
    (tmp / "folder").mkdir()
    (tmp / "random").mkdir()
    (tmp / "random" / "notes.txt").write_text("hello\n")
    return {"tmp": tmp, "git": git_repo}


def cases(corpus: Path, p: dict[str, Path]) -> list[tuple[list[str], str]]:
    """(arguments, what the one line says) for every bad input the issue lists, and a few more."""
    tmp, git = str(p["tmp"]), str(p["git"])
    return [
        (["check", str(corpus / "spec" / "OpenLineage.json"), "--all"], "not a folder"),
        (["check", f"{tmp}/missing", "--all"], "no such folder"),
        (["check", str(corpus), "--all", "-o", "/nonexistent/dir/out.txt"], "does not exist"),
        (["check", str(corpus), "--all", "-o", f"{tmp}/folder"], "is a folder"),
        (["check", f"{tmp}/random", "--all"], "no registry found"),
        (["check", str(corpus / "spec"), "--all"], "no registry found"),
        (["check", str(ROOT / "registry"), "--all"], "no registry found"),
        (["check", f"{tmp}/random", "--base", "main"], "not a git repository"),
        (
            ["check", git, "--base", "no-such-branch"],
            "--base no-such-branch: no such branch, tag or commit",
        ),
        (["check", git, "--base", "main", "--head=-x"], "--head -x: no such branch"),
        (["check", git, "--base", "main"], "no registry found"),
        (["check", git, "--all", "--head", "nope"], "--head nope"),
        (
            ["regress", git, "--base", "main", "--events", "/missing/path"],
            "--events /missing/path: no such file",
        ),
        (["regress", git, "--base", "main", "--events", f"{tmp}/*.nothing"], "matches no file"),
        (
            ["regress", git, "--base", "main", "--events", f"file://{tmp}/folder"],
            f"file://{tmp}/folder: no event file",
        ),
        (
            ["regress", git, "--base", "main", "--events", f"{tmp}/random"],
            f"{tmp}/random: no event file",
        ),
        (
            ["regress", git, "--base", "main", "--conf", "spark.ui.port"],
            "--conf spark.ui.port: expected KEY=VALUE",
        ),
        (["regress", git, "--base", "nope", "--engine", "python"], "--base nope"),
        (["regress", f"{tmp}/missing", "--base", "main"], "no such folder"),
        (["naming", "check", f"{tmp}/empty.json"], "no OpenLineage events"),
        (
            ["naming", "check", str(ROOT / "registry" / "registry.schema.json")],
            "no OpenLineage events",
        ),
        (["naming", "check", f"{tmp}/malformed.json"], "could not be read"),
        (["naming", "check", f"{tmp}/missing.json"], "no such file or folder"),
        (["naming", "check", str(corpus / "spec" / "registry")], "no OpenLineage events"),
        (["naming", "docs", "--check", "--dir", f"{tmp}/missing"], "not a folder"),
        (["demo", "--keep", tmp], "already exists"),
        (["demo", "--keep", f"{tmp}/missing/deeper"], "does not exist"),
        (["check", str(corpus), "--all", "--color", "sometimes"], "invalid choice"),
        (["check", str(corpus)], "one of the arguments --base --all is required"),
        (["nosuchcommand"], "invalid choice"),
    ]


def test_every_bad_input_is_one_line_and_exit_2(
    corpus: Path, bad_inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for args, says in cases(corpus, bad_inputs):
        code = main(args)
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert len(err.strip().splitlines()) == 1, (args, err)
        assert says in err, (args, err)
        assert "Traceback" not in err


def test_as_processes_no_traceback_and_nothing_written(
    corpus: Path, bad_inputs: dict[str, Path]
) -> None:
    out = bad_inputs["tmp"] / "report.txt"
    for args in (
        ["check", str(corpus / "spec" / "OpenLineage.json"), "--all", "-o", str(out)],
        ["check", str(corpus), "--all", "-o", "/nonexistent/dir/out.txt"],
        ["naming", "check", str(bad_inputs["tmp"] / "malformed.json")],
    ):
        code, _, err = run_cli(*args)
        assert code == 2 and "Traceback" not in err, (args, err)
    assert not out.exists()


def test_the_real_registry_still_passes_and_names_its_entries(corpus: Path, tmp_path: Path) -> None:
    assert (
        main(["check", str(corpus), "--all", "--format", "json", "-o", str(tmp_path / "r.json")])
        == 0
    )
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["entries"]


class Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("choice", "env", "tty", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value counts
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {}, True, False),
    ],
)
def test_color_choice(
    monkeypatch: pytest.MonkeyPatch, choice: str, env: dict[str, str], tty: bool, expected: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert use_color(choice, Stream(tty)) is expected  # type: ignore[arg-type]


def test_color_always_colours_a_pipe_and_never_does_not(corpus: Path) -> None:
    _, coloured, _ = run_cli("check", str(corpus), "--all", "--color", "always")
    _, plain, _ = run_cli("check", str(corpus), "--all")
    assert "\x1b[33mwarning\x1b[0m" in coloured
    assert "\x1b[" not in plain
    assert coloured.replace("\x1b[33m", "").replace("\x1b[0m", "") == plain


def test_elapsed_time_shows_on_a_terminal_only() -> None:
    import io
    import time

    from bot.cli.commands._progress import elapsed

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        with elapsed("Spark regression", stream):
            time.sleep(1.2)
    assert "\rSpark regression... 1 s" in tty.getvalue() and tty.getvalue().endswith(
        "done in 1 s\n"
    )
    assert pipe.getvalue() == ""


def test_a_child_process_s_stderr_is_hidden_unless_verbose() -> None:
    """What the JVM writes (it inherits file descriptor 2 when Spark starts it) stays out of the
    terminal."""
    probe = (
        "import subprocess, sys; from bot.cli.commands._progress import jvm_output\n"
        "with jvm_output(verbose=sys.argv[1] == 'v') as err:\n"
        "    subprocess.run(['sh', '-c', 'echo NativeCodeLoader noise >&2'], check=True)\n"
        "    print('progress', file=err)\n"
        "print('after', file=sys.stderr)\n"
    )
    quiet = subprocess.run(
        [sys.executable, "-c", probe, "q"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=60,
    ).stderr
    loud = subprocess.run(
        [sys.executable, "-c", probe, "v"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=60,
    ).stderr
    assert quiet.split() == ["progress", "after"]
    assert "NativeCodeLoader noise" in loud and "progress" in loud


def test_sections_are_plain_text_in_the_terminal() -> None:
    from bot.core.findings import Report, Section
    from bot.outputs.render.text import render_text

    markdown = (
        "totals: **1** · `a\\[0\\]` https\\://x\n\n| a | bb |\n| --- | ---: |\n| 1 | 2\\|3<br>4 |\n"
    )
    report = Report(findings=(), entries=()).with_sections(
        Section(title="T", markdown=markdown), findings=[]
    )
    assert render_text(report).splitlines()[:5] == [
        "== T",
        "totals: 1 · a[0] https://x",
        "",
        "a  bb",
        "1  2|3; 4",
    ]
