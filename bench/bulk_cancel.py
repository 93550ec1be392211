"""How fast is a bulk cancel? One `cancel --all-working` run against one process per task.

What it does. Three variants, each against a fresh reference server seeded with
`--seed working=N` (default 300 tasks, `--page-size 50`), because cancelling consumes the tasks:

  (a) sse       one `mcptask cancel --all-working --yes -o json` (list every page, then one
                tasks/cancel + one confirming tasks/get per task, sequentially, in one process),
                server answering each POST as an SSE stream (the server's default)
  (b) json      the same, server started with `--answer json` (plain JSON bodies)
  (c) per-task  a loop of `mcptask cancel ID -o json`, one process per task, over a sample of
                M tasks (default 20) of a fresh SSE server; the per-task figure extrapolates

Every run's JSON is checked: each task must end with outcome and status `cancelled`, and
`mcptask list --status working` must then list none of them; otherwise the script stops with
an error. Wall time is taken around the mcptask process(es) only (start-up included: that is
what a user pays); client CPU comes from the reaped children's rusage, server CPU from
/proc/PID/stat over the same span.

How to read the output. `ms/task` is wall milliseconds per cancelled task. The summary line
gives (c)/(a): how many times more a task costs when each cancel is its own process, and
(a)/(b): how much the SSE answer mode costs over JSON answers for the same bulk run. Only these
ratios, measured within one run, mean anything: the machine is shared and noisy.

    .venv/bin/python bench/bulk_cancel.py [--tasks 300] [--page-size 50] [--sample 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import children_cpu, cpu_seconds  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

START_UP_RUNS = 3
RUN_TIMEOUT = 90.0
"""Upper bound for one mcptask process; a hung run fails the benchmark instead of hanging it."""


class BenchError(Exception):
    """A run did not do what it should (the benchmark's figures would be meaningless)."""


@contextmanager
def reference_server(*args: str) -> Iterator[tuple[str, int]]:
    """A reference server on 127.0.0.1 with a free port: yields (url, pid); always stopped."""
    url, proc = start_reference_server(*args)
    try:
        yield url, proc.pid
    finally:
        stop_process(proc)


def mcptask(*args: str) -> tuple[int, str, str]:
    """Run mcptask to completion: (exit status, stdout, stderr)."""
    try:
        done = subprocess.run(
            [*mcptask_argv(), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=RUN_TIMEOUT,
            cwd=REPO_ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:  # run() has killed and reaped it
        raise BenchError(f"mcptask {' '.join(args)} did not finish in {RUN_TIMEOUT:g} s") from exc
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def working_ids(url: str) -> list[str]:
    """The ids the server lists as working."""
    status, out, err = mcptask("list", "--url", url, "--status", "working", "-o", "ids")
    if status != 0:
        raise BenchError(f"mcptask list failed (exit {status}): {err.strip()}")
    return out.split()


def check_cancel_document(out: str, status: int, err: str, expected: list[str]) -> None:
    """Fail loudly unless the `cancel -o json` document says every expected task is cancelled."""
    try:
        document: Any = json.loads(out)
    except ValueError:
        raise BenchError(
            f"cancel printed no JSON (exit {status}): {out[:200]!r} {err.strip()}"
        ) from None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, list):
        raise BenchError(f"cancel JSON has no results list: {out[:200]!r}")
    seen = [str(r.get("taskId")) for r in results if isinstance(r, dict)]
    if sorted(seen) != sorted(expected):
        raise BenchError(f"cancel reported {len(seen)} tasks, expected {len(expected)}")
    bad = [r for r in results if r.get("outcome") != "cancelled" or r.get("status") != "cancelled"]
    if bad or status != 0 or document.get("exitCode") != 0:
        raise BenchError(
            f"cancel exit {status} (exitCode {document.get('exitCode')}), "
            f"{len(bad)} task(s) not cancelled, e.g. {bad[:2]}; {err.strip()}"
        )


@dataclass(frozen=True)
class Result:
    """One variant's figures."""

    name: str
    description: str
    tasks: int
    processes: int
    wall: float
    client_cpu: float
    server_cpu: float

    @property
    def per_task(self) -> float:
        return self.wall / self.tasks

    def net_per_task(self, start_up: float) -> float:
        """Wall seconds per task once each process's fixed cost is taken out."""
        return (self.wall - self.processes * start_up) / self.tasks


@dataclass
class Span:
    """Wall time, reaped children's CPU and a server's CPU over a `measure()` block."""

    server_pid: int
    wall: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0

    @contextmanager
    def measure(self) -> Iterator[None]:
        t0, c0, s0 = time.perf_counter(), children_cpu(), cpu_seconds(self.server_pid)
        yield
        self.wall = time.perf_counter() - t0
        self.client_cpu = children_cpu() - c0
        self.server_cpu = cpu_seconds(self.server_pid) - s0


def start_up_variant(args: argparse.Namespace) -> Result:
    """(0): the fixed cost of one `cancel --all-working` process (start, connect, one list)
    against a server with no task, i.e. what every process pays before its first cancel.
    The median of START_UP_RUNS processes: one process start is the noisiest figure here."""
    with reference_server("--seed", "working=0", "--page-size", str(args.page_size)) as (
        url,
        pid,
    ):
        runs: list[Result] = []
        for _ in range(START_UP_RUNS):
            span = Span(pid)
            with span.measure():
                status, out, err = mcptask(
                    "cancel", "--all-working", "--yes", "--url", url, "-o", "json"
                )
            check_cancel_document(out, status, err, [])
            runs.append(
                Result(
                    "(0) start-up",
                    f"`cancel --all-working`, 0 tasks, median of {START_UP_RUNS}",
                    1,
                    1,
                    span.wall,
                    span.client_cpu,
                    span.server_cpu,
                )
            )
    return median_run(runs)


def bulk_variant(name: str, description: str, args: argparse.Namespace, *extra: str) -> Result:
    """(a)/(b): one `cancel --all-working` run over every seeded task."""
    with reference_server(
        "--seed", f"working={args.tasks}", "--page-size", str(args.page_size), *extra
    ) as (url, pid):
        expected = working_ids(url)
        if len(expected) != args.tasks:
            raise BenchError(f"server lists {len(expected)} working tasks, not {args.tasks}")
        span = Span(pid)
        with span.measure():
            status, out, err = mcptask(
                "cancel", "--all-working", "--yes", "--url", url, "-o", "json"
            )
        check_cancel_document(out, status, err, expected)
        left = working_ids(url)
        if left:
            raise BenchError(f"{name}: {len(left)} task(s) still working after the run")
    return Result(name, description, args.tasks, 1, span.wall, span.client_cpu, span.server_cpu)


def per_task_variant(args: argparse.Namespace) -> Result:
    """(c): one `mcptask cancel ID` process per task, over a sample."""
    with reference_server(
        "--seed", f"working={args.tasks}", "--page-size", str(args.page_size)
    ) as (url, pid):
        sample = working_ids(url)[: args.sample]
        if len(sample) != args.sample:
            raise BenchError(f"server lists {len(sample)} working tasks, need {args.sample}")
        span = Span(pid)
        outputs: list[tuple[str, int, str, str]] = []
        with span.measure():
            for task_id in sample:
                status, out, err = mcptask("cancel", task_id, "--url", url, "-o", "json")
                outputs.append((task_id, status, out, err))
        for task_id, status, out, err in outputs:
            check_cancel_document(out, status, err, [task_id])
        still = set(working_ids(url)) & set(sample)
        if still:
            raise BenchError(f"per-task: {len(still)} sampled task(s) still working")
    return Result(
        "(c) per-task",
        f"{len(sample)} x `cancel ID`, SSE",
        len(sample),
        len(sample),
        span.wall,
        span.client_cpu,
        span.server_cpu,
    )


def median_run(runs: list[Result]) -> Result:
    """The run with the median wall time (its CPU figures stay consistent with it)."""
    return sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2]


def print_table(results: list[Result], start_up: float) -> None:
    header = (
        f"{'variant':<14} {'how':<44} {'tasks':>5} {'procs':>5} {'wall s':>7} "
        f"{'ms/task':>8} {'net ms/task':>11} {'client CPU ms/task':>18} "
        f"{'server CPU ms/task':>18}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        net_ms = 1000 * r.net_per_task(start_up)
        net = "-" if r.name.startswith("(0)") else f"{net_ms:.2f}" if net_ms > 0 else "n/a"
        print(
            f"{r.name:<14} {r.description:<44} {r.tasks:>5} {r.processes:>5} {r.wall:>7.2f} "
            f"{1000 * r.per_task:>8.2f} {net:>11} {1000 * r.client_cpu / r.tasks:>18.2f} "
            f"{1000 * r.server_cpu / r.tasks:>18.2f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--tasks",
        type=int,
        default=300,
        help="working tasks seeded per server, cancelled by (a) and (b) (300)",
    )
    parser.add_argument("--page-size", type=int, default=50, help="tasks/list page size (50)")
    parser.add_argument(
        "--sample", type=int, default=20, help="tasks cancelled one process each in (c) (20)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every variant this many times, interleaved; report the median run of each (1)",
    )
    args = parser.parse_args()
    if (
        args.tasks < 1
        or args.page_size < 1
        or args.repeat < 1
        or not 1 <= args.sample <= args.tasks
    ):
        parser.error("need --tasks, --page-size, --repeat >= 1 and 1 <= --sample <= --tasks")

    runs: dict[str, list[Result]] = {"0": [], "a": [], "b": [], "c": []}
    try:
        print(
            f"{args.tasks} working tasks per server, page size {args.page_size}; "
            f"per-process sample {args.sample}; {args.repeat} run(s) of each",
            flush=True,
        )
        for _ in range(args.repeat):
            runs["0"].append(start_up_variant(args))
            runs["a"].append(bulk_variant("(a) bulk sse", "1 x `cancel --all-working`, SSE", args))
            runs["b"].append(
                bulk_variant(
                    "(b) bulk json", "1 x `cancel --all-working`, JSON", args, "--answer", "json"
                )
            )
            runs["c"].append(per_task_variant(args))
    except BenchError as exc:
        print(f"bulk_cancel: FAILED: {exc}", file=sys.stderr)
        return 1
    fixed, sse, plain, single = (median_run(runs[key]) for key in ("0", "a", "b", "c"))
    start_up = fixed.wall
    print_table([fixed, sse, plain, single], start_up)
    print(
        f"per task: (c)/(a) = {single.per_task / sse.per_task:.1f}x "
        f"(one process per cancel vs one bulk run; net of start-up "
        f"{_ratio(single.net_per_task(start_up), sse.net_per_task(start_up))}); "
        f"(a)/(b) = {sse.per_task / plain.per_task:.2f}x (SSE vs JSON answers; net "
        f"{_ratio(sse.net_per_task(start_up), plain.net_per_task(start_up))}); "
        f"one start-up = {start_up / sse.net_per_task(start_up):.0f} tasks of a bulk SSE run"
    )
    return 0


def _ratio(a: float, b: float) -> str:
    """a/b, or 'n/a' when the start-up estimate swallowed a figure (noise)."""
    return f"{a / b:.2f}x" if a > 0 and b > 0 else "n/a"


if __name__ == "__main__":
    sys.exit(main())
