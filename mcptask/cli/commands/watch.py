"""`mcptask watch`: follow tasks live until they settle."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.options import (
    Common,
    Invocation,
    StatusOption,
    finite,
    statuses,
    with_server_options,
)
from mcptask.errors import UsageError


@with_server_options
def watch(
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="Tasks to watch (default: the listed ones)."),
    ] = None,
    status: StatusOption = None,
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
    from mcptask.cli.signals import StopSignal
    from mcptask.operations.watch import Watch, WatchOptions
    from mcptask.output.views.watch import WatchView

    for name, value in (("--interval", interval), ("--wait-timeout", watch_timeout)):
        finite(name, value)
    wanted = statuses(status)
    if wanted is not None and task_ids:
        raise UsageError("--status narrows the listed tasks; it does not apply to given ids")
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
    with invocation.client(needs_list=not options.task_ids, patient=True) as client:
        stop = StopSignal(on_stop=lambda: watcher.wake())
        # Waiting between retries ends at once when the user asks to stop.
        client.retry = replace(client.retry, sleep=stop.event.wait, stopped=lambda: stop.stopped)
        watcher = Watch(
            client,
            options,
            stop=stop.event,
            on_change=view.change,
            on_round=lambda: view.redraw(watcher),
            on_problem=view.problem,
        )
        with stop, view.following(watcher):
            report = watcher.run()
    report = replace(report, interrupted=stop.stopped)
    view.show(report)
    raise typer.Exit(int(exit_code_for(report)))
