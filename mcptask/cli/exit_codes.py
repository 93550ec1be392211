"""The one place that turns a run's report into the process exit code (the codes are listed
in docs/reference/exit-codes.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode
from mcptask.operations.outcomes import CancelReport
from mcptask.operations.polling import ResultReport
from mcptask.operations.start import StartReport
from mcptask.operations.watch import WatchReport

if TYPE_CHECKING:
    from mcptask.operations.answer import AnswerReport
    from mcptask.operations.handles import ImportReport

RESULT_CODES: dict[str, ExitCode] = {
    "completed": ExitCode.OK,
    "tool-error": ExitCode.RESULT_IS_ERROR,
    "failed": ExitCode.RESULT_FAILED,
    "cancelled": ExitCode.RESULT_CANCELLED,
    "pending": ExitCode.PENDING,
}
"""`result`: the exit code of each kind of outcome."""

ANSWER_CODES: dict[str, ExitCode] = {
    "working": ExitCode.OK,
    "completed": ExitCode.OK,
    "input_required": ExitCode.OK,
    "sent": ExitCode.OK,
    "failed": ExitCode.TASK_FAILED,
    "cancelled": ExitCode.TASK_FAILED,
    "gone": ExitCode.TASK_FAILED,
    "not-waiting": ExitCode.TASK_FAILED,
    "unchanged": ExitCode.PENDING,
    "unheard": ExitCode.PENDING,
}
"""`answer`: the exit code of each kind of report (the answer taken: 0)."""


TASK_LEVEL = (ExitCode.TASK_FAILED, ExitCode.PENDING, ExitCode.OK)
"""The codes of one server's run that are about its tasks, the most telling first; any
other code says the server itself failed."""


def fleet_exit_code(codes: Iterable[int], *, interrupted: bool) -> ExitCode:
    """How the codes of several servers' runs combine (each as that server alone would
    exit): interrupted (130) > a server failed (12) > a task failed (6) > a task still
    pending (7) > all fine (0)."""
    if interrupted:
        return ExitCode.INTERRUPTED
    seen = set(codes)
    if seen - set(TASK_LEVEL):
        return ExitCode.SERVERS_FAILED
    return next((code for code in TASK_LEVEL if code in seen), ExitCode.OK)


def exit_code_for(
    report: CancelReport | WatchReport | ResultReport | StartReport | AnswerReport | ImportReport,
) -> ExitCode:
    """The exit code a report implies; interrupted (130) outranks the rest."""
    if report.interrupted:
        return ExitCode.INTERRUPTED
    if isinstance(report, CancelReport):
        # The error that stopped the run (its own code) > a task that failed (6) > a task
        # still pending (7) > success (0).
        if report.fatal is not None:
            return report.fatal.exit_code
        if report.failed:
            return ExitCode.TASK_FAILED
        return ExitCode.PENDING if report.pending else ExitCode.OK
    if isinstance(report, WatchReport):
        # Nothing to watch (0); timed out unsettled, or with --exit-status a task that did not
        # complete (7).
        unsettled = report.timed_out or (report.exit_status and not report.all_completed)
        return ExitCode.PENDING if report.tasks and unsettled else ExitCode.OK
    if isinstance(report, ResultReport):
        return RESULT_CODES[report.kind]
    # Imported here: every cancel and watch would otherwise load answer's and handles' code.
    from mcptask.operations.answer import AnswerReport
    from mcptask.operations.handles import ImportReport

    if isinstance(report, AnswerReport):
        return ANSWER_CODES[report.kind]
    if isinstance(report, ImportReport):  # a handle whose task is gone, or an error: 6
        return ExitCode.TASK_FAILED if report.failed else ExitCode.OK
    # start: a task was made (0); the server ran the call at once: as `result` would (0 or 9).
    is_error = report.result is not None and report.result.get("isError") is True
    return ExitCode.RESULT_IS_ERROR if is_error else ExitCode.OK
