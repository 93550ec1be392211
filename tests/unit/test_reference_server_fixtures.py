"""The reference server's conformance fixtures (--conformance-fixtures) and the store, session
and wire pieces they rest on, driven in-process through both dispatchers."""

from __future__ import annotations

import base64
import io
import struct
import threading
import time
import wave
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from mcptask.reference_server.config import ProtocolEras, ServerConfig
from mcptask.reference_server.fixtures import (
    FIXTURES,
    JSON_SCHEMA_2020_12,
    PNG_BASE64,
    WAV_BASE64,
    fixture_tools,
)
from mcptask.reference_server.http_transport.sessions import POST_STREAM_LIMIT, Session
from mcptask.reference_server.jsonrpc import error_response
from mcptask.reference_server.legacy import LegacyDispatcher
from mcptask.reference_server.modern import ModernDispatcher
from mcptask.reference_server.modern_wire import ModernReply
from mcptask.reference_server.options import parse_config
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.store import TaskStore

JsonObject = dict[str, Any]
DEADLINE = 10.0  # seconds; generous, only reached when something is broken
VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
MODERN_ONLY = {"confirm_delete", "multi_input", "test_tool_with_task"}


def capabilities(*, tasks: bool = True, elicitation: bool = True) -> JsonObject:
    caps: JsonObject = {"extensions": {TASKS: {}} if tasks else {}}
    if elicitation:
        caps["elicitation"] = {}
    return caps


class Server:
    """Both dispatchers over one store, with the fixtures on."""

    def __init__(self, config: ServerConfig) -> None:
        self.store = TaskStore()
        self.changes: list[TaskView] = []
        self.store.add_listener(self.changes.append)
        self.modern = ModernDispatcher(config, self.store)
        self.legacy = LegacyDispatcher(config, self.store)
        self._next_id = 0

    # -- 2026-07-28 -------------------------------------------------------------------------

    def send(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        caps: JsonObject | None = None,
        meta: JsonObject | None = None,
    ) -> ModernReply:
        self._next_id += 1
        body_meta: JsonObject = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": capabilities() if caps is None else caps,
            **(meta or {}),
        }
        body: JsonObject = {"_meta": body_meta, **(params or {})}
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": body}
        return self.modern.handle(message)

    def result(self, method: str, params: JsonObject | None = None, **kw: Any) -> Any:
        reply = self.send(method, params, **kw)
        assert reply.response is not None
        assert "error" not in reply.response, reply.response
        assert reply.http_status == 200
        return reply.response["result"]

    def error(self, method: str, params: JsonObject | None = None, **kw: Any) -> tuple[int, Any]:
        reply = self.send(method, params, **kw)
        assert reply.response is not None
        assert "result" not in reply.response, reply.response
        return reply.http_status, reply.response["error"]

    def call(self, name: str, arguments: JsonObject | None = None, **kw: Any) -> Any:
        params: JsonObject = {"name": name, "arguments": arguments or {}}
        params.update(kw.pop("extra", {}))
        return self.result("tools/call", params, **kw)

    def get(self, task_id: str) -> JsonObject:
        task: JsonObject = self.result("tasks/get", {"taskId": task_id})
        return task

    def wait_for(self, task_id: str, predicate: Callable[[JsonObject], bool]) -> JsonObject:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            task = self.get(task_id)
            if predicate(task):
                return task
            time.sleep(0.02)
        pytest.fail(f"task {task_id} did not reach the expected state: {self.get(task_id)}")

    def wait_status(self, task_id: str, status: str) -> JsonObject:
        return self.wait_for(task_id, lambda task: task["status"] == status)

    # -- 2025-11-25 -------------------------------------------------------------------------

    def legacy_send(self, method: str, params: JsonObject | None = None) -> Any:
        self._next_id += 1
        message: JsonObject = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        return self.legacy.handle(message, "s1")

    def legacy_result(self, method: str, params: JsonObject | None = None) -> Any:
        response = self.legacy_send(method, params).response
        assert response is not None
        assert "result" in response, response
        return response["result"]

    def legacy_error(self, method: str, params: JsonObject | None = None) -> Any:
        response = self.legacy_send(method, params).response
        assert response is not None
        assert "error" in response, response
        return response["error"]


@pytest.fixture
def make() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def _make(**settings: Any) -> Server:
        settings.setdefault("protocol_eras", ProtocolEras.BOTH)
        settings.setdefault("conformance_fixtures", True)
        server = Server(replace(ServerConfig(), **settings))
        servers.append(server)
        return server

    yield _make
    for server in servers:
        server.store.close()


@pytest.fixture
def store() -> Iterator[TaskStore]:
    task_store = TaskStore()
    yield task_store
    task_store.close()


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(target()), daemon=True)
    thread.start()
    return thread, out


def accept(**content: Any) -> JsonObject:
    return {"action": "accept", "content": content}


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not reached")
        time.sleep(0.01)


# -- the store's worker primitives -------------------------------------------------------------


def test_request_input_takes_partial_answers_and_mints_unique_keys(store: TaskStore) -> None:
    view = store.create(status_message="start")
    requests = {"a": {"method": "elicitation/create"}, "b": {"method": "elicitation/create"}}
    thread, out = in_thread(lambda: store.request_input(view.task_id, requests, "2 questions"))
    wait_until(lambda: store.get(view.task_id, None).status == "input_required")
    pending = store.get(view.task_id, None)
    assert set(pending.input_requests) == {"a-1", "b-1"}
    assert pending.input_key is None
    assert pending.status_message == "2 questions"
    assert not store.provide_input(view.task_id, None, {"unknown": {}})
    assert store.provide_input(view.task_id, None, {"a-1": {"action": "decline"}})
    partial = store.get(view.task_id, None)
    assert partial.status == "input_required"
    assert set(partial.input_requests) == {"b-1"}
    assert not store.provide_input(view.task_id, None, {"a-1": {"action": "accept"}})  # answered
    assert store.provide_input(view.task_id, None, {"b-1": {"action": "accept"}})
    thread.join(DEADLINE)
    assert out == [{"a": {"action": "decline"}, "b": {"action": "accept"}}]
    assert store.get(view.task_id, None).status == "working"
    assert not store.get(view.task_id, None).input_requests
    # A second round gets new keys: a key is never reused over the task's life.
    thread, out = in_thread(lambda: store.request_input(view.task_id, {"a": {}}, "again"))
    wait_until(lambda: store.get(view.task_id, None).status == "input_required")
    assert set(store.get(view.task_id, None).input_requests) == {"a-2"}
    store.provide_input(view.task_id, None, {"a-2": {}})
    thread.join(DEADLINE)
    assert out == [{"a": {}}]


def test_request_input_returns_none_when_the_task_is_cancelled(store: TaskStore) -> None:
    view = store.create()
    thread, out = in_thread(lambda: store.request_input(view.task_id, {"x": {}}, "?"))
    wait_until(lambda: store.get(view.task_id, None).status == "input_required")
    store.finish(view.task_id, "cancelled", "Cancelled by client")
    thread.join(DEADLINE)
    assert out == [None]
    assert not store.get(view.task_id, None).input_requests
    with pytest.raises(ValueError, match="at least one"):
        store.request_input(view.task_id, {}, "nothing")
    assert store.request_input(view.task_id, {"x": {}}, "too late") is None


def test_wait_active_stops_early_when_the_task_ends_or_the_store_closes(
    store: TaskStore,
) -> None:
    view = store.create()
    assert store.wait_active(view.task_id, store.clock.monotonic() + 0.01)
    thread, out = in_thread(lambda: store.wait_active(view.task_id, time.monotonic() + DEADLINE))
    store.finish(view.task_id, "cancelled", None)
    thread.join(DEADLINE)
    assert out == [False]
    assert not store.wait_active("no-such-task", time.monotonic() + 0.01)
    other = store.create()
    thread, out = in_thread(lambda: store.wait_active(other.task_id, time.monotonic() + DEADLINE))
    time.sleep(0.05)
    store.close()
    thread.join(DEADLINE)
    assert out == [False]


def test_finish_stores_result_and_error_once(store: TaskStore) -> None:
    done = store.create()
    result = {"content": [{"type": "text", "text": "ok"}], "isError": True}
    assert store.finish(done.task_id, "completed", "done", result=result)
    assert store.get(done.task_id, None).result == result
    assert not store.finish(done.task_id, "failed", "late", error={"code": 1, "message": "x"})
    assert store.get(done.task_id, None).status == "completed"
    failed = store.create()
    store.finish(failed.task_id, "failed", "boom", error={"code": -32603, "message": "boom"})
    view = store.get(failed.task_id, None)
    assert (view.status, view.error, view.result) == (
        "failed",
        {"code": -32603, "message": "boom"},
        None,
    )
    with pytest.raises(ValueError, match="terminal"):
        store.finish(done.task_id, "working", None)


# -- listing and options ---------------------------------------------------------------------


def test_fixtures_are_off_by_default_and_listed_per_era(make: Callable[..., Server]) -> None:
    assert parse_config([]).conformance_fixtures is False
    assert parse_config(["--conformance-fixtures"]).conformance_fixtures is True
    plain = make(conformance_fixtures=False)
    assert [t["name"] for t in plain.result("tools/list")["tools"]] == ["long_job"]
    assert [t["name"] for t in plain.legacy_result("tools/list")["tools"]] == ["long_job"]
    assert plain.error("tools/call", {"name": "greet", "arguments": {"name": "x"}})[1]["code"] == (
        -32602
    )

    server = make()
    modern = {t["name"]: t for t in server.result("tools/list")["tools"]}
    legacy = {t["name"]: t for t in server.legacy_result("tools/list")["tools"]}
    every = {tool.name for tool in FIXTURES}
    assert set(modern) == {"long_job"} | every - {"test_reconnection"}
    assert set(legacy) == {"long_job"} | every - MODERN_ONLY
    assert all("execution" not in tool for tool in modern.values())
    assert legacy["slow_compute"]["execution"] == {"taskSupport": "optional"}
    assert legacy["failing_job"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in legacy["greet"]
    for tool in [*modern.values(), *legacy.values()]:
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
    assert modern["json_schema_2020_12_tool"]["inputSchema"] == JSON_SCHEMA_2020_12
    no_tasks = make(tasks_enabled=False)
    assert all(
        "execution" not in tool for tool in no_tasks.legacy_result("tools/list")["tools"][1:]
    )
    assert set(fixture_tools("legacy")) == every - MODERN_ONLY
    required = {"failing_job", "test_tool_with_task"}
    assert {t["name"] for t in no_tasks.result("tools/list")["tools"]} == (
        {"long_job"} | every - {"test_reconnection"} - required
    )
    _, error = no_tasks.error("tools/call", {"name": "failing_job", "arguments": {}})
    assert error["code"] == -32602  # not offered at all without tasks


# -- 2026-07-28: the tasks fixtures ----------------------------------------------------------


def test_greet_is_synchronous_even_with_a_legacy_task_param(make: Callable[..., Server]) -> None:
    server = make()
    result = server.call("greet", {"name": "World"})
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Hello, World!"}],
        "isError": False,
    }
    hinted = server.call("greet", {"name": "x"}, extra={"task": {"ttl": 60000}})
    assert hinted["resultType"] == "complete"
    assert "taskId" not in hinted
    status, error = server.error("tools/call", {"name": "greet", "arguments": {}})
    assert (status, error["code"]) == (200, -32602)
    assert "name must be a non-empty string" in error["message"]
    status, error = server.error("tools/call", {"name": "greet", "arguments": [1]})
    assert error["code"] == -32602


def test_slow_compute_task_lifecycle_and_cancel(make: Callable[..., Server]) -> None:
    server = make(modern_cancel_delay_ms=0, poll_interval_ms=250)
    created = server.call("slow_compute", {"seconds": 0.05, "label": "unit"})
    assert created["resultType"] == "task"
    assert {"task", "result", "error", "inputRequests", "requestState", "ttl"} & set(
        created
    ) == set()
    assert created["status"] == "working"
    assert created["ttlMs"] is None
    assert created["pollIntervalMs"] == 250
    assert server.get(created["taskId"])["taskId"] == created["taskId"]  # durable at once
    done = server.wait_status(created["taskId"], "completed")
    assert done["result"] == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "slow_compute unit: done after 0.05 s"}],
        "isError": False,
    }
    assert "_meta" not in done["result"]  # no related-task tag on an inlined result

    long = server.call("slow_compute", {"seconds": 60})
    assert server.result("tasks/cancel", {"taskId": long["taskId"]}) == {"resultType": "complete"}
    cancelled = server.wait_status(long["taskId"], "cancelled")
    assert "result" not in cancelled
    assert "error" not in cancelled
    again = server.result("tasks/cancel", {"taskId": long["taskId"]})  # terminal: same ack
    assert again == {"resultType": "complete"}
    assert server.error("tasks/get", {"taskId": "nope"})[1]["code"] == -32602

    inline = server.call("slow_compute", {"seconds": 0}, caps=capabilities(tasks=False))
    assert inline["resultType"] == "complete"
    assert "taskId" not in inline
    for seconds in (-1, "1", True, 1e9):
        _status, error = server.error(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": seconds}}
        )
        assert error["code"] == -32602


def test_failing_job_needs_the_extension_and_completes_with_a_tool_error(
    make: Callable[..., Server],
) -> None:
    server = make()
    status, error = server.error(
        "tools/call",
        {"name": "failing_job", "arguments": {}},
        caps=capabilities(tasks=False),
    )
    assert (status, error["code"]) == (400, -32021)
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    created = server.call("failing_job", {"seconds": 0.01})
    done = server.wait_status(created["taskId"], "completed")
    assert done["result"]["isError"] is True
    assert "error" not in done


def test_protocol_error_job_fails_with_a_jsonrpc_error(make: Callable[..., Server]) -> None:
    server = make()
    created = server.call("protocol_error_job", {"seconds": 0.01})
    failed = server.wait_status(created["taskId"], "failed")
    assert failed["error"]["code"] == -32603
    assert isinstance(failed["error"]["message"], str)
    assert "result" not in failed
    assert failed["statusMessage"].startswith("Failed:")
    _status, error = server.error(
        "tools/call",
        {"name": "protocol_error_job", "arguments": {"seconds": 0}},
        caps=capabilities(tasks=False),
    )
    assert error["code"] == -32603


def test_confirm_delete_parks_the_task_until_tasks_update(make: Callable[..., Server]) -> None:
    server = make()
    created = server.call("confirm_delete", {"filename": "a.txt"})
    parked = server.wait_status(created["taskId"], "input_required")
    (key,) = parked["inputRequests"]
    request = parked["inputRequests"][key]
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    assert request["params"]["requestedSchema"]["required"] == ["confirm"]
    ack = server.result(
        "tasks/update", {"taskId": created["taskId"], "inputResponses": {"other": {}}}
    )
    assert ack == {"resultType": "complete"}
    assert server.get(created["taskId"])["status"] == "input_required"
    server.result(
        "tasks/update",
        {"taskId": created["taskId"], "inputResponses": {key: accept(confirm=True)}},
    )
    done = server.wait_status(created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Deleted a.txt"

    declined = server.call("confirm_delete", {"filename": "b.txt"})
    parked = server.wait_status(declined["taskId"], "input_required")
    server.result(
        "tasks/update",
        {
            "taskId": declined["taskId"],
            "inputResponses": {k: {"action": "decline"} for k in parked["inputRequests"]},
        },
    )
    kept = server.wait_status(declined["taskId"], "completed")
    assert kept["result"]["content"][0]["text"].startswith("Kept b.txt")
    assert kept["result"]["isError"] is False


def test_input_fixtures_need_the_elicitation_capability(make: Callable[..., Server]) -> None:
    server = make()
    for name in ("confirm_delete", "multi_input", "test_tool_with_task"):
        status, error = server.error(
            "tools/call",
            {"name": name, "arguments": {"filename": "x"}},
            caps=capabilities(elicitation=False),
        )
        assert (status, error["code"]) == (400, -32021), name
        assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}
    url_only = capabilities()
    url_only["elicitation"] = {"url": {}}
    status, error = server.error(
        "tools/call", {"name": "multi_input", "arguments": {}}, caps=url_only
    )
    assert error["code"] == -32021
    form = capabilities()
    form["elicitation"] = {"form": {}}
    assert server.call("multi_input", caps=form)["resultType"] == "task"


def test_multi_input_takes_its_answers_one_at_a_time(make: Callable[..., Server]) -> None:
    server = make()
    created = server.call("multi_input")
    parked = server.wait_for(
        created["taskId"], lambda task: len(task.get("inputRequests", {})) == 2
    )
    first, second = parked["inputRequests"]
    server.result(
        "tasks/update",
        {"taskId": created["taskId"], "inputResponses": {first: accept(name="Ada", confirm=True)}},
    )
    partial = server.get(created["taskId"])
    assert partial["status"] == "input_required"
    assert list(partial["inputRequests"]) == [second]
    server.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {second: accept(name="Ada", confirm=True)},
        },
    )
    done = server.wait_status(created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "multi_input: name=Ada, confirm=True"


def test_input_fixtures_without_tasks_use_multi_round_trip_requests(
    make: Callable[..., Server],
) -> None:
    server = make()
    plain = capabilities(tasks=False)
    first = server.call("confirm_delete", {"filename": "c.txt"}, caps=plain)
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["confirm"]
    assert "requestState" not in first
    assert "taskId" not in first
    done = server.call(
        "confirm_delete",
        {"filename": "c.txt"},
        caps=plain,
        extra={"inputResponses": {"confirm": accept(confirm=True)}},
    )
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Deleted c.txt"

    round1 = server.call("multi_input", caps=plain)
    assert set(round1["inputRequests"]) == {"name", "confirm"}
    round2 = server.call(
        "multi_input", caps=plain, extra={"inputResponses": {"name": accept(name="Bo")}}
    )
    assert round2["resultType"] == "input_required"
    assert list(round2["inputRequests"]) == ["confirm"]
    state = round2["requestState"]
    round3 = server.call(
        "multi_input",
        caps=plain,
        extra={"inputResponses": {"confirm": accept(confirm=False)}, "requestState": state},
    )
    assert round3["content"][0]["text"] == "multi_input: name=Bo, confirm=False"
    _status, error = server.error(
        "tools/call",
        {"name": "multi_input", "arguments": {}, "inputResponses": "no"},
        caps=plain,
    )
    assert error["code"] == -32602


def test_test_tool_with_task_gathers_input_then_creates_a_task(
    make: Callable[..., Server],
) -> None:
    server = make()
    status, error = server.error(
        "tools/call",
        {"name": "test_tool_with_task", "arguments": {}},
        caps=capabilities(tasks=False),
    )
    assert (status, error["code"]) == (400, -32021)

    round1 = server.call("test_tool_with_task")
    assert round1["resultType"] == "input_required"
    assert "taskId" not in round1
    assert list(round1["inputRequests"]) == ["user_name"]
    state = round1["requestState"]
    round2 = server.call(
        "test_tool_with_task",
        extra={"inputResponses": {"user_name": accept(name="Alice")}, "requestState": state},
    )
    assert round2["resultType"] == "task"
    assert "requestState" not in round2
    assert "inputRequests" not in round2
    done = server.wait_status(round2["taskId"], "completed")
    assert "Alice" in done["result"]["content"][0]["text"]

    declined = server.call(
        "test_tool_with_task", extra={"inputResponses": {"user_name": {"action": "decline"}}}
    )
    assert declined["resultType"] == "complete"
    assert declined["isError"] is True

    payload, _, mac = state.rpartition(".")
    forged = base64.urlsafe_b64encode(b'{"tool":"test_tool_with_task","state":{}}').decode()
    other = server.call("multi_input", caps=capabilities(tasks=False), extra={})
    assert "requestState" not in other
    multi_state = server.call(
        "multi_input",
        caps=capabilities(tasks=False),
        extra={"inputResponses": {"name": accept(name="x")}},
    )["requestState"]
    for bad in (f"{forged}.{mac}", f"{payload}.{'0' * 64}", "garbage", 7, multi_state):
        status, error = server.error(
            "tools/call",
            {
                "name": "test_tool_with_task",
                "arguments": {},
                "inputResponses": {"user_name": accept(name="Mallory")},
                "requestState": bad,
            },
        )
        assert error["code"] == -32602, bad
        assert "requestState" in error["message"]


def test_modern_progress_and_log_notifications_follow_the_request_meta(
    make: Callable[..., Server],
) -> None:
    server = make()
    quiet = server.send("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
    assert quiet.related == []
    logged = server.send(
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}},
        meta={"io.modelcontextprotocol/logLevel": "info"},
    )
    assert [m["params"]["data"] for m in logged.related] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert all(m["method"] == "notifications/message" for m in logged.related)
    errors_only = server.send(
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}},
        meta={"io.modelcontextprotocol/logLevel": "error"},
    )
    assert errors_only.related == []
    progress = server.send(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}},
        meta={"progressToken": "p-1"},
    )
    assert [(m["params"]["progressToken"], m["params"]["progress"]) for m in progress.related] == [
        ("p-1", 0),
        ("p-1", 50),
        ("p-1", 100),
    ]
    assert server.send("tools/call", {"name": "test_tool_with_progress"}).related == []


# -- the 2025-11-25 era ------------------------------------------------------------------------


def test_legacy_tool_level_task_negotiation(make: Callable[..., Server]) -> None:
    server = make()
    error = server.legacy_error("tools/call", {"name": "failing_job", "arguments": {}})
    assert error["code"] == -32601
    error = server.legacy_error(
        "tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {}}
    )
    assert error["code"] == -32601
    assert server.legacy_result("tools/call", {"name": "greet", "arguments": {"name": "Bo"}})[
        "content"
    ] == [{"type": "text", "text": "Hello, Bo!"}]
    error = server.legacy_error(
        "tools/call", {"name": "slow_compute", "arguments": {}, "task": {"ttl": -1}}
    )
    assert error["code"] == -32602
    unknown = server.legacy_error("tools/call", {"name": "confirm_delete", "arguments": {}})
    assert unknown["code"] == -32602  # not offered in this era

    created = server.legacy_result(
        "tools/call",
        {
            "name": "slow_compute",
            "arguments": {"seconds": 0.01, "label": "L"},
            "task": {"ttl": 60000},
        },
    )
    task = created["task"]
    assert task["ttl"] == 60000
    assert "pollInterval" in task
    result = server.legacy_result("tasks/result", {"taskId": task["taskId"]})
    assert result["content"][0]["text"] == "slow_compute L: done after 0.01 s"
    assert result["_meta"] == {RELATED_TASK: {"taskId": task["taskId"]}}

    failing = server.legacy_result(
        "tools/call", {"name": "failing_job", "arguments": {"seconds": 0}, "task": {}}
    )
    result = server.legacy_result("tasks/result", {"taskId": failing["task"]["taskId"]})
    assert result["isError"] is True

    broken = server.legacy_result(
        "tools/call", {"name": "protocol_error_job", "arguments": {"seconds": 0}, "task": {}}
    )
    error = server.legacy_error("tasks/result", {"taskId": broken["task"]["taskId"]})
    assert error["code"] == -32603  # tasks/result answers the request's own error

    # Without the tasks capability the task metadata is ignored, as for long_job.
    no_tasks = make(tasks_enabled=False)
    plain = no_tasks.legacy_result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}
    )
    assert "task" not in plain
    assert plain["isError"] is False


def test_legacy_progress_and_log_notifications_ride_with_the_reply(
    make: Callable[..., Server],
) -> None:
    server = make()
    reply = server.legacy_send(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 5}},
    )
    progress = [m for m in reply.related if m["method"] == "notifications/progress"]
    assert [m["params"] for m in progress][-1] == {
        "progressToken": 5,
        "progress": 100,
        "total": 100,
        "message": "Done",
    }
    assert len(progress) == 3
    reply = server.legacy_send("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
    logs = [m["params"]["data"] for m in reply.related if m["method"] == "notifications/message"]
    assert logs == [
        "handling tools/call",
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


def test_closes_stream_only_for_test_reconnection(make: Callable[..., Server]) -> None:
    server = make()

    def call(name: str) -> JsonObject:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}

    assert server.legacy.closes_stream(call("test_reconnection"))
    assert not server.legacy.closes_stream(call("greet"))
    assert not server.legacy.closes_stream({"jsonrpc": "2.0", "method": "tools/call"})
    assert not make(conformance_fixtures=False).legacy.closes_stream(call("test_reconnection"))
    result = server.legacy_result("tools/call", {"name": "test_reconnection"})
    assert result["content"][0]["text"] == "Reconnection test completed successfully"


# -- content fixtures ------------------------------------------------------------------------


def test_content_fixtures_return_valid_media(make: Callable[..., Server]) -> None:
    server = make()
    png = base64.b64decode(PNG_BASE64)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    offset = 8
    kinds = []
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind, data = png[offset + 4 : offset + 8], png[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", png[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + data)
        kinds.append(kind)
        offset += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
    with wave.open(io.BytesIO(base64.b64decode(WAV_BASE64))) as audio:
        assert (audio.getnchannels(), audio.getframerate(), audio.getnframes()) == (1, 8000, 800)

    image = server.call("test_image_content")["content"]
    assert image == [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]
    audio_content = server.legacy_result("tools/call", {"name": "test_audio_content"})["content"]
    assert audio_content[0]["mimeType"] == "audio/wav"
    text = server.call("test_simple_text")["content"][0]
    assert text == {"type": "text", "text": "This is a simple text response for testing."}
    resource = server.call("test_embedded_resource")["content"][0]
    assert resource["resource"]["uri"] == "test://embedded-resource"
    mixed = server.call("test_multiple_content_types")["content"]
    assert [block["type"] for block in mixed] == ["text", "image", "resource"]
    failure = server.call("test_error_handling")
    assert failure["isError"] is True
    assert failure["content"][0]["text"]


def test_json_schema_tool_checks_its_arguments(make: Callable[..., Server]) -> None:
    server = make()
    echoed = server.call("json_schema_2020_12_tool", {"name": "n", "address": {"city": "c"}})
    assert echoed["content"][0]["text"] == 'Received: {"address": {"city": "c"}, "name": "n"}'
    bad_arguments: list[JsonObject] = [
        {"extra": 1},
        {"name": 3},
        {"address": {"city": 4}},
        {"address": []},
    ]
    for bad in bad_arguments:
        _, error = server.error(
            "tools/call", {"name": "json_schema_2020_12_tool", "arguments": bad}
        )
        assert error["code"] == -32602, bad


# -- wire: errors without an id, sessions' closed POST streams ---------------------------------


def test_error_without_a_request_id_leaves_the_id_out(make: Callable[..., Server]) -> None:
    assert error_response(None, -32700, "Parse error") == {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error"},
    }
    assert error_response(0, -32600, "x")["id"] == 0
    server = make()
    legacy = server.legacy.handle({"jsonrpc": "2.0", "id": None, "method": 3}, "s1").response
    assert legacy is not None
    assert "id" not in legacy
    modern = server.modern.handle({"jsonrpc": "1.0"}).response
    assert modern is not None
    assert "id" not in modern


def test_session_keeps_closed_post_streams_for_resumption() -> None:
    session = Session("s")
    assert not session.has_post_stream("a")
    assert session.post_stream_messages("a", 0, 0.01) is None
    session.open_post_stream("a")
    assert session.has_post_stream("a")
    assert session.post_stream_messages("a", 0, 0.01) is None  # not ready yet
    thread, out = in_thread(lambda: session.post_stream_messages("a", 0, DEADLINE))
    session.finish_post_stream("a", [{"n": 1}, {"n": 2}])
    thread.join(DEADLINE)
    assert out == [[(1, {"n": 1}), (2, {"n": 2})]]
    assert session.post_stream_messages("a", 1, 0.01) == [(2, {"n": 2})]
    assert session.post_stream_messages("a", 2, 0.01) == []
    session.finish_post_stream("unknown", [{"n": 0}])  # ignored
    for index in range(POST_STREAM_LIMIT):
        session.open_post_stream(f"s{index}")
    assert not session.has_post_stream("a")  # the oldest was forgotten
    session.close()
    assert session.post_stream_messages(f"s{POST_STREAM_LIMIT - 1}", 0, 0.01) is None
