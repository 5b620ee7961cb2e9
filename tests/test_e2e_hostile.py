"""End to end: a hostile pull request through the real App worker concludes, and opens no socket.

The pull request adds a participant whose facet schema carries the poison of the issue
(``patternProperties`` ``^(a+)+$`` with ``additionalProperties: false``), a pattern catastrophic
even for ``regex`` (``^(a|aa)+$``), and ``$ref``s to a loopback listener in every form; its example
has the keys that trigger both patterns. Before the fix the worker process froze for good (the GIL
held in ``re.search``) and sent HTTP GETs to the listener; now the check run completes with
findings, and the listener sees no connection.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import registry_cases as rc
from tests.gitrepo import Repo
from tests.test_e2e import Service
from tests.test_hostile_regex import (
    POISON,
    POISON_KEY,
    SLOW,
    SLOW_KEY,
    example_with,
    settings_schema,
)
from tests.test_no_network import Tripwire, _hostile_facet, _listen

pytestmark = pytest.mark.e2e


@pytest.fixture
def listener() -> Iterator[Tripwire]:
    first = _listen(__import__("socket").AF_INET, "127.0.0.1", 0)
    wire = Tripwire(first.getsockname()[1], [first])
    try:
        yield wire
    finally:
        first.close()


def hostile_files(wire: Tripwire) -> dict[str, str]:
    settings = {
        "type": "object",
        "patternProperties": {POISON: {}, SLOW: {}},
        "additionalProperties": False,
    }
    schema = settings_schema(settings)
    remote = _hostile_facet(wire.urls(), wire.port)["$defs"]["AcmeWidgetRunFacet"]["allOf"][1][
        "properties"
    ]
    schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]["properties"].update(
        {k: v for k, v in remote.items() if k.startswith(("remote", "embedded", "dynamic"))}
    )
    example = example_with({POISON_KEY: 1, SLOW_KEY: 1})
    example["acme_widget"].update(remote0=1, embedded={"y": 1})
    files = rc.good_files()
    files.update(
        {rc.FACET: rc.dump(schema), rc.MIRROR: rc.dump(schema), rc.EXAMPLE: rc.dump(example)}
    )
    return files


def test_a_poison_schema_through_the_real_worker_concludes_without_a_socket(
    corpus: Path, tmp_path: Path, listener: Tripwire
) -> None:
    repo = Repo.from_folder(corpus, tmp_path / "repo")
    head = repo.change(hostile_files(listener), "acme: a hostile facet")
    service = Service(tmp_path / "svc", worker_args=("--no-regression",))
    (tmp_path / "svc").mkdir()
    try:
        service.start(repo.path)
        start = time.monotonic()
        assert service.deliver("opened", head) == 202
        run = service.completed_run(head, timeout=180)
        took = time.monotonic() - start
    finally:
        service.close()
    print(f"\nhostile pull request: delivery to completed check run in {took:.1f} s")
    assert run["conclusion"] == "failure"
    found = {(a["path"], a["title"]) for a in run["annotations"]}
    assert (rc.EXAMPLE, "examples/timeout") in found
    assert (rc.FACET, "facets/remote-ref") in found
    timeout = next(a for a in run["annotations"] if a["title"] == "examples/timeout")
    assert json.dumps(SLOW)[1:-1] in timeout["message"] or SLOW in timeout["message"]
    assert listener.connections() == 0, "the worker connected to the loopback listener"
