"""`start` and `result` against the in-process fake: tool arguments from the command line,
the gate and schema validation (nothing sent on failure), what differs between the eras, and
the sessions a recorded task is rejoined in."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mcptask.cli.inputs import parse_item, tool_arguments
from mcptask.client.session import McpClient
from mcptask.errors import (
    ExitCode,
    SessionTaskGone,
    TaskCallForbidden,
    TaskNotFound,
    UnsupportedError,
    UsageError,
)
from mcptask.operations.cancel import CancelRun
from mcptask.operations.listing import refresh_known
from mcptask.operations.outcomes import Outcome, Target
from mcptask.operations.polling import fetch_result
from mcptask.operations.start import StartRequest, start_task
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task
from mcptask.store.known_tasks import KnownTasks
from tests.unit.fake_server import FakeServer

LEGACY_CAPS: JsonObject = {
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    "tools": {},
}
SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "seconds": {"type": "number", "minimum": 0},
        "outcome": {"type": "string", "enum": ["completed", "failed"]},
    },
    "required": ["seconds"],
    "additionalProperties": False,
}


def tool(name: str = "long_job", support: str | None = "optional", **extra: Any) -> JsonObject:
    entry: JsonObject = {"name": name, "inputSchema": SCHEMA, **extra}
    if support is not None:
        entry["execution"] = {"taskSupport": support}
    return entry


def legacy(**options: Any) -> FakeServer:
    options.setdefault("tools", [tool()])
    return FakeServer(capabilities=LEGACY_CAPS, **options)


def modern(**options: Any) -> FakeServer:
    options.setdefault("tools", [tool(support=None)])
    return FakeServer(modern=True, **options)


def connected(server: FakeServer, **connect: Any) -> McpClient:
    client = McpClient(server, record=Observed())
    client.connect(**connect)
    return client


class Observed(KnownTasks):
    """A record of known tasks that only remembers what it heard (its file is never opened)."""

    def __init__(self) -> None:
        super().__init__(Path("/nonexistent/known-tasks.sqlite3"))
        self.sightings: list[tuple[str, str, str | None, str | None]] = []
        self.gone_ids: list[str] = []
        self.detached_ids: list[str] = []

    def seen(self, task: Task, *, via: str, session_id: str | None, tool: str | None) -> None:
        self.sightings.append((task.taskId, via, session_id, tool))

    def seen_page(
        self, page: Sequence[tuple[Task, str | None]], *, via: str, first: bool, last: bool
    ) -> None:
        for task, session_id in page:
            self.seen(task, via=via, session_id=session_id, tool=None)

    def gone(self, task_id: str) -> None:
        self.gone_ids.append(task_id)

    def detached(self, task_id: str) -> None:
        self.detached_ids.append(task_id)


def observed(client: McpClient) -> Observed:
    assert isinstance(client.record, Observed)
    return client.record


# -- arguments from the command line -----------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "parsed"),
    [
        ("name=Ada", ("name", "Ada")),
        ("seconds:=5", ("seconds", 5)),
        ("flags:=[1, true, null]", ("flags", [1, True, None])),
        ("url=http://x/?a=b", ("url", "http://x/?a=b")),  # the first '=' ends the key
        ("text=a:=b", ("text", "a:=b")),
        ("a:b=c", ("a:b", "c")),
        ("empty=", ("empty", "")),
        ('obj:={"k": "v"}', ("obj", {"k": "v"})),
        (r"a\=b=c", ("a=b", "c")),
        (r"time\:=12", ("time:", "12")),  # an escaped ':' is part of the key
        (r"a\\:=1", ("a\\", 1)),
    ],
)
def test_items_follow_httpie(item: str, parsed: tuple[str, object]) -> None:
    assert parse_item(item)[:2] == parsed


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("seconds", "neither KEY=VALUE"),
        ("=value", "no KEY"),
        (":=1", "no KEY"),
        ("seconds:=five", "not valid JSON"),
    ],
)
def test_malformed_items_are_usage_errors(item: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_item(item)


def test_args_option_and_items_combine(tmp_path: Any) -> None:
    path = tmp_path / "args.json"
    path.write_text('{"seconds": 1, "outcome": "failed"}')
    assert tool_arguments(["outcome=completed"], f"@{path}") == {
        "seconds": 1,
        "outcome": "completed",
    }
    assert tool_arguments([], '{"a": [1]}') == {"a": [1]}
    with pytest.raises(UsageError, match="must be a JSON object"):
        tool_arguments([], "[1, 2]")
    with pytest.raises(UsageError, match="not valid JSON"):
        tool_arguments([], "{nope")
    with pytest.raises(UsageError, match="cannot read"):
        tool_arguments([], f"@{tmp_path / 'missing.json'}")
    with pytest.raises(UsageError, match="given twice"):
        tool_arguments(["a=1", "a:=2"], None)


# -- the gate and the schema: nothing is sent unless every check passes ------------------------


def test_legacy_start_sends_params_task_and_keeps_the_session() -> None:
    server = legacy(sessions=True)
    client = connected(server)
    report = start_task(client, StartRequest("long_job", {"seconds": 5}, ttl_ms=60_000))
    assert report.task is not None
    assert report.task.taskId.startswith("started-")
    assert server.tool_calls == [
        {"name": "long_job", "arguments": {"seconds": 5}, "task": {"ttl": 60_000}}
    ]
    assert report.session_id == "session-1"
    assert server.kept == ["session-1"]  # no DELETE at close: the task lives in it
    assert observed(client).sightings == [
        (report.task.taskId, "tools/call", "session-1", "long_job")
    ]
    assert report.notes == []


def test_modern_start_declares_the_extension_and_sends_no_ttl() -> None:
    server = modern()
    client = connected(server)
    report = start_task(client, StartRequest("long_job", {"seconds": 5}, ttl_ms=60_000))
    assert report.task is not None
    (params,) = server.tool_calls
    assert "task" not in params
    assert params["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}, "url": {}},
    }
    assert server.headers[-1]["Mcp-Name"] == "long_job"
    assert any("--ttl was not sent" in note for note in report.notes)
    assert report.session_id is None
    assert server.kept == []


@pytest.mark.parametrize("support", ["forbidden", None])
def test_a_tool_that_forbids_tasks_is_refused_by_name(support: str | None) -> None:
    server = legacy(tools=[tool("plain", support=support)])
    with pytest.raises(TaskCallForbidden, match="tool 'plain' does not take task-augmented"):
        start_task(connected(server), StartRequest("plain", {"seconds": 1}))
    assert server.tool_calls == []


def test_modern_tools_carry_no_task_support_and_are_not_refused() -> None:
    server = modern(tools=[tool("plain", support=None)])
    assert start_task(connected(server), StartRequest("plain", {"seconds": 1})).task


def test_without_task_augmented_tool_calls_nothing_is_sent() -> None:
    server = FakeServer(capabilities={"tasks": {"list": {}}}, tools=[tool()])
    with pytest.raises(UnsupportedError, match="task-augmented tools/call"):
        start_task(connected(server), StartRequest("long_job", {"seconds": 1}))
    assert "tools/list" not in server.calls
    assert server.tool_calls == []


def test_tools_are_found_across_pages_and_an_unknown_one_is_named() -> None:
    tools = [tool(f"t{n}") for n in range(5)]
    server = legacy(tools=tools, tool_page_size=2)
    assert start_task(connected(server), StartRequest("t4", {"seconds": 1})).task
    assert server.calls.count("tools/list") == 3
    with pytest.raises(UsageError, match=r"no tool 'nope' \(its tools: t0, t1, t2, t3, t4\)"):
        start_task(connected(server), StartRequest("nope", {}))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "'seconds' is a required property"),
        ({"seconds": "5"}, "seconds: '5' is not of type 'number'"),
        ({"seconds": -1}, "seconds: -1 is less than the minimum of 0"),
        ({"seconds": 1, "outcome": "maybe"}, "outcome: 'maybe' is not one of"),
        ({"seconds": 1, "extra": 1}, "Additional properties are not allowed"),
    ],
)
def test_arguments_are_checked_against_the_schema(arguments: JsonObject, message: str) -> None:
    server = legacy()
    with pytest.raises(UsageError, match=message) as caught:
        start_task(connected(server), StartRequest("long_job", arguments))
    assert "nothing was sent" in caught.value.message
    assert server.tool_calls == []


def test_a_schema_that_cannot_be_used_is_a_note_not_a_refusal() -> None:
    broken = tool(inputSchema={"type": "no-such-type"})
    server = legacy(tools=[broken])
    report = start_task(connected(server), StartRequest("long_job", {"x": 1}))
    assert report.task is not None
    assert any("cannot be used" in note for note in report.notes)


def test_a_call_the_server_runs_at_once_is_a_result_not_a_task() -> None:
    for server in (legacy(inline_tools={"long_job"}), modern(inline_tools={"long_job"})):
        client = connected(server)
        report = start_task(client, StartRequest("long_job", {"seconds": 1}))
        assert report.task is None
        assert report.result is not None
        assert report.result["content"][0]["text"] == "long_job ran"
        assert report.exit_code is ExitCode.OK
        assert observed(client).sightings == []


def test_a_stop_before_the_call_sends_nothing() -> None:
    server = legacy()
    report = start_task(
        connected(server), StartRequest("long_job", {"seconds": 1}), stop=lambda: True
    )
    assert report.interrupted
    assert report.task is None
    assert server.tool_calls == []
    assert report.exit_code is ExitCode.INTERRUPTED


# -- result: tasks/result (2025-11-25) or inlined (2026-07-28) ---------------------------------


def result_kind(server: FakeServer, task_id: str, **options: Any) -> tuple[str, ExitCode]:
    report = fetch_result(connected(server), task_id, sleep=lambda s: None, **options)
    return report.kind, report.exit_code


def test_legacy_result_asks_tasks_result_only_once_terminal() -> None:
    server = legacy()
    server.add("done", "completed")
    server.results["done"] = {"content": [{"type": "text", "text": "42"}], "isError": False}
    report = fetch_result(connected(server), "done")
    assert report.outcome is not None
    assert report.outcome.result == server.results["done"]
    assert server.calls[-2:] == ["tasks/get", "tasks/result"]
    server.add("running", "working")
    assert result_kind(server, "running", wait_timeout=0) == ("pending", ExitCode.PENDING)
    assert server.calls[-1] == "tasks/get"  # a working task never gets a blocking tasks/result


def test_legacy_result_waits_for_the_task_to_finish() -> None:
    server = legacy()
    server.add("t", "working")
    server.gets_until_cancelled["t"] = 3  # the third tasks/get shows it cancelled
    assert result_kind(server, "t", wait_timeout=5) == ("cancelled", ExitCode.RESULT_CANCELLED)


def test_legacy_outcomes() -> None:
    server = legacy()
    server.add("tool-error", "failed")
    server.results["tool-error"] = {"content": [], "isError": True}
    server.add("rpc-error", "failed")
    server.result_errors["rpc-error"] = {"code": -32603, "message": "boom"}
    assert result_kind(server, "tool-error") == ("tool-error", ExitCode.RESULT_IS_ERROR)
    assert result_kind(server, "rpc-error") == ("failed", ExitCode.RESULT_FAILED)
    report = fetch_result(connected(server), "rpc-error")
    assert report.outcome is not None
    assert report.outcome.error == {"code": -32603, "message": "boom"}


def test_a_result_that_vanished_is_not_found() -> None:
    server = legacy()
    server.add("done", "completed")
    server.result_errors["done"] = {"code": -32602, "message": "Task not found"}
    with pytest.raises(TaskNotFound, match=r"^task done not found .*: Task not found$"):
        fetch_result(connected(server), "done")
    with pytest.raises(TaskNotFound, match=r"^task unknown not found "):
        fetch_result(connected(server), "unknown")


def test_modern_result_is_read_from_tasks_get() -> None:
    server = modern()
    server.add("ok", "completed", result={"content": [{"type": "text", "text": "hi"}]})
    server.add("tool-error", "completed", result={"content": [], "isError": True})
    server.add("failed", "failed", error={"code": -32603, "message": "crashed"})
    server.add("stopped", "cancelled")
    assert result_kind(server, "ok") == ("completed", ExitCode.OK)
    assert result_kind(server, "tool-error") == ("tool-error", ExitCode.RESULT_IS_ERROR)
    assert result_kind(server, "failed") == ("failed", ExitCode.RESULT_FAILED)
    assert result_kind(server, "stopped") == ("cancelled", ExitCode.RESULT_CANCELLED)
    assert "tasks/result" not in server.calls


# -- recorded sessions: rejoined by themselves, reported gone when ended ------------------------


def scoped_server() -> FakeServer:
    """A session-scoped server (like SDK 1.x) with a task owned by an older session."""
    server = legacy(sessions=True)
    server.add("mine", "working")
    server.owners["mine"] = "old-session"
    server.add("shared", "working")
    return server


def test_a_recorded_task_is_asked_about_in_its_own_session() -> None:
    server = scoped_server()
    client = connected(server, task_sessions={"mine": "old-session"})
    assert client.get_task("mine").status == "working"
    assert server.request_sessions[-1] == "old-session"
    assert client.get_task("shared").status == "working"
    assert server.request_sessions[-1] == "session-1"  # our own
    assert observed(client).sightings[0] == ("mine", "tasks/get", "old-session", None)
    with pytest.raises(TaskNotFound, match=r"^task mine not found "):
        connected(scoped_server()).get_task("mine")  # without the record: not visible


def test_a_task_whose_session_ended_is_gone_and_forgotten() -> None:
    server = scoped_server()
    server.ended.add("old-session")
    client = connected(server, task_sessions={"mine": "old-session"})
    with pytest.raises(
        SessionTaskGone, match=r"the session that owned it \(old-session\) has ended"
    ):
        client.get_task("mine")
    assert "mine" in observed(client).gone_ids
    # in a bulk cancel it is not-found, and the run goes on
    server = scoped_server()
    server.ended.add("old-session")
    client = connected(server, task_sessions={"mine": "old-session"})
    report = CancelRun(client, sleep=lambda s: None).run(
        [Target("mine", named=False), Target("shared", named=False)]
    )
    assert [r.outcome for r in report.results] == [Outcome.NOT_FOUND, Outcome.CANCELLED]
    assert report.exit_code is ExitCode.OK


def test_an_ended_session_of_a_task_visible_anyway_only_detaches_it() -> None:
    server = legacy(sessions=True)
    server.add("global", "working")  # no owner: any session sees it
    server.ended.add("old-session")
    client = connected(server, task_sessions={"global": "old-session"})
    assert client.get_task("global").status == "working"
    assert observed(client).detached_ids == ["global"]
    client.get_task("global")
    assert server.request_sessions[-1] == "session-1"  # no longer routed


def test_routes_need_sessions_and_ids_of_our_own() -> None:
    server = scoped_server()
    client = connected(server, task_sessions={"mine": "old-session"})
    client.get_task("mine")
    # in a session shared with another client, our request ids must not collide with its
    assert str(client._next_id()).startswith("mcptask-")
    # the modern era has no sessions: recorded ones are ignored
    modern_server = modern()
    modern_server.add("mine", "working")
    assert connected(modern_server, task_sessions={"mine": "s"}).get_task("mine").status
    assert modern_server.request_sessions[-1] is None


def test_refresh_known_sorts_and_reports_the_gone() -> None:
    server = legacy()
    server.add("old", "working", createdAt="2026-01-01T00:00:00Z")
    server.add("new", "completed", createdAt="2026-02-01T00:00:00Z")
    client = connected(server)
    refreshed = refresh_known(client, ["old", "missing", "new"])
    assert [task.taskId for task in refreshed.tasks] == ["new", "old"]
    assert refreshed.gone == ["missing"]
    assert [task.taskId for task in refreshed.select(None)] == ["old"]
    assert observed(client).gone_ids == ["missing"]
