"""Does a tasks/list page of the reference server cost the same however many tasks it holds?
And does listing with mcptask, client and server together?

What it does. For each store size (default 10,000 and 100,000 tasks) it starts a fresh
reference server on 127.0.0.1 (`--seed working=N --page-size 500 --answer json
--protocol-eras legacy`). Then, for `--rounds` rounds, in turn:

  raw httpx   one 2025-11-25 session, every task listed by following `nextCursor` to the end,
              timing only the tasks/list requests (the server's side, as the client sees it)
  mcptask     `mcptask list -o jsonl --url URL` as a whole process (fresh state directory):
              its wall time, its CPU (wait4) and the server's CPU over the run (/proc)

Every listing is checked: each seeded id exactly once, in the order asked for.

How to read the output. `us/task` is microseconds per listed task. When a page costs what
its own tasks cost, the figure stays flat as the store grows and the ratio (largest store /
smallest) stays near 1; a page that touches the whole store grows with it (the ratio
approaches the size ratio). For mcptask, `client+server CPU` is the target's "client and
server together"; its start-up (about 0.3 s) weighs ten times more per task in the smaller
store, which pulls the ratio below 1. Only the ratios, measured within one run, mean
anything: the machine is shared and noisy, so the raw listing counts its fastest round and
mcptask its median.

    .venv/bin/python bench/reference_list_scaling.py [--sizes 10000,100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import as_installed, cpu_seconds, median, run_measured  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import (  # noqa: E402
    ReferenceServerProcess,
    start_reference_server,
    stop_process,
)

PAGE_SIZE = 500
START_TIMEOUT = 120.0  # seeding 100,000 tasks takes a few seconds on a slow machine
REQUEST_TIMEOUT = 60.0
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class BenchError(Exception):
    """A run did not do what it should (the benchmark's figures would be meaningless)."""


@contextmanager
def reference_server(*args: str) -> Iterator[tuple[str, ReferenceServerProcess]]:
    """A reference server on 127.0.0.1 with a free port: yields its URL and process; always
    stopped."""
    url, proc = start_reference_server(*args, timeout=START_TIMEOUT)
    try:
        yield url, proc
    finally:
        stop_process(proc)


def post(
    client: httpx.Client, url: str, message: dict[str, Any], session: str | None
) -> tuple[Any, str | None]:
    """POST one JSON-RPC message: (the decoded answer, None for a 202; Mcp-Session-Id)."""
    headers = dict(HEADERS)
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-11-25"
    response = client.post(url, json=message, headers=headers)
    response.raise_for_status()
    answer = None if response.status_code == 202 else response.json()
    return answer, response.headers.get("Mcp-Session-Id")


def open_session(client: httpx.Client, url: str) -> str:
    """initialize + notifications/initialized; the session id."""
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tasks": {}},
        "clientInfo": {"name": "bench", "version": "0"},
    }
    answer, session = post(
        client, url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, None
    )
    if "result" not in answer or not session:
        raise BenchError(f"initialize failed: {answer}")
    post(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return str(session)


def list_all(client: httpx.Client, url: str, session: str) -> tuple[list[str], float]:
    """Every task id by following nextCursor, and the seconds the tasks/list requests took."""
    ids: list[str] = []
    params: dict[str, Any] = {}
    elapsed = 0.0
    for number in range(1, 1_000_000):
        message = {"jsonrpc": "2.0", "id": number, "method": "tasks/list", "params": params}
        started = time.perf_counter()
        answer, _ = post(client, url, message, session)
        elapsed += time.perf_counter() - started
        if "result" not in answer:
            raise BenchError(f"tasks/list failed: {answer}")
        ids.extend(task["taskId"] for task in answer["result"]["tasks"])
        cursor = answer["result"].get("nextCursor")
        if cursor is None:
            break
        params = {"cursor": cursor}
    return ids, elapsed


@dataclass
class Costs:
    """Per listed task, for one store size: the raw listing's best, mcptask's runs."""

    raw_wall: float = float("inf")
    mcptask_wall: list[float] = field(default_factory=list)
    mcptask_cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)

    @property
    def together(self) -> list[float]:
        return [
            client + server
            for client, server in zip(self.mcptask_cpu, self.server_cpu, strict=True)
        ]


def mcptask_listing(url: str, server: ReferenceServerProcess, expected: list[str]) -> Costs:
    """One `mcptask list -o jsonl` process: its wall and CPU, and the server's CPU meanwhile."""
    with tempfile.TemporaryDirectory() as state:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        env["MCPTASK_STATE_DIR"] = state
        before = cpu_seconds(server.pid)
        usage = run_measured([*mcptask_argv(), "list", "--url", url, "-o", "jsonl"], env=env)
        server_cpu = cpu_seconds(server.pid) - before
    ids = [json.loads(line)["taskId"] for line in usage.stdout.splitlines()]
    if ids != expected[::-1]:  # newest first: the seeded tasks are a minute apart
        raise BenchError(f"mcptask listed {len(ids)} ids, not the {len(expected)} newest first")
    size = len(expected)
    return Costs(
        mcptask_wall=[usage.wall / size],
        mcptask_cpu=[usage.cpu / size],
        server_cpu=[server_cpu / size],
    )


def measure(size: int, rounds: int) -> Costs:
    """Raw and mcptask in turn, `rounds` times, against one server of `size` tasks."""
    expected = [f"working-{number:03d}" for number in range(1, size + 1)]
    costs = Costs()
    with (
        reference_server(
            "--seed",
            f"working={size}",
            "--page-size",
            str(PAGE_SIZE),
            "--answer",
            "json",
            "--protocol-eras",
            "legacy",
        ) as (url, server),
        httpx.Client(timeout=REQUEST_TIMEOUT) as client,
    ):
        session = open_session(client, url)
        for _ in range(rounds):
            ids, elapsed = list_all(client, url, session)
            if ids != expected:
                raise BenchError(f"listing {size} tasks returned {len(ids)} ids, not in order")
            costs.raw_wall = min(costs.raw_wall, elapsed / size)
            run = mcptask_listing(url, server, expected)
            costs.mcptask_wall += run.mcptask_wall
            costs.mcptask_cpu += run.mcptask_cpu
            costs.server_cpu += run.server_cpu
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="store sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="listings per size")
    args = parser.parse_args()
    as_installed()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    try:
        costs = {size: measure(size, args.rounds) for size in sizes}
    except (BenchError, httpx.HTTPError) as exc:
        print(f"reference_list_scaling: {exc}", file=sys.stderr)
        return 1
    print(f"page size {PAGE_SIZE}, {args.rounds} rounds (raw: fastest; mcptask: median)")
    print(
        f"  {'tasks':>8} {'pages':>6} {'raw wall':>10} {'mcptask wall':>13} "
        f"{'mcptask CPU':>12} {'server CPU':>11} {'client+server CPU':>18}   (us/task)"
    )
    for size, cost in costs.items():
        print(
            f"  {size:>8} {size // PAGE_SIZE:>6} {cost.raw_wall * 1e6:>10.1f} "
            f"{median(cost.mcptask_wall) * 1e6:>13.1f} {median(cost.mcptask_cpu) * 1e6:>12.1f} "
            f"{median(cost.server_cpu) * 1e6:>11.1f} {median(cost.together) * 1e6:>18.1f}"
        )
    small, large = costs[sizes[0]], costs[sizes[-1]]
    print(f"ratio {sizes[-1]} / {sizes[0]} per task (target <= 1.3):")
    print(f"  raw httpx, tasks/list requests (server side)  {large.raw_wall / small.raw_wall:.2f}")
    for label, big, little in (
        ("mcptask list -o jsonl, wall", large.mcptask_wall, small.mcptask_wall),
        ("mcptask list -o jsonl, client+server CPU", large.together, small.together),
        ("  of which the server's CPU", large.server_cpu, small.server_cpu),
    ):
        print(f"  {label:<46} {median(big) / median(little):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
