"""What the benches measure a process with: CPU time from /proc, and pipes kept drained.

The process helpers themselves (running mcptask, starting and stopping the reference server)
are the test suite's: `tests/cli_process.py` and `tests/reference_server_process.py`.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from typing import IO

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
        text = stat.read()
    # Fields after "(comm)": state is field 3, utime field 14, stime field 15.
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children_cpu() -> float:
    """CPU seconds of every child reaped so far (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def drain(stream: IO[bytes], on_chunk: Callable[[bytes], None]) -> None:
    """Read a pipe until EOF so the writer never blocks, handing each chunk on."""
    with stream:
        while chunk := os.read(stream.fileno(), 65536):
            on_chunk(chunk)
