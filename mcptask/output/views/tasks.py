"""The views of tasks: `get`, `start`, `result` (a tool result), `list` and `cancel`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

from mcptask.errors import McptaskError, UsageError
from mcptask.output.sanitize import clean
from mcptask.output.screen import Screen, compact_json
from mcptask.output.views import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import INPUT_REQUIRED, Task

if TYPE_CHECKING:
    # Types only: get, start and result need none of list's and cancel's operations.
    from mcptask.operations.outcomes import CancelReport, CancelResult, Selection
    from mcptask.operations.polling import ResultReport
    from mcptask.operations.start import StartReport
    from mcptask.output.views.watch import WatchView


class GetView(View[Task]):
    """The task as a two-column table, or as the server sent it."""

    command = "get"

    def table(self, shown: Task) -> None:
        from mcptask.output import tables

        self.screen.out.print(tables.task_detail(shown))

    def document(self, shown: Task) -> JsonObject:
        return shown.to_wire()  # as the server sent it: camelCase, unknown fields kept

    def ids(self, shown: Task) -> Iterable[str]:
        return [shown.taskId]


class StartView(View["StartReport"]):
    """The task in full, its document, or its id; notes on stderr; `--watch`: `watch_view`."""

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
        if shown.interrupted:
            self.screen.error("interrupted before the call was sent: nothing was started")
            return
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
        from mcptask.output import tables

        if shown.task is not None:
            self.screen.out.print(tables.task_detail(shown.task))
        elif shown.result is not None:
            self.screen.out.print(tables.tool_result_text(shown.result))

    def document(self, shown: StartReport) -> JsonObject:
        return {
            "tool": shown.tool,
            "task": shown.task.to_wire() if shown.task is not None else None,
            "result": shown.result,
            "sessionId": shown.session_id,
        }

    def ids(self, shown: StartReport) -> Iterable[str]:
        return [shown.task.taskId] if shown.task is not None else []

    def watch_view(self) -> WatchView:
        from mcptask.output.views.watch import SilentWatchView, WatchView

        return (SilentWatchView if self.screen.format == "ids" else WatchView)(self.screen)


_RESULT_WARNINGS = {
    "interrupted": "interrupted: task {} is still {}",
    "pending": "task {} is still {}: no result yet (wait longer with --wait-timeout SECONDS)",
    "input": "task {0} waits for input: no result until it is answered: mcptask answer {0}",
    "tool-error": "task {}: the tool reported an error (isError: true)",
    "failed": "task {} failed",
    "cancelled": "task {} was cancelled: it has no result",
}
"""What `result` says on stderr of a task without a plain result (its id, its status)."""


class ResultView(View["ResultReport"]):
    """The tool result's content as text (or the error), or the result document."""

    command = "result"
    formats = ("table", "json", "jsonl")

    def show(self, shown: ResultReport) -> None:
        super().show(shown)
        kind = shown.kind
        if kind == "pending" and shown.interrupted:
            kind = "interrupted"
        elif kind == "pending" and shown.task.status == INPUT_REQUIRED:
            kind = "input"
        if kind in _RESULT_WARNINGS:
            task = shown.task
            self.screen.warn(_RESULT_WARNINGS[kind].format(clean(task.taskId), clean(task.status)))

    def table(self, shown: ResultReport) -> None:
        from rich.text import Text

        from mcptask.output import tables

        outcome = shown.outcome
        if outcome is None:
            return
        if outcome.result is not None and shown.kind != "cancelled":
            self.screen.out.print(tables.tool_result_text(outcome.result))
        elif outcome.error is not None:  # a JSON-RPC error object, on one line
            code, message = outcome.error.get("code"), clean(outcome.error.get("message", ""))
            line = f"error {clean(code)}: {message}" if code is not None else f"error: {message}"
            self.screen.out.print(Text(line))

    def document(self, shown: ResultReport) -> JsonObject:
        outcome = shown.outcome
        return {
            "taskId": shown.task.taskId,
            "status": shown.task.status,
            "outcome": shown.kind,
            "result": outcome.result if outcome is not None else None,
            "error": outcome.error if outcome is not None else None,
        }


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
    """A table, a document, one line per task, or ids; an empty list is explained on stderr.
    In the server's order, jsonl and ids print each page as it comes (`| head` stops the
    listing); newest first, each task is rendered as it comes and kept with its key, to be
    sorted at the end. A table and json are printed whole: never half a document."""

    command = "list"
    _printed = 0
    """Tasks whose output has reached stdout (for the message of a listing cut short)."""

    def show(self, shown: Listing) -> None:
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
        given; at most `limit` of them. `about` (but its `tasks`) explains an empty list. On
        an error from `pages`, the tasks already printed are counted in its message."""
        self._printed = 0
        try:
            listed = self._write(pages, sort_key, limit, about.gone)
        except McptaskError as exc:
            if count := self._printed:
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


PROGRESS_THRESHOLD = 5
"""Show a progress bar only for runs longer than this many tasks."""


class CancelView(View["CancelReport"]):
    """`cancel`'s results on stdout; its prompt, progress, jsonl summary and errors on stderr."""

    command = "cancel"

    def confirmed(self, selection: Selection) -> bool:
        """Ask before a bulk cancel, only when a person is at the terminal."""
        from mcptask.output import tables

        if not (sys.stdin.isatty() and self.screen.err_is_terminal):
            return True
        from rich.prompt import Confirm

        tables.print_tasks(self.screen.err, selection.listed)
        count = len(selection.listed)
        return Confirm.ask(f"Cancel these {count} tasks?", console=self.screen.err, default=False)

    def declined(self) -> None:
        self.screen.warn("nothing cancelled")

    @contextmanager
    def progress(self, total: int) -> Iterator[Callable[[], None]]:
        if total <= PROGRESS_THRESHOLD or not self.screen.err_is_terminal:
            yield lambda: None
            return
        from rich import progress

        columns = [progress.TextColumn("cancelling"), progress.BarColumn()]
        columns += [progress.MofNCompleteColumn(), progress.TimeElapsedColumn()]
        with progress.Progress(*columns, console=self.screen.err, transient=True) as bar:
            task = bar.add_task("cancel", total=total)
            yield lambda: bar.advance(task)

    def result_ready(self, result: CancelResult) -> None:
        """One task's final word, streamed at once in jsonl (the other formats wait)."""
        if self.screen.format == "jsonl":
            self.screen.json_line(result.to_json())

    def dry_run(self, selection: Selection) -> None:
        DryRunView(self.screen).show(selection)

    def show(self, shown: CancelReport) -> None:
        super().show(shown)
        if not shown.results and not shown.interrupted and shown.fatal is None:
            self.screen.warn("no task matched; nothing to cancel")
        elif shown.fatal is not None:
            self.screen.error(shown.fatal.message)
        elif shown.interrupted:
            self.screen.warn("interrupted: the tasks not attempted are reported as skipped")

    def table(self, shown: CancelReport) -> None:
        from mcptask.output import tables

        if shown.results:
            tables.print_cancels(self.screen.out, shown.results)
        self.screen.out.print(tables.cancel_summary(shown))

    def document(self, shown: CancelReport) -> JsonObject:
        return {
            "results": [result.to_json() for result in shown.results],
            "summary": shown.counts(),
            "interrupted": shown.interrupted,
            "error": shown.fatal.message if shown.fatal is not None else None,
            "exitCode": int(shown.exit_code),
        }

    def jsonl(self, shown: CancelReport) -> None:
        """The lines went out as results came; the summary goes to stderr."""
        from mcptask.output import tables

        self.screen.err.print(tables.cancel_summary(shown))

    def ids(self, shown: CancelReport) -> Iterable[str]:
        from mcptask.operations.outcomes import Outcome

        return (r.task_id for r in shown.results if r.outcome is Outcome.CANCELLED)


class DryRunView(View["Selection"]):
    """The selection of a dry run: the listed tasks, then named ids the list did not show."""

    command = "cancel"

    def table(self, shown: Selection) -> None:
        from mcptask.output import tables

        if shown.listed:
            tables.print_tasks(self.screen.out, shown.listed)
        self.screen.plain_lines(shown.unlisted)
        count = len(shown.listed) + len(shown.unlisted)
        self.screen.warn(f"dry run: {count} task(s) would be cancelled; nothing was sent")

    def document(self, shown: Selection) -> JsonObject:
        return {"dryRun": True, "tasks": list(self.lines(shown))}

    def lines(self, shown: Selection) -> Iterable[JsonObject]:
        listed = [task.to_wire() for task in shown.listed]
        return listed + [{"taskId": task_id} for task_id in shown.unlisted]

    def ids(self, shown: Selection) -> Iterable[str]:
        return [task.taskId for task in shown.listed] + shown.unlisted
