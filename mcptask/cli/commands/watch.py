"""`mcptask watch`: follow tasks live until they settle."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import (
    AnswerOption,
    Common,
    KnownOption,
    StatusOption,
    finite,
    statuses,
    task_ids_argument,
    wait_timeout_option,
    with_server_options,
)
from mcptask.cli.watching import follow, require_terminal_for_answer
from mcptask.errors import UsageError


@with_server_options
def watch(
    task_ids: Annotated[
        list[str] | None, task_ids_argument(help="Tasks to watch (default: the listed ones).")
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
        wait_timeout_option(help="Stop after this many seconds (exit 7 if unsettled)."),
    ] = None,
    exit_status: Annotated[
        bool,
        typer.Option("--exit-status", help="Exit 7 unless every watched task ended completed."),
    ] = False,
    answer: AnswerOption = False,
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
    require_terminal_for_answer(invocation, answer)
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
        report = follow(client, view, options, invocation, answer=answer)
    raise typer.Exit(int(exit_code_for(report)))
