"""The regression benchmark's memory sampler survives processes that vanish while it reads /proc."""

from __future__ import annotations

import subprocess
import sys
import time

from benchmarks.bench_regress import DriverMemory

CHURN = """
import subprocess, sys, time
keep = subprocess.Popen([sys.executable, "-c", "b = bytearray(64 * 2**20); import time; time.sleep(3)"])
end = time.monotonic() + 2.5
while time.monotonic() < end:  # children that come and go while the sampler walks the tree
    subprocess.Popen([sys.executable, "-c", "pass"]).wait()
keep.wait()
"""  # noqa: E501


def test_a_vanished_process_reads_as_nothing() -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    sampler = DriverMemory(done.pid)
    sampler.sample()
    assert (sampler.driver, sampler.workers) == (0, 0)


def test_the_sampler_outlives_a_failed_sample_and_sees_the_peak() -> None:
    """A sample that raises is counted and skipped; sampling goes on and still finds a child's 64
    MB."""
    process = subprocess.Popen([sys.executable, "-c", CHURN])
    sampler = DriverMemory(process.pid)
    real, calls = sampler.sample, []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise FileNotFoundError("/proc/1/task")
        real()

    sampler.sample = flaky  # type: ignore[method-assign]
    with sampler:
        process.wait()
        time.sleep(0.3)
    assert sampler.failed == 1 and len(calls) > 3
    assert sampler.workers >= 64 * 2**20
