"""`mcptask connect`: the server panel, or its JSON document."""

from __future__ import annotations

from dataclasses import dataclass

from mcptask.output import documents, tables
from mcptask.output.views.base import View
from mcptask.protocol import JsonObject, ServerInfo


@dataclass(frozen=True)
class Connection:
    """What `connect` learned: the server, and how it was reached."""

    server: ServerInfo
    transport: str
    target: str
    session_id: str | None


class ConnectView(View[Connection]):
    """A panel on a terminal; one document in JSON."""

    command = "connect"
    formats = ("table", "json", "jsonl")

    def table(self, shown: Connection) -> None:
        """The server panel, and a plain word when the server has no tasks."""
        self.screen.out.print(
            tables.server_panel(
                shown.server,
                transport=shown.transport,
                target=shown.target,
                session_id=shown.session_id,
            )
        )
        if not shown.server.task_support.tasks:
            self.screen.warn("this server offers no tasks: list, get and cancel will not work here")

    def document(self, shown: Connection) -> JsonObject:
        """The `connect -o json` document."""
        return documents.connect_document(
            shown.server,
            transport=shown.transport,
            target=shown.target,
            session_id=shown.session_id,
        )
