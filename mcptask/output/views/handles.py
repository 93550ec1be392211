"""The views of `handles`: this server's recorded tasks as task handles of the official tasks
library (a JSON list, or one per line), and what became of handles taken in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcptask.output.sanitize import clean
from mcptask.output.views.base import View
from mcptask.protocol.jsonrpc import JsonObject

if TYPE_CHECKING:
    from mcptask.operations.handles import ImportReport


class ExportView(View[list[JsonObject]]):
    """The handles as the library reads them: a JSON list, or one per line."""

    command = "handles"
    formats = ("json", "jsonl")

    def document(self, shown: list[JsonObject]) -> object:
        return shown

    def lines(self, shown: list[JsonObject]) -> Iterable[object]:
        return shown


class ImportView(View["ImportReport"]):
    """Each handle's outcome: a line each, or `{"endpointId", "handles": [...]}`."""

    command = "handles --import"
    formats = ("table", "json", "jsonl")

    def show(self, shown: ImportReport) -> None:
        super().show(shown)
        others = [handle.task_id for handle in shown.handles if handle.other_endpoint]
        if others:
            self.screen.warn(
                f"{len(others)} handle(s) were written by mcptask for another server; they "
                "were taken in for this one, as you named it"
            )
        if shown.interrupted:
            self.screen.error("interrupted: the handles after these were not taken in")

    def table(self, shown: ImportReport) -> None:
        said = {"recorded": "recorded ({})", "gone": "gone: the server no longer knows it"}
        self.screen.plain_lines(
            f"{handle.task_id}: "
            + said.get(handle.outcome, "server error: {}").format(
                clean(handle.status or handle.message or "")
            )
            for handle in shown.handles
        )

    def document(self, shown: ImportReport) -> JsonObject:
        return {"endpointId": shown.endpoint, "handles": list(self.lines(shown))}

    def lines(self, shown: ImportReport) -> Iterable[JsonObject]:
        return [
            {
                "taskId": handle.task_id,
                "outcome": handle.outcome,
                "status": handle.status,
                "message": handle.message,
            }
            for handle in shown.handles
        ]
