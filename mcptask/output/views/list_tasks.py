"""`mcptask list`: the tasks, and why a list came back empty.

One rendering path for every format and both orders. In the server's order, `-o jsonl` and
`-o ids` print each page as it arrives, so that a reader sees the first tasks at once and
`| head` stops the listing. Newest first is known only after the last page: each task is
rendered as it comes and kept, with its key, to be sorted (stably) at the end. A table and
`-o json` are printed whole, so that a failure half way never leaves half a document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import itemgetter

from mcptask.errors import McptaskError
from mcptask.output.screen import compact_json
from mcptask.output.views import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task

WRITE_TASKS = 1000
"""Tasks gathered into each write while printing output kept until the last page."""


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
    _printed = 0
    """Tasks whose output has reached stdout (for the message of a listing cut short)."""

    def show(self, shown: Listing) -> None:
        """Print `shown.tasks` as they are, as `stream` prints a single page."""
        self.stream([shown.tasks], shown, sort_key=None)

    def stream(
        self,
        pages: Iterable[list[Task]],
        about: Listing,
        *,
        sort_key: Callable[[Task], int] | None,
        limit: int | None = None,
    ) -> None:
        """Print the tasks of `pages`: largest `sort_key` first (stably), else in the order
        given; at most `limit` of them. `about` says what is gone (`--known`) and why a list
        may be empty (its own `tasks` are not used). On an error from `pages`, the tasks
        already printed are counted in the exception's message."""
        self._printed = 0
        try:
            listed = self._write(pages, sort_key, limit, about.gone)
        except McptaskError as exc:
            if self._printed:
                count = self._printed
                exc.message += (
                    f" (after {count} task{'s were' if count != 1 else ' was'} printed: "
                    "the list is incomplete)"
                )
            raise
        self.gone(about.gone or [])
        if not listed:
            self.screen.warn(_empty_list_reasons(about))

    def _write(
        self,
        pages: Iterable[list[Task]],
        sort_key: Callable[[Task], int] | None,
        limit: int | None,
        gone: list[str] | None,
    ) -> int:
        """Print the tasks in the screen's format; returns how many were listed."""
        output = self.screen.format
        if output in ("table", "json"):  # printed whole, after the last page
            tasks = [task for page in pages for task in page]
            if sort_key is not None:
                tasks.sort(key=sort_key, reverse=True)  # stable: ties keep the order they came
            shown = tasks[:limit]
            if output == "json":
                wire = [task.to_wire() for task in shown]
                document: JsonObject = {"tasks": wire, "count": len(wire)}
                if gone is not None:
                    document["gone"] = gone
                self.screen.json(document)
            elif shown:
                from mcptask.output import tables

                tables.print_tasks(self.screen.out, shown)
            return len(tasks)
        render = self._id_line if output == "ids" else lambda task: compact_json(task.to_wire())
        if sort_key is None:  # each page as it comes
            for page in pages:
                if page:
                    self.screen.text("".join([render(task) for task in page]))
                    self._printed += len(page)
                if self.screen.reader_gone:
                    break
            return self._printed
        # Only the rendered text of each task is kept, with its key: far less than the tasks.
        keyed = [(sort_key(task), render(task)) for page in pages for task in page]
        keyed.sort(key=itemgetter(0), reverse=True)  # stable: ties keep the order they came
        listed, texts = len(keyed), [text for _, text in keyed[:limit]]
        del keyed
        for start in range(0, len(texts), WRITE_TASKS):
            self.screen.text("".join(texts[start : start + WRITE_TASKS]))
            if self.screen.reader_gone:
                break
        return listed

    def _id_line(self, task: Task) -> str:
        return self.screen.id_lines([task.taskId])


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
