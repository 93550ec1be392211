"""`mcptask get`: one task in full."""

from __future__ import annotations

from collections.abc import Iterable

from mcptask.output.views.base import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task


class GetView(View[Task]):
    """The task as a two-column table, or as the server sent it."""

    command = "get"

    def table(self, shown: Task) -> None:
        """Every field, unknown ones included."""
        from mcptask.output import tables

        self.screen.out.print(tables.task_detail(shown))

    def document(self, shown: Task) -> JsonObject:
        """The task as the server sent it (camelCase, unknown fields kept)."""
        return shown.to_wire()

    def ids(self, shown: Task) -> Iterable[str]:
        """Its id."""
        return [shown.taskId]
