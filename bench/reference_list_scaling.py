"""Does a tasks/list page of the reference server cost the same however many tasks it holds?

What it does. For each store size (default 10,000 and 100,000 tasks) it starts a fresh
reference server on 127.0.0.1 (`--seed working=N --page-size 500 --answer json
--protocol-eras legacy`), opens a 2025-11-25 session with raw httpx, and lists every task
by following `nextCursor` to the end, timing only the tasks/list requests. Every listing is
checked: it must return each seeded id exactly once, in creation order.

How to read the output. `us/task` is wall microseconds per listed task (request, server,
JSON decoding: what a client pays). When a page costs what its own tasks cost, the figure
stays flat as the store grows and the ratio (largest store / smallest) stays near 1; a page
that touches the whole store grows with it (the ratio approaches size ratio). Only the ratio,
measured within one run, means anything: the machine is shared and noisy, so each size is
listed `--rounds` times and the fastest round counts.

    .venv/bin/python bench/reference_list_scaling.py [--sizes 10000,100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

PAGE_SIZE = 500
START_TIMEOUT = 120.0  # seeding 100,000 tasks takes a few seconds on a slow machine
REQUEST_TIMEOUT = 60.0
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class BenchError(Exception):
    """A run did not do what it should (the benchmark's figures would be meaningless)."""


@contextmanager
def reference_server(*args: str) -> Iterator[str]:
    """A reference server on 127.0.0.1 with a free port: yields its URL; always stopped."""
    url, proc = start_reference_server(*args, timeout=START_TIMEOUT)
    try:
        yield url
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


def measure(size: int, rounds: int) -> float:
    """The fastest round's wall seconds per listed task, for a store of `size` tasks."""
    expected = [f"working-{number:03d}" for number in range(1, size + 1)]
    best = float("inf")
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
        ) as url,
        httpx.Client(timeout=REQUEST_TIMEOUT) as client,
    ):
        session = open_session(client, url)
        for _ in range(rounds):
            ids, elapsed = list_all(client, url, session)
            if ids != expected:
                raise BenchError(f"listing {size} tasks returned {len(ids)} ids, not in order")
            best = min(best, elapsed / size)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="store sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="listings per size (fastest counts)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    try:
        costs = {size: measure(size, args.rounds) for size in sizes}
    except (BenchError, httpx.HTTPError) as exc:
        print(f"reference_list_scaling: {exc}", file=sys.stderr)
        return 1
    print(f"page size {PAGE_SIZE}, fastest of {args.rounds} rounds")
    for size, cost in costs.items():
        print(f"  {size:>8} tasks  {cost * 1e6:8.1f} us/task  {size // PAGE_SIZE:>5} pages")
    smallest, largest = min(sizes), max(sizes)
    print(f"ratio {largest} / {smallest}: {costs[largest] / costs[smallest]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
