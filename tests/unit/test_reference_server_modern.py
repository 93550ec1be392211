"""The reference server's 2026-07-28 era (tasks extension), driven in-process through
ModernDispatcher, next to a LegacyDispatcher over the same TaskStore."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from mcptask.reference_server.config import ProtocolEras, Scope, ServerConfig
from mcptask.reference_server.http_transport.policy import (
    decode_header_value,
    modern_header_problem,
)
from mcptask.reference_server.legacy import LegacyDispatcher
from mcptask.reference_server.modern import ModernDispatcher
from mcptask.reference_server.modern_wire import ModernReply, ModernRequest
from mcptask.reference_server.options import parse_config
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.router import is_modern_message
from mcptask.reference_server.scripting import OnCancel, ScriptedTask, Step, parse_tasks_file
from mcptask.reference_server.seeding import populate
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.subscriptions import Subscription

JsonObject = dict[str, Any]
DEADLINE = 10.0  # seconds; generous, only reached when something is broken
VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
TASK_FIELDS = {
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
}


def meta(*, tasks: bool = True, version: str = VERSION) -> JsonObject:
    extensions: JsonObject = {TASKS: {}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    }


class Server:
    """Both dispatchers over one populated store, with helpers to send requests."""

    def __init__(self, config: ServerConfig) -> None:
        self.store = TaskStore()
        self.changes: list[TaskView] = []
        self.store.add_listener(self.changes.append)
        populate(self.store, config)
        self.modern = ModernDispatcher(config, self.store)
        self.legacy = LegacyDispatcher(config, self.store)
        self._next_id = 0

    def send(
        self, method: str, params: JsonObject | None = None, *, tasks: bool = True, **kw: Any
    ) -> ModernReply:
        self._next_id += 1
        body: JsonObject = {"_meta": meta(tasks=tasks, version=kw.get("version", VERSION))}
        body.update(params or {})
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

    def get(self, task_id: str) -> JsonObject:
        result: JsonObject = self.result("tasks/get", {"taskId": task_id})
        return result

    def wait_for(self, task_id: str, predicate: Callable[[JsonObject], bool]) -> JsonObject:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            task = self.get(task_id)
            if predicate(task):
                return task
            time.sleep(0.02)
        pytest.fail(f"task {task_id} did not reach the expected state")

    def legacy_result(self, method: str, params: JsonObject, session: str = "s1") -> Any:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        reply = self.legacy.handle(message, session)
        assert reply.response is not None
        assert "result" in reply.response, reply.response
        return reply.response["result"]


@pytest.fixture
def make() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def _make(**settings: Any) -> Server:
        settings.setdefault("protocol_eras", ProtocolEras.BOTH)
        server = Server(replace(ServerConfig(), **settings))
        servers.append(server)
        return server

    yield _make
    for server in servers:
        server.store.close()


def scripted(task_id: str, steps: list[tuple[float, str, str]], **kw: Any) -> ScriptedTask:
    return ScriptedTask(
        task_id=task_id,
        status=kw.get("status", "working"),
        status_message=kw.get("status_message", "scripted"),
        steps=tuple(Step(*step) for step in steps),
        on_cancel=kw.get("on_cancel"),
        ttl_ms=None,
        await_input=kw.get("await_input", False),
    )


def drain(subscription: Subscription, count: int) -> list[JsonObject]:
    """Wait for `count` notifications on a subscription."""
    got: list[JsonObject] = []
    deadline = time.monotonic() + DEADLINE
    while len(got) < count and time.monotonic() < deadline:
        messages = subscription.wait(0.1)
        assert messages is not None, "the subscription was closed"
        got.extend(messages)
    assert len(got) >= count, got
    return got


# -- discover, versions, capabilities -------------------------------------------------------


def test_discover_result_of_a_dual_era_server(make: Callable[..., Server]) -> None:
    result = make(server_name="demo").result("server/discover", tasks=False)
    info = result["serverInfo"]
    assert info["name"] == "demo"
    assert isinstance(info["version"], str)
    assert result == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28", "2025-11-25"],
        "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
        "serverInfo": info,
        "instructions": result["instructions"],
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": info},
    }
    assert result["instructions"]


def test_discover_of_a_modern_only_server_without_tasks(make: Callable[..., Server]) -> None:
    result = make(protocol_eras=ProtocolEras.MODERN, tasks_enabled=False).result("server/discover")
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {"tools": {}}


@pytest.mark.parametrize("requested", ["1999-01-01", "2025-11-25", "2026-13-99"])
def test_unsupported_version_is_32022_with_http_400(
    make: Callable[..., Server], requested: str
) -> None:
    status, error = make().error("server/discover", version=requested)
    assert status == 400
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28", "2025-11-25"], "requested": requested}
    assert "2026-07-28" in error["message"]


def test_missing_meta_fields_are_invalid_params_with_http_400(
    make: Callable[..., Server],
) -> None:
    server = make()
    no_meta = server.modern.handle({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
    assert no_meta.http_status == 400
    assert no_meta.response is not None
    assert no_meta.response["error"]["code"] == -32602
    no_caps = server.modern.handle(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "ping",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
        }
    )
    assert no_caps.http_status == 400
    assert no_caps.response is not None
    assert no_caps.response["error"]["code"] == -32602
    assert "clientCapabilities" in no_caps.response["error"]["message"]


def test_modern_only_server_answers_initialize_naming_its_versions(
    make: Callable[..., Server],
) -> None:
    server = make(protocol_eras=ProtocolEras.MODERN)
    reply = server.modern.handle(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
        }
    )
    assert reply.http_status == 400
    assert reply.response is not None
    error = reply.response["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    assert "2026-07-28" in error["message"]


@pytest.mark.parametrize("method", ["tasks/list", "tasks/result", "initialize", "no/such"])
def test_unknown_methods_are_32601_with_http_404(make: Callable[..., Server], method: str) -> None:
    status, error = make(seed=(("working", 1),)).error(method, {"taskId": "working-001"})
    assert status == 404
    assert error["code"] == -32601


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_task_methods_need_the_extension_32021(make: Callable[..., Server], method: str) -> None:
    server = make(seed=(("working", 1),))
    status, error = server.error(
        method, {"taskId": "working-001", "inputResponses": {}}, tasks=False
    )
    assert status == 400
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert server.get("working-001")["status"] == "working"


def test_no_tasks_and_no_cancel_switches(make: Callable[..., Server]) -> None:
    no_tasks = make(tasks_enabled=False, seed=(("working", 1),))
    assert no_tasks.error("tasks/get", {"taskId": "working-001"})[0] == 404
    no_cancel = make(cancel_enabled=False, seed=(("working", 1),))
    status, error = no_cancel.error("tasks/cancel", {"taskId": "working-001"})
    assert (status, error["code"]) == (404, -32601)
    assert no_cancel.get("working-001")["status"] == "working"


def test_ping_and_tools_list(make: Callable[..., Server]) -> None:
    server = make()
    assert server.result("ping") == {"resultType": "complete"}
    listed = server.result("tools/list", tasks=False)
    assert listed["resultType"] == "complete"
    assert (listed["ttlMs"], listed["cacheScope"]) == (0, "public")
    assert [tool["name"] for tool in listed["tools"]] == ["long_job"]
    assert "execution" not in listed["tools"][0]  # no taskSupport field in 2026-07-28


def test_notifications_get_no_response(make: Callable[..., Server]) -> None:
    reply = make().modern.handle(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": meta()}}
    )
    assert reply.response is None
    assert reply.http_status == 202


def test_era_of_a_message() -> None:
    assert is_modern_message(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta()}}
    )
    assert is_modern_message({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
    assert not is_modern_message({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert not is_modern_message({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}})
    assert not is_modern_message([1])


# -- tasks/get ------------------------------------------------------------------------------


def test_get_shapes_per_status(make: Callable[..., Server]) -> None:
    server = make(
        seed=(("working", 1), ("completed", 1), ("failed", 1), ("cancelled", 1)),
        poll_interval_ms=250,
        ttl_ms=600_000,
    )
    working = server.get("working-001")
    assert set(working) == TASK_FIELDS | {"resultType"}
    assert working["resultType"] == "complete"
    assert working["ttlMs"] == 600_000
    assert working["pollIntervalMs"] == 250
    assert working["createdAt"].endswith("Z")
    completed = server.get("completed-001")
    assert completed["result"] == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Finished"}],
        "isError": False,
    }
    failed = server.get("failed-001")
    assert failed["error"] == {"code": -32603, "message": "Failed: simulated error 1"}
    assert "result" not in failed
    cancelled = server.get("cancelled-001")
    assert set(cancelled) == TASK_FIELDS | {"resultType"}


def test_get_inlines_input_requests(make: Callable[..., Server]) -> None:
    task = make(seed=(("input_required", 1),)).get("input_required-001")
    assert task["status"] == "input_required"
    assert task["inputRequests"] == {
        "input-1": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Waiting for input (question 1)",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                },
            },
        }
    }


def test_unlimited_ttl_is_null_and_unknown_or_expired_is_32602(
    make: Callable[..., Server],
) -> None:
    server = make(seed=(("working", 1),))
    assert server.get("working-001")["ttlMs"] is None
    status, error = server.error("tasks/get", {"taskId": "nope"})
    assert (status, error) == (200, {"code": -32602, "message": "Task not found: nope"})
    short = make(seed=(("working", 1),), ttl_ms=100)
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        reply = short.send("tasks/get", {"taskId": "working-001"})
        assert reply.response is not None
        if "error" in reply.response:
            assert reply.response["error"]["code"] == -32602
            break
        time.sleep(0.02)
    else:
        pytest.fail("the task never expired")
    for method in ("tasks/cancel", "tasks/update"):
        status, error = short.error(method, {"taskId": "working-001", "inputResponses": {}})
        assert error["code"] == -32602


# -- tasks/cancel ---------------------------------------------------------------------------


def test_cancel_acknowledges_then_cancels_cooperatively(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1), ("input_required", 1)), modern_cancel_delay_ms=100)
    assert server.result("tasks/cancel", {"taskId": "working-001"}) == {"resultType": "complete"}
    server.wait_for("working-001", lambda task: task["status"] == "cancelled")
    assert server.result("tasks/cancel", {"taskId": "input_required-001"}) == {
        "resultType": "complete"
    }
    task = server.wait_for("input_required-001", lambda task: task["status"] == "cancelled")
    assert "inputRequests" not in task
    assert [(v.task_id, v.status) for v in server.changes] == [
        ("working-001", "cancelled"),
        ("input_required-001", "cancelled"),
    ]


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_cancel_of_a_finished_task_is_acknowledged_and_changes_nothing(
    make: Callable[..., Server], status: str
) -> None:
    server = make(seed=((status, 1),))
    assert server.result("tasks/cancel", {"taskId": f"{status}-001"}) == {"resultType": "complete"}
    assert server.get(f"{status}-001")["status"] == status
    assert server.changes == []


def test_negative_modern_delay_is_ack_only(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),), modern_cancel_delay_ms=-1)
    for _ in range(2):
        assert server.result("tasks/cancel", {"taskId": "working-001"}) == {
            "resultType": "complete"
        }
    time.sleep(0.2)
    assert server.get("working-001")["status"] == "working"
    assert server.changes == []


def test_per_task_on_cancel_overrides_in_modern(make: Callable[..., Server]) -> None:
    server = make(
        scripted_tasks=(
            scripted("racy", [], on_cancel=OnCancel(kind="complete")),
            scripted("stubborn", [], on_cancel=OnCancel(kind="ignore")),
            scripted("eager", [], on_cancel=OnCancel(kind="cancel")),
        ),
        modern_cancel_delay_ms=-1,
    )
    for task_id in ("racy", "stubborn", "eager"):
        assert server.result("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    racy = server.get("racy")
    assert racy["status"] == "completed"
    assert racy["result"]["content"][0]["text"] == "Completed before the cancel request arrived"
    assert server.get("stubborn")["status"] == "working"
    assert server.get("eager")["status"] == "cancelled"


def test_complete_on_cancel_option_applies_to_modern(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),), complete_on_cancel=frozenset({"working-001"}))
    assert server.result("tasks/cancel", {"taskId": "working-001"}) == {"resultType": "complete"}
    assert server.get("working-001")["status"] == "completed"


def test_unknown_task_cancel_is_32602(make: Callable[..., Server]) -> None:
    status, error = make().error("tasks/cancel", {"taskId": "ghost"})
    assert (status, error["code"]) == (200, -32602)


# -- tasks/update ---------------------------------------------------------------------------


def test_update_answers_input_and_script_continues(make: Callable[..., Server]) -> None:
    steps = [
        (0.02, "input_required", "Your name?"),
        (0.05, "input_required", "Your age?"),
        (0.05, "completed", "Hello"),
    ]
    server = make(scripted_tasks=(scripted("job", steps, await_input=True),))
    task = server.wait_for("job", lambda t: t["status"] == "input_required")
    assert list(task["inputRequests"]) == ["input-1"]
    assert task["inputRequests"]["input-1"]["params"]["message"] == "Your name?"
    # A key that is not outstanding is ignored; the task keeps waiting.
    ignored = server.result(
        "tasks/update", {"taskId": "job", "inputResponses": {"input-9": {"action": "accept"}}}
    )
    assert ignored == {"resultType": "complete"}
    time.sleep(0.1)
    assert server.get("job")["status"] == "input_required"
    answer = {"action": "accept", "content": {"answer": "Ada"}}
    assert server.result(
        "tasks/update", {"taskId": "job", "inputResponses": {"input-1": answer}}
    ) == {"resultType": "complete"}
    second = server.wait_for("job", lambda t: t["status"] == "input_required")
    assert list(second["inputRequests"]) == ["input-2"]  # a new key, never reused
    server.result("tasks/update", {"taskId": "job", "inputResponses": {"input-1": answer}})
    time.sleep(0.1)
    assert server.get("job")["status"] == "input_required"  # input-1 was already answered
    server.result("tasks/update", {"taskId": "job", "inputResponses": {"input-2": answer}})
    done = server.wait_for("job", lambda t: t["status"] == "completed")
    assert done["result"]["content"][0]["text"] == "Hello"
    assert [v.status for v in server.changes] == [
        "input_required",
        "working",
        "input_required",
        "working",
        "completed",
    ]


def test_update_moves_a_seeded_input_required_task_back_to_working(
    make: Callable[..., Server],
) -> None:
    server = make(seed=(("input_required", 1), ("working", 1)))
    key = next(iter(server.get("input_required-001")["inputRequests"]))
    server.result(
        "tasks/update",
        {"taskId": "input_required-001", "inputResponses": {key: {"action": "decline"}}},
    )
    task = server.get("input_required-001")
    assert task["status"] == "working"
    assert "inputRequests" not in task
    # An update for a working task is acknowledged and ignored.
    server.result("tasks/update", {"taskId": "working-001", "inputResponses": {key: {}}})
    status, error = server.error("tasks/update", {"taskId": "working-001"})
    assert (status, error["code"]) == (200, -32602)  # inputResponses is required


def test_update_of_unknown_task_is_32602(make: Callable[..., Server]) -> None:
    status, error = make().error("tasks/update", {"taskId": "ghost", "inputResponses": {}})
    assert (status, error["code"]) == (200, -32602)


# -- tools/call -----------------------------------------------------------------------------


def test_tools_call_with_the_extension_creates_a_task(make: Callable[..., Server]) -> None:
    server = make(poll_interval_ms=250)
    created = server.result("tools/call", {"name": "long_job", "arguments": {"seconds": 0.05}})
    assert created["resultType"] == "task"
    assert "task" not in created
    assert set(created) == TASK_FIELDS | {"resultType"}
    assert (created["status"], created["ttlMs"], created["pollIntervalMs"]) == (
        "working",
        None,
        250,
    )
    done = server.wait_for(created["taskId"], lambda t: t["status"] == "completed")
    assert done["result"]["isError"] is False


def test_failed_outcome_is_a_failed_task_with_an_error(make: Callable[..., Server]) -> None:
    server = make()
    created = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0.02, "outcome": "failed"}}
    )
    task = server.wait_for(created["taskId"], lambda t: t["status"] == "failed")
    assert task["error"] == {"code": -32603, "message": "long_job failed after 0.02 s"}


def test_tools_call_without_the_extension_runs_inline(make: Callable[..., Server]) -> None:
    server = make()
    result = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0}}, tasks=False
    )
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "long_job completed after 0 s"}],
        "isError": False,
    }
    status, error = server.error(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 0, "outcome": "failed"}},
        tasks=False,
    )
    assert (status, error["code"]) == (200, -32603)
    assert server.changes == []
    assert server.modern.may_block(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": meta(tasks=False)}}
    )
    assert not server.modern.may_block(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": meta()}}
    )


def test_tools_call_ignores_params_task_and_checks_arguments(make: Callable[..., Server]) -> None:
    server = make()
    created = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 5}}
    )
    assert created["ttlMs"] is None
    for params in (
        {"name": "nope"},
        {"name": "long_job", "arguments": {"awaitInput": "yes"}},
        {"name": "long_job", "arguments": {"seconds": -1}},
    ):
        status, error = server.error("tools/call", params)
        assert (status, error["code"]) == (200, -32602)


# -- both eras, one store -------------------------------------------------------------------


def test_tasks_are_shared_between_the_eras(make: Callable[..., Server]) -> None:
    server = make()
    legacy = server.legacy_result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}
    )
    legacy_id = legacy["task"]["taskId"]
    assert server.get(legacy_id)["status"] == "working"
    modern_id = server.result("tools/call", {"name": "long_job", "arguments": {"seconds": 60}})[
        "taskId"
    ]
    seen = server.legacy_result("tasks/get", {"taskId": modern_id}, session="other")
    assert (seen["status"], seen["ttl"], seen["pollInterval"]) == ("working", None, 500)
    listed = server.legacy_result("tasks/list", {})
    assert {t["taskId"] for t in listed["tasks"]} == {legacy_id, modern_id}
    server.result("tasks/cancel", {"taskId": legacy_id})
    server.wait_for(legacy_id, lambda t: t["status"] == "cancelled")
    assert server.legacy_result("tasks/get", {"taskId": legacy_id})["status"] == "cancelled"


def test_session_owned_tasks_are_invisible_to_modern(make: Callable[..., Server]) -> None:
    server = make(scope=Scope.SESSION)
    created = server.legacy_result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}, "a"
    )
    task_id = created["task"]["taskId"]
    status, error = server.error("tasks/get", {"taskId": task_id})
    assert (status, error["code"]) == (200, -32602)
    reply = server.send("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
    assert reply.related[0]["params"]["notifications"] == {"taskIds": []}


# -- subscriptions/listen ---------------------------------------------------------------------


def test_listen_acknowledges_then_pushes_detailed_tasks(make: Callable[..., Server]) -> None:
    steps = [(0.05, "input_required", "Name?"), (0.05, "completed", "done")]
    server = make(scripted_tasks=(scripted("job", steps),), seed=(("working", 1),))
    reply = server.send(
        "subscriptions/listen",
        {"notifications": {"taskIds": ["job", "ghost", "job"], "toolsListChanged": True}},
    )
    assert reply.response is None
    assert reply.subscription is not None
    assert reply.related == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 1},
                "notifications": {"taskIds": ["job"]},
            },
        }
    ]
    notes = drain(reply.subscription, 2)
    assert [n["method"] for n in notes] == ["notifications/tasks"] * 2
    assert all(n["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 1} for n in notes)
    first, second = (n["params"] for n in notes)
    assert first["status"] == "input_required"
    assert list(first["inputRequests"]) == ["input-1"]
    assert second["status"] == "completed"
    assert second["result"]["content"][0]["text"] == "done"
    assert "resultType" not in second
    assert set(second) == TASK_FIELDS | {"_meta", "result"}
    server.result("tasks/cancel", {"taskId": "working-001"})  # not listened to
    assert reply.subscription.wait(0.3) == []
    closing = server.modern.listen_closed(reply.subscription)
    assert closing == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/subscriptionId": 1},
        },
    }
    server.modern.hub.remove(reply.subscription)
    assert reply.subscription.wait(0.1) is None


def test_listen_needs_the_extension_for_task_ids(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),))
    status, error = server.error(
        "subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}}, tasks=False
    )
    assert (status, error["code"]) == (400, -32021)
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    plain = server.send("subscriptions/listen", {"notifications": {}}, tasks=False)
    assert plain.related[0]["params"]["notifications"] == {}
    for bad in ({}, {"notifications": {"taskIds": "working-001"}}):
        status, error = server.error("subscriptions/listen", bad)
        assert error["code"] == -32602


def test_listen_with_no_notify_agrees_to_nothing(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),), notify=False)
    reply = server.send("subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}})
    assert reply.related[0]["params"]["notifications"] == {"taskIds": []}
    assert reply.subscription is not None
    server.result("tasks/cancel", {"taskId": "working-001"})
    server.wait_for("working-001", lambda t: t["status"] == "cancelled")
    assert reply.subscription.wait(0.2) == []


# -- HTTP header policy -------------------------------------------------------------------------


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


def test_dispatcher_runs_the_validator_after_the_envelope(make: Callable[..., Server]) -> None:
    seen: list[ModernRequest] = []

    def validator(request: ModernRequest) -> None:
        seen.append(request)

    server = make()
    reply = server.modern.handle(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "server/discover",
            "params": {"_meta": meta(version="1999-01-01")},
        },
        validator,
    )
    assert [(r.method, r.version) for r in seen] == [("server/discover", "1999-01-01")]
    assert reply.response is not None
    assert reply.response["error"]["code"] == -32022


# -- command line ---------------------------------------------------------------------------


def test_protocol_era_and_cancel_delay_options() -> None:
    defaults = parse_config([])
    assert defaults.protocol_eras is ProtocolEras.BOTH
    assert (defaults.cancel_delay_ms, defaults.modern_cancel_delay_ms) == (1000, 300)
    both = parse_config(["--protocol-eras", "both", "--cancel-delay", "50"])
    assert both.protocol_eras is ProtocolEras.BOTH
    assert both.protocol_eras.legacy
    assert both.protocol_eras.modern
    assert (both.cancel_delay_ms, both.modern_cancel_delay_ms) == (50, 50)
    modern = parse_config(["--protocol-eras", "modern", "--modern-cancel-delay", "-1"])
    assert not modern.protocol_eras.legacy
    assert (modern.cancel_delay_ms, modern.modern_cancel_delay_ms) == (1000, -1)
    task = parse_tasks_file('[{"taskId": "a", "awaitInput": true}]')[0]
    assert task.await_input is True
    with pytest.raises(ValueError, match="awaitInput"):
        parse_tasks_file('[{"awaitInput": 1}]')
