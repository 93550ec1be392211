"""`mcptask list`: the tasks, and why a list came back empty."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mcptask.output import documents
from mcptask.output.views.base import View
from mcptask.protocol import JsonObject, Task

STREAMING_FORMATS = ("jsonl", "ids", "json")


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

    @property
    def streams(self) -> bool:
        """True for the formats `stream` prints (all but the table)."""
        return self.screen.format in STREAMING_FORMATS

    def stream(
        self,
        pages: Iterable[list[Task]],
        about: Listing,
        *,
        sort_key: Callable[[Task], int] | None,
        limit: int | None = None,
    ) -> None:
        """Print the tasks of `pages` as `show` would print them all (see
        `output/list_stream.py`), in memory that does not grow with the list; `about` says
        why a list may be empty (its own `tasks` are not used). On an error from `pages`,
        the tasks already printed are counted in the exception's message."""
        from mcptask.errors import McptaskError
        from mcptask.output.list_stream import ListStream

        stream = ListStream(self.screen, sort_key=sort_key, limit=limit)
        try:
            stream.write(pages)
        except McptaskError as exc:
            if stream.printed:
                count = stream.printed
                exc.message += (
                    f" (after {count} task{'s were' if count != 1 else ' was'} printed: "
                    "the list is incomplete)"
                )
            raise
        if not stream.listed:
            self.screen.warn(_empty_list_reasons(about))

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
