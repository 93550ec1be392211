"""`mcptask list`: the tasks, and why a list came back empty."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcptask.output import documents
from mcptask.output.views.base import View
from mcptask.protocol import JsonObject, Task


@dataclass(frozen=True)
class Listing:
    """The tasks to show, and what is needed to explain an empty list."""

    tasks: list[Task]
    transport: str
    filtered: bool
    joined: bool
    gone: list[str] | None = None
    """With `--known`: recorded ids the server no longer knows (now forgotten); None without."""


class ListView(View[Listing]):
    """A table, a document, one line per task, or ids; an empty list is explained on stderr."""

    command = "list"

    def show(self, shown: Listing) -> None:
        """Print the tasks, then the likely reasons when there were none."""
        super().show(shown)
        self.gone(shown.gone or [])
        if not shown.tasks:
            self.screen.warn(_empty_list_reasons(shown))

    def table(self, shown: Listing) -> None:
        """The task table (nothing at all for an empty list)."""
        from mcptask.output import tables

        if shown.tasks:
            self.screen.out.print(tables.task_table(shown.tasks))

    def document(self, shown: Listing) -> JsonObject:
        """The `list -o json` document."""
        return documents.list_document(shown.tasks, shown.gone)

    def lines(self, shown: Listing) -> Iterable[JsonObject]:
        """One task per line."""
        return (task.to_wire() for task in shown.tasks)

    def ids(self, shown: Listing) -> Iterable[str]:
        """One id per line."""
        return (task.taskId for task in shown.tasks)


def _empty_list_reasons(listing: Listing) -> str:
    if listing.filtered:
        return "no tasks with that status"
    if listing.gone is not None:
        return (
            "no recorded task of this server is left"
            if listing.gone
            else "no task of this server is recorded here (mcptask start records the tasks "
            "it starts; get, list, cancel and watch record the tasks they see)"
        )
    if listing.transport == "stdio":
        return (
            "no tasks: this server was started by mcptask just now over stdio, so its task "
            "store is likely empty; connect to a long-running server with --url instead"
        )
    reasons = "the tasks expired (ttl), or the server lists none"
    if not listing.joined:
        reasons = (
            "the server keeps tasks per session and this is a new one (join the session "
            "that made them with --session-id, or use --known for the tasks recorded here), "
            + reasons
        )
    return f"no tasks; likely reasons: {reasons}"
