"""2026-07-28 `subscriptions/listen` in-process (the acknowledgement, pushed DetailedTasks,
closing), and where the HTTP transport's header checks run among the dispatcher's."""

from __future__ import annotations

from mcptask.reference_server.eras.modern_wire import ModernRequest
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import MODERN_TASK_FIELDS, TASKS, drain, meta, scripted

# -- subscriptions/listen ---------------------------------------------------------------------


def test_listen_acknowledges_then_pushes_detailed_tasks(make: MakeServer) -> None:
    steps = [(0.05, "input_required", "Name?"), (0.05, "completed", "done")]
    server = make(scripted_tasks=(scripted("job", steps),), seed=(("working", 1),))
    reply = server.modern.send(
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
    server.advance(0.05)
    server.advance(0.05)
    notes = drain(reply.subscription, 2)
    assert [n["method"] for n in notes] == ["notifications/tasks"] * 2
    assert all(n["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 1} for n in notes)
    first, second = (n["params"] for n in notes)
    assert first["status"] == "input_required"
    assert list(first["inputRequests"]) == ["input-1"]
    assert second["status"] == "completed"
    assert second["result"]["content"][0]["text"] == "done"
    assert "resultType" not in second
    assert set(second) == MODERN_TASK_FIELDS | {"_meta", "result"}
    server.modern.result("tasks/cancel", {"taskId": "working-001"})  # not listened to
    server.advance(0.3)
    assert server.modern.get("working-001")["status"] == "cancelled"
    assert reply.subscription.wait(0) == []
    closing = server.modern.dispatcher.listen_closed(reply.subscription)
    assert closing == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/subscriptionId": 1},
        },
    }
    server.modern.dispatcher.hub.remove(reply.subscription)
    assert reply.subscription.wait(0) is None


def test_listen_needs_the_extension_for_task_ids(make: MakeServer) -> None:
    server = make(seed=(("working", 1),))
    status, error = server.modern.error(
        "subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}}, tasks=False
    )
    assert (status, error["code"]) == (400, -32021)
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    plain = server.modern.send("subscriptions/listen", {"notifications": {}}, tasks=False)
    assert plain.related[0]["params"]["notifications"] == {}
    for bad in ({}, {"notifications": {"taskIds": "working-001"}}):
        status, error = server.modern.error("subscriptions/listen", bad)
        assert error["code"] == -32602


def test_listen_with_no_notify_agrees_to_nothing(make: MakeServer) -> None:
    server = make(seed=(("working", 1),), notify=False)
    reply = server.modern.send(
        "subscriptions/listen", {"notifications": {"taskIds": ["working-001"]}}
    )
    assert reply.related[0]["params"]["notifications"] == {"taskIds": []}
    assert reply.subscription is not None
    server.modern.result("tasks/cancel", {"taskId": "working-001"})
    server.advance(0.3)
    assert server.modern.get("working-001")["status"] == "cancelled"
    assert reply.subscription.wait(0) == []


# -- the transport's validator ---------------------------------------------------------------


def test_dispatcher_runs_the_validator_after_the_envelope(make: MakeServer) -> None:
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
