"""No socket is opened while reviewing a pull request, whatever its schemas refer to.

Two independent tripwires: listening sockets on loopback (IPv4 and, when the host has it, IPv6) that
must see no connection, for what native code (jsonschema-rs' own HTTP client) would open; and
``socket.socket.connect`` / ``socket.create_connection`` replaced by a recorder that refuses, for
what Python code (``urllib``, ``requests``) would open. The schemas refer to the listeners in every
form a reference can take: plain and TLS URLs, IPv4, IPv6 and host names, a relative ``$ref`` under
an embedded ``$id``, ``$dynamicRef``, a remote ``$schema``, and a naming base schema; the examples
reach every one of them, and the regression compiles and explains against the same schemas.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.core.config import Config
from bot.core.findings import Report
from bot.core.snapshot import DirSnapshot
from bot.model.naming import bundled_folder
from bot.model.schemas import SchemaStore
from bot.review.engine import ReviewContext, review
from bot.review.regression.side import SideSpec, Validators
from tests import registry_cases as rc

META_FACET = f"{rc.ENTRY}/facets/AcmeMetaRunFacet.json"
META_EXAMPLE = f"{rc.ENTRY}/facets/examples/AcmeMetaRunFacet/1.json"
NAMING_BASE = "spec/naming/NamingBase.json"


@dataclass
class Tripwire:
    """Loopback listeners and a record of every connection attempted from Python."""

    port: int
    listeners: list[socket.socket]
    attempts: list[Any] = field(default_factory=list)

    def urls(self) -> list[str]:
        p = self.port
        return [
            f"http://127.0.0.1:{p}/x.json",
            f"https://127.0.0.1:{p}/x.json",
            f"http://[::1]:{p}/x.json",
            f"http://localhost:{p}/x.json",
            f"http://127.0.0.1:{p}/x.json#/$defs/A",
        ]

    def connections(self) -> int:
        """Connections that reached a listener (accepted by the kernel even if never
        ``accept()``-ed)."""
        count = 0
        for listener in self.listeners:
            while select.select([listener], [], [], 0.2)[0]:
                conn, _ = listener.accept()
                conn.close()
                count += 1
        return count

    def assert_silent(self) -> None:
        assert self.attempts == [], f"Python code tried to connect to {self.attempts}"
        assert self.connections() == 0, "a connection reached the loopback listener"


def _listen(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    listener.bind((host, port))
    listener.listen(64)
    return listener


@pytest.fixture
def tripwire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tripwire]:
    first = _listen(socket.AF_INET, "127.0.0.1", 0)
    port = first.getsockname()[1]
    listeners = [first]
    # without IPv6 loopback, the [::1] reference is still in the schema
    with contextlib.suppress(OSError):
        listeners.append(_listen(socket.AF_INET6, "::1", port))
    wire = Tripwire(port, listeners)

    def refuse(_self: socket.socket, address: Any, *_: Any) -> None:
        wire.attempts.append(address)
        raise ConnectionRefusedError(f"the review opened a socket to {address}")

    def refuse_create(address: Any, *_: Any, **__: Any) -> socket.socket:
        wire.attempts.append(address)
        raise ConnectionRefusedError(f"the review opened a socket to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse_create)
    try:
        yield wire
    finally:
        for listener in listeners:
            listener.close()


def _hostile_facet(urls: list[str], port: int) -> dict[str, Any]:
    schema = json.loads(json.dumps(rc.FACET_SCHEMA))
    props = schema["$defs"]["AcmeWidgetRunFacet"]["allOf"][1]["properties"]
    for i, url in enumerate(urls):
        props[f"remote{i}"] = {"$ref": url}
    props["embedded"] = {
        "$id": f"http://127.0.0.1:{port}/base/",
        "properties": {"y": {"$ref": "y.json"}},
    }
    props["dynamic"] = {"$dynamicRef": f"http://127.0.0.1:{port}/dynamic.json#meta"}
    return schema


def _hostile_tree(tree: Path, wire: Tripwire) -> Path:
    for path, content in rc.good_files().items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    urls = wire.urls()
    (tree / rc.FACET).write_text(json.dumps(_hostile_facet(urls, wire.port)), encoding="utf-8")
    example = json.loads(json.dumps(rc.EXAMPLE_JSON))
    example["acme_widget"].update({f"remote{i}": 1 for i in range(len(urls))})
    example["acme_widget"].update(embedded={"y": 1}, dynamic=1)
    (tree / rc.EXAMPLE).write_text(json.dumps(example), encoding="utf-8")
    meta = json.loads(json.dumps(rc.FACET_SCHEMA).replace("AcmeWidget", "AcmeMeta"))
    meta["$schema"] = f"http://127.0.0.1:{wire.port}/meta.json"
    (tree / META_FACET).parent.mkdir(parents=True, exist_ok=True)
    (tree / META_FACET).write_text(json.dumps(meta), encoding="utf-8")
    (tree / META_EXAMPLE).parent.mkdir(parents=True, exist_ok=True)
    (tree / META_EXAMPLE).write_text(
        json.dumps({"acme_meta": rc.EXAMPLE_JSON["acme_widget"]}), encoding="utf-8"
    )
    naming = tree / "spec/naming"
    if not naming.exists():
        import shutil

        shutil.copytree(bundled_folder(), naming)
        for path in naming.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    base = json.loads((naming / "NamingBase.json").read_text(encoding="utf-8"))
    base["allOf"] = [*base.get("allOf", []), {"$ref": f"http://127.0.0.1:{wire.port}/naming.json"}]
    (naming / "NamingBase.json").write_text(json.dumps(base), encoding="utf-8")
    return tree


def test_the_tripwire_sees_a_connection(tripwire: Tripwire) -> None:
    """The listener really notices a connection (from outside Python's socket module, like native
    code)."""
    import subprocess
    import sys

    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import socket; socket.create_connection(('127.0.0.1', {tripwire.port}))",
        ],
        check=True,
        timeout=30,
    )
    assert tripwire.connections() == 1


def test_a_review_of_remote_references_opens_no_socket(
    corpus_copy: Path, tripwire: Tripwire
) -> None:
    tree = _hostile_tree(corpus_copy, tripwire)
    report: Report = review(head=DirSnapshot(tree), context=ReviewContext(strict=True))
    tripwire.assert_silent()
    remote = [f for f in report.findings if f.rule == "facets/remote-ref" and f.path == rc.FACET]
    assert len(remote) >= len(tripwire.urls())
    assert "bot/internal-error" not in {f.rule for f in report.findings}
    assert {f.rule for f in report.findings if f.path == META_FACET} >= {"facets/meta-schema"}


def test_validators_built_by_the_store_open_no_socket(
    corpus_copy: Path, tripwire: Tripwire
) -> None:
    tree = _hostile_tree(corpus_copy, tripwire)
    store = SchemaStore(DirSnapshot(tree), Config())
    for path in (rc.FACET, META_FACET):
        schema = json.loads((tree / path).read_text(encoding="utf-8"))
        fast = store.fast_validator(schema)
        if fast is not None:
            fast.is_valid({"acme_widget": {"remote0": 1}})
        explain = store.validator(schema)
        example = json.loads((tree / rc.EXAMPLE).read_text(encoding="utf-8"))
        for key in example["acme_widget"]:
            # refusing is the point; only a connection fails the test
            with contextlib.suppress(Exception):
                list(explain.iter_errors({"acme_widget": {key: example["acme_widget"][key]}}))
    tripwire.assert_silent()


def test_the_regression_validators_open_no_socket(corpus_copy: Path, tripwire: Tripwire) -> None:
    tree = _hostile_tree(corpus_copy, tripwire)
    spec = SideSpec.build(DirSnapshot(tree), Config(), "head")
    validators = Validators(spec, {})
    example = json.loads((tree / rc.EXAMPLE).read_text(encoding="utf-8"))["acme_widget"]
    for url in (rc.SCHEMA_URL, rc.SCHEMA_URL.replace("AcmeWidget", "AcmeMeta")):
        assert url in spec.schemas
        for fragment in ("", "/$defs/AcmeWidgetRunFacet"):
            compiled = validators.compiled(url, fragment)
            if compiled is not None:
                compiled.rs.is_valid(example)
                # refusing is the point; only a connection fails the test
                with contextlib.suppress(Exception):
                    validators.explain(compiled, example, partial=False)
    tripwire.assert_silent()


def test_the_store_still_compiles_what_the_repository_holds(
    corpus: Path, tripwire: Tripwire
) -> None:
    """The refusing retriever does not cost the fast path: references into the mirror still
    compile."""
    store = SchemaStore(DirSnapshot(corpus), Config())
    fast = store.fast_validator(rc.FACET_SCHEMA)
    assert fast is not None
    assert fast.is_valid(rc.EXAMPLE_JSON)
    assert not fast.is_valid({"acme_widget": {**rc.EXAMPLE_JSON["acme_widget"], "widgetId": 5}})
    tripwire.assert_silent()


def test_a_file_reference_reads_nothing(corpus: Path) -> None:
    from referencing.exceptions import Unresolvable

    store = SchemaStore(DirSnapshot(corpus), Config())
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"x": {"$ref": "file:///etc/passwd"}},
    }
    assert store.fast_validator(schema) is None
    with pytest.raises(Unresolvable):
        list(store.validator(schema).iter_errors({"x": 1}))


def test_a_store_and_its_validators_are_freed_after_use(corpus: Path) -> None:
    """A retriever held by a jsonschema-rs object must not point back at the store (an invisible
    cycle)."""
    import gc
    import weakref

    store = SchemaStore(DirSnapshot(corpus), Config())
    fast = store.fast_validator(rc.FACET_SCHEMA)
    assert fast is not None and fast.is_valid(rc.EXAMPLE_JSON)
    spec = SideSpec.build(DirSnapshot(corpus), Config(), "head")
    validators = Validators(spec, {})
    url = next(iter(spec.schemas))
    validators.compiled(url, "")
    gone = [weakref.ref(store), weakref.ref(validators)]
    del store, fast, validators
    gc.collect()
    assert [ref() for ref in gone] == [None, None]
