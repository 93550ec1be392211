"""The official MCP Python SDK's task server (mcp==1.30.0), probed with raw httpx and pipes.

These tests pin down what the SDK really does on the wire, so that mcptask's interop tests can
rely on it: the capabilities it advertises, the shape of tasks/get, tasks/list, tasks/cancel,
its error codes and messages, and how it scopes tasks to sessions.
"""

from __future__ import annotations

import json
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from .sdk_env import (
    PROTOCOL_VERSION,
    RpcError,
    StdioPeer,
    call_long_job_as_task,
    create_tasks_in_session,
    ensure_sdk_venv,
    initialize_session,
    iter_sse_data,
    rpc,
    start_sdk_server,
    stop,
)

JSON = dict[str, Any]

# The initialize result's capabilities, exactly as mcp 1.30.0 sends them for a low-level Server
# with a tools/list handler and server.experimental.enable_tasks().
SDK_CAPABILITIES: JSON = {
    "experimental": {},
    "tools": {"listChanged": False},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}
# Every Task the SDK sends (ttl requested, no statusMessage set) has exactly these fields.
TASK_KEYS = {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}
SDK_POLL_INTERVAL_MS = 500
# run_task() ids: "<32-hex session scope>:<uuid4>".
SCOPED_ID = re.compile(
    r"(?P<scope>[0-9a-f]{32}):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
SEEDED_TTL_MS = 3_600_000
CREATED_TTL_MS = 3_600_000
FIXED_STDIO_SCOPE = "5eed" + "0" * 28
WAIT_SECONDS = 30.0


@dataclass
class SdkServer:
    mode: str
    url: str


def expect_error(
    call: Callable[[str, JSON], JSON], method: str, params: JSON, code: int, message: str
) -> None:
    """Assert that ``call(method, params)`` answers a JSON-RPC error with this code and message."""
    with pytest.raises(RpcError) as caught:
        call(method, params)
    assert (caught.value.code, caught.value.message) == (code, message)


def parse_time(text: str) -> datetime:
    assert ISO_UTC.fullmatch(text), text
    return datetime.fromisoformat(text)


def wait_for_status(
    get: Callable[[], JSON], wanted: set[str], timeout: float = WAIT_SECONDS
) -> JSON:
    """Poll a tasks/get until its status is in ``wanted`` (no timing is asserted)."""
    deadline = time.monotonic() + timeout
    while True:
        task = get()
        if task["status"] in wanted or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_python() -> Path:
    return ensure_sdk_venv()


@pytest.fixture(scope="module", params=["sse", "json"])
def server(request: pytest.FixtureRequest, sdk_python: Path) -> Iterator[SdkServer]:
    mode: str = request.param
    url, proc = start_sdk_server(
        "sse" if mode == "sse" else "json", "--seed", "3", "--seed-terminal"
    )
    try:
        yield SdkServer(mode=mode, url=url)
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=WAIT_SECONDS) as http:
        yield http


@pytest.fixture(scope="module")
def owner(server: SdkServer) -> tuple[str, list[str]]:
    """A session (left open) that created three 600 s tasks: (session id, task ids)."""
    return create_tasks_in_session(server.url, 3)


@pytest.fixture
def fresh_session(server: SdkServer, client: httpx.Client) -> str:
    session_id, _ = initialize_session(client, server.url)
    return session_id


def tasks_call(
    client: httpx.Client, server: SdkServer, session_id: str
) -> Callable[[str, JSON], JSON]:
    """A ``call(method, params) -> result`` bound to one session."""

    def call(method: str, params: JSON) -> JSON:
        return rpc(client, server.url, method, params, session_id).result

    return call


# --------------------------------------------------------------------------------------------
# Streamable HTTP, SSE and JSON answers
# --------------------------------------------------------------------------------------------


def test_initialize_advertises_tasks_list_and_cancel(
    server: SdkServer, client: httpx.Client
) -> None:
    reply = rpc(
        client,
        server.url,
        "initialize",
        {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "smoke", "version": "0"},
        },
    )
    expected_type = "text/event-stream" if server.mode == "sse" else "application/json"
    assert reply.content_type == expected_type
    assert reply.session_id is not None
    assert re.fullmatch(r"[0-9a-f]{32}", reply.session_id)
    assert reply.result == {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": SDK_CAPABILITIES,
        "serverInfo": {"name": "mcptask-interop-sdk", "version": "1.30.0-interop"},
    }


def test_long_job_tool_supports_tasks_optionally(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    tools = rpc(client, server.url, "tools/list", {}, fresh_session).result["tools"]
    assert [tool["name"] for tool in tools] == ["long_job"]
    assert tools[0]["execution"] == {"taskSupport": "optional"}


def test_task_augmented_call_returns_wrapped_working_task(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    reply = rpc(
        client,
        server.url,
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 600}, "task": {"ttl": 120_000}},
        fresh_session,
    )
    assert set(reply.result) == {"task"}
    task = reply.result["task"]
    assert set(task) == TASK_KEYS
    assert task["status"] == "working"
    assert task["ttl"] == 120_000
    assert task["pollInterval"] == SDK_POLL_INTERVAL_MS
    assert parse_time(task["createdAt"]).utcoffset() is not None
    assert task["createdAt"] == task["lastUpdatedAt"]
    assert SCOPED_ID.fullmatch(task["taskId"])
    # The status notification is not sent on the POST's stream (nor at creation at all).
    assert reply.notifications == []


def test_creating_session_lists_its_tasks_flat_in_one_page(
    server: SdkServer, client: httpx.Client, owner: tuple[str, list[str]]
) -> None:
    session_id, ids = owner
    listed = rpc(client, server.url, "tasks/list", {}, session_id).result
    assert set(listed) == {"tasks"}  # never a nextCursor
    by_id = {task["taskId"]: task for task in listed["tasks"]}
    assert set(ids) <= set(by_id)
    scopes = set()
    for task_id in ids:
        match = SCOPED_ID.fullmatch(task_id)
        assert match is not None
        scopes.add(match.group("scope"))
        assert set(by_id[task_id]) >= TASK_KEYS
        assert by_id[task_id]["ttl"] == CREATED_TTL_MS
    assert len(scopes) == 1
    # Seeded tasks (created outside any session) are never listed.
    assert not any(task_id.startswith("sdk-") for task_id in by_id)


def test_cursor_is_ignored_by_list(
    server: SdkServer, client: httpx.Client, owner: tuple[str, list[str]]
) -> None:
    session_id, ids = owner
    listed = rpc(client, server.url, "tasks/list", {"cursor": "bogus"}, session_id).result
    assert "nextCursor" not in listed
    assert set(ids) <= {task["taskId"] for task in listed["tasks"]}


def test_joining_a_session_by_id_sees_its_tasks_without_initialize(
    server: SdkServer, owner: tuple[str, list[str]]
) -> None:
    session_id, ids = owner
    with httpx.Client(timeout=WAIT_SECONDS) as other_client:
        listed = rpc(other_client, server.url, "tasks/list", {}, session_id).result
    assert set(ids) <= {task["taskId"] for task in listed["tasks"]}


def test_fresh_session_sees_no_tasks_and_not_found_for_others(
    server: SdkServer, client: httpx.Client, owner: tuple[str, list[str]], fresh_session: str
) -> None:
    owner_session, ids = owner
    call = tasks_call(client, server, fresh_session)
    assert call("tasks/list", {}) == {"tasks": []}
    foreign = ids[2]
    for method in ("tasks/get", "tasks/cancel", "tasks/result"):
        expect_error(call, method, {"taskId": foreign}, -32602, f"Task not found: {foreign}")
    # The refused cancel did not touch it.
    still = rpc(client, server.url, "tasks/get", {"taskId": foreign}, owner_session).result
    assert still["status"] == "working"


def test_get_answers_the_task_flat(
    server: SdkServer, client: httpx.Client, owner: tuple[str, list[str]]
) -> None:
    session_id, ids = owner
    task = rpc(client, server.url, "tasks/get", {"taskId": ids[1]}, session_id).result
    assert set(task) == TASK_KEYS
    assert task["taskId"] == ids[1]
    assert task["status"] == "working"
    assert (task["ttl"], task["pollInterval"]) == (CREATED_TTL_MS, SDK_POLL_INTERVAL_MS)


def test_cancel_answers_flat_cancelled_task_and_rejects_a_second_cancel(
    server: SdkServer, client: httpx.Client, owner: tuple[str, list[str]]
) -> None:
    session_id, ids = owner
    call = tasks_call(client, server, session_id)
    before = call("tasks/get", {"taskId": ids[0]})
    cancelled = call("tasks/cancel", {"taskId": ids[0]})
    assert set(cancelled) == TASK_KEYS
    assert cancelled["taskId"] == ids[0]
    assert cancelled["status"] == "cancelled"
    assert cancelled["createdAt"] == before["createdAt"]
    assert parse_time(cancelled["lastUpdatedAt"]) >= parse_time(before["lastUpdatedAt"])
    assert call("tasks/get", {"taskId": ids[0]})["status"] == "cancelled"
    expect_error(
        call,
        "tasks/cancel",
        {"taskId": ids[0]},
        -32602,
        "Cannot cancel task in terminal state 'cancelled'",
    )
    listed = {task["taskId"]: task["status"] for task in call("tasks/list", {})["tasks"]}
    assert listed[ids[0]] == "cancelled"
    assert listed[ids[1]] == "working"


def test_cancelled_task_stays_cancelled_when_its_work_ends(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    """The SDK's run_task() would complete a cancelled task when its work returns, which kills
    the session (404 afterwards); the test server's long_job avoids that. Prove it."""
    call = tasks_call(client, server, fresh_session)
    task = call_long_job_as_task(client, server.url, fresh_session, 0.3)
    assert call("tasks/cancel", {"taskId": task["taskId"]})["status"] == "cancelled"
    time.sleep(1.0)  # well past the job's 0.3 s
    after = call("tasks/get", {"taskId": task["taskId"]})
    assert after["status"] == "cancelled"
    assert "statusMessage" not in after
    assert [t["status"] for t in call("tasks/list", {})["tasks"]] == ["cancelled"]


def test_unknown_task_id_is_invalid_params(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    call = tasks_call(client, server, fresh_session)
    for method in ("tasks/get", "tasks/cancel", "tasks/result"):
        expect_error(
            call, method, {"taskId": "no-such-task"}, -32602, "Task not found: no-such-task"
        )


def test_long_job_ends_completed_or_failed(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    call = tasks_call(client, server, fresh_session)
    done = call_long_job_as_task(client, server.url, fresh_session, 0.2)["taskId"]
    failed = call_long_job_as_task(client, server.url, fresh_session, 0.2, "failed")["taskId"]
    terminal = {"completed", "failed", "cancelled"}

    done_task = wait_for_status(lambda: call("tasks/get", {"taskId": done}), terminal)
    assert done_task["status"] == "completed"
    assert "statusMessage" not in done_task
    failed_task = wait_for_status(lambda: call("tasks/get", {"taskId": failed}), terminal)
    assert failed_task["status"] == "failed"
    assert failed_task["statusMessage"] == "long_job failed after 0.2s as requested"

    related = "io.modelcontextprotocol/related-task"
    assert call("tasks/result", {"taskId": done}) == {
        "_meta": {related: {"taskId": done}},
        "content": [{"type": "text", "text": "long_job completed after 0.2s"}],
        "isError": False,
    }
    # A failed task has no stored result: tasks/result answers only the _meta.
    assert call("tasks/result", {"taskId": failed}) == {"_meta": {related: {"taskId": failed}}}
    for task_id, status in ((done, "completed"), (failed, "failed")):
        expect_error(
            call,
            "tasks/cancel",
            {"taskId": task_id},
            -32602,
            f"Cannot cancel task in terminal state '{status}'",
        )


def test_task_without_ttl_omits_the_ttl_field(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    reply = rpc(
        client,
        server.url,
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 600}, "task": {}},
        fresh_session,
    )
    task = reply.result["task"]
    assert "ttl" not in task  # the spec wants "ttl": null; the SDK drops None fields
    assert set(task) == TASK_KEYS - {"ttl"}


def test_seeded_tasks_are_reachable_by_id_from_any_session_but_never_listed(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    call = tasks_call(client, server, fresh_session)
    assert call("tasks/list", {}) == {"tasks": []}
    seeded = call("tasks/get", {"taskId": "sdk-working-001"})
    assert set(seeded) == TASK_KEYS
    assert (seeded["status"], seeded["ttl"]) == ("working", SEEDED_TTL_MS)
    cancelled = call("tasks/cancel", {"taskId": "sdk-working-002"})
    assert (cancelled["taskId"], cancelled["status"]) == ("sdk-working-002", "cancelled")
    failed = call("tasks/get", {"taskId": "sdk-failed-001"})
    assert (failed["status"], failed["statusMessage"]) == ("failed", "seeded failure")
    assert call("tasks/get", {"taskId": "sdk-completed-001"})["status"] == "completed"
    for task_id, status in (("sdk-completed-001", "completed"), ("sdk-failed-001", "failed")):
        expect_error(
            call,
            "tasks/cancel",
            {"taskId": task_id},
            -32602,
            f"Cannot cancel task in terminal state '{status}'",
        )
    # Another fresh session sees the same seeded tasks, including the cancel just made.
    other, _ = initialize_session(client, server.url)
    again = rpc(client, server.url, "tasks/get", {"taskId": "sdk-working-002"}, other).result
    assert again["status"] == "cancelled"
    assert rpc(client, server.url, "tasks/list", {}, other).result == {"tasks": []}


def test_status_notification_arrives_on_the_get_stream(
    server: SdkServer, client: httpx.Client, fresh_session: str
) -> None:
    received: queue.Queue[JSON | BaseException] = queue.Queue()
    opened = threading.Event()

    def listen() -> None:
        headers = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": fresh_session,
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(WAIT_SECONDS)) as stream_client,
                stream_client.stream("GET", server.url, headers=headers) as response,
            ):
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                opened.set()
                for data in iter_sse_data(response.iter_lines()):
                    if not data.strip():
                        continue
                    message: JSON = json.loads(data)
                    received.put(message)
                    if message.get("params", {}).get("status") in {"completed", "failed"}:
                        return
        except BaseException as exc:  # handed to the test thread
            opened.set()
            received.put(exc)

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert opened.wait(WAIT_SECONDS)
    task_id = call_long_job_as_task(client, server.url, fresh_session, 0.5)["taskId"]
    note = received.get(timeout=WAIT_SECONDS)
    if isinstance(note, BaseException):
        raise note
    listener.join(WAIT_SECONDS)
    assert note["method"] == "notifications/tasks/status"
    params = note["params"]
    assert (params["taskId"], params["status"]) == (task_id, "completed")
    assert set(params) == TASK_KEYS  # flat Task fields


def test_deleting_any_session_breaks_task_creation_until_the_next_initialize(
    sdk_python: Path,
) -> None:
    """mcp 1.30.0 keeps one task group per server, replaced by each new session and cleared
    when any session ends: after a DELETE, run_task() fails in every other session (as a tool
    error result, not a JSON-RPC error) until some client initializes again."""
    url, proc = start_sdk_server("json")
    try:
        with httpx.Client(timeout=WAIT_SECONDS) as http:
            first, _ = initialize_session(http, url)
            second, _ = initialize_session(http, url)
            kept = call_long_job_as_task(http, url, first, 600)["taskId"]
            gone = http.delete(
                url, headers={"Mcp-Session-Id": second, "MCP-Protocol-Version": PROTOCOL_VERSION}
            )
            assert gone.status_code == 200
            after_delete = rpc(http, url, "tasks/list", {}, second)
            assert after_delete.status_code == 404
            assert after_delete.message == {
                "jsonrpc": "2.0",
                "id": "server-error",
                "error": {"code": -32600, "message": "Session not found"},
            }
            broken = rpc(
                http,
                url,
                "tools/call",
                {"name": "long_job", "arguments": {"seconds": 1}, "task": {"ttl": 60_000}},
                first,
            ).result
            assert broken == {
                "content": [
                    {
                        "type": "text",
                        "text": "TaskSupport not running. Ensure Server.run() is active.",
                    }
                ],
                "isError": True,
            }
            # Existing tasks are untouched, and a new session repairs creation.
            assert rpc(http, url, "tasks/get", {"taskId": kept}, first).result["status"] == (
                "working"
            )
            initialize_session(http, url)
            repaired = call_long_job_as_task(http, url, first, 600)
            assert repaired["status"] == "working"
    finally:
        stop(proc)


# --------------------------------------------------------------------------------------------
# stdio
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_peer(sdk_python: Path) -> Iterator[StdioPeer]:
    peer = StdioPeer("--seed", "2", "--seed-terminal", "--seed-listable", "2")
    try:
        yield peer
    finally:
        peer.close()


@pytest.fixture(scope="module")
def stdio_initialized(stdio_peer: StdioPeer) -> JSON:
    return stdio_peer.initialize()


def listable_id(n: int) -> str:
    return f"{FIXED_STDIO_SCOPE}:00000000-0000-4000-8000-{n:012d}"


def test_stdio_initialize_advertises_tasks(stdio_initialized: JSON) -> None:
    assert stdio_initialized["protocolVersion"] == PROTOCOL_VERSION
    assert stdio_initialized["capabilities"] == SDK_CAPABILITIES


def test_stdio_fresh_server_lists_nothing(sdk_python: Path) -> None:
    peer = StdioPeer()
    try:
        peer.initialize()
        assert peer.result("tasks/list", {}) == {"tasks": []}
    finally:
        peer.close()


def test_stdio_lists_only_session_scoped_seeds(
    stdio_peer: StdioPeer, stdio_initialized: JSON
) -> None:
    listed = stdio_peer.result("tasks/list", {})["tasks"]
    assert [task["taskId"] for task in listed[:2]] == [listable_id(1), listable_id(2)]
    assert listed[0] == stdio_peer.result("tasks/get", {"taskId": listable_id(1)})
    assert (listed[0]["status"], set(listed[0])) == ("working", TASK_KEYS)
    assert not any(task["taskId"].startswith("sdk-") for task in listed)


def test_stdio_get_and_cancel_seeded_tasks(stdio_peer: StdioPeer, stdio_initialized: JSON) -> None:
    working = stdio_peer.result("tasks/get", {"taskId": "sdk-working-001"})
    assert (working["status"], set(working)) == ("working", TASK_KEYS)
    cancelled = stdio_peer.result("tasks/cancel", {"taskId": "sdk-working-002"})
    assert (cancelled["taskId"], cancelled["status"]) == ("sdk-working-002", "cancelled")
    listable = stdio_peer.result("tasks/cancel", {"taskId": listable_id(2)})
    assert listable["status"] == "cancelled"
    listed = {task["taskId"]: task for task in stdio_peer.result("tasks/list", {})["tasks"]}
    assert listed[listable_id(2)] == listable
    for task_id, status in (("sdk-working-002", "cancelled"), ("sdk-completed-001", "completed")):
        answer = stdio_peer.request("tasks/cancel", {"taskId": task_id})
        assert answer["error"] == {
            "code": -32602,
            "message": f"Cannot cancel task in terminal state '{status}'",
        }
    answer = stdio_peer.request("tasks/get", {"taskId": "no-such-task"})
    assert answer["error"] == {"code": -32602, "message": "Task not found: no-such-task"}


def test_stdio_created_task_is_listed_and_notifies_its_end(
    stdio_peer: StdioPeer, stdio_initialized: JSON
) -> None:
    created = stdio_peer.result(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 0.2}, "task": {"ttl": 60_000}},
    )["task"]
    task_id = created["taskId"]
    assert task_id.startswith(FIXED_STDIO_SCOPE + ":")
    assert task_id in {task["taskId"] for task in stdio_peer.result("tasks/list", {})["tasks"]}
    note = stdio_peer.wait_notification("notifications/tasks/status", task_id)
    assert note["params"]["status"] == "completed"
    assert stdio_peer.result("tasks/get", {"taskId": task_id})["status"] == "completed"
