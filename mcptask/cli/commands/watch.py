"""`mcptask watch`: follow tasks live until they settle."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from mcptask.cli.completion import complete_task_id
from mcptask.cli.invocation import Invocation
from mcptask.cli.options import (
    Common,
    KnownOption,
    StatusOption,
    finite,
    statuses,
    with_server_options,
)
from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.client.session import McpClient
    from mcptask.operations.watch import WatchOptions, WatchReport
    from mcptask.output.views.watch import WatchView


@with_server_options
def watch(
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[ID]...",
            help="Tasks to watch (default: the listed ones).",
            autocompletion=complete_task_id,
        ),
    ] = None,
    status: StatusOption = None,
    known: KnownOption = False,
    interval: Annotated[
        float | None,
        typer.Option("--interval", min=0.0, help="Seconds between polls (default: the server's)."),
    ] = None,
    forever: Annotated[
        bool, typer.Option("--forever", help="Keep watching after every task has settled.")
    ] = False,
    watch_timeout: Annotated[
        float | None,
        typer.Option(
            "--wait-timeout", min=0.0, help="Stop after this many seconds (exit 7 if unsettled)."
        ),
    ] = None,
    exit_status: Annotated[
        bool,
        typer.Option("--exit-status", help="Exit 7 unless every watched task ended completed."),
    ] = False,
    *,
    common: Common,
) -> None:
    """Follow tasks live until they settle (completed, failed or cancelled)."""
    from mcptask.cli.exit_codes import exit_code_for
    from mcptask.operations.listing import refresh_known
    from mcptask.operations.watch import WatchOptions, WatchReport
    from mcptask.output.views.watch import WatchView

    for name, value in (("--interval", interval), ("--wait-timeout", watch_timeout)):
        finite(name, value)
    wanted = statuses(status)
    if wanted is not None and task_ids:
        raise UsageError("--status narrows the listed tasks; it does not apply to given ids")
    if known and task_ids:
        raise UsageError("--known watches the recorded tasks; give either ids or --known")
    invocation = Invocation(common, default_output="table")
    view = WatchView(invocation.screen)
    options = WatchOptions(
        task_ids=list(dict.fromkeys(task_ids or [])),
        statuses=wanted,
        interval=interval,
        forever=forever,
        timeout=watch_timeout,
        exit_status=exit_status,
    )
    recorded = invocation.known_ids() if known else None
    rejoin = recorded if recorded is not None else options.task_ids
    needs_list = not options.task_ids and not known
    with invocation.client(needs_list=needs_list, patient=True, rejoin=rejoin) as client:
        if recorded is not None:
            refreshed = refresh_known(client, recorded)
            ids = [task.taskId for task in refreshed.select(wanted)]
            options = replace(options, task_ids=ids, statuses=None)
            view.gone(refreshed.gone)
            view.unrefreshed(refreshed.errors)
            if not ids:
                view.show(
                    WatchReport([], interrupted=False, timed_out=False, exit_status=exit_status)
                )
                raise typer.Exit(0)
        report = follow(client, view, options)
    raise typer.Exit(int(exit_code_for(report)))


def follow(client: McpClient, view: WatchView, options: WatchOptions) -> WatchReport:
    """Watch until settled (or Ctrl-C), show the end as `view` does; returns the report."""
    from mcptask.cli.signals import StopSignal
    from mcptask.operations.watch import Watch

    stop = StopSignal(on_stop=lambda: watcher.wake())
    stop.cuts_retries_short(client)
    reader_left = False

    def round_done() -> None:
        nonlocal reader_left
        view.redraw(watcher)
        if not reader_left and view.screen.reader_left():
            # `watch | head -1`: nobody reads on, so watching ends (as a list's output does)
            # instead of polling until every task settles.
            reader_left = True
            stop.event.set()
            watcher.wake()

    watcher = Watch(
        client,
        options,
        stop=stop.event,
        on_change=view.change,
        on_round=round_done,
        on_problem=view.problem,
    )
    with stop, view.following(watcher):
        report = watcher.run()
    report = replace(report, interrupted=stop.stopped and not reader_left)
    view.show(report)
    return report
