"""Property-based tests: whatever a server sends, the only possible results are a valid model
or an mcptask error with a documented exit code (never another exception, never a hang).

The quick profile runs in the default suite; `HYPOTHESIS_PROFILE=deep pytest tests/unit/
test_fuzz.py` runs 10,000 examples per property (see tests/conftest.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any
from unittest import mock

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptask.client.exchange import RetryPolicy
from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, McptaskError
from mcptask.protocol.jsonrpc import JsonObject, request_message
from mcptask.protocol.tasks import Task, read_page
from mcptask.transport.http import HttpTransport
from mcptask.transport.limits import ENV_MAX_ANSWER_BYTES, decode

URL = "https://server.test/mcp"
DOCUMENTED = {code for code in ExitCode if code not in (ExitCode.OK, ExitCode.UNEXPECTED)}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)
task_like = st.fixed_dictionaries(
    {},
    optional={
        "taskId": st.text() | st.integers() | st.none(),
        "status": st.sampled_from(["working", "completed", "failed", "cancelled", "bogus"])
        | json_values,
        "statusMessage": st.text() | json_values,
        "createdAt": st.text() | st.just("2026-01-01T00:00:00Z"),
        "lastUpdatedAt": st.text(),
        "ttl": st.integers() | st.none() | st.text(),
        "pollInterval": st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        "task": json_values,
    },
)
results = (
    json_values
    | task_like
    | st.fixed_dictionaries(
        {"tasks": st.lists(task_like | json_values, max_size=3)},
        optional={"nextCursor": st.text() | st.integers() | st.none()},
    )
)


def acceptable(error: McptaskError) -> bool:
    """An mcptask error whose exit code is one of the documented failure codes."""
    return error.exit_code in DOCUMENTED and bool(error.message)


def outcome(call: Callable[[], object]) -> object:
    """What `call()` returned, or the mcptask error it raised (any other exception escapes:
    that is a failed property)."""
    try:
        return call()
    except McptaskError as error:
        return error


# -- the answer parser -------------------------------------------------------------------------


@given(st.binary(max_size=300) | json_values.map(lambda value: json.dumps(value).encode()))
def test_decoding_any_bytes_gives_a_message_or_a_protocol_violation(data: bytes) -> None:
    message = outcome(lambda: decode(data, context="the answer"))
    if isinstance(message, McptaskError):
        assert message.exit_code is ExitCode.PROTOCOL
    else:
        assert isinstance(message, dict)
        assert message["jsonrpc"] == "2.0"


@given(results)
def test_reading_any_result_as_a_task_or_page_gives_a_model_or_an_error(result: Any) -> None:
    for read in (
        lambda: Task.from_result(result, method="tasks/get"),
        lambda: read_page(result, "tasks/list", lambda item: Task.from_result(item, method="m")),
    ):
        model = outcome(read)
        if isinstance(model, McptaskError):
            assert model.exit_code is ExitCode.PROTOCOL
        else:
            assert isinstance(model, Task | tuple)


typed_task_like = st.fixed_dictionaries(
    {"taskId": st.text() | st.booleans(), "status": st.text() | st.none()},
    optional={
        name: st.none()
        | st.text()
        | st.integers()
        | st.booleans()
        | st.floats(allow_nan=False)
        | json_values
        for name in (
            "statusMessage",
            "createdAt",
            "lastUpdatedAt",
            "ttl",
            "pollInterval",
            "ttlMs",
            "pollIntervalMs",
            "vendor",
        )
    },
)


@settings(max_examples=500)  # each field's wrong types, often enough in every run
@given(typed_task_like)
def test_a_task_is_read_exactly_when_its_fields_have_their_types(value: dict[str, Any]) -> None:
    """`Task.read`'s fast path for exactly typed fields agrees with the full check: the
    same tasks are refused, and a read task is the value with integral floats as ints."""
    sent = json.loads(json.dumps(value))  # what a decoded answer holds
    task = Task.read(sent)
    if task is None:
        with pytest.raises(ValueError, match=r"\w+: "):
            Task.from_wire(value)
        return
    numbers = ("ttl", "pollInterval", "ttlMs", "pollIntervalMs")
    integral = {
        name: int(field) if name in numbers and type(field) is float else field
        for name, field in value.items()
    }
    assert task.to_wire() == integral == Task.from_wire(value).to_wire()  # which checks it all
    assert (task.taskId, task.status, task.ttl, task.pollIntervalMs) == (
        value["taskId"],
        value["status"],
        integral.get("ttl"),
        integral.get("pollIntervalMs"),
    )
    assert all(type(integral.get(name)) in (int, type(None)) for name in ("ttl", "ttlMs"))


# -- the HTTP transport ------------------------------------------------------------------------

sse_lines = st.lists(
    st.one_of(
        st.builds(lambda text: f"data: {text}", st.text(max_size=40)),
        st.builds(lambda value: f"data: {json.dumps(value)}", json_values),
        st.builds(
            lambda value: "data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": value}),
            json_values,
        ),
        st.builds(lambda text: f"id: {text}", st.text(max_size=10)),
        st.builds(lambda text: f"event: {text}", st.text(max_size=10)),
        st.builds(lambda text: f"retry: {text}", st.text(max_size=6)),
        st.just(""),
        st.just(": comment"),
        st.text(max_size=20),
    ),
    max_size=12,
)
bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.builds(
        lambda value, wrong: json.dumps(
            {"jsonrpc": "2.0", "id": "x" if wrong else 1, "result": value}
        ).encode(),
        json_values,
        st.booleans(),
    ),
    sse_lines.map(lambda lines: "\n".join(lines).encode()),
)
content_types = st.sampled_from(
    ["application/json", "text/event-stream", "text/html", "", "application/json; charset=utf-8"]
)
statuses = st.sampled_from([200, 200, 200, 202, 400, 401, 403, 404, 405, 429, 500, 502, 503, 504])


@given(statuses, content_types, bodies)
def test_any_http_answer_gives_a_message_or_a_documented_error(
    status: int, content_type: str, body: bytes
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"Content-Type": content_type} if content_type else {}
        return httpx.Response(status, headers=headers, content=body)

    with mock.patch.dict(os.environ, {ENV_MAX_ANSWER_BYTES: "4096"}):
        transport = HttpTransport(
            URL, transport=httpx.MockTransport(handler), sleep=lambda seconds: None
        )
    answer = outcome(lambda: transport.request(request_message(1, "tasks/get", {"taskId": "t"})))
    if isinstance(answer, McptaskError):
        assert acceptable(answer), answer
    else:
        assert isinstance(answer, dict)
        assert "result" in answer or "error" in answer


# -- the client --------------------------------------------------------------------------------


def client_answering(answer: Any, *, error: Any = None) -> McpClient:
    """A connected 2025-11-25 client whose server answers every task request with `answer`
    as the result (or `error` as the error object)."""

    def handler(request: httpx.Request) -> httpx.Response:
        message = json.loads(request.content)
        method = message.get("method")
        if method == "server/discover":
            return httpx.Response(404)
        if "id" not in message:
            return httpx.Response(202)
        reply: JsonObject = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {"list": {}, "cancel": {}}},
                "serverInfo": {"name": "fuzz", "version": "0"},
            }
        elif error is not None:
            reply["error"] = error
        else:
            reply["result"] = answer
        return httpx.Response(200, json=reply)

    transport = HttpTransport(URL, transport=httpx.MockTransport(handler))
    client = McpClient(transport, retry=RetryPolicy(retries=1, sleep=lambda seconds: None))
    client.connect()
    return client


errors = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"code": st.integers(-33000, -31000) | st.sampled_from([-32601, -32602, -32021, -32022])},
        optional={"message": st.text() | json_values, "data": json_values},
    ),
)


@given(results, st.none() | errors)
def test_any_answer_to_a_task_call_gives_a_model_or_a_documented_error(
    answer: Any, error: Any
) -> None:
    client = client_answering(answer, error=error)
    calls = (
        lambda: client.get_task("t"),
        lambda: [task for page in client.iter_task_pages() for task in page],
        lambda: client.cancel_task("t"),
    )
    for call in calls:
        result = outcome(call)
        if isinstance(result, McptaskError):
            assert acceptable(result), result
