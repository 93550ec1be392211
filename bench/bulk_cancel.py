"""Bulk cancel: `mcptask cancel --all-working` against the raw floor, a process that makes
the same requests with httpx alone over one connection (bench/raw_client.py bulk: initialize,
every tasks/list page, then per task tasks/cancel and, confirming, tasks/get).

For each variant and each round a fresh server is seeded with `--tasks` working tasks (a
cancel consumes them) and only the client process is timed. Variants: answers as JSON or SSE,
with confirmation or `--no-wait`, and over a slow link (`--latency MS`: the reference server
waits that long before answering each tasks/* request; the default run adds 20 ms with
`--slow-tasks` tasks). `--sdk` runs the same against the official MCP Python SDK 1.x server
(its tasks live in one session, which both clients join). Every mcptask run's JSON report is
checked: each task once, all `cancelled`. Each line gives the client process's CPU time too:
the servers' own pace varies widely from one round to the next (the SDK server's most of all),
and the client's CPU shows what mcptask itself costs apart from it.

    python bench/bulk_cancel.py [--tasks 1000] [--slow-tasks 100] [--rounds 3] [--sdk]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import alternate, as_installed, bench_environment, median  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

RAW = [sys.executable, str(REPO_ROOT / "bench" / "raw_client.py")]


Server = Callable[[], AbstractContextManager[tuple[str, list[str]]]]
"""Starts a fresh server with working tasks: (url, [session to join] or [])."""


class BenchError(Exception):
    """A run did not do what it should (its figures would be meaningless)."""


@contextmanager
def reference(tasks: int, *extra: str) -> Iterator[tuple[str, list[str]]]:
    url, proc = start_reference_server(
        "--seed", f"working={tasks}", "--page-size", "100", "--protocol-eras", "legacy", *extra
    )
    try:
        yield url, []
    finally:
        stop_process(proc)


def timed(argv: list[str], cpu: list[float]) -> tuple[float, str]:
    """Run `argv`: its wall time and stdout; its CPU time (user + system) goes to `cpu`."""
    env = bench_environment()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise BenchError(f"{argv[:3]}… exited {done.returncode}: {done.stderr[-400:]}")
    cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return elapsed, done.stdout


def checked(stdout: str, tasks: int) -> None:
    results = json.loads(stdout)["results"]
    if len(results) != tasks or len({r["taskId"] for r in results}) != tasks:
        raise BenchError(f"the report holds {len(results)} results, expected {tasks} distinct")
    if {r["outcome"] for r in results} - {"cancelled", "requested"}:
        raise BenchError(
            f"not all cancelled: {[r for r in results if r['outcome'] != 'cancelled'][:2]}"
        )


def variant(
    server: Server, tasks: int, cpu: list[float], *, wait: bool, mcptask: bool
) -> Callable[[], float]:
    def run() -> float:
        with server() as (url, session):
            joined = ["--session-id", session[0]] if session else []
            if mcptask:
                argv = [
                    *mcptask_argv(),
                    "cancel",
                    "--all-working",
                    "--yes",
                    "--url",
                    url,
                    "-o",
                    "json",
                ]
                argv += joined + ([] if wait else ["--no-wait"])
                elapsed, stdout = timed(argv, cpu)
                checked(stdout, tasks)
                return elapsed
            raw = [*RAW, "bulk", url, *(["--session", session[0]] if session else [])]
            elapsed, _ = timed(raw + ([] if wait else ["--no-wait"]), cpu)
            return elapsed

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--slow-tasks", type=int, default=100)
    parser.add_argument("--latency", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sdk", action="store_true", help="also the SDK 1.x server")
    args = parser.parse_args()
    as_installed()
    groups: list[tuple[str, int, Server]] = [
        (
            f"{args.tasks} tasks, {answer}",
            args.tasks,
            partial(reference, args.tasks, "--answer", answer),
        )
        for answer in ("json", "sse")
    ]
    slow = ("--answer", "json", "--latency", str(args.latency))
    title = f"{args.slow_tasks} tasks, json, {args.latency} ms per request"
    groups.append((title, args.slow_tasks, partial(reference, args.slow_tasks, *slow)))
    if args.sdk:
        from bench.sdk_server import sdk_session

        title = f"{args.tasks} tasks, SDK 1.x (sse)"
        groups.append((title, args.tasks, partial(sdk_session, args.tasks)))
    print(f"bulk cancel, median wall time of {args.rounds} rounds, client process only")
    for title, tasks, server in groups:
        for wait in (True, False):
            cpu: dict[str, list[float]] = {"raw": [], "mcptask": []}
            variants = {
                "raw": variant(server, tasks, cpu["raw"], wait=wait, mcptask=False),
                "mcptask": variant(server, tasks, cpu["mcptask"], wait=wait, mcptask=True),
            }
            samples = alternate(variants, args.rounds)
            raw, ours = median(samples["raw"]), median(samples["mcptask"])
            raw_cpu, our_cpu = median(cpu["raw"]), median(cpu["mcptask"])
            mode = "confirm" if wait else "no-wait"
            print(
                f"  {title:<40} {mode:<8} raw {raw:7.2f} s   mcptask {ours:7.2f} s   "
                f"{ours / raw:5.2f}x raw   (client CPU {our_cpu / raw_cpu:4.2f}x raw's)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
