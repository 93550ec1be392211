"""`mcptask connect`: the server panel, or its JSON document."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcptask.output import documents
from mcptask.output.views.base import View
from mcptask.protocol.handshake import ServerInfo
from mcptask.protocol.jsonrpc import JsonObject


@dataclass(frozen=True)
class Connection:
    """What `connect` learned: the server, and how it was reached."""

    server: ServerInfo
    transport: str
    target: str
    session_id: str | None
    others: list[ServerInfo] = field(default_factory=list)
    """What the server offers in the other era it speaks (auto mode uses either)."""
    problems: list[str] = field(default_factory=list)


class ConnectView(View[Connection]):
    """A panel on a terminal; one document in JSON."""

    command = "connect"
    formats = ("table", "json", "jsonl")

    def show(self, shown: Connection) -> None:
        """The connection in the chosen format, then any problem met surveying the eras."""
        super().show(shown)
        for problem in shown.problems:
            self.screen.warn(problem)

    def table(self, shown: Connection) -> None:
        """The server panel, and a plain word when the server has no tasks."""
        from mcptask.output import tables

        self.screen.out.print(
            tables.server_panel(
                shown.server,
                others=shown.others,
                transport=shown.transport,
                target=shown.target,
                session_id=shown.session_id,
            )
        )
        offered = (era.task_support.tasks for era in (shown.server, *shown.others))
        if not any(offered):
            self.screen.warn("this server offers no tasks: list, get and cancel will not work here")

    def document(self, shown: Connection) -> JsonObject:
        """The `connect -o json` document."""
        return documents.connect_document(
            shown.server,
            others=shown.others,
            transport=shown.transport,
            target=shown.target,
            session_id=shown.session_id,
        )
