"""The official MCP Python SDK 1.x server for the benches: started in its own venv (as the
interop tests do, see tests/interop/sdk_env.py), with working tasks made in one session."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx

from tests.interop.sdk_env import (
    ensure_sdk_venv,
    initialize_session,
    post_rpc,
    start_sdk_server,
    stop,
)

LONG_TASK = {
    "name": "long_job",
    "arguments": {"seconds": 600.0, "outcome": "completed"},
    "task": {"ttl": 3_600_000},
}


@contextmanager
def sdk_session(tasks: int) -> Iterator[tuple[str, list[str]]]:
    """A fresh SDK server with `tasks` working tasks in one session: yields (url, [session])."""
    ensure_sdk_venv()
    url, proc = start_sdk_server("sse")
    try:
        with httpx.Client(timeout=60) as client:
            session, _ = initialize_session(client, url)

        def create(index: int) -> None:
            with httpx.Client(timeout=60) as client:
                message = {
                    "jsonrpc": "2.0",
                    "id": f"seed-{index}",
                    "method": "tools/call",
                    "params": LONG_TASK,
                }
                post_rpc(client, url, message, session)

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(create, range(tasks)))
        yield url, [session]
    finally:
        stop(proc)
