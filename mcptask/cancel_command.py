"""`mcptask cancel`: select, confirm with the user, cancel, confirm by polling, report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mcptask import render, shapes
from mcptask.client import McpClient
from mcptask.errors import ExitCode, UnsupportedError
from mcptask.operations.cancel import (
    CancelReport,
    CancelResult,
    CancelRun,
    Outcome,
    unique_targets,
)
from mcptask.operations.interrupt import StopSignal
from mcptask.operations.listing import collect_tasks
from mcptask.protocol import ACTIVE_STATUSES, Task
from mcptask.screen import Screen

PROGRESS_THRESHOLD = 5
"""Show a progress bar only for runs longer than this many tasks."""


@dataclass(frozen=True)
class CancelRequest:
    """What the user asked `cancel` to do."""

    named_ids: list[str]
    all_working: bool
    statuses: tuple[str, ...] | None
    yes: bool
    dry_run: bool
    wait: bool
    wait_timeout: float


def run_cancel(client: McpClient, screen: Screen, request: CancelRequest) -> ExitCode:
    """Run the whole command; returns the exit code (errors before any cancel still raise)."""
    client.require("cancel")
    selected: list[Task] = []
    if request.all_working:
        _require_list_for_selector(client)
        selected = collect_tasks(client, statuses=request.statuses or ACTIVE_STATUSES)
    targets = unique_targets(request.named_ids, (task.taskId for task in selected))
    if request.dry_run:
        _show_dry_run(screen, request.named_ids, selected)
        return ExitCode.OK
    if not targets:
        _show_report(screen, CancelReport(results=[]))
        screen.warn("no task matched; nothing to cancel")
        return ExitCode.OK
    if (
        request.all_working
        and len(selected) > 1
        and not request.yes
        and not _confirmed(screen, selected)
    ):
        screen.warn("nothing cancelled")
        return ExitCode.INTERRUPTED

    on_result: Callable[[CancelResult], None] = (
        (lambda result: screen.json_line(result.to_json()))
        if screen.format == "jsonl"
        else (lambda result: None)
    )
    with StopSignal() as stop, _progress(screen, len(targets)) as advance:
        run = CancelRun(
            client,
            wait=request.wait,
            wait_timeout=request.wait_timeout,
            stop=lambda: stop.stopped,
            sleep=stop.event.wait,
            on_result=on_result,
            on_progress=advance,
        )
        report = run.run(targets)
    _show_report(screen, report)
    if report.fatal is not None:
        screen.error(report.fatal.message)
    elif report.interrupted:
        screen.warn("interrupted: the tasks not attempted are reported as skipped")
    return report.exit_code()


def _require_list_for_selector(client: McpClient) -> None:
    try:
        client.require("list")
    except UnsupportedError as exc:
        raise UnsupportedError(
            f"--all-working needs tasks/list: {exc.message}; give task ids instead (as "
            "arguments, with --from-file FILE, or '-' to read them from stdin)"
        ) from None


def _confirmed(screen: Screen, selected: list[Task]) -> bool:
    """Ask before a bulk cancel, only when a person is at the terminal."""
    if not (sys.stdin.isatty() and screen.err.is_terminal):
        return True
    from rich.prompt import Confirm

    screen.err.print(render.task_table(selected))
    return Confirm.ask(f"Cancel these {len(selected)} tasks?", console=screen.err, default=False)


@contextmanager
def _progress(screen: Screen, total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for long runs on a terminal; a no-op otherwise."""
    if total <= PROGRESS_THRESHOLD or not screen.err.is_terminal:
        yield lambda: None
        return
    columns = (TextColumn("cancelling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=screen.err, transient=True) as progress:
        bar = progress.add_task("cancel", total=total)
        yield lambda: progress.advance(bar)


def _show_dry_run(screen: Screen, named: list[str], selected: list[Task]) -> None:
    listed = {task.taskId for task in selected}
    extra = [task_id for task_id in named if task_id not in listed]
    if screen.format == "table":
        if selected:
            screen.out.print(render.task_table(selected))
        for task_id in extra:
            screen.out.print(task_id, markup=False, highlight=False)
        screen.warn(
            f"dry run: {len(selected) + len(extra)} task(s) would be cancelled; nothing was sent"
        )
    elif screen.format == "ids":
        screen.ids([task.taskId for task in selected] + extra)
    else:
        tasks = [task.to_wire() for task in selected] + [{"taskId": tid} for tid in extra]
        if screen.format == "json":
            screen.json({"dryRun": True, "tasks": tasks})
        else:
            for task in tasks:
                screen.json_line(task)


def _show_report(screen: Screen, report: CancelReport) -> None:
    if screen.format == "table":
        if report.results:
            screen.out.print(render.cancel_table(report.results))
        screen.out.print(render.cancel_summary(report))
    elif screen.format == "json":
        screen.json(shapes.cancel_document(report))
    elif screen.format == "ids":
        screen.ids(r.task_id for r in report.results if r.outcome is Outcome.CANCELLED)
    else:
        screen.err.print(render.cancel_summary(report))
