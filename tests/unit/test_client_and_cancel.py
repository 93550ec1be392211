"""The client (handshake, gate, paging) and the cancel run, against an in-process fake server."""

from __future__ import annotations

import pytest

from mcptask.cli.exit_codes import exit_code_for
from mcptask.client.exchange import RetryPolicy
from mcptask.client.session import McpClient
from mcptask.errors import (
    AnswerLost,
    ExitCode,
    NotDelivered,
    ProtocolViolation,
    ServerExited,
    UnsupportedError,
)
from mcptask.operations.cancel import CancelRun
from mcptask.operations.listing import collect_tasks
from mcptask.operations.outcomes import CancelResult, Outcome, Target, unique_targets
from mcptask.protocol.handshake import encode_header_value
from mcptask.protocol.tasks import Task
from tests.unit.fake_server import FakeServer, raise_error


def connected(server: FakeServer) -> McpClient:
    client = McpClient(server)
    client.connect()
    return client


def no_sleep(seconds: float) -> None:
    pass


def run(server: FakeServer, *ids: str, named: bool = True, **options: object) -> list[CancelResult]:
    cancel_run = CancelRun(connected(server), sleep=no_sleep, **options)  # type: ignore[arg-type]
    return cancel_run.run([Target(task_id, named) for task_id in ids]).results


def test_handshake_sends_initialized_and_reads_support() -> None:
    server = FakeServer(capabilities={"tasks": {"list": {}}})
    client = connected(server)
    # auto: the modern probe first, then the legacy handshake it falls back to
    assert server.calls == ["server/discover", "initialize", "notifications/initialized"]
    assert client.server.task_support.list
    assert not client.server.task_support.cancel


def test_gate_sends_nothing_and_names_what_is_offered() -> None:
    server = FakeServer(capabilities={"tasks": {"list": {}}})
    client = connected(server)
    with pytest.raises(UnsupportedError, match=r"tasks/cancel .*offers: get, list"):
        client.cancel_task("x")
    assert "tasks/cancel" not in server.calls


def test_no_tasks_capability_at_all() -> None:
    client = connected(FakeServer(capabilities={}))
    with pytest.raises(UnsupportedError, match="offers no tasks"):
        client.get_task("x")


def test_method_not_found_on_a_task_method_is_unsupported() -> None:
    server = FakeServer()
    server.add("a", "working")
    server.on_cancel["a"] = raise_error(-32601, "Method not found")
    with pytest.raises(UnsupportedError, match=r"does not support tasks/cancel \(-32601"):
        connected(server).cancel_task("a")


def test_list_follows_every_page_and_sorts_newest_first() -> None:
    server = FakeServer(page_size=2)
    for index in range(5):
        server.add(f"t{index}", "working", createdAt=f"2026-01-0{index + 1}T00:00:00Z")
    tasks = collect_tasks(connected(server))
    assert [task.taskId for task in tasks] == ["t4", "t3", "t2", "t1", "t0"]
    assert server.calls.count("tasks/list") == 3


def test_tolerant_task_reading() -> None:
    wrapped = Task.from_result({"task": {"taskId": "w", "status": "working"}}, method="m")
    assert wrapped.taskId == "w"
    assert wrapped.ttl is None
    flat = Task.from_result({"taskId": "f", "status": "completed", "vendor": {"x": 1}}, method="m")
    assert flat.to_wire() == {"taskId": "f", "status": "completed", "vendor": {"x": 1}}
    with pytest.raises(ProtocolViolation, match="not a task"):
        Task.from_result({"status": "working"}, method="tasks/get")


def test_cancel_outcomes_for_every_case() -> None:
    server = FakeServer()
    server.add("working", "working")
    server.add("done", "completed")
    server.add("lenient", "completed")
    server.on_cancel["lenient"] = lambda current: dict(current)  # "succeeds", stays completed
    server.add("boom", "working")
    server.on_cancel["boom"] = raise_error(-32603, "internal")
    results = {r.task_id: r for r in run(server, "working", "done", "lenient", "boom", "ghost")}
    assert results["working"].outcome is Outcome.CANCELLED
    assert results["done"].outcome is Outcome.ALREADY_FINISHED
    assert results["done"].status == "completed"
    assert results["lenient"].outcome is Outcome.ALREADY_FINISHED
    assert results["boom"].outcome is Outcome.ERROR
    assert results["ghost"].outcome is Outcome.NOT_FOUND
    assert results["ghost"].failed


def test_not_found_from_a_selector_is_not_a_failure() -> None:
    (result,) = run(FakeServer(), "vanished", named=False)
    assert result.outcome is Outcome.NOT_FOUND
    assert not result.failed


def test_cooperative_cancel_is_confirmed_by_polling() -> None:
    server = FakeServer()
    server.add("slow", "working")
    server.on_cancel["slow"] = lambda current: dict(current)  # acknowledged, still working
    server.gets_until_cancelled["slow"] = 3
    (result,) = run(server, "slow")
    assert result.outcome is Outcome.CANCELLED
    assert server.calls.count("tasks/get") == 3


def test_never_settling_task_is_pending_after_the_wait() -> None:
    server = FakeServer()
    server.add("stuck", "working")
    server.on_cancel["stuck"] = lambda current: dict(current)
    cancel_run = CancelRun(connected(server), wait_timeout=0.0, sleep=no_sleep)
    report = cancel_run.run([Target("stuck", True)])
    assert report.results[0].outcome is Outcome.PENDING
    assert exit_code_for(report) is ExitCode.PENDING


def test_no_wait_reports_what_the_cancel_answered() -> None:
    server = FakeServer()
    server.add("a", "working")
    (result,) = run(server, "a", wait=False)
    assert result.outcome is Outcome.CANCELLED
    assert "tasks/get" not in server.calls


def test_stop_skips_the_rest_and_reports_every_task_once() -> None:
    server = FakeServer()
    for index in range(10):
        server.add(f"t{index}", "working")
    heard: list[CancelResult] = []
    progress: list[int] = []
    cancel_run = CancelRun(
        connected(server),
        sleep=no_sleep,
        stop=lambda: len(progress) >= 4,
        on_result=heard.append,
        on_progress=lambda: progress.append(1),
    )
    report = cancel_run.run([Target(f"t{index}", False) for index in range(10)])
    assert report.interrupted
    assert exit_code_for(report) is ExitCode.INTERRUPTED
    assert [r.task_id for r in report.results] == [f"t{index}" for index in range(10)]
    assert sorted(r.task_id for r in heard) == sorted(r.task_id for r in report.results)
    assert report.counts()["skipped"] == 6
    assert server.calls.count("tasks/cancel") == 4


def test_fatal_error_mid_run_keeps_the_report_whole() -> None:
    server = FakeServer()
    for task_id in ("a", "b", "c"):
        server.add(task_id, "working")
    server.on_cancel["b"] = raise_error(-32601, "Method not found")
    report = CancelRun(connected(server), sleep=no_sleep).run(
        [Target(task_id, True) for task_id in ("a", "b", "c")]
    )
    # b's cancel was sent and refused: an error, never "not attempted"; c was never sent.
    assert [r.outcome for r in report.results] == [
        Outcome.CANCELLED,
        Outcome.ERROR,
        Outcome.SKIPPED,
    ]
    assert "does not support tasks/cancel" in (report.results[1].message or "")
    assert report.results[2].message == "not attempted: the run stopped on an error"
    assert exit_code_for(report) is ExitCode.UNSUPPORTED


def test_unique_targets_keeps_named_first_and_each_id_once() -> None:
    targets = unique_targets(["b", "a", "b"], ["a", "c"])
    assert [(t.task_id, t.named) for t in targets] == [("b", True), ("a", True), ("c", False)]


# -- the modern era (2026-07-28) -----------------------------------------------------------------


def test_modern_server_is_discovered_and_every_request_carries_meta_and_headers() -> None:
    server = FakeServer(modern=True)
    server.add("t 1", "working")
    client = connected(server)
    assert client.server.era == "modern"
    assert client.server.extensions == ("io.modelcontextprotocol/tasks",)
    assert client.get_task("t 1").status == "working"
    assert server.calls == ["server/discover", "tasks/get"]
    assert server.headers[-1] == {"Mcp-Method": "tasks/get", "Mcp-Name": "t 1"}


def test_modern_has_no_list_and_says_what_to_do_instead() -> None:
    client = connected(FakeServer(modern=True))
    with pytest.raises(UnsupportedError, match=r"no tasks/list.*--from-file"):
        collect_tasks(client)


def test_modern_cancel_is_an_acknowledgement_confirmed_by_polling() -> None:
    server = FakeServer(modern=True)
    server.add("a", "working")
    server.add("done", "completed")
    results = {r.task_id: r for r in run(server, "a", "done", "ghost")}
    assert results["a"].outcome is Outcome.CANCELLED
    assert results["done"].outcome is Outcome.ALREADY_FINISHED
    assert results["ghost"].outcome is Outcome.NOT_FOUND


def test_modern_ack_without_waiting_is_requested_and_not_a_failure() -> None:
    server = FakeServer(modern=True)
    server.add("a", "working")
    cancel_run = CancelRun(connected(server), wait=False, sleep=no_sleep)
    report = cancel_run.run([Target("a", True)])
    assert report.results[0].outcome is Outcome.REQUESTED
    assert exit_code_for(report) is ExitCode.OK
    assert "tasks/get" not in server.calls


def test_pinned_legacy_protocol_skips_discovery() -> None:
    server = FakeServer()
    McpClient(server, protocol="2025-11-25").connect()
    assert server.calls[0] == "initialize"


def test_pinned_modern_protocol_does_not_fall_back() -> None:
    with pytest.raises(UnsupportedError, match="does not speak 2026-07-28"):
        McpClient(FakeServer(), protocol="2026-07-28").connect()


def test_header_values_that_are_not_header_safe_use_the_base64_sentinel() -> None:
    assert encode_header_value("plain-id_1") == "plain-id_1"
    assert encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?="
    assert encode_header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="


def test_a_task_already_cancelled_before_our_cancel_is_already_finished() -> None:
    server = FakeServer()
    server.add("old", "cancelled")
    (result,) = run(server, "old")
    assert result.outcome is Outcome.ALREADY_FINISHED
    assert result.status == "cancelled"


def test_requests_in_a_joined_session_use_ids_of_their_own() -> None:
    import json

    import httpx

    from mcptask.transport.http import HttpTransport

    seen: list[tuple[str | None, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        body = json.loads(request.content)
        seen.append((request.headers.get("Mcp-Session-Id"), body.get("id")))
        if body.get("method") == "server/discover":
            return httpx.Response(
                400,
                json={
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32600, "message": "no session"},
                },
            )
        if "id" not in body:
            return httpx.Response(202)
        result: dict[str, object] = {"taskId": "t", "status": "working"}
        if body["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {}},
                "serverInfo": {"name": "s", "version": "1"},
            }
        return httpx.Response(
            200,
            json={"jsonrpc": "2.0", "id": body["id"], "result": result},
            headers={"Mcp-Session-Id": "ours"},
        )

    transport = HttpTransport("http://server.test/mcp", transport=httpx.MockTransport(handler))
    client = McpClient(transport)
    client.connect(join_session="theirs")
    client.get_task("t")
    session, request_id = seen[-1]
    assert session == "theirs"
    assert isinstance(request_id, str)
    assert request_id.startswith("mcptask-")


# -- truthful outcomes when answers are lost ---------------------------------------------------


def test_a_lost_cancel_answer_is_resolved_with_tasks_get() -> None:
    server = FakeServer()
    server.add("a", "working")
    server.add("b", "working")
    server.after[("tasks/cancel", "a")] = [AnswerLost("reset after the server acted")]
    report = CancelRun(connected(server), sleep=no_sleep).run(
        [Target("a", True), Target("b", True)]
    )
    assert [(r.outcome, r.status) for r in report.results] == [
        (Outcome.CANCELLED, "cancelled"),
        (Outcome.CANCELLED, "cancelled"),
    ]
    assert "the answer to the cancel was lost" in (report.results[0].message or "")
    assert server.calls.count("tasks/cancel") == 2  # a's was not sent twice: get showed it
    assert exit_code_for(report) is ExitCode.OK


def test_a_cancel_lost_before_the_server_acted_is_sent_again() -> None:
    server = FakeServer()
    server.add("a", "working")
    server.before[("tasks/cancel", "a")] = [AnswerLost("reset before the server acted")]
    report = CancelRun(connected(server), sleep=no_sleep).run([Target("a", True)])
    assert report.results[0].outcome is Outcome.CANCELLED
    assert server.calls.count("tasks/cancel") == 2
    assert server.tasks["a"]["status"] == "cancelled"


def test_an_effect_that_cannot_be_learned_is_unknown_and_never_skipped() -> None:
    server = FakeServer()
    for task_id in ("a", "b"):
        server.add(task_id, "working")
    gone = ServerExited("the server process exited with code 1")
    server.after[("tasks/cancel", "a")] = [gone]
    server.before[("tasks/get", "a")] = [gone]
    report = CancelRun(connected(server), sleep=no_sleep).run(
        [Target("a", True), Target("b", True)]
    )
    assert [r.outcome for r in report.results] == [Outcome.UNKNOWN, Outcome.SKIPPED]
    message = report.results[0].message or ""
    assert message.count("the server process exited") == 1  # said once, not twice
    assert message.endswith("; tasks/get failed the same way")
    assert report.results[1].message == "not attempted: the run stopped on an error"
    assert exit_code_for(report) is ExitCode.UNREACHABLE
    assert report.counts()["unknown"] == 1


def test_an_unreadable_cancel_answer_is_resolved_then_stops_the_run() -> None:
    server = FakeServer()
    for task_id in ("a", "b"):
        server.add(task_id, "working")
    server.after[("tasks/cancel", "a")] = [
        ProtocolViolation("the server's answer is not valid JSON")
    ]
    report = CancelRun(connected(server), sleep=no_sleep).run(
        [Target("a", True), Target("b", True)]
    )
    assert [r.outcome for r in report.results] == [Outcome.CANCELLED, Outcome.SKIPPED]
    assert exit_code_for(report) is ExitCode.PROTOCOL


def test_a_cancel_that_never_reached_the_server_is_skipped_saying_so() -> None:
    server = FakeServer()
    server.add("a", "working")
    server.before[("tasks/cancel", "a")] = [NotDelivered("cannot connect: refused")] * 10
    client = connected(server)
    client.retry = RetryPolicy(retries=2, sleep=no_sleep)
    report = CancelRun(client, sleep=no_sleep).run([Target("a", True)])
    assert report.results[0].outcome is Outcome.SKIPPED
    assert report.results[0].message == "not sent: cannot connect: refused"
    assert server.calls.count("tasks/cancel") == 3
    assert server.tasks["a"]["status"] == "working"


def test_a_refusal_whose_follow_up_get_fails_keeps_the_refusal() -> None:
    server = FakeServer()
    server.add("a", "completed")  # its cancel is refused with -32602
    server.add("b", "working")
    server.before[("tasks/get", "a")] = [ServerExited("the server process exited with code 1")]
    report = CancelRun(connected(server), sleep=no_sleep).run(
        [Target("a", True), Target("b", True)]
    )
    assert [r.outcome for r in report.results] == [Outcome.ERROR, Outcome.SKIPPED]
    assert report.results[0].message != "not attempted: the run stopped on an error"
    assert report.results[0].message == "Cannot cancel task in terminal state 'completed'"
    assert server.calls.count("tasks/cancel") == 1  # a's was sent; b's never was
    assert exit_code_for(report) is ExitCode.UNREACHABLE
