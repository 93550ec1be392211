"""The views of one task: `get` (the task in full), `start` (the task it made, or the result
of a call the server ran at once) and `result` (a finished task's tool result)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcptask.errors import UsageError
from mcptask.output.sanitize import clean
from mcptask.output.screen import Screen
from mcptask.output.views import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import INPUT_REQUIRED, Task

if TYPE_CHECKING:
    from mcptask.operations.polling import ResultReport
    from mcptask.operations.start import StartReport
    from mcptask.output.views.watch import WatchView


class GetView(View[Task]):
    """The task as a two-column table, or as the server sent it."""

    command = "get"

    def table(self, shown: Task) -> None:
        from mcptask.output import tables

        self.screen.out.print(tables.task_detail(shown))

    def document(self, shown: Task) -> JsonObject:
        return shown.to_wire()  # as the server sent it: camelCase, unknown fields kept

    def ids(self, shown: Task) -> Iterable[str]:
        return [shown.taskId]


class StartView(View["StartReport"]):
    """The task in full, its document, or its id; notes on stderr. With `--watch`, the view
    that follows it comes from `watch_view`."""

    command = "start"

    def __init__(self, screen: Screen, *, watching: bool = False) -> None:
        if watching and screen.format == "json":
            raise UsageError(
                "start --watch has no json output (one document cannot come both before and "
                "after the watch); use -o jsonl (the start line, then one line per change), "
                "-o ids or -o table"
            )
        super().__init__(screen)
        self._watching = watching

    def show(self, shown: StartReport) -> None:
        """The notes, then the task or the result, then how to follow it up (table only);
        a start stopped before the call was sent says so alone."""
        if shown.interrupted:
            self.screen.error("interrupted before the call was sent: nothing was started")
            return
        for note in shown.notes:
            self.screen.warn(note)
        if shown.task is None:
            self.screen.warn(
                f"the server ran {shown.tool} at once, without making a task; its result follows"
            )
        super().show(shown)
        if shown.task is not None and self.screen.format == "table" and not self._watching:
            task_id = clean(shown.task.taskId)
            self.screen.note(f"recorded; follow it with: mcptask watch {task_id}")

    def table(self, shown: StartReport) -> None:
        from mcptask.output import tables

        if shown.task is not None:
            self.screen.out.print(tables.task_detail(shown.task))
        elif shown.result is not None:
            self.screen.out.print(tables.tool_result_text(shown.result))

    def document(self, shown: StartReport) -> JsonObject:
        return {
            "tool": shown.tool,
            "task": shown.task.to_wire() if shown.task is not None else None,
            "result": shown.result,
            "sessionId": shown.session_id,
        }

    def ids(self, shown: StartReport) -> Iterable[str]:
        return [shown.task.taskId] if shown.task is not None else []

    def watch_view(self) -> WatchView:
        """The view that follows the task: as `watch` shows it, silent with `-o ids`."""
        from mcptask.output.views.watch import SilentWatchView, WatchView

        if self.screen.format == "ids":
            return SilentWatchView(self.screen)
        return WatchView(self.screen)


_RESULT_WARNINGS = {
    "interrupted": "interrupted: task {} is still {}",
    "pending": "task {} is still {}: no result yet (wait longer with --wait-timeout SECONDS)",
    "input": "task {0} waits for input: no result until it is answered: mcptask answer {0}",
    "tool-error": "task {}: the tool reported an error (isError: true)",
    "failed": "task {} failed",
    "cancelled": "task {} was cancelled: it has no result",
}
"""What `result` says on stderr of a task without a plain result (its id, its status)."""


class ResultView(View["ResultReport"]):
    """The tool result's content as text (or the error), or the result document."""

    command = "result"
    formats = ("table", "json", "jsonl")

    def show(self, shown: ResultReport) -> None:
        """The outcome on stdout, then what it means on stderr."""
        super().show(shown)
        kind = shown.kind
        if kind == "pending" and shown.interrupted:
            kind = "interrupted"
        elif kind == "pending" and shown.task.status == INPUT_REQUIRED:
            kind = "input"
        if kind in _RESULT_WARNINGS:
            task = shown.task
            self.screen.warn(_RESULT_WARNINGS[kind].format(clean(task.taskId), clean(task.status)))

    def table(self, shown: ResultReport) -> None:
        from rich.text import Text

        from mcptask.output import tables

        outcome = shown.outcome
        if outcome is None:
            return
        if outcome.result is not None and shown.kind != "cancelled":
            self.screen.out.print(tables.tool_result_text(outcome.result))
        elif outcome.error is not None:  # a JSON-RPC error object, on one line
            code, message = outcome.error.get("code"), clean(outcome.error.get("message", ""))
            line = f"error {clean(code)}: {message}" if code is not None else f"error: {message}"
            self.screen.out.print(Text(line))

    def document(self, shown: ResultReport) -> JsonObject:
        outcome = shown.outcome
        return {
            "taskId": shown.task.taskId,
            "status": shown.task.status,
            "outcome": shown.kind,
            "result": outcome.result if outcome is not None else None,
            "error": outcome.error if outcome is not None else None,
        }
