"""The reference server's conformance fixtures and wire details as a real process: the
legacy session's MCP-Protocol-Version header, SSE polling (test_reconnection), and the
fixture tools over Streamable HTTP and stdio in both eras."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.integration.test_reference_server_modern_process import ModernPeer
from tests.integration.test_reference_server_process import (
    Peer,
    StdioPeer,
    messages_of,
    parse_sse,
)
from tests.reference_server_process import (
    FIXTURES_ARG,
    ReferenceServerProcess,
    start_reference_server,
    start_stdio_reference_server,
    stop_process,
)

JsonObject = dict[str, Any]
DEADLINE = 10.0
VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
FIXTURES = FIXTURES_ARG


@pytest.fixture
def launch() -> Iterator[Callable[..., str]]:
    procs: list[ReferenceServerProcess] = []

    def _launch(*args: str) -> str:
        url, proc = start_reference_server(*args)
        procs.append(proc)
        return url

    yield _launch
    for proc in procs:
        stop_process(proc)


@pytest.fixture
def peers() -> Iterator[Callable[[str], Peer]]:
    made: list[Peer] = []

    def _peer(url: str) -> Peer:
        peer = Peer(url)
        made.append(peer)
        return peer

    yield _peer
    for peer in made:
        peer.client.close()


@pytest.fixture
def modern_peers() -> Iterator[Callable[[str], ModernPeer]]:
    made: list[ModernPeer] = []

    def _peer(url: str) -> ModernPeer:
        peer = ModernPeer(url)
        made.append(peer)
        return peer

    yield _peer
    for peer in made:
        peer.client.close()


@pytest.fixture
def stdio() -> Iterator[Callable[..., StdioPeer]]:
    procs: list[ReferenceServerProcess] = []

    def _start(*args: str) -> StdioPeer:
        proc = start_stdio_reference_server(*args)
        procs.append(proc)
        return StdioPeer(proc)

    yield _start
    for proc in procs:
        stop_process(proc)


def with_elicitation(message: JsonObject, *, tasks: bool = True) -> JsonObject:
    """A modern message whose client declares the elicitation capability (and tasks)."""
    message["params"]["_meta"][CAPABILITIES] = {
        "elicitation": {},
        "extensions": {TASKS: {}} if tasks else {},
    }
    return message


def answer_of(peer: ModernPeer, message: JsonObject) -> JsonObject:
    response = peer.post(message)
    assert response.status_code == 200, response.text
    (answer,) = [m for m in messages_of(response) if m.get("id") == message["id"]]
    return answer


def wait_status(peer: ModernPeer, task_id: str, status: str) -> JsonObject:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        task: JsonObject = peer.result("tasks/get", {"taskId": task_id})
        if task["status"] == status:
            return task
        time.sleep(0.05)
    pytest.fail(f"{task_id} never became {status}")


# -- 2025-11-25: the MCP-Protocol-Version header of a session ---------------------------------


def test_legacy_session_accepts_released_streamable_http_versions(
    launch: Callable[..., str], peers: Callable[[str], Peer]
) -> None:
    peer = peers(launch())
    peer.initialize()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for version in ("2025-03-26", "2025-06-18", "2025-11-25"):
        response = peer.post(ping, headers={"MCP-Protocol-Version": version})
        assert response.status_code == 200, (version, response.text)
        assert messages_of(response)[-1]["result"] == {}
    for version in ("2024-11-05", VERSION, "2099-01-01"):
        response = peer.post(ping, headers={"MCP-Protocol-Version": version})
        assert response.status_code == 400, version
        body = response.json()
        assert "id" not in body  # an HTTP-layer error: no request id, so none at all
        assert body["error"]["code"] == -32000
    # Concurrent POST streams in one session, as the 0.1.16 multiple-streams scenario sends.
    answers = [
        peer.post(
            {"jsonrpc": "2.0", "id": 1000 + n, "method": "tools/list", "params": {}},
            headers={"MCP-Protocol-Version": "2025-03-26"},
        )
        for n in range(3)
    ]
    assert [response.status_code for response in answers] == [200, 200, 200]


# -- 2025-11-25: SSE polling with test_reconnection ---------------------------------------------


def test_reconnection_closes_the_stream_and_answers_on_the_resumed_one(
    launch: Callable[..., str], peers: Callable[[str], Peer]
) -> None:
    url = launch(FIXTURES)
    peer = peers(url)
    peer.initialize()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "test_reconnection"},
    }
    started = time.monotonic()
    response = peer.post(call)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["connection"] == "close"
    (priming,) = parse_sse(response.text)  # the stream ends after its priming event
    assert priming.get("data", "") == ""
    assert priming["retry"] == "1000"
    stream, _, number = priming["id"].rpartition("-")
    assert number == "0"
    assert time.monotonic() - started < 5  # closed before the tool finished

    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": peer.session_id or "",
        "MCP-Protocol-Version": "2025-03-26",
        "Last-Event-ID": priming["id"],
    }
    resumed = peer.client.get(url, headers=headers)  # the server ends this stream too
    assert resumed.status_code == 200
    events = parse_sse(resumed.text)
    assert [event["id"] for event in events] == [f"{stream}-1", f"{stream}-2"]
    messages = [json.loads(event["data"]) for event in events]
    assert messages[0]["method"] == "notifications/message"
    assert messages[1]["id"] == 1
    assert messages[1]["result"]["content"][0]["text"] == "Reconnection test completed successfully"
    # Resuming after the first event replays only what came after it.
    again = peer.client.get(url, headers={**headers, "Last-Event-ID": f"{stream}-1"})
    assert [event["id"] for event in parse_sse(again.text)] == [f"{stream}-2"]
    # Another session cannot resume this session's stream: it gets its own GET stream.
    other = peers(url)
    other.initialize()
    foreign = {**headers, "Mcp-Session-Id": other.session_id or ""}
    with other.client.stream("GET", url, headers=foreign) as stream_response:
        assert stream_response.status_code == 200
        first: list[str] = []
        for line in stream_response.iter_lines():
            if not line:
                break
            first.append(line)
    assert parse_sse("\n".join(first))[0]["id"].startswith("get-")


def test_reconnection_with_json_answers_just_answers(
    launch: Callable[..., str], peers: Callable[[str], Peer]
) -> None:
    peer = peers(launch(FIXTURES, "--answer", "json"))
    peer.initialize()
    result = peer.result("tools/call", {"name": "test_reconnection"})
    assert result["content"][0]["text"] == "Reconnection test completed successfully"


# -- 2025-11-25: notifications that belong to a call --------------------------------------------


def test_legacy_progress_and_logs_precede_the_result_on_the_sse_answer(
    launch: Callable[..., str], peers: Callable[[str], Peer]
) -> None:
    peer = peers(launch(FIXTURES))
    peer.initialize()
    response = peer.post(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {
                "name": "test_tool_with_progress",
                "arguments": {},
                "_meta": {"progressToken": "tok"},
            },
        }
    )
    messages = messages_of(response)
    progress = [
        m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"
    ]
    assert progress == [0, 50, 100]
    assert messages[-1]["id"] == 5
    assert messages[-1]["result"]["content"][0]["text"] == "Progress test completed"
    logged = messages_of(
        peer.post(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/call",
                "params": {"name": "test_tool_with_logging", "arguments": {}},
            }
        )
    )
    logs = [m for m in logged if m.get("method") == "notifications/message"]
    assert len(logs) == 4  # "handling tools/call" and the tool's three


def test_without_the_option_the_fixtures_are_unknown(
    launch: Callable[..., str], peers: Callable[[str], Peer]
) -> None:
    peer = peers(launch())
    peer.initialize()
    answer = peer.request("tools/call", {"name": "greet", "arguments": {"name": "x"}})
    assert answer["error"]["code"] == -32602
    assert [tool["name"] for tool in peer.result("tools/list")["tools"]] == ["long_job"]


# -- 2026-07-28 over HTTP -----------------------------------------------------------------------


def test_modern_fixture_tasks_over_http(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch(FIXTURES, "--poll-interval", "100"))
    created = peer.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
    assert created["resultType"] == "task"
    assert created["pollIntervalMs"] == 100
    ack = peer.result("tasks/cancel", {"taskId": created["taskId"]})
    assert ack == {"resultType": "complete"}
    wait_status(peer, created["taskId"], "cancelled")

    refused = peer.post(
        peer.message("tools/call", {"name": "failing_job", "arguments": {}}, tasks=False)
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32021

    failed = peer.result("tools/call", {"name": "protocol_error_job", "arguments": {"seconds": 0}})
    assert wait_status(peer, failed["taskId"], "failed")["error"]["code"] == -32603

    mismatch = peer.post(
        peer.message("tools/call", {"name": "greet", "arguments": {"name": "x"}}),
        headers={"Mcp-Method": "tasks/get"},
    )
    assert mismatch.status_code == 400
    assert mismatch.json()["error"]["code"] == -32020


def test_modern_input_over_http_tasks_update_and_multi_round_trip(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch(FIXTURES))
    call = with_elicitation(
        peer.message("tools/call", {"name": "confirm_delete", "arguments": {"filename": "f"}})
    )
    task_id = answer_of(peer, call)["result"]["taskId"]
    parked = wait_status(peer, task_id, "input_required")
    (key,) = parked["inputRequests"]
    update = peer.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert update == {"resultType": "complete"}
    done = wait_status(peer, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "Deleted f"

    round1 = answer_of(
        peer, with_elicitation(peer.message("tools/call", {"name": "test_tool_with_task"}))
    )["result"]
    assert round1["resultType"] == "input_required"
    round2 = answer_of(
        peer,
        with_elicitation(
            peer.message(
                "tools/call",
                {
                    "name": "test_tool_with_task",
                    "arguments": {},
                    "inputResponses": {
                        "user_name": {"action": "accept", "content": {"name": "Alice"}}
                    },
                    "requestState": round1["requestState"],
                },
            )
        ),
    )["result"]
    assert round2["resultType"] == "task"
    greeted = wait_status(peer, round2["taskId"], "completed")
    assert "Alice" in greeted["result"]["content"][0]["text"]


def test_modern_progress_notifications_precede_the_result(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch(FIXTURES))
    message = peer.message("tools/call", {"name": "test_tool_with_progress", "arguments": {}})
    message["params"]["_meta"]["progressToken"] = 9
    response = peer.post(message)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    assert all("id" not in event for event in events)  # 2026-07-28 streams are not resumable
    messages = [json.loads(event["data"]) for event in events]
    assert [m["params"]["progress"] for m in messages[:-1]] == [0, 50, 100]
    assert messages[-1]["result"]["resultType"] == "complete"


# -- stdio --------------------------------------------------------------------------------------


def test_fixtures_over_stdio_in_both_eras(stdio: Callable[..., StdioPeer]) -> None:
    peer = stdio(FIXTURES)
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        CAPABILITIES: {"extensions": {TASKS: {}}},
    }
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": meta, "name": "slow_compute", "arguments": {"seconds": 0.05}},
        }
    )
    task_id = peer.answer(1)["result"]["taskId"]
    deadline = time.monotonic() + DEADLINE
    status = "working"
    msg_id = 2
    while status != "completed" and time.monotonic() < deadline:
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "method": "tasks/get",
                "params": {"_meta": meta, "taskId": task_id},
            }
        )
        status = peer.answer(msg_id)["result"]["status"]
        msg_id += 1
        time.sleep(0.02)
    assert status == "completed"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 100,
            "method": "tools/call",
            "params": {"name": "greet", "arguments": {"name": "stdio"}},
        }
    )
    assert peer.answer(100)["result"]["content"][0]["text"] == "Hello, stdio!"
