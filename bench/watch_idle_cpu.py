"""Does `mcptask watch` spin while nothing happens? CPU cost of watching tasks that never change.

What it does. One reference server is seeded with `--seed working=N` (default 1,000 tasks
that stay `working` forever; 2025-11-25 lists them, 50 per page) and logs every request on
stderr. Then `mcptask watch --url URL` (no ids: it watches every listed task) runs four
times, one after the other, each for about `--duration` seconds:

  piped  -o jsonl, stdout is a pipe          at --interval 1 (default) and --interval 5 (cap)
  pty    live Rich table in a pseudo-terminal at the same two intervals

and, as the floor, `bench/raw_client.py watch URL --interval S` at both intervals: httpx and
json alone, listing every page each round and printing what changed (nothing, here).

For each run the script reads the process's CPU time (utime + stime from /proc/PID/stat) at
the start of a measuring window (after a warm-up that covers start-up, the first listing and
the first output) and at its end, and counts the HTTP requests the server logged in that
window. A round of the watch reads the `tasks/list` pages (20 for 1,000 tasks) where the
server lists, instead of one `tasks/get` per task. The server's own CPU is read over the
same window, and an idle `python -c "import time; time.sleep(...)"` is measured alongside
the first run.

How to read the output. `CPU %` is CPU seconds / wall seconds of the window, in percent of
one core (the target: at most 5% for 1,000 tasks at --interval 1). `ms/100 req` is the CPU
per 100 requests. If the watch does not spin, its CPU follows the polling: between
--interval 1 and --interval 5 the CPU ratio equals the request ratio, and the two-point fit
CPU % = floor + cost x requests/s puts the floor (CPU spent while no request is made) near 0.
The `out bytes` of the pty runs are the redraws (one per round). Only ratios inside one run
mean anything: the machine is shared and noisy.

    .venv/bin/python bench/watch_idle_cpu.py [--tasks 1000] [--duration 15] [--warmup 4]
                                             [--answer sse|json]
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pexpect

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import (  # noqa: E402
    CLOCK_TICKS,
    as_installed,
    bench_environment,
    cpu_seconds,
    drain,
)
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

START_TIMEOUT = 20.0
RAW = [sys.executable, str(REPO_ROOT / "bench" / "raw_client.py")]
STOP_TIMEOUT = 5.0


class Server:
    """A reference server process with request logging; counts the requests it logged."""

    def __init__(self, tasks: int, answer: str) -> None:
        self.url, self.proc = start_reference_server(
            "--seed",
            f"working={tasks}",
            "--poll-interval",
            "1000",
            "--answer",
            answer,
            "--protocol-eras",
            "legacy",  # what the raw floor speaks; mcptask would choose it anyway (a list)
            "--log",
        )

    @property
    def requests(self) -> int:
        """POST requests logged so far (tasks/get, tasks/list pages, initialize...)."""
        return self.proc.stderr_text().count('"POST ')

    def stop(self) -> None:
        stop_process(self.proc)


class WatchProcess:
    """`mcptask watch` either on a pipe or in a pseudo-terminal; its output is drained."""

    def __init__(self, argv: list[str], *, pty: bool, rows: int, cols: int) -> None:
        self.pty = pty
        self.out_bytes = 0
        self.first_output: float | None = None
        self._stop_draining = threading.Event()
        self._child: pexpect.spawn | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        if pty:
            env = dict(
                bench_environment(), TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows)
            )
            env.pop("NO_COLOR", None)
            self._child = pexpect.spawn(
                argv[0], argv[1:], dimensions=(rows, cols), env=env, cwd=str(REPO_ROOT)
            )
            self.pid: int = self._child.pid
            self._drainer = threading.Thread(target=self._drain_pty, daemon=True)
        else:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=REPO_ROOT,
                env=bench_environment(),
            )
            self.pid = self._proc.pid
            assert self._proc.stdout is not None
            assert self._proc.stderr is not None
            self._drainer = threading.Thread(
                target=drain, args=(self._proc.stdout, self._seen), daemon=True
            )
            threading.Thread(
                target=drain, args=(self._proc.stderr, lambda chunk: None), daemon=True
            ).start()
        self._drainer.start()

    def _seen(self, chunk: bytes) -> None:
        if self.first_output is None:
            self.first_output = time.monotonic()
        self.out_bytes += len(chunk)

    def _drain_pty(self) -> None:
        child = self._child
        assert child is not None
        while not self._stop_draining.is_set():
            try:
                self._seen(child.read_nonblocking(65536, timeout=0.2))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return

    def alive(self) -> bool:
        if self._child is not None:
            return bool(self._child.isalive())
        assert self._proc is not None
        return self._proc.poll() is None

    def stop(self) -> None:
        """SIGTERM by PID (mcptask stops between requests), then SIGKILL if it lingers."""
        self._stop_draining.set()
        self._drainer.join(timeout=1.0)
        if self._proc is not None:
            stop_process(self._proc)
            return
        child = self._child
        assert child is not None
        if child.isalive():
            child.kill(signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT
            while child.isalive() and time.monotonic() < deadline:
                time.sleep(0.05)
        child.close(force=True)


@dataclass(frozen=True)
class Measure:
    """CPU, requests and output over one measuring window."""

    label: str
    interval: float | None
    wall: float
    cpu: float
    server_cpu: float
    requests: int
    out_bytes: int

    @property
    def cpu_percent(self) -> float:
        return 100.0 * self.cpu / self.wall

    @property
    def server_percent(self) -> float:
        return 100.0 * self.server_cpu / self.wall

    @property
    def ms_per_100(self) -> float | None:
        return 1000.0 * self.cpu / self.requests * 100 if self.requests else None


def wait_until(moment: float, check: Callable[[], None]) -> None:
    """Sleep until a time.monotonic() moment, calling `check` every 0.25 s."""
    while (left := moment - time.monotonic()) > 0:
        check()
        time.sleep(min(0.25, left))


def measure_watch(
    server: Server,
    args: argparse.Namespace,
    *,
    pty: bool,
    interval: float,
    baseline: list[Measure] | None = None,
    raw: bool = False,
) -> Measure:
    """Run one watch (or, `raw`, the raw floor), measure it (and, if `baseline` is a list,
    an idle python beside it)."""
    window = args.duration - args.warmup
    watch_argv = [
        *mcptask_argv(),
        "watch",
        "--url",
        server.url,
        "--interval",
        f"{interval:g}",
        "--wait-timeout",
        f"{args.duration + 10:g}",  # a safety bound; we stop it earlier
        *([] if pty else ["-o", "jsonl"]),
    ]
    if raw:
        watch_argv = [*RAW, "watch", server.url, "--interval", f"{interval:g}"]
    sleeper: subprocess.Popen[bytes] | None = None
    watch: WatchProcess | None = None
    label = "raw pages (floor)" if raw else "pty live table" if pty else "piped -o jsonl"
    try:
        if baseline is not None:
            sleeper = subprocess.Popen(
                [sys.executable, "-c", f"import time; time.sleep({args.duration + 10})"]
            )
        started, requests_before = time.monotonic(), server.requests
        watch = WatchProcess(watch_argv, pty=pty, rows=args.rows, cols=args.cols)

        def check() -> None:
            assert watch is not None
            if not watch.alive():
                raise SystemExit(f"{label}: mcptask watch exited early")

        # The window opens after the warm-up, and never before the first listing is over and
        # has been printed (every task is new then): start-up is not what we measure.
        wait_until(started + args.warmup, check)
        give_up = started + START_TIMEOUT
        while server.requests - requests_before < 2 or watch.first_output is None:
            if time.monotonic() > give_up:
                raise SystemExit(f"{label}: no first polling round in {START_TIMEOUT:g} s")
            wait_until(time.monotonic() + 0.25, check)

        t0 = time.monotonic()
        cpu0, server0, requests0, out0 = (
            cpu_seconds(watch.pid),
            cpu_seconds(server.proc.pid),
            server.requests,
            watch.out_bytes,
        )
        sleep0 = cpu_seconds(sleeper.pid) if sleeper is not None else 0.0
        wait_until(t0 + window, check)
        t1 = time.monotonic()
        cpu1, server1, requests1, out1 = (
            cpu_seconds(watch.pid),
            cpu_seconds(server.proc.pid),
            server.requests,
            watch.out_bytes,
        )
        if sleeper is not None and baseline is not None:
            baseline.append(
                Measure(
                    "idle python (sleep)",
                    None,
                    t1 - t0,
                    cpu_seconds(sleeper.pid) - sleep0,
                    0.0,
                    0,
                    0,
                )
            )
        check()
        return Measure(
            label,
            interval,
            t1 - t0,
            cpu1 - cpu0,
            server1 - server0,
            requests1 - requests0,
            out1 - out0,
        )
    finally:
        if watch is not None:
            watch.stop()
        if sleeper is not None:
            stop_process(sleeper)


def print_table(rows: list[Measure]) -> None:
    header = (
        f"{'mode':<20} {'interval':>8} {'wall s':>7} {'CPU s':>6} {'CPU %':>6} "
        f"{'requests':>8} {'ms/100 req':>10} {'out bytes':>9} {'server CPU %':>12}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        interval = f"{row.interval:g}s" if row.interval is not None else "-"
        per = f"{row.ms_per_100:.1f}" if row.ms_per_100 is not None else "-"
        server = f"{row.server_percent:.2f}" if row.interval is not None else "-"
        requests = str(row.requests) if row.interval is not None else "-"
        out = str(row.out_bytes) if row.interval is not None else "-"
        print(
            f"{row.label:<20} {interval:>8} {row.wall:>7.2f} {row.cpu:>6.2f} "
            f"{row.cpu_percent:>6.2f} {requests:>8} {per:>10} {out:>9} {server:>12}"
        )


def fit(fast: Measure, slow: Measure) -> tuple[float, float] | None:
    """Two-point fit of CPU rate = floor + cost * request rate, over two intervals.

    Returns (ms of CPU per request, idle floor in % of a core), or None when the request
    rates are too close to tell apart.
    """
    q1, q2 = fast.requests / fast.wall, slow.requests / slow.wall
    if q1 - q2 < 1.0:
        return None
    cost = (fast.cpu / fast.wall - slow.cpu / slow.wall) / (q1 - q2)
    return 1000.0 * cost, 100.0 * (fast.cpu / fast.wall - cost * q1)


def summary(rows: list[Measure], idle: Measure, tick_percent: float) -> list[str]:
    def find(label: str, interval: float) -> Measure:
        return next(r for r in rows if r.label.startswith(label) and r.interval == interval)

    fast, slow = rows[0].interval, rows[-1].interval
    assert fast is not None
    assert slow is not None
    lines = []
    for label in ("piped", "pty"):
        fitted = fit(find(label, fast), find(label, slow))
        if fitted is not None:
            redraws = " (redraws included)" if label == "pty" else ""
            lines.append(
                f"fit {label}: CPU % = floor + cost x requests/s over both intervals: "
                f"cost {fitted[0]:.2f} ms/request{redraws}, "
                f"floor {fitted[1]:+.2f}% of a core"
            )
    piped, live = find("piped", fast), find("pty", fast)
    piped_slow, live_slow = find("piped", slow), find("pty", slow)
    if idle.cpu > 0:
        times = f"{piped.cpu / idle.cpu:.0f}x / {live.cpu / idle.cpu:.0f}x an idle python process"
    else:  # the idle process used less than one clock tick: count it as one
        times = (
            f">={piped.cpu_percent / tick_percent:.0f}x / "
            f">={live.cpu_percent / tick_percent:.0f}x an idle python process, "
            f"which used < 1 clock tick = {tick_percent:.2f}%"
        )
    lines.append(
        f"watch CPU while idle is {piped.cpu_percent:.1f}% (piped) / {live.cpu_percent:.1f}% "
        f"(live table) of one core at --interval {fast:g} ({times}); "
        f"at --interval {slow:g} it is {piped_slow.cpu_percent:.1f}% / "
        f"{live_slow.cpu_percent:.1f}%; CPU ratio {fast:g}s/{slow:g}s "
        f"{_ratio(piped.cpu, piped_slow.cpu)} / {_ratio(live.cpu, live_slow.cpu)} vs request "
        f"ratio {_ratio(piped.requests, piped_slow.requests)} / "
        f"{_ratio(live.requests, live_slow.requests)} (equal = no spin); watch/server CPU "
        f"{_ratio(piped.cpu, piped.server_cpu)} / {_ratio(live.cpu, live.server_cpu)}"
    )
    return lines


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b > 0 else "inf"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=1000, help="working tasks to seed (1000)")
    parser.add_argument(
        "--duration", type=float, default=15.0, help="seconds per watch run, warm-up included (15)"
    )
    parser.add_argument(
        "--warmup", type=float, default=4.0, help="seconds before the measuring window opens (4)"
    )
    parser.add_argument("--interval", type=float, default=1.0, help="short --interval (1)")
    parser.add_argument(
        "--long-interval",
        type=float,
        default=5.0,
        help="long --interval, the idle floor (5, the cap)",
    )
    parser.add_argument(
        "--answer",
        choices=("sse", "json"),
        default="sse",
        help="how the server answers POSTs (sse, its default)",
    )
    parser.add_argument("--rows", type=int, default=50, help="pseudo-terminal rows (50)")
    parser.add_argument("--cols", type=int, default=160, help="pseudo-terminal columns (160)")
    args = parser.parse_args()
    as_installed()
    if args.duration - args.warmup < 2:
        parser.error("--duration must exceed --warmup by at least 2 seconds")

    server = Server(args.tasks, args.answer)
    rows: list[Measure] = []
    baseline: list[Measure] = []
    try:
        print(
            f"server {server.url} ({args.answer} answers): {args.tasks} working tasks; "
            f"{args.duration:g} s per run, "
            f"window {args.duration - args.warmup:g} s after a {args.warmup:g} s warm-up; "
            f"clock tick {1000 / CLOCK_TICKS:g} ms",
            flush=True,
        )
        floors: list[Measure] = []
        for interval in (args.interval, args.long_interval):
            for pty in (False, True):
                rows.append(
                    measure_watch(
                        server,
                        args,
                        pty=pty,
                        interval=interval,
                        baseline=baseline if not rows else None,
                    )
                )
            floors.append(measure_watch(server, args, pty=False, interval=interval, raw=True))
    finally:
        server.stop()
    idle = baseline[0]
    print_table([*rows, *floors, idle])
    tick_percent = 100.0 / CLOCK_TICKS / idle.wall
    for line in summary(rows, idle, tick_percent):
        print(line)
    piped = next(row for row in rows if row.label.startswith("piped"))
    live = next(row for row in rows if row.label.startswith("pty"))
    floor = floors[0]
    print(
        f"at --interval {args.interval:g}: watch {piped.cpu_percent:.1f}% (piped) / "
        f"{live.cpu_percent:.1f}% (live table) of one core (target <= 5%), raw floor "
        f"{floor.cpu_percent:.1f}%: {_ratio(piped.cpu, floor.cpu)} / "
        f"{_ratio(live.cpu, floor.cpu)} the floor; requests/s {piped.requests / piped.wall:.1f} "
        f"(watch) vs {floor.requests / floor.wall:.1f} (floor)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
