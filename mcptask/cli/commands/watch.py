"""`mcptask watch`: follow tasks live until they settle."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptask.cli.fleet import AllProfilesOption, fleet_names
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
from mcptask.cli.watching import require_terminal_for_answer, watch_tasks
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
    all_profiles: AllProfilesOption = False,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel",
            min=1,
            help="With several servers: at most this many watched at once, the others "
            "waiting for a watch to end (default: all).",
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Follow tasks live until they settle (completed, failed or cancelled); -P 'prod-*'
    follows several servers' tasks at once."""
    from mcptask.cli.exit_codes import exit_code_for
    from mcptask.operations.watch import WatchOptions
    from mcptask.output.views.watch import WatchView

    for name, value in (("--interval", interval), ("--wait-timeout", watch_timeout)):
        finite(name, value)
    wanted = statuses(status)
    if wanted is not None and task_ids:
        raise UsageError("--status narrows the listed tasks; it does not apply to given ids")
    if known and task_ids:
        raise UsageError("--known watches the recorded tasks; give either ids or --known")
    options = WatchOptions(
        task_ids=list(dict.fromkeys(task_ids or [])),
        statuses=wanted,
        interval=interval,
        forever=forever,
        timeout=watch_timeout,
        exit_status=exit_status,
    )
    names = fleet_names(common, all_profiles)
    if names is not None:
        from mcptask.cli.fleet_runs import watch_fleet

        if answer:
            raise UsageError(
                "--answer asks on the terminal for one server: give one -P, or answer with "
                "mcptask answer -P NAME ID"
            )
        watch_fleet(common, names, parallel or len(names), options, known=known)
    invocation = Invocation(common, default_output="table")
    require_terminal_for_answer(invocation, answer)
    view = WatchView(invocation.screen)
    report = watch_tasks(invocation, view, options, known=known, answer=answer)
    raise typer.Exit(int(exit_code_for(report)))
