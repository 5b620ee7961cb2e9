"""The regression beside its floor: events per CPU-second of the whole process tree, in interleaved
pairs.

    python benchmarks/floor_regress.py                   # 20,000 events, one process and the floor
    python benchmarks/floor_regress.py --spark --pairs 3  # local[2] Spark too
    python benchmarks/floor_regress.py --baseline /work/wt/main  # beside another checkout
    python benchmarks/floor_regress.py --spark --events 200000 --pairs 1 --no-warmup  # Spark, warm
    python benchmarks/floor_regress.py --instructions --baseline /work/wt/main  # callgrind counts

The *floor* is one Python process that reads the same files and does the least a regression can do:
each event parsed with orjson, the event and every facet validated against its ``schemaURL`` /
``_schemaURL`` with ``jsonschema-rs`` validators compiled once, on base and on head. The second
floor validates a URL once when its schema and all it references are the same on both sides, as the
regression does (its ratio to the code before a change bounds what any engine can reach without
skipping validation). ``registry-bot regress`` does that and more (naming, keys, producers, counts,
the report). Every figure is events divided by the user + system CPU of the command and all its
descendants (``TreeCpu``), start-up included; runs alternate so load drifts hit each alike. Events
and trees come from ``bench_regress``.

CPU time on a shared machine varies by more than the effects measured (the same run 1.6x apart
within minutes), so ``--instructions`` also counts each command's instructions once under
``valgrind --tool=callgrind`` (the command and every descendant: git, Spark's JVM): the same count
whatever else the machine does, a proxy for CPU that ignores cache misses and branch mispredictions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# path set up
from benchmarks.bench_regress import DriverMemory, registry_repo, trees, write_events  # noqa: E402


def floor(base_root: str, head_root: str, events: str, shared: bool = False) -> int:
    """The floor, run as its own process: orjson + precompiled jsonschema-rs on both sides; events
    read. ``shared``: a URL whose schema and every schema it references are the same on both sides
    is validated once (what the regression does), the rest on each side."""
    import orjson

    def documents(root: str) -> dict[str, dict[str, object]]:
        schemas: dict[str, dict[str, object]] = {}
        for folder in ("spec", "website/static/spec"):
            for path in sorted(Path(root, folder).rglob("*.json")):
                try:
                    doc = orjson.loads(path.read_bytes())
                except orjson.JSONDecodeError:
                    continue
                if isinstance(doc, dict) and isinstance(doc.get("$id"), str):
                    schemas.setdefault(doc["$id"], doc)
        return schemas

    def closure(schemas: dict[str, dict[str, object]], url: str) -> set[str]:
        seen, stack = {url}, [url]
        while stack:
            text = orjson.dumps(schemas.get(stack.pop(), {})).decode()
            for ref in re.findall(r'"\$ref":"([^"#]*)', text):
                target = urljoin(url, ref)
                if ref and target not in seen:
                    seen.add(target)
                    stack.append(target)
        return seen

    if shared:
        before, after = documents(base_root), documents(head_root)
        changed = {u for u in before.keys() | after.keys() if before.get(u) != after.get(u)}
        validators = [floor_side(before), floor_side(after)]
        unchanged: dict[str, bool] = {}

        def both(url: str, instance: object) -> None:
            file = url.partition("#")[0]
            same = unchanged.get(file)
            if same is None:
                same = unchanged[file] = not (closure(after, file) & changed)
            validators[0](url)(instance)
            if not same:
                validators[1](url)(instance)

        return read_events(events, both)
    sides = [floor_side(documents(base_root)), floor_side(documents(head_root))]

    def each(url: str, instance: object) -> None:
        for validator in sides:
            validator(url)(instance)

    return read_events(events, each)


def floor_side(schemas: dict[str, dict[str, object]]) -> Callable[[str], Callable[[object], bool]]:
    """Validators of one side by schema URL, compiled on first use."""
    import jsonschema_rs

    def retrieve(uri: str) -> object:
        # an old schema's reference outside the trees: the floor does not judge it
        return schemas.get(uri, {})

    registry = jsonschema_rs.Registry(list(schemas.items()), retriever=retrieve)
    compiled: dict[str, Callable[[object], bool]] = {}

    def validator(url: str) -> Callable[[object], bool]:
        found = compiled.get(url)
        if found is None:
            found = compiled[url] = jsonschema_rs.validator_for(
                {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": url},
                registry=registry,
                retriever=retrieve,
                validate_formats=True,
            ).is_valid
        return found

    return validator


def read_events(events: str, check: Callable[[str, object], None]) -> int:
    """Every event of the folder parsed with orjson, the event and each facet given to ``check``
    with its schema URL; the number of events."""
    import orjson

    count = 0
    for path in sorted(Path(events).iterdir()):
        with path.open("rb") as lines:
            for line in lines:
                event = orjson.loads(line)
                count += 1
                check(event["schemaURL"], event)
                for holder in (event["run"], event["job"], *event["inputs"], *event["outputs"]):
                    for facet in holder["facets"].values():
                        check(facet["_schemaURL"], facet)
    return count


class TreeCpu(threading.Thread):
    """CPU seconds of a process and every descendant (Spark's JVM, its Python daemon and workers),
    sampled from ``/proc/<pid>/stat`` every 0.1 s: descendants are not always reaped by their
    parents, so ``RUSAGE_CHILDREN`` misses them. A process's CPU after its last sample is not
    counted."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.seen: dict[int, float] = {}
        self.stopped = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")

    def sample(self) -> None:
        frontier = [self.pid]
        while frontier:
            pid = frontier.pop()
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            self.seen[pid] = max(
                self.seen.get(pid, 0.0), (int(fields[11]) + int(fields[12])) / self.tick
            )
            frontier += DriverMemory._children(pid)

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            self.sample()

    @property
    def total(self) -> float:
        return sum(self.seen.values())


def cpu_of(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU seconds of the command and its descendants, wall seconds, stdout); ``python -m bot`` in
    ``cwd`` imports that checkout's ``bot``. The larger of ``RUSAGE_CHILDREN`` (exact for what was
    reaped) and the sampled process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            command, stdout=out, stderr=err, env={**os.environ, **env}, cwd=cwd
        )
        tree = TreeCpu(process.pid)
        tree.start()
        code = process.wait()
        tree.stopped.set()
        tree.join()
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode()
        if code not in (0, 1) or not stdout.strip():
            raise RuntimeError(f"{command[:4]} failed ({code}): {err.read().decode()[-3000:]}")
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return max(reaped, tree.total), wall, stdout


def instructions_of(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """(instructions executed by the command and all its descendants under callgrind, stdout)."""
    with tempfile.TemporaryDirectory(prefix="callgrind-") as out:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--trace-children=yes",
                f"--callgrind-out-file={out}/%p.out",
                *command,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            cwd=cwd,
            check=False,
        )
        if done.returncode not in (0, 1) or not done.stdout.strip():
            raise RuntimeError(f"{command[:4]} failed ({done.returncode}): {done.stderr[-3000:]}")
        total = 0
        for profile in Path(out).glob("*.out"):
            found = re.search(r"^(?:summary|totals): (\d+)", profile.read_text(), re.MULTILINE)
            total += int(found.group(1)) if found else 0
    return total, done.stdout


def count_instructions(
    runs: dict[str, tuple[list[str], Path]], events: int, env: dict[str, str]
) -> None:
    """Each run once under callgrind: instructions per event beside the floor's and the
    baseline's."""
    counts: dict[str, int] = {}
    for label, (command, cwd) in runs.items():
        counts[label], out = instructions_of(command, cwd, env)
        count = json.loads(out)["events"]
        if count != events:
            raise RuntimeError(f"{label} read {count} events, not {events}")
        print(
            f"  {label}: {counts[label] / 1e9:.2f} G instructions, "
            f"{counts[label] / events / 1e3:,.0f} k per event",
            flush=True,
        )
    floor_count = counts["floor (orjson + jsonschema-rs)"]
    for label, value in counts.items():
        print(f"{label}: {value / floor_count:.2f}x the floor's instructions")
    if "baseline --engine python" in counts:
        ratio = counts["baseline --engine python"] / counts["regress --engine python"]
        print(f"--engine python: baseline / this {ratio:.3f}x in instructions")
        # the most any engine validating what the regression validates could gain
        ceiling = counts["baseline --engine python"] / counts["floor, unchanged schemas once"]
        print(f"baseline / floor, unchanged schemas once: {ceiling:.3f}x in instructions")


def regress_command(
    checkout: Path, repo: Path, events: Path, engine: list[str]
) -> tuple[list[str], Path]:
    return [
        sys.executable,
        "-m",
        "bot",
        "regress",
        str(repo),
        "--base",
        "main",
        "--head",
        "pr",
        "--events",
        str(events),
        *engine,
        "--format",
        "json",
    ], checkout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also regress on local[2] Spark")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout of the project, run in pairs with this one"
    )
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count each run's instructions once (valgrind's callgrind) instead of timing pairs",
    )
    parser.add_argument(
        "--no-warmup", action="store_true", help="no uncounted first round (large counts)"
    )
    parser.add_argument(
        "--floor-child",
        nargs=4,
        metavar=("BASE", "HEAD", "EVENTS", "SHARED"),
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()
    if args.floor_child:
        base, head, events, shared = args.floor_child
        print(json.dumps({"events": floor(base, head, events, shared == "shared")}))
        return
    # users have bytecode; an editable install recompiles bot/ without it
    env = {"PYTHONDONTWRITEBYTECODE": ""}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    work = Path(tempfile.mkdtemp(prefix="floor-regress-", dir=args.work))
    try:
        base_root, head_root = trees(work)
        repo = registry_repo(base_root, head_root, work / "repo")
        events = work / "events"
        write_events(events, args.events, args.files)

        def floor_of(how: str) -> list[str]:
            child = [str(base_root), str(head_root), str(events), how]
            return [sys.executable, __file__, "--floor-child", *child]

        runs: dict[str, tuple[list[str], Path]] = {
            "floor (orjson + jsonschema-rs)": (floor_of("each"), ROOT),
            "floor, unchanged schemas once": (floor_of("shared"), ROOT),
            "regress --engine python": regress_command(ROOT, repo, events, ["--engine", "python"]),
        }
        if args.baseline:
            runs["baseline --engine python"] = regress_command(
                args.baseline, repo, events, ["--engine", "python"]
            )
        if args.spark:
            runs["regress --master local[2]"] = regress_command(
                ROOT, repo, events, ["--master", "local[2]"]
            )
            if args.baseline:
                runs["baseline --master local[2]"] = regress_command(
                    args.baseline, repo, events, ["--master", "local[2]"]
                )
        if args.instructions:
            count_instructions(runs, args.events, env)
            return
        rates: dict[str, list[float]] = {label: [] for label in runs}
        loads: list[float] = []
        # not counted: bytecode written, files cached
        for command, cwd in [] if args.no_warmup else runs.values():
            cpu_of(command, cwd, env)
        for _ in range(args.pairs):
            # one of each per round: load drifts hit every run alike
            for label, (command, cwd) in runs.items():
                cpu, wall, out = cpu_of(command, cwd, env)
                count = json.loads(out)["events"]
                if count != args.events:
                    raise RuntimeError(f"{label} read {count} events, not {args.events}")
                rates[label].append(count / cpu)
                loads.append(os.getloadavg()[0])
                print(
                    f"  {label}: {count / cpu:,.0f} events per CPU-second ({cpu:.2f} s CPU, "
                    f"{wall:.2f} s wall)",
                    flush=True,
                )
        print(
            f"{args.events:,} events, {args.pairs} rounds, {os.cpu_count()} cores, load average "
            f"{min(loads):.1f}-{max(loads):.1f}"
        )
        floors = rates["floor (orjson + jsonschema-rs)"]
        for label, values in rates.items():
            pairs = [f / v for f, v in zip(floors, values, strict=True)]
            print(
                f"{label}: median {statistics.median(values):,.0f} events per CPU-second; floor / "
                f"this per pair {', '.join(f'{p:.2f}' for p in pairs)}, median "
                f"{statistics.median(pairs):.2f}x"
            )
        if "baseline --engine python" in rates:
            # the most any engine validating what the regression validates could gain
            ceiling = [
                f / b
                for f, b in zip(
                    rates["floor, unchanged schemas once"],
                    rates["baseline --engine python"],
                    strict=True,
                )
            ]
            print(
                f"floor, unchanged schemas once / baseline --engine python per pair "
                f"{', '.join(f'{p:.2f}' for p in ceiling)}; median "
                f"{statistics.median(ceiling):.2f}x"
            )
        for engine in ("--engine python", "--master local[2]"):
            if f"baseline {engine}" in rates and f"regress {engine}" in rates:
                pairs = [
                    new / old
                    for new, old in zip(
                        rates[f"regress {engine}"], rates[f"baseline {engine}"], strict=True
                    )
                ]
                print(
                    f"{engine}: this / baseline per pair {', '.join(f'{p:.2f}' for p in pairs)}; "
                    f"median {statistics.median(pairs):.2f}x"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
