"""Each report's `exit_code` (cancel, watch, result, start): the code the command exits with."""

from __future__ import annotations

import pytest

from mcptask.errors import AuthError, ExitCode
from mcptask.operations.outcomes import CancelReport, CancelResult, Outcome
from mcptask.operations.polling import ResultReport
from mcptask.operations.start import StartReport
from mcptask.operations.watch import WatchedTask, WatchReport
from mcptask.protocol.tasks import Task, TaskOutcome


def result(outcome: Outcome, *, named: bool = True) -> CancelResult:
    return CancelResult("t", outcome, None, None, named)


@pytest.mark.parametrize(
    ("report", "code"),
    [
        (CancelReport(results=[]), ExitCode.OK),
        (CancelReport(results=[result(Outcome.CANCELLED)]), ExitCode.OK),
        (CancelReport(results=[result(Outcome.ALREADY_FINISHED)]), ExitCode.OK),
        (CancelReport(results=[result(Outcome.REQUESTED)]), ExitCode.OK),
        (CancelReport(results=[result(Outcome.NOT_FOUND, named=False)]), ExitCode.OK),
        (CancelReport(results=[result(Outcome.NOT_FOUND)]), ExitCode.TASK_FAILED),
        (CancelReport(results=[result(Outcome.ERROR)]), ExitCode.TASK_FAILED),
        (CancelReport(results=[result(Outcome.PENDING)]), ExitCode.PENDING),
        # a failure outranks something pending
        (
            CancelReport(results=[result(Outcome.PENDING), result(Outcome.ERROR)]),
            ExitCode.TASK_FAILED,
        ),
        # the error that stopped the run outranks the tasks
        (
            CancelReport(results=[result(Outcome.ERROR)], fatal=AuthError("no")),
            ExitCode.AUTH,
        ),
        # an interruption outranks everything
        (
            CancelReport(
                results=[result(Outcome.SKIPPED)], interrupted=True, fatal=AuthError("no")
            ),
            ExitCode.INTERRUPTED,
        ),
    ],
)
def test_cancel_report(report: CancelReport, code: ExitCode) -> None:
    assert report.exit_code is code


def watched(status: str | None) -> WatchedTask:
    task = Task(taskId="t", status=status) if status is not None else None
    return WatchedTask("t", task=task, gone=status is None)


@pytest.mark.parametrize(
    ("report", "code"),
    [
        (WatchReport([], interrupted=False, timed_out=False, exit_status=True), ExitCode.OK),
        (
            WatchReport(
                [watched("completed")], interrupted=False, timed_out=False, exit_status=True
            ),
            ExitCode.OK,
        ),
        (
            WatchReport([watched("failed")], interrupted=False, timed_out=False, exit_status=False),
            ExitCode.OK,
        ),
        (
            WatchReport([watched("failed")], interrupted=False, timed_out=False, exit_status=True),
            ExitCode.PENDING,
        ),
        (
            WatchReport([watched(None)], interrupted=False, timed_out=False, exit_status=True),
            ExitCode.PENDING,
        ),
        (
            WatchReport([watched("working")], interrupted=False, timed_out=True, exit_status=False),
            ExitCode.PENDING,
        ),
        (
            WatchReport([watched("working")], interrupted=True, timed_out=True, exit_status=True),
            ExitCode.INTERRUPTED,
        ),
    ],
)
def test_watch_report(report: WatchReport, code: ExitCode) -> None:
    assert report.exit_code is code


def outcome(status: str, result: object = None, error: object = None) -> TaskOutcome:
    return TaskOutcome("t", status, result, error)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("report", "code"),
    [
        (ResultReport(Task(taskId="t", status="completed"), outcome("completed", {})), 0),
        # isError decides, whichever status the era gives such a task
        (
            ResultReport(
                Task(taskId="t", status="completed"), outcome("completed", {"isError": True})
            ),
            9,
        ),
        (ResultReport(Task(taskId="t", status="failed"), outcome("failed", {"isError": True})), 9),
        (ResultReport(Task(taskId="t", status="failed"), outcome("failed", None, {"code": 1})), 10),
        (ResultReport(Task(taskId="t", status="failed"), outcome("failed", {"_meta": {}})), 10),
        (
            ResultReport(
                Task(taskId="t", status="cancelled"), outcome("cancelled", {"isError": True})
            ),
            11,
        ),
        (ResultReport(Task(taskId="t", status="working"), None), 7),
        (ResultReport(Task(taskId="t", status="working"), None, interrupted=True), 130),
        (StartReport("tool", Task(taskId="t", status="working"), None), 0),
        (StartReport("tool", None, {"content": []}), 0),
        (StartReport("tool", None, {"content": [], "isError": True}), 9),
        (StartReport("tool", None, None, interrupted=True), 130),
    ],
)
def test_result_and_start_reports(report: ResultReport | StartReport, code: int) -> None:
    assert report.exit_code == code


def test_the_new_codes_are_the_documented_ones() -> None:
    assert (ExitCode.RESULT_IS_ERROR, ExitCode.RESULT_FAILED, ExitCode.RESULT_CANCELLED) == (
        9,
        10,
        11,
    )
