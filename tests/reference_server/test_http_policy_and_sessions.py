"""The pieces of the Streamable HTTP transport that need no socket: the request policy
(Origin, bearer token, Accept, 2026-07-28 headers) and the sessions' event buffers."""

from __future__ import annotations

import base64
from typing import Any

from mcptask.reference_server.http.policy import (
    accepted_types,
    auth_failure,
    decode_header_value,
    modern_header_problem,
    origin_allowed,
)
from mcptask.reference_server.http.sessions import POST_STREAM_LIMIT, Session
from tests.reference_server.harness import DEADLINE, VERSION, JsonObject, in_thread


def test_origin_policy() -> None:
    for good in (
        "http://localhost",
        "http://localhost:3000",
        "http://127.0.0.1:9",
        "http://[::1]:80",
    ):
        assert origin_allowed(good), good
    for bad in (
        "http://evil.example",
        "https://localhost",
        "http://localhost.evil.example",
        "null",
        "http://127.0.0.1:notaport",
    ):
        assert not origin_allowed(bad), bad


def test_auth_policy() -> None:
    assert auth_failure(None, None, None) is None
    missing = auth_failure(None, "secret", None)
    assert missing is not None
    assert missing.status == 401
    assert 'error="invalid_token"' in missing.challenge
    assert auth_failure("Bearer secret", "secret", None) is None
    wrong = auth_failure("Bearer nope", "secret", None)
    assert wrong is not None
    assert wrong.status == 401
    forbidden = auth_failure("Bearer weak", "secret", "weak")
    assert forbidden is not None
    assert forbidden.status == 403
    assert 'error="insufficient_scope"' in forbidden.challenge
    assert accepted_types("application/json; q=1, Text/Event-Stream") == {
        "application/json",
        "text/event-stream",
    }


def sentinel(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def test_decode_header_value() -> None:
    assert decode_header_value("plain-id") == "plain-id"
    assert decode_header_value(sentinel("tâche ✓")) == "tâche ✓"
    assert decode_header_value(sentinel("=?base64?literal?=")) == "=?base64?literal?="
    assert decode_header_value("=?base64?not base64!?=") is None
    assert decode_header_value("=?base64?" + base64.b64encode(b"\xff").decode() + "?=") is None


def test_modern_header_problem() -> None:
    good = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "tasks/get", "Mcp-Name": "t1"}

    def check(headers: dict[str, str], method: str = "tasks/get", **params: Any) -> str | None:
        body: JsonObject = params or {"taskId": "t1"}
        return modern_header_problem(headers.get, method, VERSION, body)

    assert check(good) is None
    assert check({**good, "Mcp-Name": sentinel("t1")}) is None
    assert "missing MCP-Protocol-Version" in str(check({"Mcp-Method": "tasks/get"}))
    assert "MCP-Protocol-Version" in str(check({**good, "MCP-Protocol-Version": "2025-11-25"}))
    assert "Mcp-Method" in str(check({**good, "Mcp-Method": "tasks/cancel"}))
    assert "missing Mcp-Name" in str(check({k: v for k, v in good.items() if k != "Mcp-Name"}))
    assert "does not match" in str(check({**good, "Mcp-Name": "t2"}))
    assert "Base64" in str(check({**good, "Mcp-Name": "=?base64?%%%?="}))
    assert "invalid characters" in str(check({**good, "Mcp-Name": "t\x011"}))
    tool = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/call", "Mcp-Name": "long_job"}
    assert check(tool, "tools/call", name="long_job") is None
    assert check({**tool, "Mcp-Name": "other"}, "tools/call", name="long_job") is not None
    discover = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "server/discover"}
    assert check(discover, "server/discover", x=1) is None


def test_session_buffer_resumes_and_single_stream() -> None:
    session = Session("abc")
    first_token, cursor = session.open_stream()
    assert cursor == 0
    session.push({"n": 1})
    session.push({"n": 2})
    assert session.last_id == 2  # a Last-Event-ID beyond it is not resumed from (legacy.py)
    events = session.wait_events(first_token, 0, timeout=1)
    assert events is not None
    assert [e[0] for e in events] == [1, 2]
    session.mark_sent(1)
    second_token, cursor = session.open_stream()
    assert cursor == 1  # continues after what was written
    assert session.wait_events(first_token, 0, timeout=1) is None  # superseded
    resumed = session.wait_events(second_token, cursor, timeout=1)
    assert resumed is not None
    assert [e[1] for e in resumed] == [{"n": 2}]
    session.close()
    assert session.wait_events(second_token, 2, timeout=1) is None


def test_session_keeps_closed_post_streams_for_resumption() -> None:
    session = Session("s")
    assert not session.has_post_stream("a")
    assert session.post_stream_messages("a", 0, 0) is None
    session.open_post_stream("a")
    assert session.has_post_stream("a")
    assert session.post_stream_messages("a", 0, 0) is None  # not ready yet
    thread, out = in_thread(lambda: session.post_stream_messages("a", 0, DEADLINE))
    session.finish_post_stream("a", [{"n": 1}, {"n": 2}])
    thread.join(DEADLINE)
    assert out == [[(1, {"n": 1}), (2, {"n": 2})]]
    assert session.post_stream_messages("a", 1, 0) == [(2, {"n": 2})]
    assert session.post_stream_messages("a", 2, 0) == []
    session.finish_post_stream("unknown", [{"n": 0}])  # ignored
    for index in range(POST_STREAM_LIMIT):
        session.open_post_stream(f"s{index}")
    assert not session.has_post_stream("a")  # the oldest was forgotten
    session.close()
    assert session.post_stream_messages(f"s{POST_STREAM_LIMIT - 1}", 0, 0) is None
