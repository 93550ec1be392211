"""`connect`, `list`, `get`, `cancel` and `watch` over several servers at once (cli/fleet.py): each
server's part is the command's own work on its own connection; the views merge the reports
and `cli.exit_codes.fleet_exit_code` combines the servers' codes."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from typing import TYPE_CHECKING, NoReturn

import typer

from mcptask.cli.exit_codes import exit_code_for, fleet_exit_code
from mcptask.cli.fleet import Checkpoint, Slots, start_servers
from mcptask.cli.invocation import Invocation, StopSignal, screen_for
from mcptask.cli.options import Common
from mcptask.errors import ExitCode, TaskNotFound
from mcptask.output.views.fleet import (
    Fleet,
    FleetCancelView,
    FleetConnectView,
    FleetGetView,
    FleetListView,
    FleetView,
    Report,
    ServerRun,
)

if TYPE_CHECKING:
    from mcptask.operations.cancel import CancelRun
    from mcptask.operations.outcomes import CancelReport
    from mcptask.operations.watch import WatchOptions
    from mcptask.output.views.connection import Connection
    from mcptask.protocol.tasks import Task


def list_fleet(
    common: Common,
    names: list[str],
    parallel: int,
    *,
    statuses: tuple[str, ...] | None,
    limit: int | None,
    known: bool,
    newest: bool,
) -> NoReturn:
    """`list` on every server; each server's tasks newest first (or in its order)."""
    from mcptask.operations.listing import newest_first_key, refresh_known, task_pages
    from mcptask.output.views.tasks import ListView

    view = FleetListView(screen_for(common.output, no_color=common.no_color))

    def work(run: ServerRun[list[Task]], invocation: Invocation) -> None:
        recorded = invocation.known_ids() if known else None
        with invocation.client(needs_list=not known, rejoin=recorded or []) as client:
            if recorded is not None:
                refreshed = refresh_known(client, recorded)
                ListView(invocation.screen).gone(refreshed.gone)
                ListView(invocation.screen).unrefreshed(refreshed.errors)
                tasks = [t for t in refreshed.tasks if statuses is None or t.status in statuses]
            else:
                client.require("list")
                pages = task_pages(client, statuses=statuses, limit=None if newest else limit)
                tasks = [task for page in pages for task in page]
                if newest:
                    tasks.sort(key=newest_first_key, reverse=True)
        run.report = tasks[:limit]

    _run(view, common, names, parallel, work)


def get_fleet(common: Common, names: list[str], parallel: int, task_id: str) -> NoReturn:
    """`get` on every server: the task where it is found (exit 6 when it is nowhere)."""
    view = FleetGetView(screen_for(common.output, no_color=common.no_color))

    def work(run: ServerRun[list[Task]], invocation: Invocation) -> None:
        # Not this server's task: its section has no report.
        with invocation.client(rejoin=[task_id]) as client, suppress(TaskNotFound):
            run.report = [client.get_task(task_id)]

    def nowhere(runs: list[ServerRun[list[Task]]]) -> tuple[ExitCode, ...]:
        if any(run.report is not None for run in runs):
            return ()
        answered = ", ".join(run.server for run in runs if run.outcome == "ok")
        if answered:  # as one server's get says it; the others' errors follow
            view.screen.error(f"task {task_id} not found on {answered}")
        return (ExitCode.TASK_FAILED,)

    _run(view, common, names, parallel, work, also=nowhere)


def connect_fleet(common: Common, names: list[str], parallel: int) -> NoReturn:
    """`connect` to every server: what each offers for tasks."""
    from mcptask.output.views.connection import Connection

    view = FleetConnectView(screen_for(common.output, no_color=common.no_color))

    def work(run: ServerRun[Connection], invocation: Invocation) -> None:
        with invocation.client() as client:
            others, problems = client.survey()
            transport = client.transport
            run.report = Connection(
                client.server, transport.kind, transport.target, transport.session_id, others
            )
            for problem in problems:
                invocation.screen.warn(problem)

    _run(view, common, names, parallel, work)


def cancel_fleet(
    common: Common,
    names: list[str],
    parallel: int,
    *,
    named: list[str],
    all_working: bool,
    statuses: tuple[str, ...] | None,
    known: bool,
    yes: bool,
    dry_run: bool,
    cancel_run: Callable[..., CancelRun],
) -> NoReturn:
    """`cancel` on every server: each selects its targets; once all have, one prompt (for a
    bulk cancel on a terminal) says how many tasks where; then each server cancels its own,
    one request at a time, beside the others (`cancel_run`: the cancel command's `CancelRun`,
    its options given)."""
    from mcptask.operations.outcomes import select_targets
    from mcptask.output.views.tasks import CancelView

    screen = screen_for(common.output, no_color=common.no_color)
    view = FleetCancelView(screen)
    slots, checkpoint = Slots(parallel), Checkpoint()
    with StopSignal() as stop:
        # The progress bar's step, a cell filled in once the bar is up (below): the runs
        # call it only after the checkpoint lets them cancel, and that comes after the bar.
        advance = [lambda: None]

        def work(run: ServerRun[CancelReport], invocation: Invocation) -> None:
            recorded = invocation.known_ids() if known else None
            rejoin = [*named, *(recorded or [])]
            with invocation.client(needs_list=all_working and not known, rejoin=rejoin) as client:
                selection = select_targets(
                    client, named, all_working=all_working, statuses=statuses, known=recorded
                )
                CancelView(invocation.screen).gone(selection.gone)
                CancelView(invocation.screen).unrefreshed(selection.unrefreshed)
                run.selection = selection
                with slots.given_back():
                    proceed = checkpoint.wait(run.server)
                if not (proceed or (stop.stopped and not dry_run)):
                    return  # declined, or a dry run: nothing was touched
                # Stopped: the run sends nothing and reports each selected task skipped.
                report = cancel_run(
                    client,
                    stop=lambda: stop.stopped,
                    sleep=stop.event.wait,
                    on_result=view.result_ready(run),
                    on_progress=lambda: advance[0](),
                ).run(selection.targets)
            run.report, run.exit_code = report, int(exit_code_for(report))
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
    _finish(view.dry_run if dry_run else view.show, runs, interrupted=stop.stopped)


def watch_fleet(
    common: Common, names: list[str], parallel: int, options: WatchOptions, *, known: bool
) -> NoReturn:
    """`watch` on every server at once: one live table (or each change as a line, with its
    server) until every server's tasks settle; Ctrl-C stops every watch."""
    from mcptask.cli.commands.watch import watch_tasks
    from mcptask.operations.watch import WatchReport
    from mcptask.output.views.watch import FleetWatchView

    screen = screen_for(common.output or "table", no_color=common.no_color)
    view = FleetWatchView(screen, names)
    with StopSignal(on_stop=view.wake_all) as stop:

        def work(run: ServerRun[WatchReport], invocation: Invocation) -> None:
            try:
                run.report = watch_tasks(
                    invocation,
                    view.part(run, invocation.screen),
                    options,
                    known=known,
                    alone=False,
                )
            finally:  # a server lost mid-watch: its tasks as last seen, beside its error
                watch = view.watched(run.server)
                if run.report is None and watch is not None:
                    tasks = list(watch.tasks.values())
                    run.report = WatchReport(tasks, stop.stopped, False, options.exit_status)
            run.exit_code = int(exit_code_for(run.report))

        with view.following():
            runs, join = start_servers(
                common,
                names,
                view.screen,
                work,
                Slots(parallel),
                stop=stop,
                on_end=view.ended,
            )
            join()
    left = screen.reader_left()  # `watch -P ... | head -1`: ended, as one server's watch is
    for run in runs if left else []:
        if run.report is not None and run.error is None:
            run.report = replace(run.report, interrupted=False)
            run.exit_code = int(exit_code_for(run.report))
        elif run.skipped:
            run.exit_code = int(ExitCode.OK)
    _finish(view.show, runs, interrupted=stop.stopped and not left)


def _run(
    view: FleetView[Report],
    common: Common,
    names: list[str],
    parallel: int,
    work: Callable[[ServerRun[Report], Invocation], None],
    *,
    also: Callable[[list[ServerRun[Report]]], tuple[ExitCode, ...]] = lambda runs: (),
) -> NoReturn:
    """Every server's run, at most `parallel` at work at once, then the merged report; `also`
    adds codes of the whole run to the servers'."""
    with StopSignal() as stop:
        runs, join = start_servers(common, names, view.screen, work, Slots(parallel), stop=stop)
        join()
    _finish(view.show, runs, also=also(runs), interrupted=stop.stopped)


def _finish(
    show: Callable[[Fleet[Report]], None],
    runs: list[ServerRun[Report]],
    *,
    also: tuple[ExitCode, ...] = (),
    interrupted: bool,
) -> NoReturn:
    """Show the merged report and exit with the servers' combined code."""
    code = fleet_exit_code([*(run.exit_code for run in runs), *also], interrupted=interrupted)
    show(Fleet(runs, int(code)))
    raise typer.Exit(int(code))
