"""`mcptask cancel`: cancel tasks by id, from a file or stdin, or every working one."""

from __future__ import annotations

from functools import partial
from typing import Annotated

import typer

from mcptask.cli.fleet import DEFAULT_PARALLEL, AllProfilesOption, ParallelOption, fleet_names
from mcptask.cli.inputs import read_ids
from mcptask.cli.invocation import Invocation
from mcptask.cli.options import (
    Common,
    KnownOption,
    StatusOption,
    finite,
    statuses,
    task_ids_argument,
    wait_timeout_option,
    with_server_options,
)
from mcptask.errors import ExitCode, UsageError


@with_server_options
def cancel(
    task_ids: Annotated[
        list[str] | None, task_ids_argument(help="Task ids to cancel; '-' reads ids from stdin.")
    ] = None,
    all_working: Annotated[
        bool,
        typer.Option("--all-working", help="Cancel every working and input_required task."),
    ] = False,
    status: StatusOption = None,
    known: KnownOption = False,
    from_file: Annotated[
        str | None,
        typer.Option("--from-file", help="Read ids from FILE ('-' = stdin), one per line."),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before a bulk cancel.")] = (
        False
    ),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be cancelled; send no cancel.")
    ] = False,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Do not poll tasks/get to confirm the outcome.")
    ] = False,
    wait_timeout: Annotated[
        float, wait_timeout_option(help="Seconds to wait for confirmation, per run.")
    ] = 5.0,
    rate: Annotated[
        float | None,
        typer.Option("--rate", min=0.001, help="At most N cancel requests a second, per server."),
    ] = None,
    all_profiles: AllProfilesOption = False,
    parallel: ParallelOption = DEFAULT_PARALLEL,
    *,
    common: Common,
) -> None:
    """Cancel tasks by id, from a file or stdin, or every working one; confirm each outcome."""
    from mcptask.cli.exit_codes import exit_code_for
    from mcptask.operations.cancel import CancelRun
    from mcptask.operations.outcomes import select_targets
    from mcptask.output.views.tasks import CancelOutcome, CancelView

    finite("--wait-timeout", wait_timeout)
    wanted = statuses(status)
    if wanted is not None and not all_working:
        raise UsageError("--status narrows --all-working; give --all-working too")
    if known and not all_working:
        raise UsageError("--known selects with --all-working; give --all-working too")
    named = read_ids(task_ids or [], from_file)
    if not named and not all_working:
        raise UsageError(
            "nothing to cancel: give task ids, --from-file FILE, '-' for stdin, or --all-working"
        )
    finite("--rate", rate, unit="a second")
    cancel_run = partial(CancelRun, wait=not no_wait, wait_timeout=wait_timeout, rate=rate)
    names = fleet_names(common, all_profiles)
    if names is not None:
        from mcptask.cli.fleet_runs import cancel_fleet

        cancel_fleet(
            common,
            names,
            parallel,
            named=named,
            all_working=all_working,
            statuses=wanted,
            known=known,
            yes=yes,
            dry_run=dry_run,
            cancel_run=cancel_run,
        )
    invocation = Invocation(common)
    view = CancelView(invocation.screen)
    recorded = invocation.known_ids() if known else None
    rejoin = [*named, *(recorded or [])]
    with invocation.client(needs_list=all_working and not known, rejoin=rejoin) as client:
        selection = select_targets(
            client, named, all_working=all_working, statuses=wanted, known=recorded
        )
        view.gone(selection.gone)
        view.unrefreshed(selection.unrefreshed)
        if dry_run:
            view.dry_run(selection)
            return
        if selection.bulk and not yes and not view.confirmed(selection):
            view.declined()
            raise typer.Exit(int(ExitCode.INTERRUPTED))
        with invocation.stop as stop, view.progress(len(selection.targets)) as advance:
            run = cancel_run(
                client,
                stop=lambda: stop.stopped,
                sleep=stop.event.wait,
                on_result=view.result_ready,
                on_progress=advance,
            )
            report = run.run(selection.targets)
    code = exit_code_for(report)
    view.show(CancelOutcome(report, int(code)))
    raise typer.Exit(int(code))
