"""The Streamable HTTP transport against scripted answers (httpx.MockTransport)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from mcptask.errors import (
    AuthError,
    ProtocolViolation,
    SessionExpired,
    UnreachableError,
    UsageError,
)
from mcptask.protocol.jsonrpc import JsonObject, request_message
from mcptask.transport.http import HttpTransport

URL = "https://server.test/mcp"
Handler = Callable[[httpx.Request], httpx.Response]


def transport_for(handler: Handler, **kwargs: object) -> HttpTransport:
    return HttpTransport(URL, transport=httpx.MockTransport(handler), **kwargs)  # type: ignore[arg-type]


def sse(*events: str) -> httpx.Response:
    body = "".join(f"{event}\n\n" for event in events)
    return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=body)


def answer(request: httpx.Request, result: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": json.loads(request.content)["id"], "result": result}


def test_json_answer_and_required_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answer(request, {"ok": True}))

    transport = transport_for(handler)
    transport.protocol_version = "2025-11-25"
    transport.session_id = "s-1"
    response = transport.request(request_message(7, "ping", None))
    assert response["result"] == {"ok": True}
    headers = seen[0].headers
    assert "application/json" in headers["Accept"]
    assert "text/event-stream" in headers["Accept"]
    assert headers["Content-Type"] == "application/json"
    assert headers["Mcp-Session-Id"] == "s-1"
    assert headers["MCP-Protocol-Version"] == "2025-11-25"


def test_sse_answer_skips_priming_and_routes_notifications() -> None:
    notifications: list[JsonObject] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request_id = json.loads(request.content)["id"]
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
        reply = {"jsonrpc": "2.0", "id": request_id, "result": {"tasks": []}}
        return sse(
            "id: 1\ndata:",
            f"event: message\ndata: {json.dumps(note)}",
            f"id: 3\ndata: {json.dumps(reply)}",
        )

    transport = transport_for(handler)
    transport.set_notification_handler(notifications.append)
    response = transport.request(request_message(3, "tasks/list", {}))
    assert response["result"] == {"tasks": []}
    assert [note["method"] for note in notifications] == ["notifications/message"]


def test_initialize_keeps_the_session_id_and_delete_only_when_created() -> None:
    methods: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        methods.append(request.method)
        if request.method == "DELETE":
            return httpx.Response(200)
        return httpx.Response(200, json=answer(request, {}), headers={"Mcp-Session-Id": "abc"})

    transport = transport_for(handler)
    transport.request(request_message(1, "initialize", {}))
    assert transport.session_id == "abc"
    transport.close()
    assert methods == ["POST", "DELETE"]

    methods.clear()
    joined = transport_for(handler)
    joined.join_session("theirs")
    joined.close()
    assert methods == []


def test_a_kept_session_is_not_deleted_and_one_request_can_go_in_another() -> None:
    seen: list[tuple[str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        session = request.headers.get("Mcp-Session-Id")
        seen.append((request.method, session))
        if session == "ended":
            return httpx.Response(404)
        return httpx.Response(200, json=answer(request, {}), headers={"Mcp-Session-Id": "own"})

    transport = transport_for(handler)
    transport.request(request_message(1, "initialize", {}))
    transport.request(request_message(2, "tasks/get", {}), session="recorded")
    assert seen[-1] == ("POST", "recorded")
    assert transport.session_id == "own"  # one request only: the current session stays
    with pytest.raises(SessionExpired, match="ended"):
        transport.request(request_message(3, "tasks/get", {}), session="ended")
    transport.keep_session()
    transport.close()
    assert [method for method, _ in seen] == ["POST", "POST", "POST"]  # no DELETE


def test_unauthorized_shows_the_challenge() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, headers={"WWW-Authenticate": 'Bearer realm="x"'})

    with pytest.raises(AuthError, match='challenge: Bearer realm="x"'):
        transport_for(handler).request(request_message(1, "initialize", {}))


def test_404_with_a_session_means_session_expired() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404)

    transport = transport_for(handler)
    transport.session_id = "old"
    with pytest.raises(SessionExpired, match="old"):
        transport.request(request_message(1, "tasks/list", {}))


def test_jsonrpc_error_on_http_error_status_becomes_the_answer() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32600, "message": "no"}}
        return httpx.Response(400, json=body)

    response = transport_for(handler).request(request_message(5, "tasks/get", {}))
    assert response["id"] == 5
    assert response["error"]["code"] == -32600


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (
            httpx.Response(200, headers={"Content-Type": "application/json"}, content=b"nope"),
            "not valid JSON",
        ),
        (httpx.Response(200, json={"hello": "world"}), "not a JSON-RPC 2.0 message"),
        (
            httpx.Response(200, headers={"Content-Type": "text/html"}, content=b"<html>"),
            "content type 'text/html'",
        ),
        (httpx.Response(200, json={"jsonrpc": "2.0", "id": 999, "result": {}}), "with the id 999"),
        (httpx.Response(202), "202 Accepted"),
        (httpx.Response(500, content=b"boom"), "HTTP 500"),
    ],
)
def test_protocol_violations(response: httpx.Response, message: str) -> None:
    transport = transport_for(lambda request: response)
    with pytest.raises(ProtocolViolation, match=message):
        transport.request(request_message(1, "tasks/get", {}))


def test_stream_that_ends_without_an_answer_is_unreachable() -> None:
    waits: list[float] = []  # the waits before each resume, not slept
    transport = transport_for(lambda request: sse("id: 1\ndata:"), sleep=waits.append)
    with pytest.raises(UnreachableError, match="before answering"):
        transport.request(request_message(1, "tasks/get", {}))


def test_connection_refused_is_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(UnreachableError, match=r"cannot connect to .*: Connection refused"):
        transport_for(handler).request(request_message(1, "initialize", {}))


def test_timeout_is_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out")

    with pytest.raises(UnreachableError, match="read timeout"):
        transport_for(handler).request(request_message(1, "initialize", {}))


def test_notification_accepts_202() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(202)

    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    transport_for(handler).notify(notification)
    assert [request.method for request in sent] == ["POST"]
    assert json.loads(sent[0].content) == notification


def test_notification_refused_with_a_jsonrpc_error_is_a_protocol_violation() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            400, json={"jsonrpc": "2.0", "error": {"code": -32600, "message": "no"}}
        )

    with pytest.raises(ProtocolViolation, match="rejected notifications/initialized: no"):
        transport_for(handler).notify({"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_wire_log_redacts_credentials() -> None:
    lines: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=answer(request, {}))

    transport = HttpTransport(
        "http://user:pw@server.test/mcp?token=abc",
        transport=httpx.MockTransport(handler),
        headers={"Authorization": "Bearer s3cret", "X-Api-Key": "k3y"},
        log=lines.append,
    )
    transport.request(request_message(1, "ping", None))
    text = "\n".join(lines) + transport.target
    assert lines
    for secret in ("s3cret", "k3y", "pw", "token=abc"):
        assert secret not in text


def test_bad_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"invalid server URL .*expected http\(s\)://HOST/PATH"):
        HttpTransport("ftp://server.test/mcp")


class _TrackingStream(httpx.SyncByteStream):
    """A response body that remembers whether it was read to the end."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.finished = False

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        self.finished = True


def test_bounded_sse_answer_is_read_to_the_end_so_the_connection_is_reused() -> None:
    reply = {"jsonrpc": "2.0", "id": 1, "result": {}}
    chunks = [b"id: 1\ndata:\n\n", f"data: {json.dumps(reply)}\n\n".encode(), b": bye\n\n"]
    stream = _TrackingStream(chunks)
    length = str(sum(len(chunk) for chunk in chunks))

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"Content-Type": "text/event-stream", "Content-Length": length}
        return httpx.Response(200, headers=headers, stream=stream)

    assert transport_for(handler).request(request_message(1, "ping", None))["result"] == {}
    assert stream.finished


def test_server_commands_are_shown_without_credentials() -> None:
    from mcptask.transport.redact import display_command

    shown = display_command(
        ["srv", "--token", "t0p", "--api-key=k3y", "AUTH_TOKEN=s3c", "--port", "80"]
    )
    assert "t0p" not in shown
    assert "k3y" not in shown
    assert "s3c" not in shown
    assert "--port 80" in shown


def test_a_body_its_content_encoding_does_not_describe_breaks_the_protocol() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
            content=b"not gzip at all",
        )

    with pytest.raises(ProtocolViolation, match="Content-Encoding does not describe"):
        transport_for(handler).request(request_message(1, "ping", None))


def test_a_session_id_that_cannot_go_back_in_a_header_is_a_protocol_violation() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json=answer(request, {}), headers=[(b"Mcp-Session-Id", "s\u00e9".encode())]
        )

    transport = transport_for(handler)
    with pytest.raises(ProtocolViolation, match="Mcp-Session-Id is not visible ASCII"):
        transport.request(request_message(1, "initialize", {}))
    assert transport.session_id is None
