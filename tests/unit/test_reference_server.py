"""The reference server's protocol logic, driven in-process through LegacyDispatcher."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcptask.reference_server import main
from mcptask.reference_server.config import (
    CancelMode,
    Scope,
    ServerConfig,
)
from mcptask.reference_server.http_transport.policy import (
    accepted_types,
    auth_failure,
    origin_allowed,
)
from mcptask.reference_server.http_transport.sessions import Session
from mcptask.reference_server.legacy import LegacyDispatcher
from mcptask.reference_server.options import UsageError, parse_config
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.scripting import (
    OnCancel,
    ScriptedTask,
    Step,
    parse_seed,
    parse_tasks_file,
)
from mcptask.reference_server.seeding import populate
from mcptask.reference_server.store import TaskStore

JsonObject = dict[str, Any]
DEADLINE = 10.0  # seconds; generous, only reached when something is broken


class Server:
    """A dispatcher over a populated store, with helpers to send requests."""

    def __init__(self, config: ServerConfig) -> None:
        self.store = TaskStore()
        self.changes: list[TaskView] = []
        self.store.add_listener(self.changes.append)
        populate(self.store, config)
        self.dispatcher = LegacyDispatcher(config, self.store)
        self._next_id = 0

    def request(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Any:
        self._next_id += 1
        message: JsonObject = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.dispatcher.handle(message, session)
        assert reply.response is not None
        assert reply.response["id"] == self._next_id
        return reply.response

    def result(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Any:
        response = self.request(method, params, session)
        assert "error" not in response, response
        return response["result"]

    def error(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Any:
        response = self.request(method, params, session)
        assert "result" not in response, response
        return response["error"]

    def get(self, task_id: str, session: str = "s1") -> JsonObject:
        result: JsonObject = self.result("tasks/get", {"taskId": task_id}, session)
        return result

    def wait_for(self, task_id: str, predicate: Callable[[JsonObject | None], bool]) -> None:
        """Poll tasks/get until `predicate(task or None-if-not-found)` holds."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            response = self.request("tasks/get", {"taskId": task_id})
            if predicate(response.get("result")):
                return
            time.sleep(0.02)
        pytest.fail(f"task {task_id} did not reach the expected state")

    def list_all(self, session: str = "s1") -> list[JsonObject]:
        tasks: list[JsonObject] = []
        params: JsonObject = {}
        while True:
            page = self.result("tasks/list", params, session)
            tasks.extend(page["tasks"])
            if "nextCursor" not in page:
                return tasks
            params = {"cursor": page["nextCursor"]}


@pytest.fixture
def make() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def _make(**settings: Any) -> Server:
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
        ttl_ms=kw.get("ttl_ms"),
        has_ttl="ttl_ms" in kw,
    )


# -- lifecycle and capabilities -----------------------------------------------------------


def test_initialize_advertises_all_task_capabilities(make: Callable[..., Server]) -> None:
    server = make(server_name="demo")
    result = server.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
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
    make: Callable[..., Server],
) -> None:
    result = make().result("initialize", {"protocolVersion": "1999-01-01"})
    assert result["protocolVersion"] == "2025-11-25"


def test_no_tasks_removes_capability_and_methods(make: Callable[..., Server]) -> None:
    server = make(tasks_enabled=False, seed=(("working", 1),))
    result = server.result("initialize", {"protocolVersion": "2025-11-25"})
    assert "tasks" not in result["capabilities"]
    for method in ("tasks/get", "tasks/list", "tasks/cancel", "tasks/result"):
        assert server.error(method, {"taskId": "working-001"})["code"] == -32601
    tools = server.result("tools/list")["tools"]
    assert "execution" not in tools[0]


def test_no_tasks_runs_task_augmented_call_inline(make: Callable[..., Server]) -> None:
    server = make(tasks_enabled=False)
    result = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 0}, "task": {"ttl": 1000}}
    )
    assert "task" not in result
    assert result["isError"] is False


def test_no_list_and_no_cancel_are_separate_switches(make: Callable[..., Server]) -> None:
    no_list = make(list_enabled=False, seed=(("working", 1),))
    caps = no_list.result("initialize", {"protocolVersion": "2025-11-25"})["capabilities"]
    assert "list" not in caps["tasks"]
    assert "cancel" in caps["tasks"]
    assert no_list.error("tasks/list")["code"] == -32601
    assert no_list.result("tasks/cancel", {"taskId": "working-001"})["status"] == "cancelled"

    no_cancel = make(cancel_enabled=False, seed=(("working", 1),))
    caps = no_cancel.result("initialize", {"protocolVersion": "2025-11-25"})["capabilities"]
    assert "cancel" not in caps["tasks"]
    assert "list" in caps["tasks"]
    assert no_cancel.error("tasks/cancel", {"taskId": "working-001"})["code"] == -32601
    assert len(no_cancel.result("tasks/list")["tasks"]) == 1


def test_ping_unknown_method_and_invalid_messages(make: Callable[..., Server]) -> None:
    server = make()
    assert server.result("ping") == {}
    assert server.error("no/such/method")["code"] == -32601
    invalid = server.dispatcher.handle({"jsonrpc": "1.0", "id": 5, "method": "ping"}, "s1")
    assert invalid.response is not None
    assert invalid.response["error"]["code"] == -32600
    not_object = server.dispatcher.handle([1, 2], "s1")
    assert not_object.response is not None
    assert not_object.response["error"]["code"] == -32600
    bad_params = server.dispatcher.handle(
        {"jsonrpc": "2.0", "id": 6, "method": "tasks/get", "params": {"taskId": 7}}, "s1"
    )
    assert bad_params.response is not None
    assert bad_params.response["error"]["code"] == -32602


def test_notifications_and_client_responses_get_no_reply(make: Callable[..., Server]) -> None:
    server = make()
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert server.dispatcher.handle(note, "s1").response is None
    answer = {"jsonrpc": "2.0", "id": 9, "result": {}}
    assert server.dispatcher.handle(answer, "s1").response is None


def test_request_reply_carries_a_log_notification(make: Callable[..., Server]) -> None:
    server = make()
    reply = server.dispatcher.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "s1")
    assert [note["method"] for note in reply.related] == ["notifications/message"]
    assert "id" not in reply.related[0]


def test_tools_list_marks_long_job_task_optional(make: Callable[..., Server]) -> None:
    tools = make().result("tools/list")["tools"]
    assert [tool["name"] for tool in tools] == ["long_job"]
    assert tools[0]["execution"] == {"taskSupport": "optional"}
    assert tools[0]["inputSchema"]["type"] == "object"


# -- task objects, get, list --------------------------------------------------------------


def test_seeded_tasks_have_deterministic_ids_and_full_task_shape(
    make: Callable[..., Server],
) -> None:
    server = make(seed=(("working", 2), ("input_required", 1), ("completed", 1)))
    tasks = server.list_all()
    assert [t["taskId"] for t in tasks] == [
        "working-001",
        "working-002",
        "input_required-001",
        "completed-001",
    ]
    task = server.get("input_required-001")
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


def test_list_pages_with_opaque_cursor_in_creation_order(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 7),), page_size=3)
    first = server.result("tasks/list")
    assert [t["taskId"] for t in first["tasks"]] == ["working-001", "working-002", "working-003"]
    second = server.result("tasks/list", {"cursor": first["nextCursor"]})
    third = server.result("tasks/list", {"cursor": second["nextCursor"]})
    assert [t["taskId"] for t in second["tasks"]] == ["working-004", "working-005", "working-006"]
    assert [t["taskId"] for t in third["tasks"]] == ["working-007"]
    assert "nextCursor" not in third


def test_list_with_exactly_one_full_page_has_no_cursor(make: Callable[..., Server]) -> None:
    page = make(seed=(("working", 3),), page_size=3).result("tasks/list")
    assert len(page["tasks"]) == 3
    assert "nextCursor" not in page


@pytest.mark.parametrize("cursor", ["garbage", "", 12, "Zm9vOjE6Mg=="])
def test_bad_cursor_is_invalid_params(make: Callable[..., Server], cursor: object) -> None:
    assert make(seed=(("working", 2),)).error("tasks/list", {"cursor": cursor})["code"] == -32602


def test_cursor_of_another_server_run_is_rejected(make: Callable[..., Server]) -> None:
    one = make(seed=(("working", 4),), page_size=2)
    other = make(seed=(("working", 4),), page_size=2)
    cursor = one.result("tasks/list")["nextCursor"]
    assert other.error("tasks/list", {"cursor": cursor})["code"] == -32602


def test_unknown_task_is_not_found_for_get_cancel_and_result(make: Callable[..., Server]) -> None:
    server = make()
    for method in ("tasks/get", "tasks/cancel", "tasks/result"):
        error = server.error(method, {"taskId": "nope"})
        assert error == {"code": -32602, "message": "Task not found: nope"}


# -- cancel -------------------------------------------------------------------------------


def test_strict_cancel_answers_cancelled_task_flat(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1), ("input_required", 1)))
    result = server.result("tasks/cancel", {"taskId": "working-001"})
    assert result["taskId"] == "working-001"
    assert result["status"] == "cancelled"
    assert result["statusMessage"] == "Cancelled by client"
    assert "task" not in result
    assert server.get("working-001")["status"] == "cancelled"
    assert server.result("tasks/cancel", {"taskId": "input_required-001"})["status"] == "cancelled"


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_strict_cancel_of_terminal_task_is_invalid_params(
    make: Callable[..., Server], status: str
) -> None:
    server = make(seed=((status, 1),))
    error = server.error("tasks/cancel", {"taskId": f"{status}-001"})
    assert error == {
        "code": -32602,
        "message": f"Cannot cancel task: already in terminal status '{status}'",
    }
    assert server.get(f"{status}-001")["status"] == status


def test_lenient_cancel_of_finished_task_succeeds_unchanged(make: Callable[..., Server]) -> None:
    server = make(seed=(("completed", 1), ("working", 1)), cancel_mode=CancelMode.LENIENT)
    assert server.result("tasks/cancel", {"taskId": "completed-001"})["status"] == "completed"
    assert server.get("completed-001")["status"] == "completed"
    assert server.result("tasks/cancel", {"taskId": "working-001"})["status"] == "cancelled"


def test_cooperative_cancel_answers_working_then_cancels(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),), cancel_mode=CancelMode.COOPERATIVE, cancel_delay_ms=200)
    assert server.result("tasks/cancel", {"taskId": "working-001"})["status"] == "working"
    server.wait_for("working-001", lambda task: task is not None and task["status"] == "cancelled")
    assert [view.status for view in server.changes] == ["cancelled"]


def test_cooperative_cancel_with_negative_delay_never_cancels(
    make: Callable[..., Server],
) -> None:
    server = make(seed=(("working", 1),), cancel_mode=CancelMode.COOPERATIVE, cancel_delay_ms=-1)
    assert server.result("tasks/cancel", {"taskId": "working-001"})["status"] == "working"
    assert server.result("tasks/cancel", {"taskId": "working-001"})["status"] == "working"
    time.sleep(0.3)
    assert server.get("working-001")["status"] == "working"
    assert server.changes == []


def test_on_cancel_complete_simulates_finishing_during_cancel(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 2),), complete_on_cancel=frozenset({"working-002"}))
    error = server.error("tasks/cancel", {"taskId": "working-002"})
    assert error["code"] == -32602
    assert "'completed'" in error["message"]
    task = server.get("working-002")
    assert task["status"] == "completed"
    assert server.result("tasks/cancel", {"taskId": "working-001"})["status"] == "cancelled"


def test_on_cancel_ignore_and_delay_from_tasks_file(make: Callable[..., Server]) -> None:
    server = make(
        scripted_tasks=(
            scripted("stubborn", [], on_cancel=OnCancel(kind="ignore")),
            scripted("slow", [], on_cancel=OnCancel(kind="delay", delay_ms=150)),
            scripted("racy", [], on_cancel=OnCancel(kind="complete")),
        )
    )
    assert server.result("tasks/cancel", {"taskId": "stubborn"})["status"] == "working"
    assert server.result("tasks/cancel", {"taskId": "slow"})["status"] == "working"
    assert server.error("tasks/cancel", {"taskId": "racy"})["code"] == -32602
    server.wait_for("slow", lambda task: task is not None and task["status"] == "cancelled")
    assert server.get("stubborn")["status"] == "working"
    assert server.get("racy")["status"] == "completed"


def test_on_cancel_tool_argument(make: Callable[..., Server]) -> None:
    server = make()
    created = server.result(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 60, "onCancel": "ignore"}, "task": {}},
    )
    task_id = created["task"]["taskId"]
    assert server.result("tasks/cancel", {"taskId": task_id})["status"] == "working"


def test_complete_on_cancel_for_unknown_id_is_an_error() -> None:
    store = TaskStore()
    try:
        with pytest.raises(ValueError, match="no seeded or scripted task"):
            populate(store, ServerConfig(complete_on_cancel=frozenset({"ghost"})))
    finally:
        store.close()


# -- tools/call, scripts, results, ttl ----------------------------------------------------


def test_task_augmented_call_creates_task_that_completes(make: Callable[..., Server]) -> None:
    server = make(poll_interval_ms=250)
    created = server.result(
        "tools/call",
        {"name": "long_job", "arguments": {"seconds": 0.2}, "task": {"ttl": 60000}},
    )
    task = created["task"]
    assert task["status"] == "working"
    assert task["ttl"] == 60000
    assert task["pollInterval"] == 250
    server.wait_for(task["taskId"], lambda t: t is not None and t["status"] == "completed")
    assert [view.status for view in server.changes] == ["completed"]
    assert task["taskId"] in [t["taskId"] for t in server.list_all()]


def test_scripted_steps_run_in_order(make: Callable[..., Server]) -> None:
    steps = [
        (0.05, "input_required", "need input"),
        (0.05, "working", "back"),
        (0.05, "failed", "x"),
    ]
    server = make(scripted_tasks=(scripted("job", steps),))
    server.wait_for("job", lambda task: task is not None and task["status"] == "failed")
    assert [(v.status, v.status_message) for v in server.changes] == [
        ("input_required", "need input"),
        ("working", "back"),
        ("failed", "x"),
    ]
    assert server.get("job")["statusMessage"] == "x"


def test_steps_after_a_terminal_status_are_ignored(make: Callable[..., Server]) -> None:
    steps = [(0.05, "completed", "done"), (0.0, "working", "zombie")]
    server = make(scripted_tasks=(scripted("job", steps),))
    server.wait_for("job", lambda task: task is not None and task["status"] == "completed")
    assert [view.status for view in server.changes] == ["completed"]


def test_cancel_stops_the_script(make: Callable[..., Server]) -> None:
    server = make(scripted_tasks=(scripted("job", [(0.1, "completed", "done")]),))
    assert server.result("tasks/cancel", {"taskId": "job"})["status"] == "cancelled"
    time.sleep(0.25)
    assert server.get("job")["status"] == "cancelled"
    assert [view.status for view in server.changes] == ["cancelled"]


def test_tasks_result_blocks_until_terminal(make: Callable[..., Server]) -> None:
    server = make()
    created = server.result(
        "tools/call",
        {"name": "long_job", "arguments": {"steps": [[0.2, "failed", "boom"]]}, "task": {}},
    )
    task_id = created["task"]["taskId"]
    answers: list[Any] = []
    waiter = threading.Thread(
        target=lambda: answers.append(server.request("tasks/result", {"taskId": task_id}))
    )
    waiter.start()
    waiter.join(DEADLINE)
    assert answers, "tasks/result never returned"
    result = answers[0]["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "boom"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


def test_inline_tool_call_returns_call_tool_result(make: Callable[..., Server]) -> None:
    server = make()
    ok = server.result("tools/call", {"name": "long_job", "arguments": {"seconds": 0}})
    assert ok["isError"] is False
    assert ok["content"][0]["type"] == "text"
    failed = server.result(
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
def test_bad_tool_calls_are_invalid_params(make: Callable[..., Server], params: JsonObject) -> None:
    assert make().error("tools/call", params)["code"] == -32602


def test_ttl_expiry_purges_seeded_tasks(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 2),), ttl_ms=300)
    assert server.get("working-001")["ttl"] == 300
    server.wait_for("working-001", lambda task: task is None)
    assert server.error("tasks/get", {"taskId": "working-001"})["code"] == -32602
    assert server.error("tasks/cancel", {"taskId": "working-002"})["code"] == -32602
    assert server.result("tasks/list")["tasks"] == []


def test_ttl_from_task_augmented_call(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),))
    created = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 200}}
    )
    task_id = created["task"]["taskId"]
    server.wait_for(task_id, lambda task: task is None)
    assert [t["taskId"] for t in server.list_all()] == ["working-001"]


# -- session scope ------------------------------------------------------------------------


def test_session_scope_hides_tasks_of_other_sessions(make: Callable[..., Server]) -> None:
    server = make(scope=Scope.SESSION, seed=(("working", 1),))
    created = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}, session="a"
    )
    task_id = created["task"]["taskId"]
    assert [t["taskId"] for t in server.list_all("a")] == ["working-001", task_id]
    assert [t["taskId"] for t in server.list_all("b")] == ["working-001"]
    assert server.error("tasks/get", {"taskId": task_id}, session="b")["code"] == -32602
    assert server.error("tasks/cancel", {"taskId": task_id}, session="b")["code"] == -32602
    assert server.get(task_id, session="a")["status"] == "working"
    assert server.result("tasks/cancel", {"taskId": "working-001"}, session="b")["status"] == (
        "cancelled"
    )


def test_global_scope_shares_tool_tasks(make: Callable[..., Server]) -> None:
    server = make()
    created = server.result(
        "tools/call", {"name": "long_job", "arguments": {"seconds": 60}, "task": {}}, session="a"
    )
    assert server.get(created["task"]["taskId"], session="b")["status"] == "working"


def test_status_notification_is_flat_task(make: Callable[..., Server]) -> None:
    server = make(seed=(("working", 1),))
    server.result("tasks/cancel", {"taskId": "working-001"})
    note = server.dispatcher.status_notification(server.changes[0])
    assert note["method"] == "notifications/tasks/status"
    assert "id" not in note
    assert note["params"]["taskId"] == "working-001"
    assert note["params"]["status"] == "cancelled"


# -- command line, scripts, HTTP policy, sessions ---------------------------------------------


def test_parse_seed_and_errors() -> None:
    assert parse_seed("working=2, completed=1") == (("working", 2), ("completed", 1))
    assert parse_seed("") == ()
    for bad in ("working", "working=x", "sleeping=1", "working=1,working=2", "working=-1"):
        with pytest.raises(ValueError):  # noqa: PT011 - every message differs
            parse_seed(bad)


def test_parse_tasks_file() -> None:
    tasks = parse_tasks_file(
        '[{"taskId": "a", "steps": [[0.5, "completed", "ok"]], "onCancel": "delay:250"},'
        ' {"status": "input_required", "ttl": null}]'
    )
    assert tasks[0].task_id == "a"
    assert tasks[0].steps == (Step(0.5, "completed", "ok"),)
    assert tasks[0].on_cancel == OnCancel(kind="delay", delay_ms=250)
    assert tasks[0].has_ttl is False
    assert tasks[1].task_id is None
    assert tasks[1].status == "input_required"
    assert tasks[1].has_ttl is True
    assert tasks[1].ttl_ms is None
    for bad in ("{}", "[1]", '[{"steps": 3}]', '[{"taskId": "x"}, {"taskId": "x"}]', "nope"):
        with pytest.raises(ValueError):  # noqa: PT011 - every message differs
            parse_tasks_file(bad)


def test_parse_config_options(tmp_path: Path) -> None:
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text('[{"taskId": "t1"}]', encoding="utf-8")
    config = parse_config(
        [
            "--http",
            "[::1]:0",
            "--seed",
            "working=3",
            "--tasks-file",
            str(tasks_file),
            "--complete-on-cancel",
            "working-001,working-002",
            "--complete-on-cancel",
            "t1",
            "--cancel-mode",
            "cooperative",
            "--cancel-delay",
            "-1",
            "--fault",
            "wrong-id",
            "--no-notify",
            "--scope",
            "session",
        ]
    )
    assert (config.host, config.port) == ("::1", 0)
    assert config.seed == (("working", 3),)
    assert config.scripted_tasks[0].task_id == "t1"
    assert config.complete_on_cancel == {"working-001", "working-002", "t1"}
    assert config.cancel_mode is CancelMode.COOPERATIVE
    assert config.cancel_delay_ms == -1
    assert config.fault is not None
    assert config.fault.value == "wrong-id"
    assert config.notify is False
    assert config.scope is Scope.SESSION
    defaults = parse_config([])
    assert (defaults.host, defaults.port, defaults.stdio) == ("127.0.0.1", 8765, False)
    with pytest.raises(UsageError):
        parse_config(["--http", "nohostport"])
    with pytest.raises(UsageError):
        parse_config(["--http", "h:1", "--stdio"])


def test_main_reports_bad_seed_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seed", "working=many"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("mcptask reference-server: error: bad --seed")


def test_main_help_returns_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--cancel-mode" in capsys.readouterr().out


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


def test_session_buffer_resumes_and_single_stream() -> None:
    session = Session("abc")
    first_token, cursor = session.open_stream()
    assert cursor == 0
    session.push({"n": 1})
    session.push({"n": 2})
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
