"""`exit_code_for`: the one function that turns a cancel or watch report into an exit code."""

from __future__ import annotations

import pytest

from mcptask.cli.exit_codes import exit_code_for
from mcptask.errors import AuthError, ExitCode
from mcptask.operations.outcomes import CancelReport, CancelResult, Outcome
from mcptask.operations.watch import WatchedTask, WatchReport
from mcptask.protocol import Task


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
    assert exit_code_for(report) is code


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
    assert exit_code_for(report) is code
