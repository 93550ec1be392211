"""The 2026-07-28 era of the reference server (tasks extension), driven in-process through
ModernDispatcher: discover, versions, capabilities, tasks/get, cancel, update, tools/call,
subscriptions/listen, and the order of the checks."""

from __future__ import annotations

import pytest

from mcptask.reference_server.config import ProtocolEras
from mcptask.reference_server.scripting import OnCancel
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import MODERN_TASK_FIELDS, TASKS, VERSION, meta, scripted

# -- discover, versions, capabilities -------------------------------------------------------


def test_discover_result_of_a_dual_era_server(make: MakeServer) -> None:
    result = make(server_name="demo").modern.result("server/discover", tasks=False)
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


def test_discover_of_a_modern_only_server_without_tasks(make: MakeServer) -> None:
    result = make(protocol_eras=ProtocolEras.MODERN, tasks_enabled=False).modern.result(
        "server/discover"
    )
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {"tools": {}}


@pytest.mark.parametrize("requested", ["1999-01-01", "2025-11-25", "2026-13-99"])
def test_unsupported_version_is_32022_with_http_400(make: MakeServer, requested: str) -> None:
    status, error = make().modern.error("server/discover", version=requested)
    assert status == 400
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28", "2025-11-25"], "requested": requested}
    assert "2026-07-28" in error["message"]


def test_missing_meta_fields_are_invalid_params_with_http_400(
    make: MakeServer,
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
    make: MakeServer,
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
def test_unknown_methods_are_32601_with_http_404(make: MakeServer, method: str) -> None:
    status, error = make(seed=(("working", 1),)).modern.error(method, {"taskId": "working-001"})
    assert status == 404
    assert error["code"] == -32601


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_task_methods_need_the_extension_32021(make: MakeServer, method: str) -> None:
    server = make(seed=(("working", 1),))
    status, error = server.modern.error(
        method, {"taskId": "working-001", "inputResponses": {}}, tasks=False
    )
    assert status == 400
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert server.modern.get("working-001")["status"] == "working"


def test_no_tasks_and_no_cancel_switches(make: MakeServer) -> None:
    no_tasks = make(tasks_enabled=False, seed=(("working", 1),))
    assert no_tasks.modern.error("tasks/get", {"taskId": "working-001"})[0] == 404
    no_cancel = make(cancel_enabled=False, seed=(("working", 1),))
    status, error = no_cancel.modern.error("tasks/cancel", {"taskId": "working-001"})
    assert (status, error["code"]) == (404, -32601)
    assert no_cancel.modern.get("working-001")["status"] == "working"


def test_ping_and_tools_list(make: MakeServer) -> None:
    server = make()
    assert server.modern.result("ping") == {"resultType": "complete"}
    listed = server.modern.result("tools/list", tasks=False)
    assert listed["resultType"] == "complete"
    assert (listed["ttlMs"], listed["cacheScope"]) == (0, "public")
    assert [tool["name"] for tool in listed["tools"]] == ["long_job"]
    assert "execution" not in listed["tools"][0]  # no taskSupport field in 2026-07-28


def test_notifications_get_no_response(make: MakeServer) -> None:
    reply = make().modern.handle(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": meta()}}
    )
    assert reply.response is None
    assert reply.http_status == 202


# -- tasks/get ------------------------------------------------------------------------------


def test_get_shapes_per_status(make: MakeServer) -> None:
    server = make(
        seed=(("working", 1), ("completed", 1), ("failed", 1), ("cancelled", 1)),
        poll_interval_ms=250,
        ttl_ms=600_000,
    )
    working = server.modern.get("working-001")
    assert set(working) == MODERN_TASK_FIELDS | {"resultType"}
    assert working["resultType"] == "complete"
    assert working["ttlMs"] == 600_000
    assert working["pollIntervalMs"] == 250
    assert working["createdAt"].endswith("Z")
    completed = server.modern.get("completed-001")
    assert completed["result"] == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Finished"}],
        "isError": False,
    }
    failed = server.modern.get("failed-001")
    assert failed["error"] == {"code": -32603, "message": "Failed: simulated error 1"}
    assert "result" not in failed
    cancelled = server.modern.get("cancelled-001")
    assert set(cancelled) == MODERN_TASK_FIELDS | {"resultType"}


def test_get_inlines_input_requests(make: MakeServer) -> None:
    task = make(seed=(("input_required", 1),)).modern.get("input_required-001")
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
    make: MakeServer,
) -> None:
    server = make(seed=(("working", 1),))
    assert server.modern.get("working-001")["ttlMs"] is None
    status, error = server.modern.error("tasks/get", {"taskId": "nope"})
    assert (status, error) == (200, {"code": -32602, "message": "Task not found: nope"})
    short = make(seed=(("working", 1),), ttl_ms=100)
    assert short.modern.get("working-001")["ttlMs"] == 100
    short.advance(0.1)
    reply = short.modern.send("tasks/get", {"taskId": "working-001"})
    assert reply.response is not None
    assert reply.response["error"]["code"] == -32602
    for method in ("tasks/cancel", "tasks/update"):
        status, error = short.modern.error(method, {"taskId": "working-001", "inputResponses": {}})
        assert error["code"] == -32602


# -- tasks/cancel ---------------------------------------------------------------------------


def test_cancel_acknowledges_then_cancels_cooperatively(make: MakeServer) -> None:
    server = make(seed=(("working", 1), ("input_required", 1)), modern_cancel_delay_ms=100)
    assert server.modern.result("tasks/cancel", {"taskId": "working-001"}) == {
        "resultType": "complete"
    }
    assert server.modern.get("working-001")["status"] == "working"  # acknowledged, not yet
    server.advance(0.1)
    assert server.modern.get("working-001")["status"] == "cancelled"
    assert server.modern.result("tasks/cancel", {"taskId": "input_required-001"}) == {
        "resultType": "complete"
    }
    server.advance(0.1)
    task = server.modern.get("input_required-001")
    assert task["status"] == "cancelled"
    assert "inputRequests" not in task
    assert [(v.task_id, v.status) for v in server.changes] == [
        ("working-001", "cancelled"),
        ("input_required-001", "cancelled"),
    ]


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_cancel_of_a_finished_task_is_acknowledged_and_changes_nothing(
    make: MakeServer, status: str
) -> None:
    server = make(seed=((status, 1),))
    assert server.modern.result("tasks/cancel", {"taskId": f"{status}-001"}) == {
        "resultType": "complete"
    }
    assert server.modern.get(f"{status}-001")["status"] == status
    assert server.changes == []


def test_negative_modern_delay_is_ack_only(make: MakeServer) -> None:
    server = make(seed=(("working", 1),), modern_cancel_delay_ms=-1)
    for _ in range(2):
        assert server.modern.result("tasks/cancel", {"taskId": "working-001"}) == {
            "resultType": "complete"
        }
    server.advance(3600)
    assert server.modern.get("working-001")["status"] == "working"
    assert server.changes == []


def test_per_task_on_cancel_overrides_in_modern(make: MakeServer) -> None:
    server = make(
        scripted_tasks=(
            scripted("racy", [], on_cancel=OnCancel(kind="complete")),
            scripted("stubborn", [], on_cancel=OnCancel(kind="ignore")),
            scripted("eager", [], on_cancel=OnCancel(kind="cancel")),
        ),
        modern_cancel_delay_ms=-1,
    )
    for task_id in ("racy", "stubborn", "eager"):
        assert server.modern.result("tasks/cancel", {"taskId": task_id}) == {
            "resultType": "complete"
        }
    racy = server.modern.get("racy")
    assert racy["status"] == "completed"
    assert racy["result"]["content"][0]["text"] == "Completed before the cancel request arrived"
    assert server.modern.get("stubborn")["status"] == "working"
    assert server.modern.get("eager")["status"] == "cancelled"


def test_complete_on_cancel_option_applies_to_modern(make: MakeServer) -> None:
    server = make(seed=(("working", 1),), complete_on_cancel=frozenset({"working-001"}))
    assert server.modern.result("tasks/cancel", {"taskId": "working-001"}) == {
        "resultType": "complete"
    }
    assert server.modern.get("working-001")["status"] == "completed"


def test_unknown_task_cancel_is_32602(make: MakeServer) -> None:
    status, error = make().modern.error("tasks/cancel", {"taskId": "ghost"})
    assert (status, error["code"]) == (200, -32602)


# -- tasks/update ---------------------------------------------------------------------------


def test_update_answers_input_and_script_continues(make: MakeServer) -> None:
    steps = [
        (0.02, "input_required", "Your name?"),
        (0.05, "input_required", "Your age?"),
        (0.05, "completed", "Hello"),
    ]
    server = make(scripted_tasks=(scripted("job", steps, await_input=True),))
    server.advance(0.02)
    task = server.modern.get("job")
    assert task["status"] == "input_required"
    assert list(task["inputRequests"]) == ["input-1"]
    assert task["inputRequests"]["input-1"]["params"]["message"] == "Your name?"
    # A key that is not outstanding is ignored; the task keeps waiting.
    ignored = server.modern.result(
        "tasks/update", {"taskId": "job", "inputResponses": {"input-9": {"action": "accept"}}}
    )
    assert ignored == {"resultType": "complete"}
    server.advance(0.1)
    assert server.modern.get("job")["status"] == "input_required"
    answer = {"action": "accept", "content": {"answer": "Ada"}}
    assert server.modern.result(
        "tasks/update", {"taskId": "job", "inputResponses": {"input-1": answer}}
    ) == {"resultType": "complete"}
    server.advance(0.05)
    second = server.modern.get("job")
    assert second["status"] == "input_required"
    assert list(second["inputRequests"]) == ["input-2"]  # a new key, never reused
    server.modern.result("tasks/update", {"taskId": "job", "inputResponses": {"input-1": answer}})
    server.advance(0.1)
    assert server.modern.get("job")["status"] == "input_required"  # input-1 was already answered
    server.modern.result("tasks/update", {"taskId": "job", "inputResponses": {"input-2": answer}})
    server.advance(0.05)
    done = server.modern.get("job")
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "Hello"
    assert [v.status for v in server.changes] == [
        "input_required",
        "working",
        "input_required",
        "working",
        "completed",
    ]


def test_update_moves_a_seeded_input_required_task_back_to_working(
    make: MakeServer,
) -> None:
    server = make(seed=(("input_required", 1), ("working", 1)))
    key = next(iter(server.modern.get("input_required-001")["inputRequests"]))
    server.modern.result(
        "tasks/update",
        {"taskId": "input_required-001", "inputResponses": {key: {"action": "decline"}}},
    )
    task = server.modern.get("input_required-001")
    assert task["status"] == "working"
    assert "inputRequests" not in task
    # An update for a working task is acknowledged and ignored.
    server.modern.result("tasks/update", {"taskId": "working-001", "inputResponses": {key: {}}})
    status, error = server.modern.error("tasks/update", {"taskId": "working-001"})
    assert (status, error["code"]) == (200, -32602)  # inputResponses is required


def test_update_of_unknown_task_is_32602(make: MakeServer) -> None:
    status, error = make().modern.error("tasks/update", {"taskId": "ghost", "inputResponses": {}})
    assert (status, error["code"]) == (200, -32602)


# -- tools/call -----------------------------------------------------------------------------


def test_tools_call_with_the_extension_creates_a_task(make: MakeServer) -> None:
    server = make(poll_interval_ms=250)
    created = server.modern.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0.05}}
    )
    assert created["resultType"] == "task"
    assert "task" not in created
    assert set(created) == MODERN_TASK_FIELDS | {"resultType"}
    assert (created["status"], created["ttlMs"], created["pollIntervalMs"]) == (
        "working",
        None,
        250,
    )
    server.advance(0.05)
    done = server.modern.get(created["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["isError"] is False


def test_failed_outcome_is_a_failed_task_with_an_error(make: MakeServer) -> None:
    server = make()
    created = server.modern.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0.02, "outcome": "failed"}}
    )
    server.advance(0.02)
    task = server.modern.get(created["taskId"])
    assert task["status"] == "failed"
    assert task["error"] == {"code": -32603, "message": "long_job failed after 0.02 s"}


def test_tools_call_without_the_extension_runs_inline(make: MakeServer) -> None:
    server = make()
    result = server.modern.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0}}, tasks=False
    )
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "long_job completed after 0 s"}],
        "isError": False,
    }
    status, error = server.modern.error(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 0, "outcome": "failed"}},
        tasks=False,
    )
    assert (status, error["code"]) == (200, -32603)
    assert server.changes == []
    assert server.router.may_block(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": meta(tasks=False)}},
        ProtocolEras.MODERN,
    )
    assert not server.router.may_block(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": meta()}},
        ProtocolEras.MODERN,
    )


def test_tools_call_ignores_params_task_and_checks_arguments(make: MakeServer) -> None:
    server = make()
    created = server.modern.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 5}}
    )
    assert created["ttlMs"] is None
    for params in (
        {"name": "nope"},
        {"name": "long_job", "arguments": {"awaitInput": "yes"}},
        {"name": "long_job", "arguments": {"seconds": -1}},
    ):
        status, error = server.modern.error("tools/call", params)
        assert (status, error["code"]) == (200, -32602)
