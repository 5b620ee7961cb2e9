"""Large ``.json`` event files are streamed element by element (``bot.review.regression.stream``):
the outcome never depends on how the bytes were cut, a file's fault comes after the events before it
(which are checked), and Spark (comma-separated records sorted back into file order, across several
splits) gives what one process gives."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.review.regression.compare import run_records
from bot.review.regression.events import _lines, file_records, line_record, parse_event
from bot.review.regression.result import RegressionResult
from bot.review.regression.stream import FileFault, stream_events
from tests.regress_helpers import make_tree, spec
from tests.test_regress import corpus_event_files

TOKENS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b" ",
    b"\n",
    b"\r",
    b'"',
    b'"a,]}\\""',
    b'{"a":1}',
    b"42",
    b"\xc3\xa9",
    b"\xe9",
    b"\xef\xbb\xbf",
    b":",
    b"x",
]


def outcome(pieces: list[bytes], limit: int) -> list[tuple[int | str, str]]:
    out: list[tuple[int | str, str]] = []
    try:
        out.extend(stream_events(pieces, limit))
    except FileFault as exc:
        out.append(("fault", str(exc)))
    return out


@settings(max_examples=400, deadline=None)
# a wrong bracket past the limit
@example(tokens=[b"[", b"[", b"[", b'"', b'"a,]}\\""'], cuts=[6], limit=4)
@given(
    st.lists(st.sampled_from(TOKENS), max_size=16),
    st.lists(st.integers(1, 9), min_size=1, max_size=30),
    st.integers(4, 40),
)
def test_the_outcome_never_depends_on_where_the_bytes_were_cut(
    tokens: list[bytes], cuts: list[int], limit: int
) -> None:
    data = b"".join(tokens)
    pieces, at = [], 0
    for n in cuts * (len(data) // len(cuts) + 1):
        if at >= len(data):
            break
        pieces.append(data[at : at + n])
        at += n
    assert outcome(pieces, limit) == outcome([data], limit)


def test_events_before_a_fault_are_read_and_nothing_after_it() -> None:
    assert outcome([b'[{"a": 1}, {"b": ",]}"}, {"c": [1, 2]}]'], 99) == [
        (0, '{"a": 1}'),
        (1, '{"b": ",]}"}'),
        (2, '{"c": [1, 2]}'),
    ]
    assert outcome([b'[{"a": 1}, {"b": 2] , {"c": 3}]'], 99) == [
        (0, '{"a": 1}'),
        ("fault", "not JSON: element 1 of the array has ']' where '}' belongs"),
    ]
    assert outcome([b'[{"a": 1}, {"b": "caf\xe9"}, {"c": 3}]'], 99) == [
        (0, '{"a": 1}'),
        ("fault", "undecodable: not UTF-8 (byte 0xe9 at offset 21)"),
    ]
    assert outcome([b'[{"a": 1}, {"b": "' + b"x" * 60 + b'"}, {"c": 3}]'], 50)[1][1].startswith(
        "too large: element 1 of the array is over 50 characters"
    )
    assert outcome([b'[{"a": 1}, {"b": 2}'], 99)[-1] == (
        "fault",
        "not JSON: the array is not closed (after 2 events)",
    )
    assert outcome([b'[{"a": 1}],'], 99)[-1] == (
        "fault",
        "not JSON: more after the array's closing ']'",
    )
    # one document, JSON lines, or neither
    assert outcome([b'\n{\n "a": 1\n}\n'], 99) == [(0, '{\n "a": 1\n}')]
    assert outcome([b'{"a": 1}\n\n {"b": 2}\r\nnot json\n'], 99) == [
        (0, '{"a": 1}'),
        (1, '{"b": 2}'),
        (2, "not json"),
    ]
    assert outcome([b'// a comment\n{"a": 1}\n'], 99)[0][1].startswith("not JSON (nor JSON lines)")


def test_one_process_streams_a_large_array_file(tmp_path: Path) -> None:
    """The one big file of the suite: about 70 MB (once refused as too large), read in 1 MiB pieces
    with a few MB of memory at most, whatever the file's size."""
    event = json.dumps(
        {
            "eventType": "START",
            "eventTime": "2024-01-01T00:00:00Z",
            "run": {"runId": "r"},
            "job": {"namespace": "ns", "name": "j"},
            "producer": "p",
            "x": "y" * 2000,
        }
    )
    count = 35_000
    path = tmp_path / "big.json"
    with path.open("w") as out:
        out.write("[" + event)
        for _ in range(count - 1):
            out.write("," + event)
        out.write("]")
    assert path.stat().st_size > 64 * 1024 * 1024
    tracemalloc.start()
    try:
        read = sum(
            1
            for r in file_records([str(path)])
            if r.error is None and parse_event(r.text)["run"]["runId"] == "r"
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == count and peak < 16 * 2**20, peak  # measured: about 3 MB


@pytest.mark.spark
def test_spark_streams_large_arrays_across_splits_as_one_process_does(  # type: ignore[no-untyped-def]
    spark, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.review.regression import spark_job

    tree = make_tree(corpus, tmp_path / "tree")
    side = spec(tree, "head")
    events = [
        json.loads(Path(p).read_text()) for p in corpus_event_files(corpus) if p.endswith(".json")
    ]
    events = [e for e in events if isinstance(e, dict)][:60] * 4
    folder = tmp_path / "events"
    folder.mkdir()
    compact = ",".join(json.dumps(e, separators=(",", ":")) for e in events)
    (folder / "compact.json").write_text(f"[{compact}]")  # one line
    (folder / "pretty.json").write_text(json.dumps(events, indent=2))
    # ends with a comma, which Hadoop's reader drops
    (folder / "trailing.json").write_text(f"[{compact}],")
    # events, then a fault
    (folder / "broken.json").write_text(f'[{compact}, {{"a": ]}}, {compact}]')
    (folder / "latin1.json").write_bytes(f"[{compact},".encode() + b'{"a": "caf\xe9"}]')
    files = sorted(str(p) for p in folder.iterdir())
    monkeypatch.setattr(spark_job, "WHOLE_READ_MAX_BYTES", 0)  # every .json file streamed
    conf = {"spark.sql.files.maxPartitionBytes": "65536", "spark.sql.files.openCostInBytes": "1024"}
    before = {key: spark.conf.get(key) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)  # each file cut into several splits, read by several tasks
    try:
        assert spark.read.text(str(folder / "pretty.json")).rdd.getNumPartitions() > 3
        on_spark = spark_job.run_spark(spark, side, side, locations=files).to_json()
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)
    one = RegressionResult.from_tally(
        side, side, run_records(file_records(files), side, side), "one", 0.0
    ).to_json()
    assert {k: v for k, v in on_spark.items() if k not in ("engine", "seconds")} == {
        k: v for k, v in one.items() if k not in ("engine", "seconds")
    }
    faults = {
        Path(e["file"]).name: e["message"]
        for g in on_spark["groups"]
        if g["rule"] == "event-readable"
        for e in g["examples"]
    }
    assert set(faults) == {"broken.json", "latin1.json", "trailing.json"}
    # every event before each fault, and the three faults
    assert on_spark["events"] == len(events) * 5 + 3


@given(
    st.lists(
        st.sampled_from([b"a", b"{}", b" ", b"\t", b"\n", b"\r", b"\r\n", b"\xc3\xa9", b"\xff"]),
        max_size=24,
    )
)
@settings(max_examples=300, deadline=None)
def test_json_lines_split_as_hadoop_splits_them(pieces: list[bytes]) -> None:
    """A chunk without "\\r" is split at "\\n" (a search, not a scan): the same lines, numbers and
    faults as ``bytes.splitlines``, which splits at "\\n", "\\r\\n" and "\\r"."""
    data = b"".join(pieces)
    expected = [
        line_record("f", i, line)
        for i, line in enumerate(x for x in data.splitlines() if x.strip())
    ]
    assert list(_lines("f", [data])) == expected
    assert list(_lines("f", data.splitlines(keepends=True))) == expected  # a file read line by line
