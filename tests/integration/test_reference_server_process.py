"""The reference server as a real process: raw Streamable HTTP with httpx, and stdio pipes."""

from __future__ import annotations

import http.client
import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.reference_server_process import (
    ReferenceServerProcess,
    reference_server_argv,
    reference_server_env,
    start_reference_server,
    start_stdio_reference_server,
    stop_process,
)

JsonObject = dict[str, Any]
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TIMEOUT = httpx.Timeout(10.0)
DEADLINE = 10.0


# -- helpers ------------------------------------------------------------------------------


def parse_sse(text: str) -> list[dict[str, str]]:
    """SSE events as dicts of their fields (data lines joined); comments skipped."""
    events: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[name] = fields[name] + "\n" + value if name in fields else value
        if fields:
            events.append(fields)
    return events


def messages_of(response: httpx.Response) -> list[JsonObject]:
    """The JSON-RPC messages of a POST answer, SSE or JSON."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return [json.loads(e["data"]) for e in parse_sse(response.text) if e.get("data")]
    return [response.json()]


class Peer:
    """A minimal raw MCP client over one httpx.Client."""

    def __init__(self, url: str, **client_args: Any) -> None:
        self.url = url
        self.client = httpx.Client(timeout=TIMEOUT, **client_args)
        self.session_id: str | None = None
        self._next_id = 0

    def post(self, message: object, headers: dict[str, str] | None = None) -> httpx.Response:
        all_headers = dict(POST_HEADERS)
        if self.session_id is not None:
            all_headers["Mcp-Session-Id"] = self.session_id
            all_headers["MCP-Protocol-Version"] = "2025-11-25"
        all_headers.update(headers or {})
        return self.client.post(self.url, content=json.dumps(message), headers=all_headers)

    def request(self, method: str, params: JsonObject | None = None) -> JsonObject:
        self._next_id += 1
        message: JsonObject = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        assert response.status_code == 200, response.text
        answers = [m for m in messages_of(response) if m.get("id") == self._next_id]
        assert len(answers) == 1, response.text
        return answers[0]

    def result(self, method: str, params: JsonObject | None = None) -> Any:
        answer = self.request(method, params)
        assert "result" in answer, answer
        return answer["result"]

    def initialize(self) -> JsonObject:
        self.session_id = None
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {}},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            }
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        initialized = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert initialized.status_code == 202
        result: JsonObject = messages_of(response)[-1]["result"]
        return result

    def wait_status(self, task_id: str, status: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            if self.result("tasks/get", {"taskId": task_id})["status"] == status:
                return
            time.sleep(0.05)
        pytest.fail(f"{task_id} never became {status}")


def read_stream_events(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    until: Callable[[JsonObject], bool],
    on_open: Callable[[], object] = lambda: None,
) -> list[dict[str, str]]:
    """Open the GET stream and collect events up to the first message matching `until`;
    `on_open` runs once the first event (the stream's priming event) has arrived."""
    events: list[dict[str, str]] = []
    block: list[str] = []
    with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line:
                block.append(line)
                continue
            parsed = parse_sse("\n".join(block))
            block = []
            if not events and parsed:
                on_open()
            events.extend(parsed)
            if any(e.get("data") and until(json.loads(e["data"])) for e in parsed):
                return events
    pytest.fail(f"stream ended before the expected event; got {events}")


@pytest.fixture
def launch() -> Iterator[Callable[..., str]]:
    """Start HTTP servers for a test; each is stopped (terminate, then kill) afterwards."""
    procs: list[ReferenceServerProcess] = []

    def _launch(*args: str) -> str:
        url, proc = start_reference_server(*args)
        procs.append(proc)
        return url

    yield _launch
    for proc in procs:
        stop_process(proc)


@pytest.fixture
def peers() -> Iterator[Callable[..., Peer]]:
    made: list[Peer] = []

    def _peer(url: str, **client_args: Any) -> Peer:
        peer = Peer(url, **client_args)
        made.append(peer)
        return peer

    yield _peer
    for peer in made:
        peer.client.close()


def write_tasks_file(tmp_path: Path, tasks: list[JsonObject]) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return str(path)


# -- handshake, answer modes, sessions ------------------------------------------------------


def test_initialize_over_sse_with_priming_and_log_event(
    launch: Callable[..., str], peers: Callable[..., Peer]
) -> None:
    url = launch("--server-name", "fixture-server")
    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/mcp")
    peer = peers(url)
    response = peer.post(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "x"}}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    session_id = response.headers["mcp-session-id"]
    assert session_id
    assert all(0x21 <= ord(c) <= 0x7E for c in session_id)
    events = parse_sse(response.text)
    assert "id" in events[0]
    assert events[0].get("data", "") == ""
    assert len({event["id"] for event in events}) == len(events)
    messages = [json.loads(e["data"]) for e in events if e.get("data")]
    assert messages[0]["method"] == "notifications/message"
    assert messages[-1]["id"] == 1
    result = messages[-1]["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "fixture-server"
    assert set(result["capabilities"]["tasks"]) == {"list", "cancel", "requests"}


def test_json_answer_mode(launch: Callable[..., str], peers: Callable[..., Peer]) -> None:
    peer = peers(launch("--answer", "json", "--seed", "working=2"))
    peer.initialize()
    response = peer.post({"jsonrpc": "2.0", "id": 7, "method": "tasks/list"})
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["id"] == 7
    assert [t["taskId"] for t in body["result"]["tasks"]] == ["working-001", "working-002"]


def test_notifications_get_202_without_body(
    launch: Callable[..., str], peers: Callable[..., Peer]
) -> None:
    peer = peers(launch())
    peer.initialize()
    response = peer.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert response.status_code == 202
    assert response.content == b""
    client_response = peer.post({"jsonrpc": "2.0", "id": 99, "result": {}})
    assert client_response.status_code == 202


def test_session_header_rules_and_delete(
    launch: Callable[..., str], peers: Callable[..., Peer]
) -> None:
    url = launch("--seed", "working=1")
    peer = peers(url)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    missing = peer.post(ping)
    assert missing.status_code == 400
    assert "id" not in missing.json()  # no request id known: left out (the schema has no null)
    assert "error" in missing.json()
    unknown = peer.post(ping, headers={"Mcp-Session-Id": "no-such-session"})
    assert unknown.status_code == 404
    peer.initialize()
    assert peer.result("ping") == {}
    bad_version = peer.post(ping, headers={"MCP-Protocol-Version": "1999-01-01"})
    assert bad_version.status_code == 400
    assert peer.session_id is not None
    deleted = peer.client.delete(url, headers={"Mcp-Session-Id": peer.session_id})
    assert deleted.status_code == 200
    assert peer.post(ping).status_code == 404
    again = peer.client.delete(url, headers={"Mcp-Session-Id": peer.session_id})
    assert again.status_code == 404


def test_http_layer_errors(launch: Callable[..., str], peers: Callable[..., Peer]) -> None:
    url = launch()
    peer = peers(url)
    peer.initialize()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    wrong_type = peer.post(ping, headers={"Content-Type": "text/plain"})
    assert wrong_type.status_code == 415
    assert wrong_type.json()["error"]["code"] < 0
    assert peer.post(ping, headers={"Accept": "application/json"}).status_code == 406
    assert peer.post(ping, headers={"Accept": "text/event-stream"}).status_code == 406
    assert peer.post(ping, headers={"Origin": "http://evil.example"}).status_code == 403
    assert peer.post(ping, headers={"Origin": "http://localhost:5173"}).status_code == 200
    assert peer.post([ping]).status_code == 400
    assert peer.post({"hello": "world"}).status_code == 400
    session = {"Mcp-Session-Id": peer.session_id or ""}
    parse_error = peer.client.post(url, content=b"{nope", headers={**POST_HEADERS, **session})
    assert parse_error.status_code == 400
    assert parse_error.json()["error"]["code"] == -32700
    other_path = peer.client.post(url.replace("/mcp", "/other"), json=ping, headers=POST_HEADERS)
    assert other_path.status_code == 404
    assert peer.client.put(url, content=b"{}").status_code == 405
    assert peer.request("no/such/method")["error"]["code"] == -32601


def test_bearer_token_401_and_403(launch: Callable[..., str], peers: Callable[..., Peer]) -> None:
    url = launch("--require-token", "good", "--forbid-token", "weak")
    anonymous = peers(url)
    response = anonymous.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        'Bearer realm="mcptask-reference", error="invalid_token"'
    )
    assert "id" not in response.json()
    weak = peers(url, headers={"Authorization": "Bearer weak"})
    forbidden = weak.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert forbidden.status_code == 403
    assert forbidden.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", scope="tasks"'
    )
    good = peers(url, headers={"Authorization": "Bearer good"})
    assert good.initialize()["protocolVersion"] == "2025-11-25"
    assert good.result("ping") == {}
    assert anonymous.client.get(url, headers={"Accept": "text/event-stream"}).status_code == 401


def test_keep_alive_serves_many_requests_on_one_connection(launch: Callable[..., str]) -> None:
    url = launch("--seed", "working=3", "--answer", "json")
    parts = urlsplit(url)
    assert parts.hostname is not None
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        conn.request("POST", parts.path, json.dumps(init), POST_HEADERS)
        response = conn.getresponse()
        session_id = response.getheader("Mcp-Session-Id")
        response.read()
        assert session_id
        assert not response.will_close
        sock = conn.sock
        headers = {**POST_HEADERS, "Mcp-Session-Id": session_id}
        for number in range(1, 101):
            message = {"jsonrpc": "2.0", "id": number, "method": "tasks/get"}
            message["params"] = {"taskId": "working-002"}
            conn.request("POST", parts.path, json.dumps(message), headers)
            response = conn.getresponse()
            body = json.loads(response.read())
            assert body["id"] == number
            assert body["result"]["taskId"] == "working-002"
            assert not response.will_close
            assert conn.sock is sock, "the server closed the kept-alive connection"
    finally:
        conn.close()


def test_drop_session_after_n_requests(
    launch: Callable[..., str], peers: Callable[..., Peer]
) -> None:
    peer = peers(launch("--drop-session-after", "3"))
    peer.initialize()  # requests 1 (initialize) and 2 (notifications/initialized)
    assert peer.result("ping") == {}  # request 3: answered, then the session is forgotten
    assert peer.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}).status_code == 404
    peer.initialize()
    assert peer.result("ping") == {}


def test_session_scope_over_http(launch: Callable[..., str], peers: Callable[..., Peer]) -> None:
    url = launch("--scope", "session", "--seed", "completed=1")
    alice, bob = peers(url), peers(url)
    alice.initialize()
    bob.initialize()
    created = alice.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 60000}}
    )
    task_id = created["task"]["taskId"]
    assert [t["taskId"] for t in alice.result("tasks/list")["tasks"]] == ["completed-001", task_id]
    assert [t["taskId"] for t in bob.result("tasks/list")["tasks"]] == ["completed-001"]
    error = bob.request("tasks/cancel", {"taskId": task_id})["error"]
    assert error == {"code": -32602, "message": f"Task not found: {task_id}"}
    assert alice.result("tasks/cancel", {"taskId": task_id})["status"] == "cancelled"


# -- faults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("not-json", lambda r: r.content == b"this is not json"),
        ("not-jsonrpc", lambda r: r.json() == {"hello": "world"}),
        ("wrong-content-type", lambda r: r.headers["content-type"].startswith("text/html")),
        ("wrong-id", lambda r: [m.get("id") for m in messages_of(r) if "result" in m] == [1000007]),
    ],
)
def test_faults_break_only_task_answers(
    launch: Callable[..., str],
    peers: Callable[..., Peer],
    fault: str,
    check: Callable[[httpx.Response], bool],
) -> None:
    peer = peers(launch("--fault", fault, "--seed", "working=1"))
    assert peer.initialize()["protocolVersion"] == "2025-11-25"
    assert peer.result("ping") == {}
    response = peer.post({"jsonrpc": "2.0", "id": 7, "method": "tasks/list"})
    assert response.status_code == 200
    assert check(response), response.text


def test_fault_drop_closes_connection_without_answer(
    launch: Callable[..., str], peers: Callable[..., Peer]
) -> None:
    peer = peers(launch("--fault", "drop", "--seed", "working=1"))
    peer.initialize()
    with pytest.raises(httpx.RemoteProtocolError):
        peer.post({"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"taskId": "x"}})
    assert peer.result("ping") == {}  # the server itself is fine


# -- GET stream ---------------------------------------------------------------------------


def test_get_stream_delivers_status_notifications_and_resumes(
    launch: Callable[..., str], peers: Callable[..., Peer]
) -> None:
    url = launch()
    peer = peers(url)
    peer.initialize()
    assert peer.session_id is not None
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": peer.session_id}
    created: list[str] = []

    def start_job() -> None:
        # Started once the stream is open, so that its two changes cannot come before it.
        steps = [[0.2, "input_required", "q"], [0.2, "completed", "ok"]]
        arguments = {"steps": steps}
        call = peer.result("tools/call", {"name": "long_job", "arguments": arguments, "task": {}})
        created.append(call["task"]["taskId"])

    def is_completed(message: JsonObject) -> bool:
        return bool(message.get("params", {}).get("status") == "completed")

    events = read_stream_events(peer.client, url, headers, is_completed, start_job)
    assert "id" in events[0]
    assert events[0].get("data", "") == ""
    notes = [json.loads(e["data"]) for e in events if e.get("data")]
    assert [n["method"] for n in notes] == ["notifications/tasks/status"] * 2
    assert [(n["params"]["taskId"], n["params"]["status"]) for n in notes] == [
        (created[0], "input_required"),
        (created[0], "completed"),
    ]
    assert "createdAt" in notes[1]["params"]
    assert "pollInterval" in notes[1]["params"]
    ids = [e["id"] for e in events if e.get("data")]
    assert len(set(ids)) == 2

    # Resume after the first status event: only the second one is replayed.
    resumed = read_stream_events(
        peer.client, url, {**headers, "Last-Event-ID": ids[0]}, is_completed
    )
    replayed = [e for e in resumed if e.get("data")]
    assert [e["id"] for e in replayed] == [ids[1]]


def test_no_get_stream_answers_405(launch: Callable[..., str], peers: Callable[..., Peer]) -> None:
    url = launch("--no-get-stream")
    peer = peers(url)
    peer.initialize()
    response = peer.client.get(
        url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": peer.session_id or ""}
    )
    assert response.status_code == 405


# -- process life cycle -------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_exit_cleanly(signum: int) -> None:
    url, proc = start_reference_server("--seed", "working=1")
    try:
        assert httpx.get(url, timeout=TIMEOUT).status_code == 406  # alive; GET needs SSE Accept
        proc.send_signal(signum)
        assert proc.wait(timeout=10) == 0
        assert "Traceback" not in proc.stderr_text()
    finally:
        stop_process(proc)


def test_bad_seed_exits_2_with_one_line() -> None:
    done = subprocess.run(
        reference_server_argv("--seed", "working=lots"),
        capture_output=True,
        env=reference_server_env(),
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1
    assert "--seed" in lines[0]


# -- stdio --------------------------------------------------------------------------------


class StdioPeer:
    """Talks to a --stdio server: lines in, lines out (read by a thread into a queue)."""

    def __init__(self, proc: ReferenceServerProcess) -> None:
        self.proc = proc
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.seen: list[JsonObject] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in iter(self.proc.stdout.readline, b""):
                self.lines.put(line)

    def send(self, message: JsonObject) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def next_line(self) -> bytes:
        try:
            return self.lines.get(timeout=DEADLINE)
        except queue.Empty:
            pytest.fail(f"no output from the stdio server; stderr: {self.proc.stderr_text()}")

    def answer(self, msg_id: int) -> JsonObject:
        while True:
            message: JsonObject = json.loads(self.next_line())
            self.seen.append(message)
            if message.get("id") == msg_id and "method" not in message:
                return message


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


def test_stdio_session_list_cancel_notify_and_eof(stdio: Callable[..., StdioPeer]) -> None:
    peer = stdio("--seed", "working=2,completed=1")
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert peer.answer(1)["result"]["protocolVersion"] == "2025-11-25"
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"})
    tasks = peer.answer(2)["result"]["tasks"]
    assert [t["taskId"] for t in tasks] == ["working-001", "working-002", "completed-001"]
    peer.send(
        {"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"taskId": "working-002"}}
    )
    assert peer.answer(3)["result"]["status"] == "cancelled"
    peer.send(
        {"jsonrpc": "2.0", "id": 4, "method": "tasks/cancel", "params": {"taskId": "completed-001"}}
    )
    assert peer.answer(4)["error"]["code"] == -32602
    notes = [m for m in peer.seen if m.get("method") == "notifications/tasks/status"]
    assert [(n["params"]["taskId"], n["params"]["status"]) for n in notes] == [
        ("working-002", "cancelled")
    ]
    assert peer.proc.stdin is not None
    peer.proc.stdin.close()
    assert peer.proc.wait(timeout=10) == 0


def test_stdio_parse_error_and_blocking_result_does_not_stall(
    stdio: Callable[..., StdioPeer],
) -> None:
    peer = stdio("--seed", "working=1")
    assert peer.proc.stdin is not None
    peer.proc.stdin.write(b"{not json\n")
    peer.proc.stdin.flush()
    error = json.loads(peer.next_line())
    assert "id" not in error
    assert error["error"]["code"] == -32700
    peer.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/result", "params": {"taskId": "working-001"}}
    )
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert peer.answer(2)["result"] == {}  # answered while tasks/result still waits
    assert all(m.get("id") != 1 for m in peer.seen)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [("not-json", b"this is not json\n"), ("not-jsonrpc", b'{"hello": "world"}\n')],
)
def test_stdio_faults(stdio: Callable[..., StdioPeer], fault: str, expected: bytes) -> None:
    peer = stdio("--fault", fault, "--seed", "working=1")
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert peer.answer(1)["result"] == {}
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"})
    assert peer.next_line() == expected


def test_stdio_wrong_id_and_drop(stdio: Callable[..., StdioPeer]) -> None:
    wrong = stdio("--fault", "wrong-id", "--seed", "working=1")
    wrong.send(
        {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "working-001"}}
    )
    assert json.loads(wrong.next_line())["id"] == 1000002
    dropped = stdio("--fault", "drop", "--seed", "working=1")
    dropped.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert dropped.answer(1)["result"] == {}
    dropped.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"})
    assert dropped.proc.wait(timeout=10) != 0
    assert dropped.lines.empty()
