"""The reference server's 2026-07-28 era as a real process: raw httpx and stdio pipes."""

from __future__ import annotations

import base64
import json
import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.test_reference_server_process import (
    POST_HEADERS,
    Peer,
    StdioPeer,
    messages_of,
    parse_sse,
    write_tasks_file,
)
from tests.reference_server_process import (
    ReferenceServerProcess,
    start_reference_server,
    start_stdio_reference_server,
    stop_process,
)

JsonObject = dict[str, Any]
TIMEOUT = httpx.Timeout(10.0)
DEADLINE = 10.0
VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
NAME_SOURCE = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId"}
NAME_SOURCE["tasks/cancel"] = "taskId"


def meta(*, tasks: bool = True, version: str = VERSION) -> JsonObject:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}} if tasks else {}},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    }


def sentinel(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def header_safe(value: str) -> bool:
    """Plain ASCII, no surrounding blanks, and not itself shaped like the sentinel."""
    shaped = value.startswith("=?base64?") and value.endswith("?=")
    return all(0x20 <= ord(c) <= 0x7E for c in value) and value == value.strip() and not shaped


class ModernPeer:
    """A raw 2026-07-28 client: every POST carries _meta and the mirrored headers."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = httpx.Client(timeout=TIMEOUT)
        self._next_id = 0

    def message(
        self, method: str, params: JsonObject | None = None, *, tasks: bool = True, **kw: Any
    ) -> JsonObject:
        self._next_id += 1
        body: JsonObject = {"_meta": meta(tasks=tasks, version=kw.get("version", VERSION))}
        body.update(params or {})
        return {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": body}

    def headers(self, message: JsonObject) -> dict[str, str]:
        params = message["params"]
        headers = {
            **POST_HEADERS,
            "MCP-Protocol-Version": params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "Mcp-Method": message["method"],
        }
        source = NAME_SOURCE.get(message["method"])
        if source is not None and isinstance(params.get(source), str):
            value = params[source]
            headers["Mcp-Name"] = value if header_safe(value) else sentinel(value)
        return headers

    def post(
        self,
        message: JsonObject,
        headers: dict[str, str] | None = None,
        drop: tuple[str, ...] = (),
    ) -> httpx.Response:
        all_headers = {**self.headers(message), **(headers or {})}
        for name in drop:
            all_headers.pop(name, None)
        return self.client.post(self.url, content=json.dumps(message), headers=all_headers)

    def request(self, method: str, params: JsonObject | None = None, **kw: Any) -> JsonObject:
        message = self.message(method, params, **kw)
        response = self.post(message)
        assert response.status_code == 200, response.text
        answers = [m for m in messages_of(response) if m.get("id") == message["id"]]
        assert len(answers) == 1, response.text
        return answers[0]

    def result(self, method: str, params: JsonObject | None = None, **kw: Any) -> Any:
        answer = self.request(method, params, **kw)
        assert "result" in answer, answer
        return answer["result"]

    def wait_status(self, task_id: str, status: str) -> JsonObject:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            task: JsonObject = self.result("tasks/get", {"taskId": task_id})
            if task["status"] == status:
                return task
            time.sleep(0.05)
        pytest.fail(f"{task_id} never became {status}")


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
def legacy_peers() -> Iterator[Callable[[str], Peer]]:
    made: list[Peer] = []

    def _peer(url: str) -> Peer:
        peer = Peer(url)
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


WAITING_TASK = {
    "taskId": "job",
    "status": "input_required",
    "statusMessage": "Your name?",
    "awaitInput": True,
    "steps": [[0.05, "working", "busy"], [0.05, "completed", "done"]],
}


# -- discover and era selection -------------------------------------------------------------------


def test_dual_era_server_answers_discover_and_initialize(
    launch: Callable[..., str],
    modern_peers: Callable[[str], ModernPeer],
    legacy_peers: Callable[[str], Peer],
) -> None:
    url = launch("--protocol-eras", "both", "--server-name", "dual")
    modern = modern_peers(url)
    message = modern.message("server/discover")
    response = modern.post(message, headers={"Mcp-Session-Id": "ignored-session"})
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    assert all("id" not in event for event in events)  # modern streams are not resumable
    result = messages_of(response)[-1]["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert result["capabilities"] == {"tools": {}, "extensions": {TASKS: {}}}
    assert result["serverInfo"]["name"] == "dual"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == result["serverInfo"]
    assert (result["ttlMs"], result["cacheScope"]) == (0, "public")
    legacy = legacy_peers(url)
    initialized = legacy.initialize()
    assert initialized["protocolVersion"] == "2025-11-25"
    assert "tasks" in initialized["capabilities"]
    assert legacy.result("ping") == {}
    assert modern.result("ping") == {"resultType": "complete"}


def test_json_answer_mode_for_modern(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch("--protocol-eras", "both", "--answer", "json"))
    response = peer.post(peer.message("tools/list"))
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["tools"][0]["name"] == "long_job"


def test_legacy_only_server_answers_discover_like_an_old_server(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch("--protocol-eras", "legacy"))
    response = peer.post(peer.message("server/discover"))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] not in (-32020, -32021, -32022)
    assert "Mcp-Session-Id" in error["message"]


def test_modern_only_server_refuses_legacy_clients(
    launch: Callable[..., str],
    modern_peers: Callable[[str], ModernPeer],
    legacy_peers: Callable[[str], Peer],
) -> None:
    url = launch("--protocol-eras", "modern")
    legacy = legacy_peers(url)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    response = legacy.post(init)
    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    assert "2026-07-28" in error["message"]
    assert legacy.client.get(url, headers={"Accept": "text/event-stream"}).status_code == 405
    assert legacy.client.delete(url, headers={"Mcp-Session-Id": "x"}).status_code == 405
    modern = modern_peers(url)
    assert modern.result("server/discover")["supportedVersions"] == ["2026-07-28"]


# -- modern errors and their HTTP statuses -----------------------------------------------------


def test_modern_protocol_errors_and_statuses(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch("--protocol-eras", "both", "--seed", "working=1"))

    def error_of(response: httpx.Response, status: int) -> JsonObject:
        assert response.status_code == status, response.text
        assert response.headers["content-type"].startswith("application/json")
        error: JsonObject = response.json()["error"]
        return error

    unsupported = error_of(peer.post(peer.message("server/discover", version="1999-01-01")), 400)
    assert unsupported["code"] == -32022
    assert unsupported["data"] == {
        "supported": ["2026-07-28", "2025-11-25"],
        "requested": "1999-01-01",
    }
    get = peer.message("tasks/get", {"taskId": "working-001"}, tasks=False)
    missing_cap = error_of(peer.post(get), 400)
    assert missing_cap["code"] == -32021
    assert missing_cap["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    get = peer.message("tasks/get", {"taskId": "working-001"})
    for drop in ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"):
        assert error_of(peer.post(get, drop=(drop,)), 400)["code"] == -32020
    for wrong in (
        {"MCP-Protocol-Version": "2025-11-25"},
        {"Mcp-Method": "tasks/cancel"},
        {"Mcp-Name": "working-002"},
        {"Mcp-Name": sentinel("working-002")},
    ):
        assert error_of(peer.post(get, headers=wrong), 400)["code"] == -32020
    call = peer.message("tools/call", {"name": "long_job", "arguments": {}})
    assert error_of(peer.post(call, headers={"Mcp-Name": "other"}), 400)["code"] == -32020
    listing = error_of(peer.post(peer.message("tasks/list")), 404)
    assert listing["code"] == -32601
    no_meta = {"jsonrpc": "2.0", "id": 9, "method": "server/discover"}
    plain = peer.client.post(peer.url, json=no_meta, headers=POST_HEADERS)
    assert error_of(plain, 400)["code"] == -32602
    unknown = peer.request("tasks/get", {"taskId": "ghost"})
    assert unknown["error"] == {"code": -32602, "message": "Task not found: ghost"}
    evil = peer.post(get, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    assert peer.post(get, headers={"Origin": "http://localhost:3000"}).status_code == 200


def test_mcp_name_base64_sentinel_is_decoded(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer], tmp_path: Path
) -> None:
    odd = [{"taskId": "tâche ✓"}, {"taskId": " padded "}, {"taskId": "=?base64?literal?="}]
    url = launch("--protocol-eras", "both", "--tasks-file", write_tasks_file(tmp_path, odd))
    peer = modern_peers(url)
    for task in odd:
        task_id = task["taskId"]
        message = peer.message("tasks/get", {"taskId": task_id})
        assert peer.headers(message)["Mcp-Name"] == sentinel(task_id)
        response = peer.post(message)
        assert response.status_code == 200, response.text
        assert messages_of(response)[-1]["result"]["taskId"] == task_id
    message = peer.message("tasks/get", {"taskId": "=?base64?literal?="})
    literal = peer.post(message, headers={"Mcp-Name": "=?base64?literal?="})
    assert literal.status_code == 400  # an unencoded sentinel-shaped value is decoded first
    assert literal.json()["error"]["code"] == -32020


# -- tasks ------------------------------------------------------------------------------------


def test_tool_call_task_lifecycle_with_get_shapes(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    peer = modern_peers(launch("--protocol-eras", "both", "--poll-interval", "100"))
    created = peer.result("tools/call", {"name": "long_job", "arguments": {"seconds": 0.2}})
    assert created["resultType"] == "task"
    assert "task" not in created
    assert (created["status"], created["ttlMs"], created["pollIntervalMs"]) == (
        "working",
        None,
        100,
    )
    done = peer.wait_status(created["taskId"], "completed")
    assert done["resultType"] == "complete"
    assert done["result"]["isError"] is False
    failed = peer.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0, "outcome": "failed"}}
    )
    assert peer.wait_status(failed["taskId"], "failed")["error"]["code"] == -32603
    inline = peer.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0}}, tasks=False
    )
    assert inline["resultType"] == "complete"
    assert inline["content"][0]["type"] == "text"


def test_cancel_ack_then_cooperative_transition(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer], tmp_path: Path
) -> None:
    tasks = [{"taskId": "racy", "onCancel": "complete"}, {"taskId": "slow"}]
    url = launch(
        "--protocol-eras", "both", "--seed", "working=1,completed=1",
        "--tasks-file", write_tasks_file(tmp_path, tasks),
    )  # fmt: skip
    peer = modern_peers(url)
    for task_id in ("working-001", "completed-001", "racy"):
        assert peer.result("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    peer.wait_status("working-001", "cancelled")
    assert peer.result("tasks/get", {"taskId": "completed-001"})["status"] == "completed"
    assert peer.result("tasks/get", {"taskId": "racy"})["status"] == "completed"
    assert peer.request("tasks/cancel", {"taskId": "ghost"})["error"]["code"] == -32602


def test_ack_only_cancel_is_acknowledged_and_leaves_the_task_working(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    # That it never cancels, however much later, is shown on the manual clock:
    # tests/reference_server/test_modern.py::test_negative_modern_delay_is_ack_only.
    url = launch("--protocol-eras", "both", "--seed", "working=1", "--modern-cancel-delay", "-1")
    peer = modern_peers(url)
    assert peer.result("tasks/cancel", {"taskId": "working-001"}) == {"resultType": "complete"}
    assert peer.result("tasks/get", {"taskId": "working-001"})["status"] == "working"


def test_update_moves_input_required_back_to_working(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer], tmp_path: Path
) -> None:
    url = launch(
        "--protocol-eras", "both", "--tasks-file", write_tasks_file(tmp_path, [WAITING_TASK])
    )
    peer = modern_peers(url)
    task = peer.result("tasks/get", {"taskId": "job"})
    assert task["status"] == "input_required"
    (key,) = task["inputRequests"]
    assert task["inputRequests"][key]["method"] == "elicitation/create"
    answer = {key: {"action": "accept", "content": {"answer": "Ada"}}}
    ack = peer.result("tasks/update", {"taskId": "job", "inputResponses": answer})
    assert ack == {"resultType": "complete"}
    assert peer.wait_status("job", "completed")["result"]["content"][0]["text"] == "done"


def test_tasks_cross_the_eras(
    launch: Callable[..., str],
    modern_peers: Callable[[str], ModernPeer],
    legacy_peers: Callable[[str], Peer],
) -> None:
    url = launch("--protocol-eras", "both")
    legacy, modern = legacy_peers(url), modern_peers(url)
    legacy.initialize()
    from_legacy = legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 60000}}
    )["task"]["taskId"]
    seen = modern.result("tasks/get", {"taskId": from_legacy})
    assert (seen["status"], seen["ttlMs"]) == ("working", 60000)
    from_modern = modern.result("tools/call", {"name": "long_job", "arguments": {"seconds": 60}})
    legacy_view = legacy.result("tasks/get", {"taskId": from_modern["taskId"]})
    assert legacy_view["status"] == "working"
    assert "ttl" in legacy_view
    listed = {t["taskId"] for t in legacy.result("tasks/list")["tasks"]}
    assert listed == {from_legacy, from_modern["taskId"]}
    modern.result("tasks/cancel", {"taskId": from_legacy})
    legacy.wait_status(from_legacy, "cancelled")


# -- subscriptions/listen ----------------------------------------------------------------------


def test_listen_over_http_streams_acknowledged_and_task_notifications(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer], tmp_path: Path
) -> None:
    url = launch(
        "--protocol-eras", "both", "--tasks-file", write_tasks_file(tmp_path, [WAITING_TASK])
    )
    peer, updater = modern_peers(url), modern_peers(url)
    listen = peer.message("subscriptions/listen", {"notifications": {"taskIds": ["job", "nope"]}})
    received: list[JsonObject] = []
    block: list[str] = []
    with peer.client.stream(
        "POST", url, content=json.dumps(listen), headers=peer.headers(listen)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"
        for line in response.iter_lines():
            if line:
                block.append(line)
                continue
            for event in parse_sse("\n".join(block)):
                assert "id" not in event
                received.append(json.loads(event["data"]))
            block = []
            if len(received) == 1:
                key = next(iter(updater.result("tasks/get", {"taskId": "job"})["inputRequests"]))
                answer = {key: {"action": "accept", "content": {"answer": "Ada"}}}
                updater.result("tasks/update", {"taskId": "job", "inputResponses": answer})
            if received[-1].get("params", {}).get("status") == "completed":
                break
    ack, *notes = received
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUBSCRIPTION_ID: listen["id"]}, "notifications": {"taskIds": ["job"]}},
    }
    assert {n["method"] for n in notes} == {"notifications/tasks"}
    assert all(n["params"]["_meta"] == {SUBSCRIPTION_ID: listen["id"]} for n in notes)
    assert [(n["params"]["status"], n["params"]["statusMessage"]) for n in notes] == [
        ("working", "Input received; working again"),
        ("working", "busy"),
        ("completed", "done"),
    ]
    final = notes[-1]["params"]
    assert final["result"]["content"] == [{"type": "text", "text": "done"}]
    assert "resultType" not in final
    assert "ttlMs" in final
    assert "pollIntervalMs" in final
    # The server is still fine after the client hung up on its stream.
    assert peer.result("ping") == {"resultType": "complete"}


def test_listen_with_no_notify_and_without_the_extension(
    launch: Callable[..., str], modern_peers: Callable[[str], ModernPeer]
) -> None:
    url = launch("--protocol-eras", "both", "--seed", "working=1", "--no-notify")
    peer = modern_peers(url)
    refused = peer.post(
        peer.message(
            "subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}}, tasks=False
        )
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32021
    listen = peer.message("subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}})
    with peer.client.stream(
        "POST", url, content=json.dumps(listen), headers=peer.headers(listen)
    ) as response:
        first = next(line for line in response.iter_lines() if line.startswith("data:"))
    ack = json.loads(first.removeprefix("data:").strip())
    assert ack["params"]["notifications"] == {"taskIds": []}


# -- stdio --------------------------------------------------------------------------------------


def send_modern(peer: StdioPeer, msg_id: int, method: str, params: JsonObject, **kw: Any) -> None:
    body: JsonObject = {"_meta": meta(**kw), **params}
    peer.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": body})


def test_stdio_modern_discover_get_update_and_listen_until_eof(
    stdio: Callable[..., StdioPeer], tmp_path: Path
) -> None:
    peer = stdio(
        "--protocol-eras", "both", "--tasks-file", write_tasks_file(tmp_path, [WAITING_TASK])
    )
    send_modern(peer, 1, "server/discover", {})
    assert peer.answer(1)["result"]["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    send_modern(peer, 2, "tasks/get", {"taskId": "job"}, tasks=False)
    assert peer.answer(2)["error"]["code"] == -32021
    send_modern(peer, 3, "subscriptions/listen", {"notifications": {"taskIds": ["job"]}})
    send_modern(peer, 4, "tasks/get", {"taskId": "job"})
    task = peer.answer(4)["result"]
    ack = [m for m in peer.seen if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert ack == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION_ID: 3}, "notifications": {"taskIds": ["job"]}},
        }
    ]
    (key,) = task["inputRequests"]
    send_modern(peer, 5, "tasks/update", {"taskId": "job", "inputResponses": {key: {}}})
    assert peer.answer(5)["result"] == {"resultType": "complete"}
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        notes = [m for m in peer.seen if m.get("method") == "notifications/tasks"]
        if notes and notes[-1]["params"]["status"] == "completed":
            break
        peer.seen.append(json.loads(peer.next_line()))
    else:
        pytest.fail("no completed notification")
    assert [n["params"]["status"] for n in notes] == ["working", "working", "completed"]
    assert all(n["params"]["_meta"] == {SUBSCRIPTION_ID: 3} for n in notes)
    assert not [m for m in peer.seen if m.get("method") == "notifications/tasks/status"]
    assert all(m.get("id") != 3 for m in peer.seen)  # the listen stays open
    assert peer.proc.stdin is not None
    peer.proc.stdin.close()
    closing = peer.answer(3)
    assert closing["result"] == {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: 3}}
    assert peer.proc.wait(timeout=10) == 0


def test_stdio_cancelled_notification_ends_a_subscription(stdio: Callable[..., StdioPeer]) -> None:
    peer = stdio("--protocol-eras", "both", "--seed", "working=1", "--modern-cancel-delay", "0")
    send_modern(peer, 1, "subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}})
    assert json.loads(peer.next_line())["method"] == "notifications/subscriptions/acknowledged"
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    send_modern(peer, 2, "tasks/cancel", {"taskId": "working-001"})
    assert peer.answer(2)["result"] == {"resultType": "complete"}
    while True:
        send_modern(peer, 4, "tasks/get", {"taskId": "working-001"})
        if peer.answer(4)["result"]["status"] == "cancelled":
            break
    assert peer.proc.stdin is not None
    peer.proc.stdin.close()
    assert peer.proc.wait(timeout=10) == 0
    rest: list[JsonObject] = []
    while True:
        try:
            rest.append(json.loads(peer.lines.get(timeout=1)))
        except queue.Empty:
            break
    assert not [m for m in peer.seen + rest if m.get("method") == "notifications/tasks"]
    assert all(m.get("id") != 1 for m in peer.seen + rest)


def test_stdio_legacy_status_pushes_wait_for_initialize(stdio: Callable[..., StdioPeer]) -> None:
    peer = stdio("--protocol-eras", "both", "--seed", "working=2")
    send_modern(peer, 1, "tasks/cancel", {"taskId": "working-001"})
    assert peer.answer(1)["result"] == {"resultType": "complete"}
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}})
    assert peer.answer(2)["result"]["protocolVersion"] == "2025-11-25"
    peer.send(
        {"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"taskId": "working-002"}}
    )
    assert peer.answer(3)["result"]["status"] == "cancelled"
    pushed = [m for m in peer.seen if m.get("method") == "notifications/tasks/status"]
    assert [n["params"]["taskId"] for n in pushed] == ["working-002"]


def test_stdio_era_switches(stdio: Callable[..., StdioPeer]) -> None:
    legacy_only = stdio("--protocol-eras", "legacy")
    send_modern(legacy_only, 1, "server/discover", {})
    assert legacy_only.answer(1)["error"]["code"] == -32601
    modern_only = stdio("--protocol-eras", "modern")
    modern_only.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25"},
        }
    )
    error = modern_only.answer(1)["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == ["2026-07-28"]
    send_modern(modern_only, 2, "server/discover", {})
    assert modern_only.answer(2)["result"]["supportedVersions"] == ["2026-07-28"]


def test_listen_stream_gets_its_response_when_the_server_shuts_down(
    modern_peers: Callable[[str], ModernPeer],
) -> None:
    url, proc = start_reference_server("--protocol-eras", "both", "--seed", "working=1")
    try:
        peer = modern_peers(url)
        listen = peer.message(
            "subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}}
        )
        received: list[JsonObject] = []
        with peer.client.stream(
            "POST", url, content=json.dumps(listen), headers=peer.headers(listen)
        ) as response:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                received.append(json.loads(line.removeprefix("data:").strip()))
                if len(received) == 1:
                    proc.terminate()  # SIGTERM: the server ends the subscription gracefully
        assert proc.wait(timeout=10) == 0
    finally:
        stop_process(proc)
    assert [m.get("method") for m in received] == [
        "notifications/subscriptions/acknowledged",
        None,
    ]
    assert received[-1] == {
        "jsonrpc": "2.0",
        "id": listen["id"],
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: listen["id"]}},
    }
