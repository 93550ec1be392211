"""Both eras in one server: the router's decision of a message's era, one store seen from
both dispatchers, and what they answer alike."""

from __future__ import annotations

import pytest

from mcptask.reference_server.config import ProtocolEras, Scope
from mcptask.reference_server.eras.router import is_modern_message
from mcptask.reference_server.wire import error_response
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import JsonObject, meta

PING: JsonObject = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
MODERN_PING: JsonObject = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta()}}
INITIALIZE: JsonObject = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
DISCOVER: JsonObject = {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}


# -- the era of a message --------------------------------------------------------------------


def test_era_of_a_message() -> None:
    assert is_modern_message(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta()}}
    )
    assert is_modern_message({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
    assert not is_modern_message({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert not is_modern_message({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}})
    assert not is_modern_message([1])


def test_a_dual_era_router_picks_the_era_per_message(make: MakeServer) -> None:
    router = make(protocol_eras=ProtocolEras.BOTH).router
    assert router.eras == (ProtocolEras.LEGACY, ProtocolEras.MODERN)
    assert router.sole_era is None
    assert router.era_of(MODERN_PING) is ProtocolEras.MODERN
    assert (
        router.era_of(DISCOVER) is ProtocolEras.MODERN
    )  # a modern-only method, even without _meta
    assert router.era_of(INITIALIZE) is ProtocolEras.LEGACY
    assert router.era_of(PING) is ProtocolEras.LEGACY
    assert router.era_of([1]) is ProtocolEras.LEGACY  # the legacy dispatcher answers it -32600
    assert router.era_without_message() is ProtocolEras.LEGACY  # GET and DELETE are sessions'


@pytest.mark.parametrize(
    ("eras", "era"),
    [(ProtocolEras.LEGACY, ProtocolEras.LEGACY), (ProtocolEras.MODERN, ProtocolEras.MODERN)],
)
def test_a_single_era_router_answers_everything_in_its_era(
    make: MakeServer, eras: ProtocolEras, era: ProtocolEras
) -> None:
    router = make(protocol_eras=eras).router
    assert router.eras == (era,)
    assert router.sole_era is era
    for message in (MODERN_PING, DISCOVER, INITIALIZE, PING, [1]):
        assert router.era_of(message) is era
    assert router.era_without_message() is era
    assert (router.legacy is None, router.modern is None) == (
        era is ProtocolEras.MODERN,
        era is ProtocolEras.LEGACY,
    )


def test_the_router_tells_whether_a_message_may_block(make: MakeServer) -> None:
    router = make().router
    result = {"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": "t"}}
    era = router.era_of(result)
    assert (era, router.may_block(result, era)) == (ProtocolEras.LEGACY, True)
    inline = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"_meta": meta(tasks=False), "name": "long_job"},
    }
    # runs inline: no tasks extension declared
    assert router.may_block(inline, router.era_of(inline))
    assert not router.may_block(MODERN_PING, router.era_of(MODERN_PING))


# -- one store, two eras ----------------------------------------------------------------------


def test_tasks_are_shared_between_the_eras(make: MakeServer) -> None:
    server = make()
    legacy = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}
    )
    legacy_id = legacy["task"]["taskId"]
    assert server.modern.get(legacy_id)["status"] == "working"
    modern_id = server.modern.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}}
    )["taskId"]
    seen = server.legacy.result("tasks/get", {"taskId": modern_id}, session="other")
    assert (seen["status"], seen["ttl"], seen["pollInterval"]) == ("working", None, 500)
    listed = server.legacy.result("tasks/list", {})
    assert {t["taskId"] for t in listed["tasks"]} == {legacy_id, modern_id}
    server.modern.result("tasks/cancel", {"taskId": legacy_id})
    server.advance(0.3)  # the default --modern-cancel-delay
    assert server.modern.get(legacy_id)["status"] == "cancelled"
    assert server.legacy.result("tasks/get", {"taskId": legacy_id})["status"] == "cancelled"


def test_session_owned_tasks_are_invisible_to_modern(make: MakeServer) -> None:
    server = make(scope=Scope.SESSION)
    created = server.legacy.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}, "a"
    )
    task_id = created["task"]["taskId"]
    status, error = server.modern.error("tasks/get", {"taskId": task_id})
    assert (status, error["code"]) == (200, -32602)
    reply = server.modern.send("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
    assert reply.related[0]["params"]["notifications"] == {"taskIds": []}


# -- what both eras answer alike --------------------------------------------------------------


def test_error_without_a_request_id_leaves_the_id_out(make: MakeServer) -> None:
    assert error_response(None, -32700, "Parse error") == {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error"},
    }
    assert error_response(0, -32600, "x")["id"] == 0
    server = make()
    legacy = server.legacy.dispatcher.handle(
        {"jsonrpc": "2.0", "id": None, "method": 3}, "s1"
    ).response
    assert legacy is not None
    assert "id" not in legacy
    modern = server.modern.handle({"jsonrpc": "1.0"}).response
    assert modern is not None
    assert "id" not in modern
