"""`mcptask list` at scale: peak memory and CPU per task, against the raw floor.

What it does. For each store size (default 1,000 and 100,000 tasks) it starts a fresh
reference server on 127.0.0.1 (`--seed working=N --page-size 500 --protocol-eras legacy`,
SSE answers unless `--answer json`), then, for `--rounds` rounds, runs in turn:

  raw                       bench/raw_client.py list: initialize, every page, one JSON line
                            per task (httpx and json, nothing else: the floor)
  mcptask -o jsonl          newest first (the default order)
  mcptask -o ids
  mcptask -o json
  mcptask -o jsonl|ids --order server       printed page by page
  ..., no record            the state directory cannot be used: nothing is recorded
  ..., record holds them    a second listing: the record holds every task already

Each run is one whole process, with a fresh state directory unless said otherwise (the
record of known tasks is written, as for any user). From wait4 it reads that process's own
CPU (user + system) and peak RSS. Every run's output is checked: each seeded id exactly
once, in the order asked for.

How to read the output. Per size and variant: the median peak RSS, and CPU in microseconds
per task (start-up included, so small stores cost more per task). Then the targets of issue
13: peak RSS at the largest store / at the smallest (flat memory: near 1), and CPU per task
of mcptask / of raw at the largest store. Only ratios within one run mean anything.

    python bench/list_memory.py [--sizes 1000,100000] [--rounds 3] [--answer sse|json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import ChildUsage, alternate, as_installed, median, run_measured  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

RAW = [sys.executable, str(REPO_ROOT / "bench" / "raw_client.py")]
PAGE_SIZE = 500
START_TIMEOUT = 120.0  # seeding 100,000 tasks takes a few seconds on a slow machine
MIB = 1024 * 1024

VARIANTS: dict[str, list[str]] = {
    "mcptask -o jsonl": ["-o", "jsonl"],
    "mcptask -o ids": ["-o", "ids"],
    "mcptask -o json": ["-o", "json"],
    "mcptask -o jsonl --order server": ["-o", "jsonl", "--order", "server"],
    "mcptask -o ids --order server": ["-o", "ids", "--order", "server"],
    # Where the CPU goes: the same without the record of known tasks (its state directory
    # cannot be used: one warning, then nothing is written), and with a record that holds
    # every task already (a second listing).
    "mcptask -o jsonl, no record": ["-o", "jsonl"],
    "mcptask -o jsonl --order server, no record": ["-o", "jsonl", "--order", "server"],
    "mcptask -o jsonl, record holds them": ["-o", "jsonl"],
}


def ids_of(name: str, stdout: bytes) -> list[str]:
    """The task ids a run printed, in its order."""
    if name == "raw" or "jsonl" in name:
        return [json.loads(line)["taskId"] for line in stdout.splitlines()]
    if "ids" in name:
        return stdout.decode().splitlines()
    return [task["taskId"] for task in json.loads(stdout)["tasks"]]


def runner(
    name: str, argv: list[str], expected: list[str], usages: dict[str, list[ChildUsage]]
) -> Callable[[], float]:
    """One variant: run it, check its output, keep its usage; returns its CPU seconds."""

    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    # Removed when the bench ends (the closure keeps it alive until then).
    kept = tempfile.TemporaryDirectory(prefix="list-memory-record-")
    if name.endswith("record holds them"):
        env["MCPTASK_STATE_DIR"] = kept.name
        run_measured(argv, env=env)  # the first listing, not measured, fills the record

    def run() -> float:
        with tempfile.TemporaryDirectory() as state:
            if name.endswith("no record"):
                Path(state, "file").write_text("")
                env["MCPTASK_STATE_DIR"] = str(Path(state, "file", "state"))
            elif not name.endswith("record holds them"):
                env["MCPTASK_STATE_DIR"] = state
            usage = run_measured(argv, env=env)
        printed = ids_of(name, usage.stdout)
        if printed != expected:
            raise SystemExit(
                f"{name}: printed {len(printed)} ids, expected {len(expected)} in order "
                f"(first: {printed[:3]})"
            )
        usages[name].append(usage)
        return usage.cpu

    return run


def measure(size: int, args: argparse.Namespace) -> dict[str, list[ChildUsage]]:
    """Every variant, `args.rounds` times in turn, against one server of `size` tasks."""
    oldest_first = [f"working-{number:03d}" for number in range(1, size + 1)]
    url, server = start_reference_server(
        "--seed",
        f"working={size}",
        "--page-size",
        str(PAGE_SIZE),
        "--answer",
        args.answer,
        "--protocol-eras",
        "legacy",
        timeout=START_TIMEOUT,
    )
    usages: dict[str, list[ChildUsage]] = {"raw": []}
    try:
        variants = {"raw": runner("raw", [*RAW, "list", url], oldest_first, usages)}
        for name, extra in VARIANTS.items():
            if name not in args.only and args.only:
                continue
            usages[name] = []
            # The reference server lists oldest first; seeded tasks are a minute apart.
            expected = oldest_first if "server" in extra else oldest_first[::-1]
            command = [args.mcptask] if args.mcptask else mcptask_argv()
            argv = [*command, "list", "--url", url, *extra]
            variants[name] = runner(name, argv, expected, usages)
        alternate(variants, args.rounds)
    finally:
        stop_process(server)
    return usages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,100000", help="store sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--answer", choices=("sse", "json"), default="sse")
    parser.add_argument(
        "--only", action="append", default=[], help="measure only this variant (repeatable)"
    )
    parser.add_argument(
        "--mcptask",
        help="the mcptask command to measure (default: the one beside this Python), e.g. "
        "a wrapper that runs another checkout, for before/after figures",
    )
    args = parser.parse_args()
    as_installed()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    results = {size: measure(size, args) for size in sizes}
    print(
        f"list, page size {PAGE_SIZE}, {args.answer} answers, median of {args.rounds} rounds "
        "(whole process, fresh state directory)"
    )
    print(f"  {'variant':<34} {'tasks':>8} {'peak RSS':>10} {'CPU':>8} {'CPU/task':>10}")
    for size, usages in results.items():
        for name, runs in usages.items():
            rss = median([run.max_rss for run in runs]) / MIB
            cpu = median([run.cpu for run in runs])
            print(
                f"  {name:<34} {size:>8} {rss:>7.1f} MiB {cpu:>6.2f} s {cpu / size * 1e6:>7.1f} us"
            )
    smallest, largest = sizes[0], sizes[-1]
    print(f"peak RSS at {largest} tasks / at {smallest} (target <= 1.3):")
    for name in results[largest]:
        ratio = median([r.max_rss for r in results[largest][name]]) / median(
            [r.max_rss for r in results[smallest][name]]
        )
        print(f"  {name:<34} {ratio:5.2f}x")
    raw_cpu = median([r.cpu for r in results[largest]["raw"]])
    print(f"CPU at {largest} tasks / raw's (target <= 1.5):")
    for name, runs in results[largest].items():
        if name != "raw":
            print(f"  {name:<34} {median([r.cpu for r in runs]) / raw_cpu:5.2f}x raw")
    return 0


if __name__ == "__main__":
    sys.exit(main())
