"""What the benches measure a process with: CPU time from /proc, and pipes kept drained.

The process helpers themselves (running mcptask, starting and stopping the reference server)
are the test suite's: `tests/cli_process.py` and `tests/reference_server_process.py`.
"""

from __future__ import annotations

import atexit
import compileall
import functools
import os
import random
import resource
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PACKAGE_DIR = Path(__file__).resolve().parents[1] / "mcptask"


def as_installed() -> None:
    """Run mcptask as `pip install` leaves it: every module compiled to bytecode, and the
    processes this bench starts free to use it. (An editable install run with
    PYTHONDONTWRITEBYTECODE compiles each module from source on every start, some 60 ms that
    no installed user pays, while the floor's libraries are compiled at install.)"""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(PACKAGE_DIR, quiet=1)


@functools.cache
def _bench_states() -> str:
    """Where the benches' state directories go (removed at exit)."""
    parent = tempfile.mkdtemp(prefix="mcptask-bench-")
    atexit.register(shutil.rmtree, parent, ignore_errors=True)
    return parent


def bench_environment() -> dict[str, str]:
    """The environment one mcptask run of a bench gets: none of the user's MCPTASK_
    settings, and a fresh state directory of its own. A bench then neither fills the user's
    record of known tasks nor depends on its size (nor on earlier rounds')."""
    state = tempfile.mkdtemp(dir=_bench_states())
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    return {**environment, "MCPTASK_STATE_DIR": state}


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


def wall_seconds(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> float:
    """Run a process to completion (output discarded); its wall time in seconds."""
    import subprocess
    import time

    started = time.perf_counter()
    done = subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if check and done.returncode != 0:
        raise SystemExit(f"{argv[:4]}… exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def alternate(variants: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Measure each variant once per round, for `rounds` rounds, in an order shuffled anew
    each round: whatever the noisy machine does at a moment, it does to every variant alike,
    and no variant always runs right after the same other one (a server still busy with
    the previous client's session end, say)."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    order = list(variants)
    for _ in range(rounds):
        random.shuffle(order)
        for name in order:
            samples[name].append(variants[name]())
    return samples


def median(values: list[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def print_ratios(samples: dict[str, list[float]], floor: str, unit: str = "ms") -> None:
    """One line per variant: its median, and its ratio to the floor's median."""
    base = median(samples[floor])
    scale = 1000.0 if unit == "ms" else 1.0
    for name, values in samples.items():
        value = median(values)
        print(f"  {name:<44} {value * scale:9.1f} {unit}   {value / base:5.2f}x {floor}")


@dataclass(frozen=True)
class ChildUsage:
    """What one finished child process cost, from its own wait4."""

    wall: float
    cpu: float
    """utime + stime, seconds."""
    max_rss: int
    """Peak resident set size, bytes."""
    stdout: bytes
    returncode: int


# Linux counts, in a child's peak RSS, the peak of the process it was spawned from (exec
# records the old address space's high-water mark, and a vfork child's is its parent's).
# A bench that holds the outputs it checks would so lend its own size to every child: the
# measured command is spawned by this small helper instead, with its output sent to files.
_WAIT4_HELPER = """
import json, os, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.Popen(
    sys.argv[3:], stdin=subprocess.DEVNULL, stdout=int(sys.argv[1]), stderr=int(sys.argv[2])
)
_, status, usage = os.wait4(proc.pid, 0)
proc.returncode = os.waitstatus_to_exitcode(status)
print(json.dumps({"wall": time.perf_counter() - started, "code": proc.returncode,
                  "cpu": usage.ru_utime + usage.ru_stime, "max_rss": usage.ru_maxrss * 1024}))
"""


def run_measured(argv: list[str], *, env: dict[str, str] | None = None) -> ChildUsage:
    """Run a process to completion and read its own rusage (see `_WAIT4_HELPER`); a
    failure ends the bench with the tail of its stderr."""
    import json
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        helper = [sys.executable, "-c", _WAIT4_HELPER, str(out.fileno()), str(err.fileno())]
        done = subprocess.run(
            [*helper, *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            pass_fds=(out.fileno(), err.fileno()),
            check=True,
        )
        usage = json.loads(done.stdout)
        if usage["code"] != 0:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-400:]
            raise SystemExit(f"{argv[:4]}… exited {usage['code']}: {tail}")
        out.seek(0)
        return ChildUsage(
            wall=usage["wall"],
            cpu=usage["cpu"],
            max_rss=usage["max_rss"],
            stdout=out.read(),
            returncode=usage["code"],
        )
