"""`mcptask cancel`: cancel tasks by id, from a file or stdin, or every working one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from mcptask.cli.fleet import (
    DEFAULT_PARALLEL,
    AllProfilesOption,
    Checkpoint,
    ParallelOption,
    Slots,
    finish,
    fleet_names,
    start_servers,
)
from mcptask.cli.inputs import read_ids
from mcptask.cli.invocation import Invocation, StopSignal, screen_for
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

if TYPE_CHECKING:
    from mcptask.operations.outcomes import CancelReport, CancelResult, Selection
    from mcptask.output.views.fleet import ServerRun
    from mcptask.output.views.tasks import CancelView

    Progress = AbstractContextManager[Callable[[], None]]
    """The progress bar's step, while the bar is up."""
    Decide = Callable[[Selection], Progress | None]
    OnServer = Callable[
        [Invocation, CancelView, Decide, Callable[[CancelResult], None]], CancelReport | None
    ]


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
    from mcptask.operations.cancel import CancelRun
    from mcptask.operations.outcomes import select_targets
    from mcptask.output.views.tasks import CancelView

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

    def on_server(
        invocation: Invocation,
        view: CancelView,
        decide: Decide,
        on_result: Callable[[CancelResult], None],
    ) -> CancelReport | None:
        """`cancel` on one server: select the targets; once `decide` has given the progress
        bar's step (None: send nothing), cancel them."""
        recorded = invocation.known_ids() if known else None
        rejoin = [*named, *(recorded or [])]
        with invocation.client(needs_list=all_working and not known, rejoin=rejoin) as client:
            selection = select_targets(
                client, named, all_working=all_working, statuses=wanted, known=recorded
            )
            view.gone(selection.gone)
            view.unrefreshed(selection.unrefreshed)
            progress = decide(selection)
            if progress is None:
                return None
            stop = invocation.stop
            with progress as advance:
                run = CancelRun(
                    client,
                    wait=not no_wait,
                    wait_timeout=wait_timeout,
                    rate=rate,
                    stop=lambda: stop.stopped,
                    sleep=stop.event.wait,
                    on_result=on_result,
                    on_progress=advance,
                )
                return run.run(selection.targets)

    names = fleet_names(common, all_profiles)
    if names is not None:
        cancel_fleet(
            common, names, parallel, on_server, all_working=all_working, yes=yes, dry_run=dry_run
        )
    invocation = Invocation(common)
    view = CancelView(invocation.screen)

    @contextmanager
    def progress(count: int) -> Iterator[Callable[[], None]]:
        with invocation.stop, view.progress(count) as advance:
            yield advance

    def decide(selection: Selection) -> Progress | None:
        if dry_run:
            view.dry_run(selection)
            return None
        if selection.bulk and not yes and not view.confirmed(selection):
            view.declined()
            raise typer.Exit(int(ExitCode.INTERRUPTED))
        return progress(len(selection.targets))

    report = on_server(invocation, view, decide, view.result_ready)
    if report is None:  # a dry run
        return
    view.show(report)
    raise typer.Exit(int(report.exit_code))


def cancel_fleet(
    common: Common,
    names: list[str],
    parallel: int,
    on_server: OnServer,
    *,
    all_working: bool,
    yes: bool,
    dry_run: bool,
) -> NoReturn:
    """`cancel` on every server: each selects its targets; once all have, one prompt (for a
    bulk cancel on a terminal) says how many tasks where; then each server cancels its own,
    one request at a time, beside the others (`on_server`: the command's own run on one)."""
    from mcptask.output.views.fleet import FleetCancelView
    from mcptask.output.views.tasks import CancelView

    screen = screen_for(common.output, no_color=common.no_color)
    view = FleetCancelView(screen)
    slots, checkpoint = Slots(parallel), Checkpoint()
    with StopSignal() as stop:
        # The progress bar's step, a cell filled in once the bar is up (below): the runs
        # call it only after the checkpoint lets them cancel, and that comes after the bar.
        advance = [lambda: None]

        def work(run: ServerRun[CancelReport], invocation: Invocation) -> None:
            def decide(selection: Selection) -> Progress | None:
                run.selection = selection
                with slots.given_back():
                    proceed = checkpoint.wait(run.server)
                if not (proceed or (stop.stopped and not dry_run)):
                    return None  # declined, or a dry run: nothing was touched
                # Stopped: the run sends nothing and reports each selected task skipped.
                return nullcontext(lambda: advance[0]())

            on_result = view.result_ready(run)
            report = on_server(invocation, CancelView(invocation.screen), decide, on_result)
            if report is not None:
                run.report, run.exit_code = report, int(report.exit_code)
                if report.fatal is not None:
                    run.error = report.fatal.message

        runs, join = start_servers(
            common,
            names,
            screen,
            work,
            slots,
            stop=stop,
            on_end=lambda run: checkpoint.reach(run.server),
        )
        try:
            checkpoint.all_reached(len(names))
        except KeyboardInterrupt:  # a second Ctrl-C while the servers select
            stop.event.set()
        selected = any(run.selection and run.selection.targets for run in runs)
        asked = all_working and selected and not (yes or dry_run or stop.stopped)
        if asked:
            with stop.paused():  # Ctrl-C at the prompt means no at once, as for one server
                try:
                    confirmed = view.confirmed(runs)
                except KeyboardInterrupt:
                    confirmed = False
        if asked and not confirmed:
            checkpoint.decide(False)
            join()
            CancelView(screen).declined()
            raise typer.Exit(int(ExitCode.INTERRUPTED))
        proceed = not (dry_run or stop.stopped)
        total = sum(len(run.selection.targets) for run in runs if run.selection and proceed)
        with CancelView(screen).progress(total) as step:
            advance[0] = step
            checkpoint.decide(proceed)
            join()
    finish(view.dry_run if dry_run else view.show, runs, interrupted=stop.stopped)
