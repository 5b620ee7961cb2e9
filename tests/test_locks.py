"""The lock files (requirements/*.txt, written by `make lock`) agree with pyproject.toml, with each
other, with the venv and with what installs from them (offline: nothing here asks PyPI).

dev is the venv's (`make setup`), worker the worker image's (+ the spark extra), web the web
image's.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

LOCKS = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
ENTRY = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)((?:\s*\\\n\s*--hash=sha256:[0-9a-f]{64})*)", re.M)
# what needs a Java runtime, or is only there for Spark: never in the web image
SPARK_ONLY = {"pyspark", "py4j", "pyarrow", "pandas", "numpy"}


def read_lock(name: str) -> dict[str, tuple[str, list[str]]]:
    """``requirements/NAME.txt`` as {name: (version, hashes)}; any other requirement line fails the
    test."""
    text = (LOCKS / f"{name}.txt").read_text(encoding="utf-8")
    entries = {
        canonicalize_name(m[1]): (m[2], re.findall(r"sha256:([0-9a-f]{64})", m[3]))
        for m in ENTRY.finditer(text)
    }
    requirement_lines = [
        line for line in text.splitlines() if line and not line.startswith((" ", "#"))
    ]
    assert len(requirement_lines) == len(entries), (
        f"{name}.txt has lines that are not pinned entries"
    )
    return entries


def wanted(lock: str) -> list[Requirement]:
    """What pyproject.toml asks of ``lock``: the dependencies, the extras it includes, the build
    backend."""
    project = PYPROJECT["project"]
    extras = {"web": [], "worker": ["spark"], "dev": ["dev", "spark"]}[lock]
    lines = [*project["dependencies"], *PYPROJECT["build-system"]["requires"]]
    lines += [line for extra in extras for line in project["optional-dependencies"][extra]]
    return [r for r in map(Requirement, lines) if canonicalize_name(r.name) != PROJECT]


@pytest.mark.parametrize("lock", ["web", "worker", "dev"])
def test_every_requirement_is_locked_within_its_specifier_with_hashes(lock: str) -> None:
    entries = read_lock(lock)
    for requirement in wanted(lock):
        name = canonicalize_name(requirement.name)
        assert name in entries, f"{requirement} is not in requirements/{lock}.txt: run `make lock`"
        assert requirement.specifier.contains(entries[name][0], prereleases=True), (
            f"requirements/{lock}.txt has {name}=={entries[name][0]}, outside {requirement}: run "
            f"`make lock`"
        )
    assert all(hashes for _, hashes in entries.values()), f"an entry of {lock}.txt has no hash"


def test_a_package_has_one_version_in_every_lock() -> None:
    """worker is resolved within dev and web within worker (`make lock`), so the images run what CI
    tests."""
    locks = {name: read_lock(name) for name in ("dev", "worker", "web")}
    for smaller, larger in (("worker", "dev"), ("web", "worker")):
        assert locks[smaller].keys() <= locks[larger].keys()
        assert {n: v for n, (v, _) in locks[smaller].items()} == {
            n: locks[larger][n][0] for n in locks[smaller]
        }


def test_web_lock_has_no_spark_and_worker_lock_has_it() -> None:
    assert not SPARK_ONLY & read_lock("web").keys()
    assert read_lock("worker").keys() >= SPARK_ONLY


def test_the_venv_has_the_dev_lock_versions() -> None:
    """`make setup` installs requirements/dev.txt with --require-hashes: CI runs exactly these
    versions."""

    def installed(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    locked = {name: version for name, (version, _) in read_lock("dev").items()}
    assert {name: installed(name) for name in locked} == locked, (
        "the venv is not requirements/dev.txt: make setup"
    )


def test_setup_and_the_images_install_from_the_locks_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--require-hashes --no-deps -r requirements/dev.txt" in makefile
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for target in ("web", "worker"):
        stage = dockerfile.split(f" AS {target}\n", 1)[1].split("\nFROM ", 1)[0]
        assert f"COPY requirements/{target}.txt" in stage and "--require-hashes" in stage
    for name in ("web", "worker", "dev"):
        assert "make lock" in (LOCKS / f"{name}.txt").read_text(encoding="utf-8").splitlines()[1]


def test_build_in_is_the_build_backend_of_pyproject() -> None:
    lines = (LOCKS / "build.in").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == PYPROJECT[
        "build-system"
    ]["requires"]
