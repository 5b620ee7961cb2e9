"""Processes on "hosts" of their own: each in its own network and UTS namespace (``unshare --net
--uts``, as root), with its own host name and address, on a bridge of this machine.

The bridge carries an address of a private /24 chosen at random (``host``): servers the processes
must reach (Redis, the stand-in GitHub) listen there. Each process gets a veth pair, one end on the
bridge, the other moved into its namespace as ``eth0``. Nothing leaves the machine: there is no
route beyond the /24, which is one no interface of this machine uses (so that labs of tests running
side by side do not meet). ``close()`` ends the processes it started and removes the bridge (a
namespace, and its end of the veth, disappears with its last process).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shlex
import signal
import subprocess
from pathlib import Path

SETUP = (
    'echo ready; read _; ip addr add "$ADDRESS" dev eth0 && ip link set eth0 up && ip link set lo '
    'up && hostname "$HOSTNAME_" && exec "$@"'
)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _free_subnet() -> int:
    """A third octet of 10.213.x.0/24 that no address of this machine is in."""
    shown = subprocess.run(
        ["ip", "-o", "-4", "addr", "show"], check=True, capture_output=True, timeout=10, text=True
    ).stdout
    used = {int(m) for m in re.findall(r"inet 10\.213\.(\d+)\.", shown)}
    return random.choice([n for n in range(1, 250) if n not in used])


class Lab:
    def __init__(self) -> None:
        self.tag = f"{os.getpid() % 1000:03d}{random.randrange(100):02d}"
        self.bridge = f"brops{self.tag}"
        self.subnet = 0
        self.host = ""
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._links: list[str] = []
        self._next = 2  # the next host's address in the /24

    def start(self) -> Lab:
        self.subnet = _free_subnet()
        self.host = f"10.213.{self.subnet}.1"
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.host}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        return self

    def spawn(
        self,
        hostname: str,
        argv: list[str],
        env: dict[str, str],
        log: Path,
        cwd: Path | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` (in ``cwd``) as host ``hostname``: its own namespaces, the next address
        of the /24. A host name is used once."""
        assert hostname not in self.processes, hostname
        n = self._next
        self._next += 1
        env = {**env, "ADDRESS": f"10.213.{self.subnet}.{n}/24", "HOSTNAME_": hostname}
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [
                    "unshare",
                    "--net",
                    "--uts",
                    "sh",
                    "-c",
                    f"{SETUP} >>{shlex.quote(str(log))} 2>&1",
                    "sh",
                    *argv,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=out,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        self.processes[hostname] = proc
        assert proc.stdout is not None and proc.stdin is not None
        # unshare has made the namespaces: sh runs inside
        if proc.stdout.readline().strip() != b"ready":
            raise RuntimeError(
                f"{hostname} did not start: {log.read_text(errors='replace')[-2000:]}"
            )
        # its own network namespace, not this one
        own = Path("/proc/self/ns/net").readlink()
        assert Path(f"/proc/{proc.pid}/ns/net").readlink() != own
        link = f"vo{self.tag}{n}"
        _ip("link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", str(proc.pid))
        self._links.append(link)
        _ip("link", "set", link, "master", self.bridge, "up")
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        proc.stdout.close()
        return proc

    def kill(self, hostname: str, sig: int = signal.SIGKILL) -> None:
        proc = self.processes[hostname]
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)
        proc.wait(timeout=10)

    def stop(self, hostnames: list[str] | None = None, timeout: float = 15) -> None:
        """SIGTERM to each host's process (all of them by default), SIGKILL to one still running
        ``timeout`` seconds later."""
        procs = [self.processes[h] for h in (self.processes if hostnames is None else hostnames)]
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def close(self) -> None:
        for proc in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.processes.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        for link in [*self._links, self.bridge]:
            with contextlib.suppress(subprocess.CalledProcessError):
                subprocess.run(
                    ["ip", "link", "del", link], check=True, capture_output=True, timeout=10
                )
