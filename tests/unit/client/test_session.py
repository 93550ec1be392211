"""The client against an in-process fake server: the handshake in either era, the capability
gate, joined sessions."""

from __future__ import annotations

import pytest

from mcptask.client.session import McpClient
from mcptask.errors import ResponseTimeout, UnsupportedError
from mcptask.operations.listing import collect_tasks
from mcptask.protocol.jsonrpc import JsonObject
from tests.unit.fake_server import FakeServer, raise_error


def connected(server: FakeServer) -> McpClient:
    client = McpClient(server)
    client.connect()
    return client


def test_handshake_sends_initialized_and_reads_support() -> None:
    server = FakeServer(capabilities={"tasks": {"list": {}}})
    client = connected(server)
    # auto: the modern probe first, then the legacy handshake it falls back to
    assert server.calls == ["server/discover", "initialize", "notifications/initialized"]
    assert client.server.task_support.list
    assert not client.server.task_support.cancel


def test_gate_sends_nothing_and_names_what_is_offered() -> None:
    server = FakeServer(capabilities={"tasks": {"list": {}}})
    client = connected(server)
    with pytest.raises(UnsupportedError, match=r"tasks/cancel .*offers: get, list"):
        client.cancel_task("x")
    assert "tasks/cancel" not in server.calls


def test_no_tasks_capability_at_all() -> None:
    client = connected(FakeServer(capabilities={}))
    with pytest.raises(UnsupportedError, match="offers no tasks"):
        client.get_task("x")


def test_method_not_found_on_a_task_method_is_unsupported() -> None:
    server = FakeServer()
    server.add("a", "working")
    server.on_cancel["a"] = raise_error(-32601, "Method not found")
    with pytest.raises(UnsupportedError, match=r"does not support tasks/cancel \(-32601"):
        connected(server).cancel_task("a")


def test_modern_server_is_discovered_and_every_request_carries_meta_and_headers() -> None:
    server = FakeServer(modern=True)
    server.add("t 1", "working")
    client = connected(server)
    assert client.server.era == "modern"
    assert client.server.extensions == ("io.modelcontextprotocol/tasks",)
    assert client.get_task("t 1").status == "working"
    assert server.calls == ["server/discover", "tasks/get"]
    assert server.headers[-1] == {"Mcp-Method": "tasks/get", "Mcp-Name": "t 1"}


def test_modern_has_no_list_and_says_what_to_do_instead() -> None:
    client = connected(FakeServer(modern=True))
    with pytest.raises(UnsupportedError, match=r"no tasks/list.*--from-file"):
        collect_tasks(client)


def test_pinned_legacy_protocol_skips_discovery() -> None:
    server = FakeServer()
    McpClient(server, protocol="2025-11-25").connect()
    assert server.calls[0] == "initialize"


def test_pinned_modern_protocol_does_not_fall_back() -> None:
    with pytest.raises(UnsupportedError, match="does not speak 2026-07-28"):
        McpClient(FakeServer(), protocol="2026-07-28").connect()


def test_requests_in_a_joined_session_use_ids_of_their_own() -> None:
    import json

    import httpx

    from mcptask.transport.http import HttpTransport

    seen: list[tuple[str | None, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        body = json.loads(request.content)
        seen.append((request.headers.get("Mcp-Session-Id"), body.get("id")))
        if body.get("method") == "server/discover":
            return httpx.Response(
                400,
                json={
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32600, "message": "no session"},
                },
            )
        if "id" not in body:
            return httpx.Response(202)
        result: dict[str, object] = {"taskId": "t", "status": "working"}
        if body["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {}},
                "serverInfo": {"name": "s", "version": "1"},
            }
        return httpx.Response(
            200,
            json={"jsonrpc": "2.0", "id": body["id"], "result": result},
            headers={"Mcp-Session-Id": "ours"},
        )

    transport = HttpTransport("https://server.test/mcp", transport=httpx.MockTransport(handler))
    client = McpClient(transport)
    client.connect(join_session="theirs")
    client.get_task("t")
    session, request_id = seen[-1]
    assert session == "theirs"
    assert isinstance(request_id, str)
    assert request_id.startswith("mcptask-")


class StdioFake(FakeServer):
    """A stdio server that ignores the discover probe (some legacy servers do), recording
    how long the client waited for it."""

    kind = "stdio"

    def __init__(self, timeout: float) -> None:
        super().__init__()
        self.timeout = timeout
        self.probe_timeouts: list[float | None] = []

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        if message.get("method") == "server/discover":
            self.probe_timeouts.append(timeout)
            raise ResponseTimeout("the server did not answer server/discover")
        return super().request(message, timeout=timeout, headers=headers, session=session)


@pytest.mark.parametrize(("timeout", "probe"), [(30.0, 5.0), (1.5, 1.5)])
def test_the_stdio_discover_probe_waits_5s_or_a_shorter_timeout(
    timeout: float, probe: float
) -> None:
    server = StdioFake(timeout)
    assert connected(server).server.era == "legacy"
    assert server.probe_timeouts == [probe]  # asked once: its silence is the answer
