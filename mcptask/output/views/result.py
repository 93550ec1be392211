"""`mcptask result`: a finished task's tool result as text, or its document."""

from __future__ import annotations

from mcptask.operations.result import ResultReport
from mcptask.output import documents, tables
from mcptask.output.sanitize import clean
from mcptask.output.views.base import View
from mcptask.protocol.jsonrpc import JsonObject


class ResultView(View[ResultReport]):
    """The tool result's content as text (or the error), or the result document."""

    command = "result"
    formats = ("table", "json", "jsonl")

    def show(self, shown: ResultReport) -> None:
        """The outcome on stdout, then what it means on stderr."""
        super().show(shown)
        task_id = clean(shown.task.taskId)
        kind = shown.kind
        if kind == "pending" and shown.interrupted:
            self.screen.warn(f"interrupted: task {task_id} is still {clean(shown.task.status)}")
        elif kind == "pending":
            self.screen.warn(
                f"task {task_id} is still {clean(shown.task.status)}: no result yet "
                "(wait longer with --wait-timeout SECONDS)"
            )
        elif kind == "tool-error":
            self.screen.warn(f"task {task_id}: the tool reported an error (isError: true)")
        elif kind == "failed":
            self.screen.warn(f"task {task_id} failed")
        elif kind == "cancelled":
            self.screen.warn(f"task {task_id} was cancelled: it has no result")

    def table(self, shown: ResultReport) -> None:
        """The result's content as text; for a failed task, its error."""
        outcome = shown.outcome
        if outcome is None:
            return
        if outcome.result is not None and shown.kind != "cancelled":
            self.screen.out.print(tables.tool_result_text(outcome.result))
        elif outcome.error is not None:
            self.screen.out.print(tables.error_text(outcome.error))

    def document(self, shown: ResultReport) -> JsonObject:
        """`{"taskId", "status", "outcome", "result", "error"}`, result and error as sent."""
        return documents.result_document(shown)
