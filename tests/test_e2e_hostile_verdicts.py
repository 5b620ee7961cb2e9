"""End to end, round two (issue 19): no hostile pull request chooses a passing verdict, through the
real processes.

One stand-in, gunicorn and worker (real checks, a regression stage that hangs on sample events)
serve one pull request; each attack is pushed to it in turn, from ``main``, and must end in a
blocking verdict whose reason is named:

- (1a) 3,001 padding files: reviewed from the two trees, with the same errors as the change alone;
- (1b) a regression that runs past its budget: a blocking finding on the facet and the sample it
  validated;
- (1c) a change to ``.github/CODEOWNERS`` only: the base owners must approve, the moves are named;
- (2) ``((((a{64}){64}){64}){64})`` as a schema ``pattern`` and as a naming component: refused
  before compiling, the worker's peak memory stays under ``WORKER_MEMORY_BOUND``; so do its
  spellings in syntax Python's parser cannot read (``BOMB_VARIANTS``) in ``pattern``,
  ``patternProperties``, ``propertyNames``, a ``format: regex`` value and a naming component (issue
  28);
- (3) examples that each spend their whole time bound: the review stops at its budget, concludes
  failure with what it found, the reason first;
- a job that kills its worker process (the OOM killer) is concluded failure after ``MAX_CRASHES``
  attempts;
- (4) 8,000-character delivery and event headers are clipped in the log;
- a facet schema whose ``type`` is no type is judged, never an internal error (issue 28).
"""

from __future__ import annotations

import copy
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.model.naming import bundled_folder
from bot.service.worker import MAX_CRASHES
from tests import registry_cases as rc
from tests.gitrepo import Repo, git
from tests.test_e2e import Service, http, wait_for
from tests.test_hostile_regex import (
    POISON,
    POISON_KEY,
    SLOW,
    SLOW_KEY,
    example_with,
    settings_schema,
)
from tests.test_pipeline import ENTRY, broken_entry

pytestmark = pytest.mark.e2e

BOMB = "((((a{64}){64}){64}){64})"  # 25 characters; 2.5 GB compiled by `regex` before the fix
# peak resident bytes of the worker (no Spark) over every attack
WORKER_MEMORY_BOUND = 300 * 1024 * 1024
REVIEW_BUDGET = 5.0  # review.time_budget_seconds on main for the budget attack
EXAMPLES = 40
BOMB_VARIANTS = (
    "a(?i)((((a{64}){64}){64}){64})",
    r"\X((((a{64}){64}){64}){64})",
    r"\K((((a{64}){64}){64}){64})",
    r"((((\G{64}){64}){64}){64})",
)  # 2.8 GB each when `regex` compiled them unmeasured


@pytest.fixture(scope="module")
def service(
    corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Repo]]:
    tmp = tmp_path_factory.mktemp("round2")
    repo = Repo.from_folder(corpus, tmp / "repo")
    git(repo.path, "branch", "pr", "main")
    svc = Service(tmp / "svc", worker_args=("--regression-module", "tests.slow_stage"))
    (tmp / "svc").mkdir()
    try:
        svc.start(repo.path)
        yield svc, repo
    finally:
        svc.close()


def push(
    svc: Service, repo: Repo, files: dict[str, str | bytes | None], timeout: float = 120
) -> dict[str, Any]:
    """``files`` on a ``pr`` branch fresh from ``main``, delivered; the completed check run."""
    git(repo.path, "checkout", "-q", "-B", "pr", "main")
    head = repo.change(files, "attack")
    assert svc.deliver("synchronize", head) == 202
    return svc.completed_run(head, timeout=timeout)


def on_main(repo: Repo, files: dict[str, str]) -> None:
    git(repo.path, "checkout", "-q", "main")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("configure", branch="main")


def errors(run: dict[str, Any]) -> set[tuple[str, str]]:
    return {(a["path"], a["title"]) for a in run["annotations"] if a["level"] == "failure"}


def worker_peak(svc: Service) -> int:
    status = Path(f"/proc/{svc.procs['worker'].pid}/status").read_text(encoding="utf-8")
    return (
        int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
        * 1024
    )


def test_padding_past_the_listing_limit_changes_nothing(service: tuple[Service, Repo]) -> None:
    svc, repo = service
    alone = push(svc, repo, {ENTRY: broken_entry()})
    assert alone["conclusion"] == "failure" and errors(alone)
    pad: dict[str, str | bytes | None] = {f"pad/{i:04d}.txt": f"{i}\n" for i in range(3001)}
    padded = push(svc, repo, {ENTRY: broken_entry(), **pad}, timeout=240)
    assert padded["conclusion"] == "failure"
    assert errors(padded) == errors(alone)
    assert "reviewed the change from the base and head trees" in padded["summary"]


def test_a_codeowners_only_change_is_blocked_naming_the_moves(
    service: tuple[Service, Repo],
) -> None:
    svc, repo = service
    run = push(svc, repo, {".github/CODEOWNERS": "* @contributor\n"})
    assert run["conclusion"] == "failure"
    [note] = [a for a in run["annotations"] if a["title"] == "ownership/steering-file-change"]
    assert note["path"] == ".github/CODEOWNERS" and "to @contributor" in note["message"]
    assert "approval needed from @OpenLineage/committers" in note["message"]


def test_a_compile_bomb_is_refused_and_the_worker_stays_small(
    service: tuple[Service, Repo],
) -> None:
    svc, repo = service
    files: dict[str, str | bytes | None] = dict(rc.good_files())
    schema = settings_schema({"type": "string", "pattern": BOMB})
    files.update(
        {
            rc.FACET: rc.dump(schema),
            rc.MIRROR: rc.dump(schema),
            rc.EXAMPLE: rc.dump(example_with("a")),
        }
    )
    naming = json.loads(
        (bundled_folder() / "datasets/trino/trino.json").read_text(encoding="utf-8")
    )
    component = next(iter(naming["components"]))
    naming["components"][component]["pattern"] = BOMB
    files["spec/naming/datasets/trino/trino.json"] = json.dumps(naming, indent=2) + "\n"
    run = push(svc, repo, files)
    assert run["conclusion"] == "failure"
    messages = {a["title"]: a["message"] for a in run["annotations"]}
    assert "unroll to over" in messages["naming/unsafe-pattern"]
    assert any(
        "unroll to over" in a["message"] for a in run["annotations"] if a["path"] == rc.EXAMPLE
    )
    peak = worker_peak(svc)
    print(f"\nworker peak resident memory after the compile bombs: {peak / 2**20:.0f} MB")
    assert peak < WORKER_MEMORY_BOUND


@pytest.mark.parametrize("bomb", BOMB_VARIANTS)
def test_a_bomb_python_cannot_parse_is_refused_in_every_regex_door(
    service: tuple[Service, Repo], bomb: str
) -> None:
    svc, repo = service
    files: dict[str, str | bytes | None] = dict(rc.good_files())
    schema = settings_schema(
        {
            "type": "object",
            "properties": {
                "p": {"type": "string", "pattern": bomb},
                "r": {"type": "string", "format": "regex"},
            },
            "patternProperties": {bomb: {}},
            "propertyNames": {"pattern": bomb},
        }
    )
    files.update(
        {
            rc.FACET: rc.dump(schema),
            rc.MIRROR: rc.dump(schema),
            rc.EXAMPLE: rc.dump(example_with({"p": "a", "r": bomb})),
        }
    )
    naming = json.loads(
        (bundled_folder() / "datasets/trino/trino.json").read_text(encoding="utf-8")
    )
    naming["components"][next(iter(naming["components"]))]["pattern"] = bomb
    files["spec/naming/datasets/trino/trino.json"] = json.dumps(naming, indent=2) + "\n"
    started = time.monotonic()
    run = push(svc, repo, files)
    took = time.monotonic() - started
    peak = worker_peak(svc)
    print(
        f"\n{bomb!r}: concluded {run['conclusion']} in {took:.1f} s; worker peak resident "
        f"{peak / 2**20:.0f} MB"
    )
    assert run["conclusion"] == "failure"
    messages = {a["title"]: a["message"] for a in run["annotations"]}
    # naming patterns must also parse as Python's `re`
    naming_refusal = messages["naming/unsafe-pattern"]
    assert "unroll to over" in naming_refusal or "not a valid regular expression" in naming_refusal
    facet = [a["message"] for a in run["annotations"] if a["path"] in (rc.FACET, rc.EXAMPLE)]
    for door in (
        "settings/patternProperties",
        "settings/propertyNames/pattern",
        "settings/properties/p/pattern",
    ):
        assert any("unroll to over" in m and door in m for m in facet), (door, facet)
    assert any("is not a 'regex'" in m and "settings/properties/r/format" in m for m in facet), (
        facet
    )
    assert peak < WORKER_MEMORY_BOUND
    assert "lost the lease" not in (svc.tmp / "worker.log").read_text(
        encoding="utf-8", errors="replace"
    )


@pytest.mark.parametrize("where", ["facet", "root"])
def test_a_schema_type_that_is_no_type_is_judged_not_an_internal_error(
    service: tuple[Service, Repo], where: str
) -> None:
    """Issue 28: ``"type": 5`` in a changed facet schema made the versions check raise a TypeError,
    which failed closed as "the bot hit an internal error"; through the App it is judged, the reason
    named on the schema."""
    svc, repo = service
    schema = copy.deepcopy(rc.FACET_SCHEMA)
    (schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1] if where == "facet" else schema)["type"] = 5
    run = push(svc, repo, {**rc.good_files(), rc.FACET: rc.dump(schema)})
    assert run["conclusion"] == "failure"
    assert "internal error" not in run["summary"].lower()
    assert not [a for a in run["annotations"] if a["title"] == "bot/internal-error"]
    assert any(path == rc.FACET for path, _ in errors(run)), run["annotations"]


def test_a_regression_past_its_budget_blocks_on_what_it_validated(
    service: tuple[Service, Repo],
) -> None:
    svc, repo = service
    on_main(repo, {".github/registry-bot.yml": "regression:\n  time_budget_seconds: 2\n"})
    sample = f"{rc.ENTRY}/samples/run.json"
    run = push(svc, repo, {**rc.good_files(), sample: json.dumps({"eventType": "START"})})
    unfinished = {
        a["path"] for a in run["annotations"] if a["title"] == "bot/regression-did-not-finish"
    }
    assert run["conclusion"] == "failure" and {rc.FACET, sample} <= unfinished
    assert "did not finish within its 2 s budget" in run["summary"]


def test_a_job_that_kills_its_worker_is_concluded_not_retried_forever(
    service: tuple[Service, Repo],
) -> None:
    svc, repo = service
    on_main(repo, {".github/registry-bot.yml": "regression:\n  time_budget_seconds: 60\n"})
    git(repo.path, "checkout", "-q", "-B", "pr", "main")
    head = repo.change({**rc.good_files(), f"{rc.ENTRY}/samples/oom.json": "{}"}, "a poison pill")
    assert svc.deliver("synchronize", head) == 202
    # each attempt kills the worker; it is restarted, as a supervisor would
    for _ in range(MAX_CRASHES):
        worker = svc.procs["worker"]
        wait_for(lambda w=worker: w.poll() is not None, 60, "the worker killed by the job")  # type: ignore[misc]
        assert worker.returncode == -signal.SIGKILL
        svc.procs.pop("worker")
        svc.start_worker()
    run = svc.completed_run(head, timeout=60)
    assert run["conclusion"] == "failure"
    assert run["title"].startswith(
        f"Could not finish: the review stopped the process running it {MAX_CRASHES} times"
    )
    time.sleep(0.5)
    assert svc.procs["worker"].poll() is None  # concluded, not run a third time


def test_a_review_stops_at_its_budget_and_concludes_failure(service: tuple[Service, Repo]) -> None:
    svc, repo = service
    on_main(
        repo, {".github/registry-bot.yml": f"review:\n  time_budget_seconds: {REVIEW_BUDGET:g}\n"}
    )
    schema = settings_schema(
        {
            "type": "object",
            "patternProperties": {POISON: {}, SLOW: {}},
            "additionalProperties": False,
        }
    )
    files: dict[str, str | bytes | None] = dict(rc.good_files())
    files.update({rc.FACET: rc.dump(schema), rc.MIRROR: rc.dump(schema)})
    for i in range(EXAMPLES):  # each one a slow match, cut at 0.25 s: 10 s in all
        files[f"{rc.ENTRY}/facets/examples/AcmeWidgetRunFacet/{i + 1}.json"] = rc.dump(
            example_with({POISON_KEY: 1, SLOW_KEY + str(i): 1})
        )
    started = time.monotonic()
    run = push(svc, repo, files)
    took = time.monotonic() - started
    print(
        f"\nreview with {EXAMPLES} slow matches concluded in {took:.1f} s (budget "
        f"{REVIEW_BUDGET:g} s)"
    )
    assert run["conclusion"] == "failure"
    assert run["title"].startswith(
        f"OpenLineage registry ❌ could not finish: the review's time budget of {REVIEW_BUDGET:g} "
        f"s ran out"
    )
    # what it found meanwhile
    assert any(a["title"] == "examples/timeout" for a in run["annotations"])
    assert took < REVIEW_BUDGET + 30


def test_long_headers_are_clipped_in_the_log(service: tuple[Service, Repo]) -> None:
    svc, _ = service
    log = svc.tmp / "web.log"
    before = log.stat().st_size
    for _ in range(100):
        status, _body = http(
            "POST",
            f"{svc.web}/webhook",
            b"{}",
            {
                "X-GitHub-Event": "e" * 8000,
                "X-GitHub-Delivery": "d" * 8000,
                "X-Hub-Signature-256": "sha256=00",
            },
        )
        assert status == 401
    per_request = (log.stat().st_size - before) / 100
    print(f"\nlog bytes per request with 16 KB of headers: {per_request:.0f}")
    assert per_request < 1000
