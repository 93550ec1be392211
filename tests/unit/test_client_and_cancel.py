"""Listing and the cancel run, against an in-process fake server (the client alone is tested
in tests/unit/client/)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mcptask.client.exchange import RetryPolicy
from mcptask.client.session import McpClient
from mcptask.errors import (
    AnswerLost,
    ExitCode,
    NotDelivered,
    ProtocolViolation,
    ServerExited,
)
from mcptask.operations import cancel as cancel_module
from mcptask.operations.cancel import CancelRun
from mcptask.operations.listing import collect_tasks
from mcptask.operations.outcomes import CancelResult, Outcome, Selection, Target
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


def test_list_follows_every_page_and_sorts_newest_first() -> None:
    server = FakeServer(page_size=2)
    for index in range(5):
        server.add(f"t{index}", "working", createdAt=f"2026-01-0{index + 1}T00:00:00Z")
    tasks = collect_tasks(connected(server))
    assert [task.taskId for task in tasks] == ["t4", "t3", "t2", "t1", "t0"]
    assert server.calls.count("tasks/list") == 3


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
    assert report.exit_code is ExitCode.PENDING


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
    assert report.exit_code is ExitCode.INTERRUPTED
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
    assert report.exit_code is ExitCode.UNSUPPORTED


def test_targets_keep_named_first_and_each_id_once() -> None:
    targets = Selection(["b", "a", "b"], [Task("a", "working"), Task("c", "working")]).targets
    assert [(t.task_id, t.named) for t in targets] == [("b", True), ("a", True), ("c", False)]


# -- the modern era (2026-07-28) -----------------------------------------------------------------


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
    assert report.exit_code is ExitCode.OK
    assert "tasks/get" not in server.calls


def test_a_task_already_cancelled_before_our_cancel_is_already_finished() -> None:
    server = FakeServer()
    server.add("old", "cancelled")
    (result,) = run(server, "old")
    assert result.outcome is Outcome.ALREADY_FINISHED
    assert result.status == "cancelled"


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
    assert report.exit_code is ExitCode.OK


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
    assert report.exit_code is ExitCode.UNREACHABLE
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
    assert report.exit_code is ExitCode.PROTOCOL


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
    assert report.exit_code is ExitCode.UNREACHABLE


def test_rate_spaces_the_cancels_by_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--rate 10`: a cancel request every 0.1 s at most (the clock here moves only while
    the run waits, so the waits are exactly the spacing)."""
    clock = [100.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(round(seconds, 6))
        clock[0] += seconds

    monkeypatch.setattr(cancel_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    server = FakeServer()
    for index in range(4):
        server.add(f"t{index}", "working")
    cancel_run = CancelRun(connected(server), wait=False, rate=10, sleep=sleep)
    report = cancel_run.run([Target(f"t{index}", True) for index in range(4)])
    assert report.counts()["cancelled"] == 4
    assert waits == [0.1, 0.1, 0.1]
