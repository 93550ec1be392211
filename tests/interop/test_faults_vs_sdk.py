"""A bulk cancel against the official MCP Python SDK 1.x server behind a fault-injecting
proxy (tests/network.py): transient faults are retried, lost answers resolved, and every task
ends cancelled, as the server itself confirms afterwards."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.cli_process import run_mcptask
from tests.network import FaultProxy

from .sdk_env import HttpMode, ensure_sdk_venv, initialize_session, post_rpc, start_sdk_server, stop

TASKS = 200
LONG_TASK = {
    "name": "long_job",
    "arguments": {"seconds": 600.0, "outcome": "completed"},
    "task": {"ttl": 3_600_000},
}


@pytest.fixture(scope="module", params=["sse", "json"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    ensure_sdk_venv()
    mode: HttpMode = request.param
    address, proc = start_sdk_server(mode)
    try:
        yield address
    finally:
        stop(proc)


def create_tasks(url: str, session_id: str, count: int) -> list[str]:
    def create(index: int) -> str:
        with httpx.Client(timeout=60) as client:
            message = {
                "jsonrpc": "2.0",
                "id": f"harness-{index}",
                "method": "tools/call",
                "params": LONG_TASK,
            }
            task_id: str = post_rpc(client, url, message, session_id).result["task"]["taskId"]
            return task_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(create, range(count)))


def statuses(url: str, session_id: str) -> dict[str, str]:
    with httpx.Client(timeout=60) as client:
        message = {"jsonrpc": "2.0", "id": "harness-list", "method": "tasks/list", "params": {}}
        listed = post_rpc(client, url, message, session_id).result["tasks"]
    return {task["taskId"]: task["status"] for task in listed}


def test_bulk_cancel_through_ten_percent_faults(url: str) -> None:
    with httpx.Client(timeout=60) as client:
        session_id, _ = initialize_session(client, url)
    created = create_tasks(url, session_id, TASKS)
    with FaultProxy(url, rate=0.1, seed=5) as proxy:
        result = run_mcptask(
            "cancel",
            "--all-working",
            "--yes",
            "--url",
            proxy.url,
            "--session-id",
            session_id,
            "-o",
            "json",
            "--retries",
            "6",
            "-v",
            timeout=300,
        )
    assert result.code == 0, result.stderr[-3000:]
    report = result.json()["results"]
    assert Counter(entry["taskId"] for entry in report) == Counter(created)
    assert {(entry["outcome"], entry["status"]) for entry in report} == {("cancelled", "cancelled")}
    assert set(statuses(url, session_id).values()) == {"cancelled"}
    assert len(proxy.faults) > 10
    assert "retry " in result.stderr
