"""`mcptask watch`: a live table on a terminal, one line per change anywhere else; over
several servers (`FleetWatchView`), one table with a SERVER column, lines with the server."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from mcptask.operations.watch import GONE, Change, Watch, WatchedTask, WatchReport
from mcptask.output.sanitize import clean
from mcptask.output.screen import LabelledScreen, OutputFormat, Screen
from mcptask.output.views import View
from mcptask.output.views.fleet import Fleet, FleetView, ServerRun, interrupted
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

    @property
    def live(self) -> bool:
        return self._live is not None

    @contextmanager
    def following(self, watch: Watch | None) -> Iterator[None]:
        """Keep the live table on screen while the block runs; draw it one last time (of
        `watch`; without one, the caller draws)."""
        if self.screen.format != "table" or not self.screen.out.is_terminal:
            yield
            return
        from rich.live import Live

        # No redraw thread: the view is redrawn after each polling round, so idle means idle.
        self._live = Live(console=self.screen.out, auto_refresh=False)
        with self._live:
            try:
                yield
            finally:
                if watch is not None:
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
        if self._live is not None:
            self.draw([Sight.of(watch)])

    def draw(self, sights: list[Sight], note: str = "") -> None:
        """Redraw the live table of these watches (of several servers: a SERVER column,
        `note` in the footer) if what it shows has changed, at once, or if only its ages
        have, every AGES_EVERY_SECONDS. Idle, with every age in minutes, once a minute."""
        if self._live is None:
            return
        from rich.console import Group

        from mcptask.output import tables

        size = self.screen.out.size
        *columns, footer = _live_table(sights, size.height - 3, note)
        shown, ages, now = (size, *columns[:-2], footer), columns[-2:], time.monotonic()
        if shown == self._shown and (ages == self._ages or now - self._drawn < AGES_EVERY_SECONDS):
            return
        self._shown, self._ages, self._drawn = shown, ages, now
        several = any(sight.server is not None for sight in sights)
        headers = ("SERVER", *_LIVE_COLUMNS) if several else _LIVE_COLUMNS
        table = tables.grid(headers, [columns], overflow="ellipsis", no_wrap=True)
        self._live.update(Group(table, footer), refresh=True)

    def change(self, change: Change) -> None:
        if self.screen.format == "jsonl":
            self.screen.json_line(change.to_json())
        elif self.screen.format == "table" and self._live is None:
            self.screen.text(change_line(change))

    def problem(self, task_id: str, message: str) -> None:
        self.screen.warn(f"{task_id}: server error: {message}")

    def show(self, shown: WatchReport) -> None:
        """The final document (json: the other outputs showed each change as it came), then
        why the watch ended, if that needs saying."""
        if self.screen.format == "json":
            self.screen.json(self.document(shown))
        self.why_ended(shown)

    def why_ended(self, shown: WatchReport) -> None:
        if shown.interrupted:
            return
        if not shown.tasks:
            self.screen.warn("no tasks to watch")
        elif shown.timed_out:
            self.screen.warn("timed out with tasks still running")

    def document(self, shown: WatchReport) -> JsonObject:
        return {
            "tasks": [_watched_document(watched) for watched in shown.tasks],
            "interrupted": shown.interrupted,
            "timedOut": shown.timed_out,
        }


class SilentWatchView(WatchView):
    """`start --watch -o ids`: the id was printed; the watch prints nothing more on stdout."""

    formats: ClassVar[tuple[OutputFormat, ...]] = ("ids",)


class FleetWatchView(FleetView[WatchReport]):
    """`watch` over several servers: one live table with a SERVER column on a terminal,
    else each change as a line with its server; `-o json` prints every server's section
    once every watch has ended."""

    command = "watch"
    alone = WatchView

    def __init__(self, screen: Screen, names: list[str]) -> None:
        super().__init__(screen)
        self._names = names
        """The servers, in the order named: the table's order."""
        self.board = WatchView(screen)
        """The live table (on a terminal), drawn from every server's watch."""
        self._watches: dict[str, Watch] = {}
        self._sights: dict[str, Sight] = {}
        self._failed: list[str] = []

    def part(self, run: ServerRun[WatchReport], screen: Screen) -> WatchView:
        """The view of `run`'s own watch (on `screen`, its labelled one), which shows
        through this one."""
        return _ServerWatchView(self, run, screen)

    @contextmanager
    def following(self) -> Iterator[None]:
        """Keep the live table on screen while the watches run; draw it one last time."""
        with self.board.following(None):
            try:
                yield
            finally:
                self.redraw()

    def watching(self, server: str, watch: Watch) -> None:
        with self._lock:
            self._watches[server] = watch

    def watched(self, server: str) -> Watch | None:
        with self._lock:
            return self._watches.get(server)

    def wake_all(self) -> None:
        """Ctrl-C: cut every watch's wait short (each then sees the stop)."""
        with self._lock:
            watches = list(self._watches.values())
        for watch in watches:
            watch.wake()

    def ended(self, run: ServerRun[WatchReport]) -> None:
        """A server's run ended: a failed one is named under the live table."""
        if run.error is not None:
            with self._lock:
                self._failed.append(clean(run.server))
        self.redraw()

    def redraw(self, server: str | None = None, watch: Watch | None = None) -> None:
        """Take `server`'s sight of its `watch` (on the thread that runs it), and redraw
        the live table from every server's last sight."""
        if not self.board.live:
            return
        with self._lock:
            if server is not None and watch is not None:
                self._sights[server] = Sight.of(watch, server)
            failed = f"   failed: {', '.join(self._failed)}" if self._failed else ""
            sights = [self._sights[name] for name in self._names if name in self._sights]
            self.board.draw(sights, failed)

    def change(self, run: ServerRun[WatchReport], change: Change) -> None:
        if self.screen.format == "jsonl":
            self.line(run, change.to_json())
        elif self.screen.format == "table" and not self.board.live:
            with self._lock:
                self.screen.text(change_line(change, run.server))

    def show(self, shown: Fleet[WatchReport]) -> None:
        """The sections (json; the other outputs showed the changes as they came), why
        each server's watch ended if that needs saying, and the failures."""
        if self.screen.format == "json":
            self.screen.json(self.document(shown))
        for run in shown.runs:
            if run.report is not None and run.error is None:
                labelled = LabelledScreen(self.screen, run.server)
                WatchView(labelled).why_ended(run.report)
        self.failures(shown)

    def document(self, shown: Fleet[WatchReport]) -> JsonObject:
        sections = self.sections(shown)
        return {"servers": sections, "interrupted": interrupted(shown), "exitCode": shown.exit_code}


class _ServerWatchView(WatchView):
    """One server's watch in a run over several: what it sees goes to the run's view."""

    def __init__(self, fleet: FleetWatchView, run: ServerRun[WatchReport], screen: Screen) -> None:
        super().__init__(screen)
        self._fleet, self._run = fleet, run

    @contextmanager
    def following(self, watch: Watch | None) -> Iterator[None]:
        assert watch is not None
        self._fleet.watching(self._run.server, watch)
        try:
            yield
        finally:
            self._fleet.redraw(self._run.server, watch)

    def redraw(self, watch: Watch) -> None:
        self._fleet.redraw(self._run.server, watch)

    def change(self, change: Change) -> None:
        self._fleet.change(self._run, change)


def change_line(change: Change, server: str | None = None) -> str:
    """A change as the table prints it off a terminal: a timestamped line (of several
    servers: the server before the task)."""
    status = clean(change.status)
    moved = f"{clean(change.previous)} -> {status}" if change.previous else status
    message = f"  {clean(change.message)}" if change.message else ""
    stamp = change.at.isoformat(timespec="seconds").replace("+00:00", "Z")
    where = f"{clean(server)}  " if server is not None else ""
    return f"{stamp}  {where}{clean(change.task_id)}  {moved}{message}\n"


def _watched_document(watched: WatchedTask) -> JsonObject:
    document: JsonObject = watched.task.to_wire() if watched.task else {"taskId": watched.task_id}
    if watched.gone:
        document["gone"] = True
    return document


@dataclass(frozen=True)
class Sight:
    """What the live table shows of one watch, taken on the thread that runs it (its tasks
    change there only)."""

    tasks: list[WatchedTask]
    interval: float
    pushes: int
    server: str | None = None
    """Of several servers: the one watched."""

    @classmethod
    def of(cls, watch: Watch, server: str | None = None) -> Sight:
        return cls(list(watch.tasks.values()), watch.poll_interval(), watch.pushes_seen, server)


def _live_table(sights: list[Sight], max_rows: int, note: str = "") -> tuple[Text, ...]:
    """The live table's columns and footer: the tasks that fit the screen, unsettled first
    (of several servers: a SERVER column first; `note` in the footer).

    Each column is one Text, a line per task: Rich lays out five cells instead of five per
    task, which halves the cost of a redraw (the same text; a cell's colour no longer spans
    the blanks that pad it). Only the rows shown are built: Rich would render every row and
    then crop the screen.
    """
    from rich.text import Text

    from mcptask.output import tables

    now = datetime.now(UTC)
    several = any(sight.server is not None for sight in sights)
    servers = Text()
    columns = tuple(Text() for _ in _LIVE_COLUMNS)
    ids, statuses, messages, ages, changed = columns
    rows = [(sight.server, watched) for sight in sights for watched in sight.tasks]
    ordered = sorted(rows, key=lambda row: row[1].settled)
    shown = ordered[: max(1, max_rows - 1)] if len(ordered) > max_rows else ordered
    for row, (server, watched) in enumerate(shown):
        if row:
            for column in (servers, *columns):
                column.append("\n")
        task = watched.task
        servers.append(clean(server or ""))
        ids.append(clean(watched.task_id))
        gone = watched.status == GONE
        statuses.append_text(Text("gone", "dim") if gone else tables.status_text(watched.status))
        messages.append(clean(watched.error or (task_message(task) if task else "")))
        ages.append(tables.age(task.created if task else None, now))
        changed.append(tables.age(watched.changed_at, now))
    if len(shown) < len(ordered):
        ids.append("\n").append(f"… {len(ordered) - len(shown)} more", style="dim")
    counts: Counter[str] = Counter()
    for status, count in Counter(watched.status for _, watched in rows).items():
        counts[clean(status or "unknown")] += count
    footer = Text(
        " · ".join(f"{count} {status}" for status, count in sorted(counts.items())), style="bold"
    )
    pushes = f"status pushes: {sum(sight.pushes for sight in sights)}"
    every = min((sight.interval for sight in sights), default=0.0)
    footer.append(f"{note}   polling every {every:g}s   {pushes}   Ctrl-C to stop", style="dim")
    return (servers, *columns, footer) if several else (*columns, footer)
