"""One whole-process command: `mcptask get ID` and `mcptask cancel ID --no-wait`, against the
raw floor: a process that does the same requests with httpx alone (bench/raw_client.py:
initialize, tasks/get or tasks/cancel, DELETE). Each command's ratio is to its own floor.

The reference server runs over HTTP on 127.0.0.1 (SSE answers, its default), seeded with
enough working tasks that every cancel in every round has a task of its own. Variants are
measured in turn for `--rounds` rounds; only ratios of medians within one run mean anything.

    python bench/one_shot.py [--rounds 15] [--answer sse|json]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import (  # noqa: E402
    alternate,
    as_installed,
    bench_environment,
    print_ratios,
    wall_seconds,
)
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

RAW = [sys.executable, str(REPO_ROOT / "bench" / "raw_client.py")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--answer", choices=["sse", "json"], default="sse")
    args = parser.parse_args()
    as_installed()
    env = bench_environment()
    url, server = start_reference_server(
        "--seed", f"working={2 * args.rounds + 10}", "--answer", args.answer
    )
    ids = (f"working-{n:03d}" for n in itertools.count(1))
    mcptask = mcptask_argv()
    try:
        variants = {
            "raw: initialize + tasks/get + DELETE (floor)": lambda: wall_seconds(
                [*RAW, "get", url, "working-001"], env=env
            ),
            "mcptask get ID -o json": lambda: wall_seconds(
                [*mcptask, "get", "working-001", "--url", url, "-o", "json"], env=env
            ),
            "raw: initialize + tasks/cancel + DELETE (floor)": lambda: wall_seconds(
                [*RAW, "cancel", url, next(ids)], env=env
            ),
            "mcptask cancel ID --no-wait -o json": lambda: wall_seconds(
                [*mcptask, "cancel", next(ids), "--no-wait", "--url", url, "-o", "json"], env=env
            ),
        }
        samples = alternate(variants, args.rounds)
    finally:
        stop_process(server)
    print(f"one whole process, {args.answer} answers, median of {args.rounds} rounds:")
    # Each command against the raw script that makes its own requests (a cancel costs the
    # server more than a get: the worker it stops).
    for command in ("get", "cancel"):
        floor = f"raw: initialize + tasks/{command} + DELETE (floor)"
        mine = next(name for name in samples if name.startswith(f"mcptask {command} "))
        print_ratios({floor: samples[floor], mine: samples[mine]}, floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
