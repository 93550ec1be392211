"""`mcptask cancel`: the prompt, the progress bar, results as they come, and the report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mcptask.operations.outcomes import CancelReport, CancelResult, Outcome, Selection
from mcptask.output.views import View
from mcptask.protocol.jsonrpc import JsonObject

PROGRESS_THRESHOLD = 5
"""Show a progress bar only for runs longer than this many tasks."""


@dataclass(frozen=True)
class CancelOutcome:
    """A finished run and the exit code `mcptask.cli` decided for it."""

    report: CancelReport
    exit_code: int


class CancelView(View[CancelOutcome]):
    """Everything `cancel` shows: on stdout the results; on stderr the prompt, progress,
    summary (for jsonl) and what went wrong."""

    command = "cancel"

    def confirmed(self, selection: Selection) -> bool:
        """Ask before a bulk cancel, only when a person is at the terminal."""
        from mcptask.output import tables

        if not (sys.stdin.isatty() and self.screen.err_is_terminal):
            return True
        from rich.prompt import Confirm

        tables.print_tasks(self.screen.err, selection.listed)
        count = len(selection.listed)
        return Confirm.ask(f"Cancel these {count} tasks?", console=self.screen.err, default=False)

    def declined(self) -> None:
        self.screen.warn("nothing cancelled")

    @contextmanager
    def progress(self, total: int) -> Iterator[Callable[[], None]]:
        """A progress bar on stderr for long runs on a terminal; a no-op otherwise."""
        if total <= PROGRESS_THRESHOLD or not self.screen.err_is_terminal:
            yield lambda: None
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        columns = (TextColumn("cancelling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self.screen.err, transient=True) as bar:
            task = bar.add_task("cancel", total=total)
            yield lambda: bar.advance(task)

    def result_ready(self, result: CancelResult) -> None:
        """One task's final word, streamed at once in jsonl (the other formats wait)."""
        if self.screen.format == "jsonl":
            self.screen.json_line(result.to_json())

    def dry_run(self, selection: Selection) -> None:
        DryRunView(self.screen).show(selection)

    def show(self, shown: CancelOutcome) -> None:
        """The report, then what stopped the run, if anything."""
        super().show(shown)
        report = shown.report
        if not report.results and not report.interrupted and report.fatal is None:
            self.screen.warn("no task matched; nothing to cancel")
        elif report.fatal is not None:
            self.screen.error(report.fatal.message)
        elif report.interrupted:
            self.screen.warn("interrupted: the tasks not attempted are reported as skipped")

    def table(self, shown: CancelOutcome) -> None:
        from mcptask.output import tables

        if shown.report.results:
            tables.print_cancels(self.screen.out, shown.report.results)
        self.screen.out.print(tables.cancel_summary(shown.report))

    def document(self, shown: CancelOutcome) -> JsonObject:
        report = shown.report
        return {
            "results": [result.to_json() for result in report.results],
            "summary": report.counts(),
            "interrupted": report.interrupted,
            "error": report.fatal.message if report.fatal is not None else None,
            "exitCode": shown.exit_code,
        }

    def jsonl(self, shown: CancelOutcome) -> None:
        """The lines went out as results came; the summary goes to stderr."""
        from mcptask.output import tables

        self.screen.err.print(tables.cancel_summary(shown.report))

    def ids(self, shown: CancelOutcome) -> Iterable[str]:
        return (r.task_id for r in shown.report.results if r.outcome is Outcome.CANCELLED)


class DryRunView(View[Selection]):
    """The selection of a dry run: the listed tasks, then named ids the list did not show
    (in a table, one per line; the count that would be cancelled on stderr)."""

    command = "cancel"

    def table(self, shown: Selection) -> None:
        from mcptask.output import tables

        if shown.listed:
            tables.print_tasks(self.screen.out, shown.listed)
        self.screen.plain_lines(shown.unlisted)
        count = len(shown.listed) + len(shown.unlisted)
        self.screen.warn(f"dry run: {count} task(s) would be cancelled; nothing was sent")

    def document(self, shown: Selection) -> JsonObject:
        return {"dryRun": True, "tasks": list(self.lines(shown))}

    def lines(self, shown: Selection) -> Iterable[JsonObject]:
        """Each task as listed; a named id the list did not show, as `{"taskId"}`."""
        listed = [task.to_wire() for task in shown.listed]
        return listed + [{"taskId": task_id} for task_id in shown.unlisted]

    def ids(self, shown: Selection) -> Iterable[str]:
        return [task.taskId for task in shown.listed] + shown.unlisted
