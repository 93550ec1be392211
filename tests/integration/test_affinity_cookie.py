"""A server behind a sticky load balancer: its session lives on the node its cookie names.

The reference server's `--affinity-cookie` sets that cookie on initialize and refuses the
session's later requests without it. mcptask keeps and returns the cookie through
httpx.Client's own cookie jar: proven here over a real socket.
"""

from __future__ import annotations

import httpx
import pytest

from tests.cli_process import run_mcptask
from tests.conftest import StartServer

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}


def test_the_reference_server_refuses_a_session_request_without_its_cookie(
    reference_server: StartServer,
) -> None:
    url = reference_server("--affinity-cookie", "--answer", "json")
    opened = httpx.post(url, json=INITIALIZE, headers=HEADERS)
    session = opened.headers["Mcp-Session-Id"]
    assert opened.cookies["mcptask-affinity"] == session
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    in_session = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    refused = httpx.post(url, json=ping, headers=in_session)
    assert refused.status_code == 400
    assert "mcptask-affinity" in refused.json()["error"]["message"]
    cookie = {"Cookie": f"mcptask-affinity={session}"}
    assert httpx.post(url, json=ping, headers={**in_session, **cookie}).status_code == 200


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_mcptask_keeps_the_cookie_for_every_request_of_a_bulk_cancel(
    reference_server: StartServer, answer: str
) -> None:
    url = reference_server(
        "--affinity-cookie", "--answer", answer, "--seed", "working=8,completed=2"
    )
    listed = run_mcptask("list", "--url", url, "-o", "ids")
    assert listed.code == 0, listed.stderr
    assert len(listed.stdout.split()) == 10
    cancelled = run_mcptask("cancel", "--all-working", "--yes", "--url", url, "-o", "json")
    assert cancelled.code == 0, cancelled.stderr
    outcomes = {r["taskId"]: r["outcome"] for r in cancelled.json()["results"]}
    assert outcomes == {f"working-{n:03d}": "cancelled" for n in range(1, 9)}
