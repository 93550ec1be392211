"""`mcptask forget`: what was dropped from the record of known tasks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcptask.output import documents
from mcptask.output.sanitize import clean
from mcptask.output.views.base import View
from mcptask.protocol.jsonrpc import JsonObject


@dataclass(frozen=True)
class Forgotten:
    """The ids dropped, those asked for that were not recorded, and whose record it was."""

    forgotten: list[str]
    unknown: list[str]
    server: str | None
    """The server's label, or None when the record of every server was meant."""


class ForgetView(View[Forgotten]):
    """A line per id and a count, a document, or the ids."""

    command = "forget"
    formats = ("table", "json", "ids")

    def show(self, shown: Forgotten) -> None:
        """The forgotten ids, then the ids that were not recorded (stderr)."""
        super().show(shown)
        if shown.unknown:
            self.screen.warn(
                "not recorded here: " + ", ".join(clean(task_id) for task_id in shown.unknown)
            )

    def table(self, shown: Forgotten) -> None:
        """One id per line, then the count."""
        for task_id in shown.forgotten:
            self.screen.out.print(clean(task_id), markup=False, highlight=False)
        where = f"of {clean(shown.server)}" if shown.server else "of every server"
        count = len(shown.forgotten)
        self.screen.note(f"forgot {count} task{'s' if count != 1 else ''} {where}")

    def document(self, shown: Forgotten) -> JsonObject:
        """`{"forgotten": [...], "notRecorded": [...], "server": ...}`."""
        return documents.forget_document(shown.forgotten, shown.unknown, shown.server)

    def ids(self, shown: Forgotten) -> Iterable[str]:
        """The forgotten ids."""
        return shown.forgotten
