"""The one place that turns a run's report into the process exit code (README, "Exit
codes"): a mapping from each kind of report to its rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from mcptask.errors import ExitCode
from mcptask.operations.outcomes import CancelReport
from mcptask.operations.result import ResultReport
from mcptask.operations.start import StartReport
from mcptask.operations.watch import WatchReport

Report: TypeAlias = CancelReport | WatchReport | ResultReport | StartReport

RESULT_CODES: dict[str, ExitCode] = {
    "completed": ExitCode.OK,
    "tool-error": ExitCode.RESULT_IS_ERROR,
    "failed": ExitCode.RESULT_FAILED,
    "cancelled": ExitCode.RESULT_CANCELLED,
    "pending": ExitCode.PENDING,
}
"""`result`: the exit code of each kind of outcome."""


def _cancel(report: CancelReport) -> ExitCode:
    """The error that stopped the run (its own code) > a task that failed (6) > a task still
    pending (7) > success (0)."""
    if report.fatal is not None:
        return report.fatal.exit_code
    if report.failed:
        return ExitCode.TASK_FAILED
    return ExitCode.PENDING if report.pending else ExitCode.OK


def _watch(report: WatchReport) -> ExitCode:
    """Nothing to watch (0) > timed out unsettled (7) > with --exit-status, a task that did
    not complete (7) > success (0)."""
    if report.tasks and (report.timed_out or (report.exit_status and not report.all_completed)):
        return ExitCode.PENDING
    return ExitCode.OK


def _result(report: ResultReport) -> ExitCode:
    """Not finished in time (7), cancelled (11), the tool reported an error (9), failed (10),
    completed (0)."""
    return RESULT_CODES[report.kind]


def _start(report: StartReport) -> ExitCode:
    """A task was made (0); the server ran the call at once: as `result` would for its
    result (0, or 9 for `isError`)."""
    if report.result is not None and report.result.get("isError") is True:
        return ExitCode.RESULT_IS_ERROR
    return ExitCode.OK


RULES: dict[type[Any], Callable[[Any], ExitCode]] = {
    CancelReport: _cancel,
    WatchReport: _watch,
    ResultReport: _result,
    StartReport: _start,
}
"""Each kind of report -> the rule that gives its exit code (after an interruption, 130)."""


def exit_code_for(report: Report) -> ExitCode:
    """The exit code a report implies: interrupted (130) outranks what its rule says."""
    if report.interrupted:
        return ExitCode.INTERRUPTED
    return RULES[type(report)](report)
