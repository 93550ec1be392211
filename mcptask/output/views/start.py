"""`mcptask start`: the task (or the result of a call the server ran at once), and with
`--watch` the view that follows it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from mcptask.errors import UsageError
from mcptask.operations.start import StartReport
from mcptask.output import documents, tables
from mcptask.output.sanitize import clean
from mcptask.output.screen import OutputFormat, Screen
from mcptask.output.views.base import View
from mcptask.output.views.watch import WatchView
from mcptask.protocol.jsonrpc import JsonObject


class StartView(View[StartReport]):
    """The task in full, its document, or its id; notes on stderr."""

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
        """The notes, then the task or the result, then how to follow it up (table only)."""
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
        """The task in full, or the tool's result as text."""
        if shown.task is not None:
            self.screen.out.print(tables.task_detail(shown.task))
        elif shown.result is not None:
            self.screen.out.print(tables.tool_result_text(shown.result))

    def document(self, shown: StartReport) -> JsonObject:
        """`{"tool", "task", "result", "sessionId"}`."""
        return documents.start_document(shown)

    def ids(self, shown: StartReport) -> Iterable[str]:
        """The task's id (nothing when no task was made)."""
        return [shown.task.taskId] if shown.task is not None else []

    def watch_view(self) -> WatchView:
        """The view that follows the task: as `watch` shows it, silent with `-o ids`."""
        if self.screen.format == "ids":
            return _SilentWatchView(self.screen)
        return WatchView(self.screen)


class _SilentWatchView(WatchView):
    """`start --watch -o ids`: the id was printed; the watch prints nothing more on stdout."""

    formats: ClassVar[tuple[OutputFormat, ...]] = ("ids",)

    def ids(self, shown: object) -> Iterable[str]:
        """Nothing: the id went out before the watch."""
        return []
