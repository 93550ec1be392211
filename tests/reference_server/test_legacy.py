"""The 2025-11-25 era of the reference server, driven in-process through LegacyDispatcher:
capabilities, the Task object, list pages, cancel modes, tools/call, scripts, ttl, scope."""

from __future__ import annotations

import pytest

from mcptask.reference_server.config import CancelMode, Scope, ServerConfig
from mcptask.reference_server.scripting import OnCancel
from mcptask.reference_server.server import populate
from mcptask.reference_server.store import TaskStore
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import DEADLINE, JsonObject, in_thread, scripted
from tests.reference_server.manual_clock import ManualClock

# -- lifecycle and capabilities -----------------------------------------------------------


def test_initialize_advertises_all_task_capabilities(make: MakeServer) -> None:
    server = make(server_name="demo")
    result = server.legacy.result(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
    )
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    assert result["capabilities"]["tools"] == {}
    assert result["serverInfo"]["name"] == "demo"
    assert isinstance(result["serverInfo"]["version"], str)
    assert result["instructions"]


def test_initialize_with_unsupported_version_offers_2025_11_25(
    make: MakeServer,
) -> None:
    result = make().legacy.result("initialize", {"protocolVersion": "1999-01-01"})
    assert result["protocolVersion"] == "2025-11-25"


def test_no_tasks_removes_capability_and_methods(make: MakeServer) -> None:
    server = make(tasks_enabled=False, seed=(("working", 1),))
    result = server.legacy.result("initialize", {"protocolVersion": "2025-11-25"})
    assert "tasks" not in result["capabilities"]
    for method in ("tasks/get", "tasks/list", "tasks/cancel", "tasks/result"):
        assert server.legacy.error(method, {"taskId": "working-001"})["code"] == -32601
    tools = server.legacy.result("tools/list")["tools"]
    assert "execution" not in tools[0]


def test_no_tasks_runs_task_augmented_call_inline(make: MakeServer) -> None:
    server = make(tasks_enabled=False)
    result = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0}, "task": {"ttl": 1000}}
    )
    assert "task" not in result
    assert result["isError"] is False


def test_no_list_and_no_cancel_are_separate_switches(make: MakeServer) -> None:
    no_list = make(list_enabled=False, seed=(("working", 1),))
    caps = no_list.legacy.result("initialize", {"protocolVersion": "2025-11-25"})["capabilities"]
    assert "list" not in caps["tasks"]
    assert "cancel" in caps["tasks"]
    assert no_list.legacy.error("tasks/list")["code"] == -32601
    assert no_list.legacy.result("tasks/cancel", {"taskId": "working-001"})["status"] == "cancelled"

    no_cancel = make(cancel_enabled=False, seed=(("working", 1),))
    caps = no_cancel.legacy.result("initialize", {"protocolVersion": "2025-11-25"})["capabilities"]
    assert "cancel" not in caps["tasks"]
    assert "list" in caps["tasks"]
    assert no_cancel.legacy.error("tasks/cancel", {"taskId": "working-001"})["code"] == -32601
    assert len(no_cancel.legacy.result("tasks/list")["tasks"]) == 1


def test_ping_unknown_method_and_invalid_messages(make: MakeServer) -> None:
    server = make()
    assert server.legacy.result("ping") == {}
    assert server.legacy.error("no/such/method")["code"] == -32601
    invalid = server.legacy.dispatcher.handle({"jsonrpc": "1.0", "id": 5, "method": "ping"}, "s1")
    assert invalid.response is not None
    assert invalid.response["error"]["code"] == -32600
    not_object = server.legacy.dispatcher.handle([1, 2], "s1")
    assert not_object.response is not None
    assert not_object.response["error"]["code"] == -32600
    bad_params = server.legacy.dispatcher.handle(
        {"jsonrpc": "2.0", "id": 6, "method": "tasks/get", "params": {"taskId": 7}}, "s1"
    )
    assert bad_params.response is not None
    assert bad_params.response["error"]["code"] == -32602


def test_notifications_and_client_responses_get_no_reply(make: MakeServer) -> None:
    server = make()
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert server.legacy.dispatcher.handle(note, "s1").response is None
    answer = {"jsonrpc": "2.0", "id": 9, "result": {}}
    assert server.legacy.dispatcher.handle(answer, "s1").response is None


def test_request_reply_carries_a_log_notification(make: MakeServer) -> None:
    server = make()
    reply = server.legacy.dispatcher.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "s1")
    assert [note["method"] for note in reply.related] == ["notifications/message"]
    assert "id" not in reply.related[0]


def test_tools_list_marks_long_job_task_optional(make: MakeServer) -> None:
    tools = make().legacy.result("tools/list")["tools"]
    assert [tool["name"] for tool in tools] == ["long_job"]
    assert tools[0]["execution"] == {"taskSupport": "optional"}
    assert tools[0]["inputSchema"]["type"] == "object"


# -- task objects, get, list --------------------------------------------------------------


def test_seeded_tasks_have_deterministic_ids_and_full_task_shape(
    make: MakeServer,
) -> None:
    server = make(seed=(("working", 2), ("input_required", 1), ("completed", 1)))
    tasks = server.legacy.list_all()
    assert [t["taskId"] for t in tasks] == [
        "working-001",
        "working-002",
        "input_required-001",
        "completed-001",
    ]
    task = server.legacy.get("input_required-001")
    assert set(task) == {
        "taskId",
        "status",
        "statusMessage",
        "createdAt",
        "lastUpdatedAt",
        "ttl",
        "pollInterval",
    }
    assert task["status"] == "input_required"
    assert task["createdAt"].endswith("Z")
    assert task["lastUpdatedAt"].endswith("Z")
    assert task["ttl"] is None
    assert task["pollInterval"] == 500
    created = [t["createdAt"] for t in tasks]
    assert created == sorted(created)


def test_list_pages_with_opaque_cursor_in_creation_order(make: MakeServer) -> None:
    server = make(seed=(("working", 7),), page_size=3)
    first = server.legacy.result("tasks/list")
    assert [t["taskId"] for t in first["tasks"]] == ["working-001", "working-002", "working-003"]
    second = server.legacy.result("tasks/list", {"cursor": first["nextCursor"]})
    third = server.legacy.result("tasks/list", {"cursor": second["nextCursor"]})
    assert [t["taskId"] for t in second["tasks"]] == ["working-004", "working-005", "working-006"]
    assert [t["taskId"] for t in third["tasks"]] == ["working-007"]
    assert "nextCursor" not in third


def test_list_with_exactly_one_full_page_has_no_cursor(make: MakeServer) -> None:
    page = make(seed=(("working", 3),), page_size=3).legacy.result("tasks/list")
    assert len(page["tasks"]) == 3
    assert "nextCursor" not in page


@pytest.mark.parametrize("cursor", ["garbage", "", 12, "Zm9vOjE6Mg=="])
def test_bad_cursor_is_invalid_params(make: MakeServer, cursor: object) -> None:
    server = make(seed=(("working", 2),))
    assert server.legacy.error("tasks/list", {"cursor": cursor})["code"] == -32602


def test_cursor_of_another_server_run_is_rejected(make: MakeServer) -> None:
    one = make(seed=(("working", 4),), page_size=2)
    other = make(seed=(("working", 4),), page_size=2)
    cursor = one.legacy.result("tasks/list")["nextCursor"]
    assert other.legacy.error("tasks/list", {"cursor": cursor})["code"] == -32602


def test_unknown_task_is_not_found_for_get_cancel_and_result(make: MakeServer) -> None:
    server = make()
    for method in ("tasks/get", "tasks/cancel", "tasks/result"):
        error = server.legacy.error(method, {"taskId": "nope"})
        assert error == {"code": -32602, "message": "Task not found: nope"}


# -- cancel -------------------------------------------------------------------------------


def test_strict_cancel_answers_cancelled_task_flat(make: MakeServer) -> None:
    server = make(seed=(("working", 1), ("input_required", 1)))
    result = server.legacy.result("tasks/cancel", {"taskId": "working-001"})
    assert result["taskId"] == "working-001"
    assert result["status"] == "cancelled"
    assert result["statusMessage"] == "Cancelled by client"
    assert "task" not in result
    assert server.legacy.get("working-001")["status"] == "cancelled"
    assert (
        server.legacy.result("tasks/cancel", {"taskId": "input_required-001"})["status"]
        == "cancelled"
    )


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_strict_cancel_of_terminal_task_is_invalid_params(make: MakeServer, status: str) -> None:
    server = make(seed=((status, 1),))
    error = server.legacy.error("tasks/cancel", {"taskId": f"{status}-001"})
    assert error == {
        "code": -32602,
        "message": f"Cannot cancel task: already in terminal status '{status}'",
    }
    assert server.legacy.get(f"{status}-001")["status"] == status


def test_lenient_cancel_of_finished_task_succeeds_unchanged(make: MakeServer) -> None:
    server = make(seed=(("completed", 1), ("working", 1)), cancel_mode=CancelMode.LENIENT)
    assert (
        server.legacy.result("tasks/cancel", {"taskId": "completed-001"})["status"] == "completed"
    )
    assert server.legacy.get("completed-001")["status"] == "completed"
    assert server.legacy.result("tasks/cancel", {"taskId": "working-001"})["status"] == "cancelled"


def test_cooperative_cancel_answers_working_then_cancels(make: MakeServer) -> None:
    server = make(seed=(("working", 1),), cancel_mode=CancelMode.COOPERATIVE, cancel_delay_ms=200)
    assert server.legacy.result("tasks/cancel", {"taskId": "working-001"})["status"] == "working"
    server.advance(0.2)
    assert server.legacy.get("working-001")["status"] == "cancelled"
    assert [view.status for view in server.changes] == ["cancelled"]


def test_cooperative_cancel_with_negative_delay_never_cancels(
    make: MakeServer,
) -> None:
    server = make(seed=(("working", 1),), cancel_mode=CancelMode.COOPERATIVE, cancel_delay_ms=-1)
    assert server.legacy.result("tasks/cancel", {"taskId": "working-001"})["status"] == "working"
    assert server.legacy.result("tasks/cancel", {"taskId": "working-001"})["status"] == "working"
    server.advance(3600)
    assert server.legacy.get("working-001")["status"] == "working"
    assert server.changes == []


def test_on_cancel_complete_simulates_finishing_during_cancel(make: MakeServer) -> None:
    server = make(seed=(("working", 2),), complete_on_cancel=frozenset({"working-002"}))
    error = server.legacy.error("tasks/cancel", {"taskId": "working-002"})
    assert error["code"] == -32602
    assert "'completed'" in error["message"]
    task = server.legacy.get("working-002")
    assert task["status"] == "completed"
    assert server.legacy.result("tasks/cancel", {"taskId": "working-001"})["status"] == "cancelled"


def test_on_cancel_ignore_and_delay_from_tasks_file(make: MakeServer) -> None:
    server = make(
        scripted_tasks=(
            scripted("stubborn", [], on_cancel=OnCancel(kind="ignore")),
            scripted("slow", [], on_cancel=OnCancel(kind="delay", delay_ms=150)),
            scripted("racy", [], on_cancel=OnCancel(kind="complete")),
        )
    )
    assert server.legacy.result("tasks/cancel", {"taskId": "stubborn"})["status"] == "working"
    assert server.legacy.result("tasks/cancel", {"taskId": "slow"})["status"] == "working"
    assert server.legacy.error("tasks/cancel", {"taskId": "racy"})["code"] == -32602
    server.advance(0.15)
    assert server.legacy.get("slow")["status"] == "cancelled"
    assert server.legacy.get("stubborn")["status"] == "working"
    assert server.legacy.get("racy")["status"] == "completed"


def test_on_cancel_tool_argument(make: MakeServer) -> None:
    server = make()
    created = server.legacy.result(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 60, "onCancel": "ignore"}, "task": {}},
    )
    task_id = created["task"]["taskId"]
    assert server.legacy.result("tasks/cancel", {"taskId": task_id})["status"] == "working"


def test_complete_on_cancel_for_unknown_id_is_an_error() -> None:
    store = TaskStore(ManualClock())
    try:
        with pytest.raises(ValueError, match="no seeded or scripted task"):
            populate(store, ServerConfig(complete_on_cancel=frozenset({"ghost"})))
    finally:
        store.close()


# -- tools/call, scripts, results, ttl ----------------------------------------------------


def test_task_augmented_call_creates_task_that_completes(make: MakeServer) -> None:
    server = make(poll_interval_ms=250)
    created = server.legacy.result(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 0.2}, "task": {"ttl": 60000}},
    )
    task = created["task"]
    assert task["status"] == "working"
    assert task["ttl"] == 60000
    assert task["pollInterval"] == 250
    assert server.changes == []
    server.advance(0.2)
    assert server.legacy.get(task["taskId"])["status"] == "completed"
    assert [view.status for view in server.changes] == ["completed"]
    assert task["taskId"] in [t["taskId"] for t in server.legacy.list_all()]


def test_scripted_steps_run_in_order(make: MakeServer) -> None:
    steps = [
        (0.05, "input_required", "need input"),
        (0.05, "working", "back"),
        (0.05, "failed", "x"),
    ]
    server = make(scripted_tasks=(scripted("job", steps),))
    for status in ("input_required", "working", "failed"):
        server.advance(0.05)
        assert server.legacy.get("job")["status"] == status
    assert [(v.status, v.status_message) for v in server.changes] == [
        ("input_required", "need input"),
        ("working", "back"),
        ("failed", "x"),
    ]
    assert server.legacy.get("job")["statusMessage"] == "x"


def test_steps_after_a_terminal_status_are_ignored(make: MakeServer) -> None:
    steps = [(0.05, "completed", "done"), (0.0, "working", "zombie")]
    server = make(scripted_tasks=(scripted("job", steps),))
    server.advance(0.05)
    assert server.legacy.get("job")["status"] == "completed"
    assert [view.status for view in server.changes] == ["completed"]


def test_cancel_stops_the_script(make: MakeServer) -> None:
    server = make(scripted_tasks=(scripted("job", [(0.1, "completed", "done")]),))
    assert server.legacy.result("tasks/cancel", {"taskId": "job"})["status"] == "cancelled"
    server.advance(0.25)
    assert server.legacy.get("job")["status"] == "cancelled"
    assert [view.status for view in server.changes] == ["cancelled"]


def test_tasks_result_blocks_until_terminal(make: MakeServer) -> None:
    server = make()
    created = server.legacy.result(
        "tools/call",
        {"name": "long_job", "arguments": {"steps": [[0.2, "failed", "boom"]]}, "task": {}},
    )
    task_id = created["task"]["taskId"]
    waiter, answers = in_thread(lambda: server.legacy.request("tasks/result", {"taskId": task_id}))
    assert server.clock.wait_for_waiting(1, DEADLINE), "tasks/result did not wait"
    assert answers == []  # blocked while the task works
    server.advance(0.2)
    waiter.join(DEADLINE)
    assert answers, "tasks/result never returned"
    result = answers[0]["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "boom"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


def test_inline_tool_call_returns_call_tool_result(make: MakeServer) -> None:
    server = make()
    ok = server.legacy.result("tools/call", {"name": "long_job", "arguments": {"seconds": 0}})
    assert ok["isError"] is False
    assert ok["content"][0]["type"] == "text"
    failed = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0, "outcome": "failed"}}
    )
    assert failed["isError"] is True
    assert server.changes == []


@pytest.mark.parametrize(
    "params",
    [
        {"name": "nope", "arguments": {}},
        {"name": "long_job", "arguments": {"seconds": -1}},
        {"name": "long_job", "arguments": {"outcome": "exploded"}},
        {"name": "long_job", "arguments": {"steps": [[0, "sleeping"]]}},
        {"name": "long_job", "arguments": {"onCancel": "explode"}},
        {"name": "long_job", "arguments": {}, "task": {"ttl": "soon"}},
    ],
)
def test_bad_tool_calls_are_invalid_params(make: MakeServer, params: JsonObject) -> None:
    assert make().legacy.error("tools/call", params)["code"] == -32602


def test_ttl_expiry_purges_seeded_tasks(make: MakeServer) -> None:
    server = make(seed=(("working", 2),), ttl_ms=300)
    assert server.legacy.get("working-001")["ttl"] == 300
    server.advance(0.3)
    assert server.legacy.error("tasks/get", {"taskId": "working-001"})["code"] == -32602
    assert server.legacy.error("tasks/cancel", {"taskId": "working-002"})["code"] == -32602
    assert server.legacy.result("tasks/list")["tasks"] == []


def test_ttl_from_task_augmented_call(make: MakeServer) -> None:
    server = make(seed=(("working", 1),))
    created = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 200}}
    )
    task_id = created["task"]["taskId"]
    assert server.legacy.get(task_id)["status"] == "working"
    server.advance(0.2)
    assert server.legacy.error("tasks/get", {"taskId": task_id})["code"] == -32602
    assert [t["taskId"] for t in server.legacy.list_all()] == ["working-001"]


# -- session scope ------------------------------------------------------------------------


def test_session_scope_hides_tasks_of_other_sessions(make: MakeServer) -> None:
    server = make(scope=Scope.SESSION, seed=(("working", 1),))
    created = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}, session="a"
    )
    task_id = created["task"]["taskId"]
    assert [t["taskId"] for t in server.legacy.list_all("a")] == ["working-001", task_id]
    assert [t["taskId"] for t in server.legacy.list_all("b")] == ["working-001"]
    assert server.legacy.error("tasks/get", {"taskId": task_id}, session="b")["code"] == -32602
    assert server.legacy.error("tasks/cancel", {"taskId": task_id}, session="b")["code"] == -32602
    assert server.legacy.get(task_id, session="a")["status"] == "working"
    assert server.legacy.result("tasks/cancel", {"taskId": "working-001"}, session="b")[
        "status"
    ] == ("cancelled")


def test_global_scope_shares_tool_tasks(make: MakeServer) -> None:
    server = make()
    created = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}, session="a"
    )
    assert server.legacy.get(created["task"]["taskId"], session="b")["status"] == "working"


def test_status_notification_is_flat_task(make: MakeServer) -> None:
    server = make(seed=(("working", 1),))
    server.legacy.result("tasks/cancel", {"taskId": "working-001"})
    note = server.legacy.dispatcher.status_notification(server.changes[0])
    assert note["method"] == "notifications/tasks/status"
    assert "id" not in note
    assert note["params"]["taskId"] == "working-001"
    assert note["params"]["status"] == "cancelled"
