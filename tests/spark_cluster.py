"""A real Spark standalone cluster on loopback: a master and workers from the installed PySpark.

Each worker runs in its own mount namespace (``unshare -m``, as root) where tmpfs hides the
driver-only folders (the checkout, the virtual environment, the registry, the archive cache): it
sees only what the cluster shares. Its Python is a bare virtual environment of the base interpreter
whose site-packages holds only ``pyspark`` and ``py4j`` (bind-mounted from the driver's environment
before the driver's folders are hidden, so nothing is copied or downloaded). Used by the cluster
test and ``benchmarks/bench_cluster.py``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import py4j
import pyspark

START_SECONDS = 90


def _hidden(folders: Iterable[Path]) -> list[Path]:
    """The folders to cover, outermost first, without those inside another (already hidden)."""
    out: list[Path] = []
    for folder in sorted({f.resolve() for f in folders}, key=lambda p: len(p.parts)):
        if not any(folder.is_relative_to(o) for o in out):
            out.append(folder)
    return out


def worker_python(target: Path) -> Path:
    """A virtual environment of the base interpreter with only ``pyspark`` and ``py4j`` (mount
    points that each worker binds to the driver's copies); returns its site-packages."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(target)], check=True)  # type: ignore[attr-defined]
    site = Path(
        subprocess.run(
            [
                str(target / "bin/python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    for name in ("pyspark", "py4j"):
        (site / name).mkdir()
    return site


def spark_defaults(folder: Path) -> dict[str, str]:
    """The properties of ``folder/spark-defaults.conf`` (name, blanks, value; ``#`` comments)."""
    lines = (folder / "spark-defaults.conf").read_text().splitlines()
    pairs = (line.split(None, 1) for line in lines if line.strip() and not line.startswith("#"))
    return {name: value.strip() for name, value in pairs}


class Cluster:
    """Start with ``Cluster(root, hide).start(workers)``; ``stop()`` ends every process it
    started."""

    def __init__(self, root: Path, hide: Iterable[Path], java_options: str = "") -> None:
        self.root = root
        self.java_options = java_options  # of the master and the workers
        self.hide = _hidden(hide)
        self.processes: list[subprocess.Popen[bytes]] = []
        self.url = ""
        self.python = root / "worker-python/bin/python"
        self.work_dirs: list[Path] = []
        if any(root.resolve().is_relative_to(h) for h in self.hide):
            raise ValueError(f"{root} is inside a hidden folder: the workers could not see it")

    def _spawn(self, command: list[str], log: Path) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "SPARK_HOME": str(Path(pyspark.__file__).parent),
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_DAEMON_JAVA_OPTS": self.java_options,
        }
        env.pop("PYSPARK_PYTHON", None)
        with log.open("wb") as out:
            process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        self.processes.append(process)
        return process

    def start(self, workers: int = 2, cores: int = 1, memory: str = "1g") -> Cluster:
        spark_class = str(Path(pyspark.__file__).parent / "bin/spark-class")
        site = worker_python(self.root / "worker-python")
        master_log = self.root / "master.log"
        self._spawn(
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
            ],
            master_log,
        )
        self.url = self._wait(
            master_log, re.compile(r"Starting Spark master at (spark://\S+)")
        ).group(1)
        for n in range(workers):
            work = self.root / f"worker-{n}"
            work.mkdir()
            self.work_dirs.append(work)
            script = "set -e\n" + "".join(
                f"mount --bind {shlex.quote(str(source))} {shlex.quote(str(site / source.name))}\n"
                for source in (Path(pyspark.__file__).parent, Path(py4j.__file__).parent)
            )
            script += "".join(
                f"mount -t tmpfs -o size=1m tmpfs {shlex.quote(str(h))}\n" for h in self.hide
            )
            script += (
                f"export SPARK_HOME={shlex.quote(str(site / 'pyspark'))}\n"
                f'exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker --host '
                f"127.0.0.1 "
                f"--port 0 --webui-port 0 --cores {cores} --memory {memory} "
                f"--work-dir {shlex.quote(str(work))} {self.url}\n"
            )
            self._spawn(
                ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                self.root / f"worker-{n}.log",
            )
        self._wait(master_log, re.compile(r"Registering worker"), count=workers)
        return self

    def _wait(self, log: Path, pattern: re.Pattern[str], count: int = 1) -> re.Match[str]:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            matches = list(pattern.finditer(log.read_text(errors="replace")))
            if len(matches) >= count:
                return matches[0]
            dead = [p for p in self.processes if p.poll() is not None]
            if dead:
                break
            time.sleep(0.2)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
            for p in sorted(self.root.glob("*.log"))
        )
        self.stop()
        raise RuntimeError(
            f"the Spark cluster did not start ({pattern.pattern!r} x{count} not seen)\n{logs}"
        )

    def executor_folders(self) -> list[list[Path]]:
        """Per worker: the executor folders its executors ran in (``app-*/<executor id>``)."""
        return [sorted(p for p in work.glob("app-*/*") if p.is_dir()) for work in self.work_dirs]

    def stop(self) -> None:
        for process in reversed(self.processes):  # workers first; each group holds its executors
            _signal(process, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _signal(process, signal.SIGKILL)
                process.wait()
        self.processes.clear()


def _signal(process: subprocess.Popen[bytes], sig: int) -> None:
    """Signal the process group this module started for ``process`` (its session: nothing else)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
