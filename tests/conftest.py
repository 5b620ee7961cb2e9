"""Shared fixtures: the real corpus, copied to a temporary folder when a test changes it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import coverage
import pytest
from coverage.exceptions import CoverageWarning

ROOT = Path(__file__).resolve().parent.parent
# shared/ sits beside the repository (a git worktree may be one level deeper: take the nearest)
SHARED = next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared"
)
CORPUS = SHARED / "corpus" / "openlineage"
PAYLOADS = SHARED / "github-payloads"
# the tests' Spark configuration (its file says why); the benchmarks, which import this module, keep
# Java's defaults
SPARK_CONF = ROOT / "tests/spark-conf"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real OpenLineage repository data (read-only)."""
    if not CORPUS.is_dir():
        raise RuntimeError(f"the shared corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture
def corpus_copy(tmp_path: Path, corpus: Path) -> Path:
    """A writable copy of the corpus for tests that mutate it."""
    target = tmp_path / "openlineage"
    shutil.copytree(corpus, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    target.chmod(0o755)
    return target


REGISTRY_ENTRY = "spec/registry/gcp/lineage/registry.json"


@pytest.fixture(scope="session")
def corpus_pr_repo(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """The corpus as a git repository (``main``) with a pull request branch ``pr`` that edits a
    registry entry, adds an entry and deletes a facet file. Shared: clone it before committing to
    it."""
    from tests.gitrepo import Repo

    made = Repo.from_folder(corpus, tmp_path_factory.mktemp("corpus-pr") / "openlineage")
    made.change(
        {
            "spec/registry/acme/registry.json": '{"producer": {}}\n',
            "spec/registry/iceberg/facets/IcebergScanReportInputDatasetFacet.json": None,
        }
    )
    made.edit_json(
        REGISTRY_ENTRY,
        lambda data: data["consumer"].update(consumed_facets=["ol:gcp:lineage:X.json"]),
    )
    made.commit("edit the entry")
    return made.path


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real ``redis-server`` on a free loopback port for the session (``.ci/run`` installs it)."""
    import socket
    import subprocess
    import time

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail(
            "redis-server is not installed: `apt-get install -y redis-server` (bash .ci/run does "
            "it); the queue's Redis backend is tested against a real server, never skipped"
        )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder = tmp_path_factory.mktemp("redis")
    server = subprocess.Popen(
        [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"redis-server did not start on port {port} (exit code {server.poll()})"
                    )
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextlib.contextmanager
def redis_out_of_memory(conn: Any) -> Iterator[None]:
    """The real Redis behind ``conn`` at its ``maxmemory`` for the block: every write that needs
    memory is answered ``OOM command not allowed`` (redis-py's ``OutOfMemoryError``), reads work."""
    conn.set("tests:ballast", b"x" * 200_000)
    conn.config_set("maxmemory", "1")
    try:
        yield
    finally:
        conn.config_set("maxmemory", "0")
        conn.delete("tests:ballast")


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One real local SparkSession for the whole test run (two cores, no UI), stopped at the end."""
    from bot.review.regression.spark_job import start_session

    session = start_session(
        "local[2]", app="registry-bot-tests", extra={"spark.driver.memory": "1g"}
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare clone of the real OpenLineage spec history (``tests/history.py``). Shared: never
    commit to it."""
    from tests.history import clone

    return clone(tmp_path_factory.mktemp("history") / "openlineage.git")


IMAGE_TESTS = "test_images.py"
# `make test` runs the suite as three pytest processes at once (``--shard``): the suite mostly waits
# (on processes, JVMs, the stand-in's latency), so on 2 cores three shards finish in about half the
# time of one. Six (27 Nov 2026) were no faster (28-30 min against 28: the 2 cores are the limit),
# and at load 14 an end-to-end review outlived its 30 s.
SHARDS = ("spark", "fleet", "rest")
# files moved beside Spark so that the three shards end together: two of the rest's slowest and,
# since the tests' JVMs start quicker (tests/spark-conf), one of the fleets'
BESIDE_SPARK = ("test_site_browser.py", "test_hooks.py", "test_redis_outage.py")


def shard_of(item: pytest.Item) -> str:
    """Spark (the regression's files, the demo, every other test of a Spark session), the image
    build, the browser, pre-commit and Redis outage tests; the App's other real process fleets;
    everything else (about a third of the suite's time each)."""
    name = item.path.name
    if (
        name.startswith("test_regress")
        or name in (IMAGE_TESTS, "test_demo.py", *BESIDE_SPARK)
        or item.get_closest_marker("spark") is not None
    ):
        return "spark"
    return "fleet" if item.get_closest_marker("e2e") is not None else "rest"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    """A test marked ``no_cover`` (pytest-cov's marker, with its meaning) runs, fixtures included,
    with coverage's tracing paused: it sweeps a large data set (the real history, every corpus
    example, generated cases) through code that focused tests cover, and tracing would double its
    time. The coverage `make test` reports leaves out what these tests run: the suite's own can only
    be higher."""
    current = coverage.Coverage.current() if item.get_closest_marker("no_cover") else None
    if current is None:
        return (yield)
    current.stop()
    try:
        return (yield)
    finally:
        with warnings.catch_warnings():
            # a module the test imported first: its top-level lines count as not run
            warnings.filterwarnings("ignore", "Already imported", CoverageWarning)
            current.start()


def pytest_configure(config: pytest.Config) -> None:
    """The suite tests commands as a terminal runs them: a run started ignoring SIGINT (a shell's
    background job, as `make test`'s shards are) restores Python's handler, so that the processes it
    starts hear Ctrl-C. Every JVM the tests start reads the tests' Spark configuration, not the
    user's."""
    os.environ["SPARK_CONF_DIR"] = str(SPARK_CONF)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shard", choices=SHARDS, help="run only this shard of the suite (see `make test`)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the requested shard; the image tests run last: they wait for the image build that runs
    beside the rest of the suite."""
    shard = config.getoption("--shard")
    if shard is not None:
        config.hook.pytest_deselected(items=[item for item in items if shard_of(item) != shard])
        items[:] = [item for item in items if shard_of(item) == shard]
    items.sort(key=lambda item: item.path.name == IMAGE_TESTS)


@pytest.fixture(scope="session", autouse=True)
def image_build(request: pytest.FixtureRequest) -> None:
    """Start the image build (tests/images.py) with the first test of a session that runs the image
    tests, so that it runs beside the rest of the suite; collecting the tests (``--collect-only``)
    starts nothing."""
    if any(item.path.name == IMAGE_TESTS for item in request.session.items):
        from tests.images import start_build

        start_build()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The end-to-end suite's conformance counts (tests/conformance.py), in the session's notes."""
    from tests.conformance import notes

    if notes():
        terminalreporter.write_line(notes())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A build still running when the session ends (it stopped early) is stopped with it."""
    from tests.images import stop_build

    stop_build()


@pytest.fixture(scope="session")
def history_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare clone of the real OpenLineage history, shared by the session: plant commits into it
    with ``tests.planting.plant`` (new objects only; its refs never move)."""
    from tests.history import clone

    return clone(tmp_path_factory.mktemp("history-clone") / "openlineage.git")


@pytest.fixture(scope="session")
def installed_bot(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The project's wheel pip-installed into a new virtual environment outside the checkout,
    offline from the wheelhouse (``tests/installed.py``); built once per session."""
    from tests.installed import install_wheel

    return install_wheel(tmp_path_factory.mktemp("installed"))
