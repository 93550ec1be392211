"""`mcptask watch`: a live table on a terminal, one line per change anywhere else."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime

from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from mcptask import render
from mcptask.client import McpClient
from mcptask.errors import ExitCode
from mcptask.operations.interrupt import StopSignal
from mcptask.operations.watch import GONE, Change, Watch, WatchedTask, WatchOptions
from mcptask.protocol import COMPLETED
from mcptask.sanitize import clean
from mcptask.screen import Screen


def run_watch(
    client: McpClient, screen: Screen, options: WatchOptions, *, exit_status: bool
) -> ExitCode:
    """Watch until the tasks settle; the exit code follows design.md (130, 7, 0)."""
    live_view = screen.format == "table" and screen.out.is_terminal
    # No redraw thread: the view is redrawn after each polling round, so idle means idle.
    live = Live(console=screen.out, auto_refresh=False) if live_view else None

    def redraw() -> None:
        if live is not None:
            live.update(_view(watch, max_rows=screen.out.size.height - 3), refresh=True)

    signal = StopSignal(on_stop=lambda: watch.wake())
    stop = signal.event
    watch = Watch(
        client,
        options,
        stop=stop,
        on_change=_change_printer(screen, live_view),
        on_round=redraw,
        on_problem=lambda task_id, message: screen.warn(f"{task_id}: server error: {message}"),
    )
    with signal, _push_stream(client, options.task_ids), live or nullcontext():
        watch.run()
        redraw()
    if screen.format == "json":
        screen.json(
            {
                "tasks": [_final(watched) for watched in watch.tasks.values()],
                "interrupted": stop.is_set(),
                "timedOut": watch.timed_out,
            }
        )
    if stop.is_set():
        return ExitCode.INTERRUPTED
    if not watch.tasks:
        screen.warn("no tasks to watch")
        return ExitCode.OK
    if watch.timed_out:
        screen.warn("timed out with tasks still running")
        return ExitCode.PENDING
    if exit_status and any(w.status != COMPLETED for w in watch.tasks.values()):
        return ExitCode.PENDING
    return ExitCode.OK


def _change_printer(screen: Screen, live_view: bool) -> Callable[[Change], None]:
    """How a change reaches stdout: nothing extra in the live view, else one line each."""
    if live_view or screen.format == "json":
        return lambda change: None
    if screen.format == "jsonl":
        return lambda change: screen.json_line(change.to_json())

    def print_line(change: Change) -> None:
        status = clean(change.status)
        moved = f"{clean(change.previous)} -> {status}" if change.previous else status
        message = f"  {clean(change.message)}" if change.message else ""
        stamp = change.at.isoformat(timespec="seconds").replace("+00:00", "Z")
        screen.stdout.write(f"{stamp}  {clean(change.task_id)}  {moved}{message}\n")
        screen.stdout.flush()

    return print_line


@contextmanager
def _push_stream(client: McpClient, task_ids: list[str]) -> Iterator[None]:
    """Follow the server's status pushes in a background thread while the block runs."""
    stop = threading.Event()
    listener = threading.Thread(
        target=client.follow_status_pushes, args=(task_ids, stop), daemon=True
    )
    listener.start()
    try:
        yield
    finally:
        stop.set()
        listener.join(timeout=0.5)


def _view(watch: Watch, *, max_rows: int) -> Group:
    """The live table: the tasks that fit the screen, unsettled ones first, then a footer.

    Only the rows shown are built: Rich would render every row and then crop the screen.
    """
    now = datetime.now(UTC)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("TASK ID", "STATUS", "MESSAGE", "AGE", "SINCE CHANGE"):
        table.add_column(column, overflow="ellipsis", no_wrap=True)
    ordered = sorted(watch.tasks.values(), key=lambda watched: watched.settled)
    shown = ordered[: max(1, max_rows - 1)] if len(ordered) > max_rows else ordered
    for watched in shown:
        task = watched.task
        message = watched.error or (task.statusMessage if task else None) or ""
        table.add_row(
            Text(clean(watched.task_id)),
            render.status_text(watched.status)
            if watched.status != GONE
            else Text("gone", style="dim"),
            Text(clean(message)),
            render.age(task.created if task else None, now),
            render.age(watched.changed_at, now),
        )
    if len(shown) < len(ordered):
        table.add_row(Text(f"… {len(ordered) - len(shown)} more", style="dim"))
    counts = Counter(clean(watched.status or "unknown") for watched in watch.tasks.values())
    footer = Text(
        " · ".join(f"{count} {status}" for status, count in sorted(counts.items())), style="bold"
    )
    pushes = f"status pushes: {watch.pushes_seen}"
    footer.append(
        f"   polling every {watch.poll_interval():g}s   {pushes}   Ctrl-C to stop", style="dim"
    )
    return Group(table, footer)


def _final(watched: WatchedTask) -> dict[str, object]:
    document: dict[str, object] = (
        watched.task.to_wire() if watched.task else {"taskId": watched.task_id}
    )
    if watched.gone:
        document["gone"] = True
    return document
