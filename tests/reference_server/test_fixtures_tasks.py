"""The 2026-07-28 tasks fixtures of runner 0.2.0, driven in-process: tasks that complete,
fail or are cancelled, input as task inputRequests or as multi round-trip requests, signed
requestState, and the notifications that follow a request's _meta."""

from __future__ import annotations

import base64

from tests.conformance.fixtures import FIXTURES, FixtureTools
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import TASKS, accept, capabilities

SERVER_DEFAULTS = {"tools": FixtureTools(FIXTURES)}


# -- 2026-07-28: the tasks fixtures ----------------------------------------------------------


def test_greet_is_synchronous_even_with_a_legacy_task_param(make: MakeServer) -> None:
    server = make()
    result = server.modern.call("greet", {"name": "World"})
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Hello, World!"}],
        "isError": False,
    }
    hinted = server.modern.call("greet", {"name": "x"}, extra={"task": {"ttl": 60000}})
    assert hinted["resultType"] == "complete"
    assert "taskId" not in hinted
    status, error = server.modern.error("tools/call", {"name": "greet", "arguments": {}})
    assert (status, error["code"]) == (200, -32602)
    assert "name must be a non-empty string" in error["message"]
    status, error = server.modern.error("tools/call", {"name": "greet", "arguments": [1]})
    assert error["code"] == -32602


def test_slow_compute_task_lifecycle_and_cancel(make: MakeServer) -> None:
    server = make(modern_cancel_delay_ms=0, poll_interval_ms=250)
    created = server.modern.call("slow_compute", {"seconds": 0.05, "label": "unit"})
    assert created["resultType"] == "task"
    assert {"task", "result", "error", "inputRequests", "requestState", "ttl"} & set(
        created
    ) == set()
    assert created["status"] == "working"
    assert created["ttlMs"] is None
    assert created["pollIntervalMs"] == 250
    assert server.modern.get(created["taskId"])["taskId"] == created["taskId"]  # durable at once
    server.advance(0.05)
    done = server.modern.wait_status(created["taskId"], "completed")
    assert done["result"] == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "slow_compute unit: done after 0.05 s"}],
        "isError": False,
    }
    assert "_meta" not in done["result"]  # no related-task tag on an inlined result

    long = server.modern.call("slow_compute", {"seconds": 60})
    assert server.modern.result("tasks/cancel", {"taskId": long["taskId"]}) == {
        "resultType": "complete"
    }
    server.advance(0)  # --modern-cancel-delay 0: due at once
    cancelled = server.modern.wait_status(long["taskId"], "cancelled")
    assert "result" not in cancelled
    assert "error" not in cancelled
    again = server.modern.result("tasks/cancel", {"taskId": long["taskId"]})  # terminal: same ack
    assert again == {"resultType": "complete"}
    assert server.modern.error("tasks/get", {"taskId": "nope"})[1]["code"] == -32602

    inline = server.modern.call("slow_compute", {"seconds": 0}, caps=capabilities(tasks=False))
    assert inline["resultType"] == "complete"
    assert "taskId" not in inline
    for seconds in (-1, "1", True, 1e9):
        _status, error = server.modern.error(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": seconds}}
        )
        assert error["code"] == -32602


def test_failing_job_needs_the_extension_and_completes_with_a_tool_error(
    make: MakeServer,
) -> None:
    server = make()
    status, error = server.modern.error(
        "tools/call",
        {"name": "failing_job", "arguments": {}},
        caps=capabilities(tasks=False),
    )
    assert (status, error["code"]) == (400, -32021)
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    created = server.modern.call("failing_job", {"seconds": 0.01})
    server.advance(0.01)
    done = server.modern.wait_status(created["taskId"], "completed")
    assert done["result"]["isError"] is True
    assert "error" not in done


def test_protocol_error_job_fails_with_a_jsonrpc_error(make: MakeServer) -> None:
    server = make()
    created = server.modern.call("protocol_error_job", {"seconds": 0.01})
    server.advance(0.01)
    failed = server.modern.wait_status(created["taskId"], "failed")
    assert failed["error"]["code"] == -32603
    assert isinstance(failed["error"]["message"], str)
    assert "result" not in failed
    assert failed["statusMessage"].startswith("Failed:")
    _status, error = server.modern.error(
        "tools/call",
        {"name": "protocol_error_job", "arguments": {"seconds": 0}},
        caps=capabilities(tasks=False),
    )
    assert error["code"] == -32603


def test_confirm_delete_parks_the_task_until_tasks_update(make: MakeServer) -> None:
    server = make()
    created = server.modern.call("confirm_delete", {"filename": "a.txt"})
    parked = server.modern.wait_status(created["taskId"], "input_required")
    (key,) = parked["inputRequests"]
    request = parked["inputRequests"][key]
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    assert request["params"]["requestedSchema"]["required"] == ["confirm"]
    ack = server.modern.result(
        "tasks/update", {"taskId": created["taskId"], "inputResponses": {"other": {}}}
    )
    assert ack == {"resultType": "complete"}
    assert server.modern.get(created["taskId"])["status"] == "input_required"
    server.modern.result(
        "tasks/update",
        {"taskId": created["taskId"], "inputResponses": {key: accept(confirm=True)}},
    )
    done = server.modern.wait_status(created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Deleted a.txt"

    declined = server.modern.call("confirm_delete", {"filename": "b.txt"})
    parked = server.modern.wait_status(declined["taskId"], "input_required")
    server.modern.result(
        "tasks/update",
        {
            "taskId": declined["taskId"],
            "inputResponses": {k: {"action": "decline"} for k in parked["inputRequests"]},
        },
    )
    kept = server.modern.wait_status(declined["taskId"], "completed")
    assert kept["result"]["content"][0]["text"].startswith("Kept b.txt")
    assert kept["result"]["isError"] is False


def test_input_fixtures_need_the_elicitation_capability(make: MakeServer) -> None:
    server = make()
    for name in ("confirm_delete", "multi_input", "test_tool_with_task"):
        status, error = server.modern.error(
            "tools/call",
            {"name": name, "arguments": {"filename": "x"}},
            caps=capabilities(elicitation=False),
        )
        assert (status, error["code"]) == (400, -32021), name
        assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}
    url_only = capabilities()
    url_only["elicitation"] = {"url": {}}
    status, error = server.modern.error(
        "tools/call", {"name": "multi_input", "arguments": {}}, caps=url_only
    )
    assert error["code"] == -32021
    form = capabilities()
    form["elicitation"] = {"form": {}}
    assert server.modern.call("multi_input", caps=form)["resultType"] == "task"


def test_multi_input_takes_its_answers_one_at_a_time(make: MakeServer) -> None:
    server = make()
    created = server.modern.call("multi_input")
    parked = server.modern.wait_for(
        created["taskId"], lambda task: len(task.get("inputRequests", {})) == 2
    )
    first, second = parked["inputRequests"]
    server.modern.result(
        "tasks/update",
        {"taskId": created["taskId"], "inputResponses": {first: accept(name="Ada", confirm=True)}},
    )
    partial = server.modern.get(created["taskId"])
    assert partial["status"] == "input_required"
    assert list(partial["inputRequests"]) == [second]
    server.modern.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {second: accept(name="Ada", confirm=True)},
        },
    )
    done = server.modern.wait_status(created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "multi_input: name=Ada, confirm=True"


def test_input_fixtures_without_tasks_use_multi_round_trip_requests(
    make: MakeServer,
) -> None:
    server = make()
    plain = capabilities(tasks=False)
    first = server.modern.call("confirm_delete", {"filename": "c.txt"}, caps=plain)
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["confirm"]
    assert "requestState" not in first
    assert "taskId" not in first
    done = server.modern.call(
        "confirm_delete",
        {"filename": "c.txt"},
        caps=plain,
        extra={"inputResponses": {"confirm": accept(confirm=True)}},
    )
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Deleted c.txt"

    round1 = server.modern.call("multi_input", caps=plain)
    assert set(round1["inputRequests"]) == {"name", "confirm"}
    round2 = server.modern.call(
        "multi_input", caps=plain, extra={"inputResponses": {"name": accept(name="Bo")}}
    )
    assert round2["resultType"] == "input_required"
    assert list(round2["inputRequests"]) == ["confirm"]
    state = round2["requestState"]
    round3 = server.modern.call(
        "multi_input",
        caps=plain,
        extra={"inputResponses": {"confirm": accept(confirm=False)}, "requestState": state},
    )
    assert round3["content"][0]["text"] == "multi_input: name=Bo, confirm=False"
    _status, error = server.modern.error(
        "tools/call",
        {"name": "multi_input", "arguments": {}, "inputResponses": "no"},
        caps=plain,
    )
    assert error["code"] == -32602


def test_test_tool_with_task_gathers_input_then_creates_a_task(
    make: MakeServer,
) -> None:
    server = make()
    status, error = server.modern.error(
        "tools/call",
        {"name": "test_tool_with_task", "arguments": {}},
        caps=capabilities(tasks=False),
    )
    assert (status, error["code"]) == (400, -32021)

    round1 = server.modern.call("test_tool_with_task")
    assert round1["resultType"] == "input_required"
    assert "taskId" not in round1
    assert list(round1["inputRequests"]) == ["user_name"]
    state = round1["requestState"]
    round2 = server.modern.call(
        "test_tool_with_task",
        extra={"inputResponses": {"user_name": accept(name="Alice")}, "requestState": state},
    )
    assert round2["resultType"] == "task"
    assert "requestState" not in round2
    assert "inputRequests" not in round2
    server.advance(0.2)
    done = server.modern.wait_status(round2["taskId"], "completed")
    assert "Alice" in done["result"]["content"][0]["text"]

    declined = server.modern.call(
        "test_tool_with_task", extra={"inputResponses": {"user_name": {"action": "decline"}}}
    )
    assert declined["resultType"] == "complete"
    assert declined["isError"] is True

    payload, _, mac = state.rpartition(".")
    forged = base64.urlsafe_b64encode(b'{"tool":"test_tool_with_task","state":{}}').decode()
    other = server.modern.call("multi_input", caps=capabilities(tasks=False), extra={})
    assert "requestState" not in other
    multi_state = server.modern.call(
        "multi_input",
        caps=capabilities(tasks=False),
        extra={"inputResponses": {"name": accept(name="x")}},
    )["requestState"]
    for bad in (f"{forged}.{mac}", f"{payload}.{'0' * 64}", "garbage", 7, multi_state):
        status, error = server.modern.error(
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
    make: MakeServer,
) -> None:
    server = make()
    quiet = server.modern.send("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
    assert quiet.related == []
    logged = server.modern.send(
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
    errors_only = server.modern.send(
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}},
        meta={"io.modelcontextprotocol/logLevel": "error"},
    )
    assert errors_only.related == []
    progress = server.modern.send(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}},
        meta={"progressToken": "p-1"},
    )
    assert [(m["params"]["progressToken"], m["params"]["progress"]) for m in progress.related] == [
        ("p-1", 0),
        ("p-1", 50),
        ("p-1", 100),
    ]
    assert server.modern.send("tools/call", {"name": "test_tool_with_progress"}).related == []
