"""The one function that turns a run's report into the process exit code (design.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from mcptask.errors import ExitCode

if TYPE_CHECKING:
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
"""`result`: the exit code of each kind of outcome (README, "Exit codes")."""


def exit_code_for(report: Report) -> ExitCode:
    """The exit code a report implies.

    cancel: interrupted (130) > the error that stopped the run (its own code) > a task that
    failed (6) > a task still pending (7) > success (0).
    watch: interrupted (130) > nothing to watch (0) > timed out unsettled (7) > with
    --exit-status, a task that did not complete (7) > success (0).
    result: interrupted (130) > not finished in time (7) > cancelled (11) > the tool reported
    an error (9) > failed (10) > completed (0).
    start: interrupted before the call (130) > a task was made (0) > the server ran the call
    at once: as `result` would for its result (0, or 9 for `isError`).
    """
    if report.interrupted:
        return ExitCode.INTERRUPTED
    # Each kind of report is imported only when the ones before it did not match: a command
    # pays for its own (whose module it has loaded already), never for the others'.
    from mcptask.operations.outcomes import CancelReport

    if isinstance(report, CancelReport):
        if report.fatal is not None:
            return report.fatal.exit_code
        if report.failed:
            return ExitCode.TASK_FAILED
        return ExitCode.PENDING if report.pending else ExitCode.OK
    from mcptask.operations.result import ResultReport

    if isinstance(report, ResultReport):
        return RESULT_CODES[report.kind]
    from mcptask.operations.start import StartReport

    if isinstance(report, StartReport):
        if report.result is not None and report.result.get("isError") is True:
            return ExitCode.RESULT_IS_ERROR
        return ExitCode.OK
    if not report.tasks:
        return ExitCode.OK
    if report.timed_out or (report.exit_status and not report.all_completed):
        return ExitCode.PENDING
    return ExitCode.OK
