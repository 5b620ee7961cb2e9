"""The suite's own machinery, as `make test` runs it: the shards split the whole suite, each test
into exactly one, and a test marked ``no_cover`` runs untraced while the tests around it are
traced."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.conftest import SHARDS

ROOT = Path(__file__).resolve().parent.parent

SHARD_PRINTER = """
from tests.conftest import shard_of

def pytest_collection_finish(session):
    for item in session.items:
        session_user = "spark" in getattr(item, "fixturenames", ())
        print("SHARD", shard_of(item), int(session_user), item.nodeid)
"""


def run(args: list[str], cwd: Path, extra_path: Path | None = None) -> str:
    path = os.pathsep.join(str(p) for p in (ROOT, extra_path) if p is not None)
    proc = subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": path},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_the_makefile_runs_every_shard_and_each_test_is_in_exactly_one(tmp_path: Path) -> None:
    makefile = (ROOT / "Makefile").read_text()
    listed = re.search(r"^SHARDS := (.*)$", makefile, re.MULTILINE)
    assert listed is not None and tuple(listed.group(1).split()) == SHARDS
    (tmp_path / "shard_printer.py").write_text(SHARD_PRINTER)
    out = run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "shard_printer", "tests"],
        ROOT,
        tmp_path,
    )
    rows = [line.split(" ", 3)[1:] for line in out.splitlines() if line.startswith("SHARD ")]
    shards = {nodeid: shard for shard, _, nodeid in rows}
    collected = [line for line in out.splitlines() if "::" in line and not line.startswith("SHARD")]
    assert len(rows) == len(shards) == len(collected) > 1000
    assert set(shards) == set(collected)
    sizes = Counter(shards.values())
    assert set(sizes) == set(SHARDS), sizes  # none empty, none outside `make test`'s list
    # what `make test` relies on: one shard builds the images and starts the Spark session
    assert {s for n, s in shards.items() if n.startswith("tests/test_images.py")} == {"spark"}
    spark_users = {shard for shard, session_user, _ in rows if session_user == "1"}
    assert spark_users == {"spark"}


SUBJECT = """
def swept():
    return 1


def focused():
    return 2
"""

TESTS = """
import pathlib

import pytest

import subject


@pytest.mark.no_cover
def test_sweep():
    assert subject.swept() == 1
    pathlib.Path("swept-ran").write_text("yes")


def test_focused():
    assert subject.focused() == 2
"""


def test_a_no_cover_test_runs_untraced_and_the_next_one_is_traced(tmp_path: Path) -> None:
    (tmp_path / "subject.py").write_text(SUBJECT)
    (tmp_path / "test_subject.py").write_text(TESTS)
    coverage = [sys.executable, "-m", "coverage"]
    out = run(
        [
            *coverage,
            "run",
            "--source=subject",
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-p",
            "no:cacheprovider",
            "-o",
            "markers=no_cover: untraced",
            "-W",
            "error",  # as the suite's filterwarnings
            "-q",
            "test_subject.py",
        ],
        tmp_path,
        tmp_path,
    )
    assert "2 passed" in out
    assert (tmp_path / "swept-ran").read_text() == "yes"  # it ran
    run([*coverage, "json", "-o", "cov.json"], tmp_path)
    executed = set(
        json.loads((tmp_path / "cov.json").read_text())["files"]["subject.py"]["executed_lines"]
    )
    lines = SUBJECT.split("\n")
    swept_body = lines.index("    return 1") + 1
    focused_body = lines.index("    return 2") + 1
    assert focused_body in executed and swept_body not in executed
