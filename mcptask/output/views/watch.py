"""`mcptask watch`: a live table on a terminal, one line per change anywhere else."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from mcptask.operations.watch import GONE, Change, Watch, WatchedTask, WatchReport
from mcptask.output.sanitize import clean
from mcptask.output.screen import OutputFormat, Screen
from mcptask.output.views.base import View
from mcptask.protocol.inputs import task_message
from mcptask.protocol.jsonrpc import JsonObject

if TYPE_CHECKING:
    from rich.live import Live
    from rich.text import Text

_LIVE_COLUMNS = ("TASK ID", "STATUS", "MESSAGE", "AGE", "SINCE CHANGE")
AGES_EVERY_SECONDS = 2.0
"""How often the live table is redrawn when only its ages move (every second while they
count seconds): a redraw of a screenful of tasks costs some 15 ms (bench/watch_idle_cpu.py)."""


class WatchView(View[WatchReport]):
    """Changes as they happen (a live table, lines, or JSON lines); `-o json` prints the
    final state of every task once the watch ends."""

    command = "watch"
    formats: ClassVar[tuple[OutputFormat, ...]] = ("table", "jsonl", "json")

    def __init__(self, screen: Screen) -> None:
        super().__init__(screen)
        self._live: Live | None = None
        self._shown: object = None
        """What the live table last showed but its ages, and at which screen size."""
        self._ages: object = None
        self._drawn = 0.0
        if screen.format == "table" and screen.out.is_terminal:
            from rich.live import Live

            # No redraw thread: the view is redrawn after each polling round, so idle means idle.
            self._live = Live(console=screen.out, auto_refresh=False)

    @contextmanager
    def following(self, watch: Watch) -> Iterator[None]:
        """Keep the live table on screen while the block runs; draw it one last time."""
        if self._live is None:
            yield
            return
        with self._live:
            try:
                yield
            finally:
                self.redraw(watch)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Take the live table off the screen while the block runs (a prompt), then put it
        back."""
        if self._live is None:
            yield
            return
        self._live.stop()
        try:
            yield
        finally:
            self._shown = None  # draw it again at once
            self._live.start()

    def redraw(self, watch: Watch) -> None:
        """After a polling round: redraw the live table if what it shows has changed, at
        once, or if only its ages have, every AGES_EVERY_SECONDS (the other outputs print
        changes). Idle, with every age in minutes, it is redrawn once a minute."""
        if self._live is None:
            return
        from rich.console import Group
        from rich.table import Table

        size = self.screen.out.size
        *columns, footer = _live_table(watch, size.height - 3)
        shown, ages, now = (size, *columns[:3], footer), columns[3:], time.monotonic()
        if shown == self._shown and (ages == self._ages or now - self._drawn < AGES_EVERY_SECONDS):
            return
        self._shown, self._ages, self._drawn = shown, ages, now
        table = Table(box=None, header_style="bold", pad_edge=False)
        for header in _LIVE_COLUMNS:
            table.add_column(header, overflow="ellipsis", no_wrap=True)
        table.add_row(*columns)
        self._live.update(Group(table, footer), refresh=True)

    def change(self, change: Change) -> None:
        """One task changed: a timestamped line, or a JSON line."""
        if self.screen.format == "jsonl":
            self.screen.json_line(change.to_json())
        elif self.screen.format == "table" and self._live is None:
            status = clean(change.status)
            moved = f"{clean(change.previous)} -> {status}" if change.previous else status
            message = f"  {clean(change.message)}" if change.message else ""
            stamp = change.at.isoformat(timespec="seconds").replace("+00:00", "Z")
            self.screen.text(f"{stamp}  {clean(change.task_id)}  {moved}{message}\n")

    def problem(self, task_id: str, message: str) -> None:
        """The server answered a task's poll with an error (said once per new error)."""
        self.screen.warn(f"{task_id}: server error: {message}")

    def show(self, shown: WatchReport) -> None:
        """The final document (json: the other outputs showed each change as it came), then
        why the watch ended, if that needs saying."""
        if self.screen.format == "json":
            self.screen.json(self.document(shown))
        if shown.interrupted:
            return
        if not shown.tasks:
            self.screen.warn("no tasks to watch")
        elif shown.timed_out:
            self.screen.warn("timed out with tasks still running")

    def document(self, shown: WatchReport) -> JsonObject:
        """`watch -o json`: every task as last seen, and how the watch ended."""
        return {
            "tasks": [_watched_document(watched) for watched in shown.tasks],
            "interrupted": shown.interrupted,
            "timedOut": shown.timed_out,
        }


class SilentWatchView(WatchView):
    """`start --watch -o ids`: the id was printed; the watch prints nothing more on stdout."""

    formats: ClassVar[tuple[OutputFormat, ...]] = ("ids",)


def _watched_document(watched: WatchedTask) -> JsonObject:
    document: JsonObject = watched.task.to_wire() if watched.task else {"taskId": watched.task_id}
    if watched.gone:
        document["gone"] = True
    return document


def _live_table(watch: Watch, max_rows: int) -> tuple[Text, ...]:
    """The live table's columns and footer: the tasks that fit the screen, unsettled first.

    Each column is one Text, a line per task: Rich lays out five cells instead of five per
    task, which halves the cost of a redraw (the same text; a cell's colour no longer spans
    the blanks that pad it). Only the rows shown are built: Rich would render every row and
    then crop the screen.
    """
    from rich.text import Text

    from mcptask.output import tables

    now = datetime.now(UTC)
    columns = tuple(Text() for _ in _LIVE_COLUMNS)
    ids, statuses, messages, ages, changed = columns
    ordered = sorted(watch.tasks.values(), key=lambda watched: watched.settled)
    shown = ordered[: max(1, max_rows - 1)] if len(ordered) > max_rows else ordered
    for row, watched in enumerate(shown):
        if row:
            for column in columns:
                column.append("\n")
        task = watched.task
        ids.append(clean(watched.task_id))
        gone = watched.status == GONE
        statuses.append_text(Text("gone", "dim") if gone else tables.status_text(watched.status))
        messages.append(clean(watched.error or (task_message(task) if task else "")))
        ages.append(tables.age(task.created if task else None, now))
        changed.append(tables.age(watched.changed_at, now))
    if len(shown) < len(ordered):
        ids.append("\n").append(f"… {len(ordered) - len(shown)} more", style="dim")
    counts: Counter[str] = Counter()
    for status, count in Counter(watched.status for watched in watch.tasks.values()).items():
        counts[clean(status or "unknown")] += count
    footer = Text(
        " · ".join(f"{count} {status}" for status, count in sorted(counts.items())), style="bold"
    )
    pushes = f"status pushes: {watch.pushes_seen}"
    footer.append(
        f"   polling every {watch.poll_interval():g}s   {pushes}   Ctrl-C to stop", style="dim"
    )
    return (*columns, footer)
