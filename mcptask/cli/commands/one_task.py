"""The commands about one task: `start` (a task-augmented tools/call that prints and records
the task; `--watch` follows it), `get` (the task in full) and `result` (its outcome)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from mcptask.cli.fleet import (
    DEFAULT_PARALLEL,
    AllProfilesOption,
    ParallelOption,
    fleet_names,
    run_fleet,
)
from mcptask.cli.invocation import Invocation, screen_for
from mcptask.cli.options import (
    AnswerOption,
    Common,
    TaskIdArgument,
    finite,
    wait_timeout_option,
    with_server_options,
)
from mcptask.errors import ExitCode, TaskNotFound, UsageError

if TYPE_CHECKING:
    from mcptask.output.views.fleet import ServerRun
    from mcptask.protocol.tasks import Task


@with_server_options
def start(
    tool: Annotated[str, typer.Argument(metavar="TOOL", help="The tool to call as a task.")],
    items: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="KEY=VALUE|KEY:=JSON",
            help="Tool arguments: KEY=VALUE is a string, KEY:=JSON any JSON value.",
        ),
    ] = None,
    args: Annotated[
        str | None,
        typer.Option(
            "--args",
            help="All arguments as one JSON object, or @FILE (@- for stdin); KEY items add to it.",
        ),
    ] = None,
    ttl: Annotated[
        float | None,
        typer.Option(
            "--ttl",
            help="Ask the server to keep the task this many seconds (2025-11-25; "
            "2026-07-28 servers decide for themselves).",
        ),
    ] = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Then follow the task as mcptask watch does.")
    ] = False,
    exit_status: Annotated[
        bool,
        typer.Option("--exit-status", help="With --watch: exit 7 unless the task completed."),
    ] = False,
    wait_timeout: Annotated[
        float | None,
        wait_timeout_option(
            help="With --watch: stop after this many seconds (exit 7 if unsettled)."
        ),
    ] = None,
    answer: AnswerOption = False,
    *,
    common: Common,
) -> None:
    """Start a task: call TOOL as a task, print and record it; --watch follows it.

    The arguments are checked against the tool's inputSchema before anything is sent.
    """
    from mcptask.cli.commands.watch import follow, require_terminal_for_answer
    from mcptask.cli.inputs import tool_arguments
    from mcptask.operations.start import StartRequest, start_task
    from mcptask.operations.watch import WatchOptions
    from mcptask.output.views.tasks import StartView

    finite("--ttl", ttl)
    finite("--wait-timeout", wait_timeout)
    if ttl is not None and ttl <= 0:
        raise UsageError("--ttl takes a positive number of seconds")
    for flag, given in (
        ("--answer", answer),
        ("--exit-status", exit_status),
        ("--wait-timeout", wait_timeout is not None),
    ):
        if given and not watch:
            raise UsageError(f"{flag} applies to --watch; give --watch too")
    request = StartRequest(
        tool, tool_arguments(items or [], args), None if ttl is None else max(1, round(ttl * 1000))
    )
    # Like watch: lines of changes by default, also without a terminal.
    invocation = Invocation(common, default_output="table" if watch else None)
    require_terminal_for_answer(invocation, answer)
    view = StartView(invocation.screen, watching=watch)
    with invocation.client() as client:
        if answer:
            client.require_answers()  # a task nobody could answer is not started
        # A Ctrl-C now lets the call in flight finish: a task it creates is recorded and
        # printed, never lost. The call itself is not sent once a stop was asked for.
        with invocation.stop as stop:
            report = start_task(client, request, stop=lambda: stop.stopped)
        view.show(report)
        if stop.stopped:
            raise typer.Exit(int(ExitCode.INTERRUPTED))
        if not watch or report.task is None:
            raise typer.Exit(int(report.exit_code))
        options = WatchOptions(
            task_ids=[report.task.taskId], timeout=wait_timeout, exit_status=exit_status
        )
        watched = follow(client, view.watch_view(), options, invocation, answer=answer)
    raise typer.Exit(int(watched.exit_code))


@with_server_options
def get(
    task_id: TaskIdArgument,
    all_profiles: AllProfilesOption = False,
    parallel: ParallelOption = DEFAULT_PARALLEL,
    *,
    common: Common,
) -> None:
    """Show one task in full."""
    from mcptask.output.views.tasks import GetView

    names = fleet_names(common, all_profiles)
    if names is not None:
        get_fleet(common, names, parallel, task_id)
    invocation = Invocation(common)
    view = GetView(invocation.screen)
    view.show(get_task(invocation, task_id))


def get_task(invocation: Invocation, task_id: str) -> Task:
    """`get` on one server: the task, in the session recorded for it."""
    with invocation.client(rejoin=[task_id]) as client:
        return client.get_task(task_id)


def get_fleet(common: Common, names: list[str], parallel: int, task_id: str) -> NoReturn:
    """`get` on every server: the task where it is found (exit 6 when it is nowhere)."""
    from mcptask.output.views.fleet import FleetGetView

    view = FleetGetView(screen_for(common.output, no_color=common.no_color))

    def work(run: ServerRun[list[Task]], invocation: Invocation) -> None:
        with suppress(TaskNotFound):  # not this server's task: its section has no report
            run.report = [get_task(invocation, task_id)]

    def nowhere(runs: list[ServerRun[list[Task]]]) -> tuple[ExitCode, ...]:
        if any(run.report is not None for run in runs):
            return ()
        answered = ", ".join(run.server for run in runs if run.outcome == "ok")
        if answered:  # as one server's get says it; the others' errors follow
            view.screen.error(f"task {task_id} not found on {answered}")
        return (ExitCode.TASK_FAILED,)

    run_fleet(view, common, names, parallel, work, also=nowhere)


@with_server_options
def result(
    task_id: TaskIdArgument,
    wait_timeout: Annotated[
        float,
        wait_timeout_option(help="Seconds to wait for the task to finish (exit 7 if it has not)."),
    ] = 30.0,
    *,
    common: Common,
) -> None:
    """Show a finished task's result; wait for it to finish first (--wait-timeout)."""
    from mcptask.operations.polling import fetch_result
    from mcptask.output.views.tasks import ResultView

    finite("--wait-timeout", wait_timeout)
    invocation = Invocation(common)
    view = ResultView(invocation.screen)
    with invocation.client(rejoin=[task_id]) as client, invocation.stop as stop:
        report = fetch_result(
            client,
            task_id,
            wait_timeout=wait_timeout,
            sleep=stop.event.wait,
            stop=lambda: stop.stopped,
        )
    view.show(report)
    raise typer.Exit(int(report.exit_code))
