"""The one function that turns a run's report into the process exit code (design.md)."""

from __future__ import annotations

from mcptask.errors import ExitCode
from mcptask.operations.outcomes import CancelReport
from mcptask.operations.watch import WatchReport


def exit_code_for(report: CancelReport | WatchReport) -> ExitCode:
    """The exit code a cancel or watch report implies.

    cancel: interrupted (130) > the error that stopped the run (its own code) > a task that
    failed (6) > a task still pending (7) > success (0).
    watch: interrupted (130) > nothing to watch (0) > timed out unsettled (7) > with
    --exit-status, a task that did not complete (7) > success (0).
    """
    if report.interrupted:
        return ExitCode.INTERRUPTED
    if isinstance(report, CancelReport):
        if report.fatal is not None:
            return report.fatal.exit_code
        if report.failed:
            return ExitCode.TASK_FAILED
        return ExitCode.PENDING if report.pending else ExitCode.OK
    if not report.tasks:
        return ExitCode.OK
    if report.timed_out or (report.exit_status and not report.all_completed):
        return ExitCode.PENDING
    return ExitCode.OK
