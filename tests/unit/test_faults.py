"""How the HTTP transport classifies failures, the bounds on what it reads, and how it resumes
SSE answers (httpx.MockTransport); the client's retries are in tests/unit/client/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from mcptask.errors import (
    AnswerLost,
    GatewayFailure,
    NotDelivered,
    ProtocolViolation,
    ServerBusy,
    TransientError,
)
from mcptask.protocol.jsonrpc import request_message
from mcptask.transport.http_errors import parse_retry_after
from mcptask.transport.limits import ENV_MAX_ANSWER_BYTES
from tests.unit.mock_http import Handler, transport_for

# -- classification at the boundary ------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "kind", "fragment"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), NotDelivered, "Connection refused"),
        (httpx.ConnectTimeout("slow"), NotDelivered, "connect timeout"),
        (httpx.ReadTimeout("slow"), AnswerLost, "read timeout"),
        (httpx.RemoteProtocolError("gone"), AnswerLost, "closed the connection"),
        (httpx.ReadError("reset"), AnswerLost, "cannot talk to"),
    ],
)
def test_transport_failures_say_what_became_of_the_request(
    failure: Exception, kind: type[TransientError], fragment: str
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise failure

    with pytest.raises(kind, match=fragment):
        transport_for(handler).request(request_message(1, "tasks/get", {}))


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, ServerBusy), (503, ServerBusy), (502, GatewayFailure), (504, GatewayFailure)],
)
def test_busy_and_gateway_statuses_are_transient(status: int, kind: type[TransientError]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        # Even with a JSON-RPC body: the status says the request was not (surely) handled.
        error = {"jsonrpc": "2.0", "error": {"code": -32000, "message": "busy"}}
        return httpx.Response(status, json=error, headers={"Retry-After": "7"})

    with pytest.raises(kind, match=f"HTTP {status}") as caught:
        transport_for(handler).request(request_message(1, "tasks/get", {}))
    assert caught.value.retry_after == 7.0


def test_retry_after_takes_seconds_or_an_http_date() -> None:
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(later, now=now.timestamp()) == pytest.approx(90.0)
    assert (
        parse_retry_after(
            format_datetime(now - timedelta(seconds=5), usegmt=True), now=now.timestamp()
        )
        == 0.0
    )
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


# -- bounds ------------------------------------------------------------------------------------


def test_an_answer_over_the_bound_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_ANSWER_BYTES, "2048")
    big = b'{"jsonrpc":"2.0","id":1,"result":{"pad":"' + b"x" * 5000 + b'"}}'

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 512):
            yield big[start : start + 512]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "application/json"}, content=chunks())

    with pytest.raises(ProtocolViolation, match="larger than 2048 bytes"):
        transport_for(handler).request(request_message(1, "tasks/get", {}))

    def declared(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "application/json"}, content=big)

    with pytest.raises(ProtocolViolation, match="larger than 2048 bytes"):
        transport_for(declared).request(request_message(1, "tasks/get", {}))


def test_an_sse_answer_over_the_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_ANSWER_BYTES, "4096")
    event = "data: " + json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"p": "x" * 3000}})

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, content=(event + "\n\n") * 3
        )

    with pytest.raises(ProtocolViolation, match="larger than 4096 bytes"):
        transport_for(handler).request(request_message(1, "tasks/get", {}))


def test_an_answer_nested_too_deeply_is_refused() -> None:
    deep = '{"jsonrpc":"2.0","id":1,"result":{"a":' + "[" * 200 + "]" * 200 + "}}"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "application/json"}, content=deep)

    with pytest.raises(ProtocolViolation, match="nested deeper than 128 levels"):
        transport_for(handler).request(request_message(1, "tasks/get", {}))


# -- resumable SSE answers ---------------------------------------------------------------------


def cut_stream(retry_ms: int, seen: list[httpx.Request] | None = None) -> Handler:
    """A server whose POST answer stream ends after its priming event (`retry:` given); the
    resuming GET, after `Last-Event-ID: s-0`, brings the response."""
    response = {"jsonrpc": "2.0", "id": 1, "result": {"taskId": "t", "status": "working"}}

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        headers = {"Content-Type": "text/event-stream"}
        if request.method == "POST":
            primed = f"id: s-0\nretry: {retry_ms}\ndata:\n\n"
            return httpx.Response(200, headers=headers, content=primed)
        assert request.headers["Last-Event-ID"] == "s-0"
        return httpx.Response(
            200, headers=headers, content=f"id: s-1\ndata: {json.dumps(response)}\n\n"
        )

    return handler


def test_an_sse_answer_cut_short_is_resumed_with_last_event_id() -> None:
    seen: list[httpx.Request] = []
    waits: list[float] = []
    transport = transport_for(cut_stream(250, seen), sleep=waits.append)
    transport.session_id = "sess"
    assert transport.request(request_message(1, "tasks/get", {}))["result"]["taskId"] == "t"
    assert [request.method for request in seen] == ["POST", "GET"]
    assert seen[1].headers["Mcp-Session-Id"] == "sess"
    assert waits == [0.25]


def test_a_request_in_another_session_is_resumed_in_that_session() -> None:
    seen: list[httpx.Request] = []
    transport = transport_for(cut_stream(0, seen), sleep=lambda seconds: None)
    transport.session_id = "ours"
    message = request_message(1, "tasks/get", {"taskId": "t"})
    assert transport.request(message, session="the-tasks")["result"]["taskId"] == "t"
    assert [r.headers["Mcp-Session-Id"] for r in seen] == ["the-tasks", "the-tasks"]


def test_a_retry_of_zero_resumes_at_once() -> None:
    waits: list[float] = []
    transport = transport_for(cut_stream(0), sleep=waits.append)
    assert transport.request(request_message(1, "tasks/get", {}))["result"]["taskId"] == "t"
    assert waits == [0.0]


def test_an_sse_answer_broken_off_after_an_event_id_is_resumed() -> None:
    """A connection closed mid-stream (not a clean end) after the priming event: resumed as
    a stream that ended early, not taken for a lost answer (which a cancel would resend)."""
    seen: list[httpx.Request] = []
    resume = cut_stream(0, seen)

    def broken_off() -> Iterator[bytes]:
        yield b"id: s-0\nretry: 0\ndata:\n\n"
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            seen.append(request)
            headers = {"Content-Type": "text/event-stream"}
            return httpx.Response(200, headers=headers, content=broken_off())
        return resume(request)

    transport = transport_for(handler, sleep=lambda seconds: None)
    assert transport.request(request_message(1, "tasks/get", {}))["result"]["taskId"] == "t"
    assert [request.method for request in seen] == ["POST", "GET"]


def test_an_sse_answer_cut_short_without_an_event_id_is_a_lost_answer() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, content="data:\n\n"
        )

    with pytest.raises(AnswerLost, match="closed its event stream before answering"):
        transport_for(handler).request(request_message(1, "tasks/get", {}))


def test_resuming_is_bounded() -> None:
    gets: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            gets.append(request.headers["Last-Event-ID"])
        return httpx.Response(
            200,
            headers={"Content-Type": "text/event-stream"},
            content=f"id: e{len(gets)}\ndata:\n\n",
        )

    transport = transport_for(handler, sleep=lambda seconds: None)
    with pytest.raises(AnswerLost, match="resumed 5 times"):
        transport.request(request_message(1, "tasks/get", {}))
    assert gets == ["e0", "e1", "e2", "e3", "e4"]


def test_an_event_id_that_cannot_travel_in_a_header_makes_the_stream_unresumable() -> None:
    # Found by tests/unit/test_fuzz.py (deep profile): resuming with this id crashed.
    methods: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        methods.append(request.method)
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, content=b"id:\x80\ndata:\n\n"
        )

    with pytest.raises(AnswerLost, match=r"closed its event stream before answering$"):
        transport_for(handler, sleep=lambda seconds: None).request(
            request_message(1, "tasks/get", {})
        )
    assert methods == ["POST"]
