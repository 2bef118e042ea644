"""CPU accounting for ``bench_publish``: seconds of CPU, not wall clock, per request.

Wall-clock rates on a shared 2-core machine move with whatever else runs; the CPU a
request costs the server, the load generator and the machine as a whole does not.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU of every live process in process group ``pgid`` (Linux /proc)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        # After the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime stime ...
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / _TICK


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent not idle (all cores), from /proc/stat."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / _TICK


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuMeter:
    """CPU spent between ``start()`` and ``stop()`` by the server, this process and the machine."""

    server_pgid: int | None = None
    server: float = 0.0
    client: float = 0.0
    machine: float = 0.0

    def start(self) -> CpuMeter:
        self._s = group_cpu_seconds(self.server_pgid) if self.server_pgid else 0.0
        self._c, self._m = own_cpu_seconds(), machine_busy_seconds()
        return self

    def stop(self) -> CpuMeter:
        self.server = (group_cpu_seconds(self.server_pgid) - self._s) if self.server_pgid else float("nan")
        self.client = own_cpu_seconds() - self._c
        self.machine = machine_busy_seconds() - self._m
        return self

    def per_request(self, requests: int) -> str:
        n = max(requests, 1)
        return (
            f"CPU per request: server {self.server / n * 1e6:5.0f} us, load generator {self.client / n * 1e6:4.0f} us, "
            f"whole machine {self.machine / n * 1e6:5.0f} us"
        )
