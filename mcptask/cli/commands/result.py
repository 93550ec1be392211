"""`mcptask result`: a finished task's outcome (its tool result, or its error)."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, TaskIdArgument, finite, with_server_options


@with_server_options
def result(
    task_id: TaskIdArgument,
    wait_timeout: Annotated[
        float,
        typer.Option(
            "--wait-timeout",
            min=0.0,
            help="Seconds to wait for the task to finish (exit 7 if it has not).",
        ),
    ] = 30.0,
    *,
    common: Common,
) -> None:
    """Show a finished task's result; wait for it to finish first (--wait-timeout)."""
    from mcptask.cli.exit_codes import exit_code_for
    from mcptask.cli.signals import StopSignal
    from mcptask.operations.result import fetch_result
    from mcptask.output.views.tasks import ResultView

    finite("--wait-timeout", wait_timeout)
    invocation = Invocation(common)
    view = ResultView(invocation.screen)
    with invocation.client(rejoin=[task_id]) as client, StopSignal() as stop:
        report = fetch_result(
            client,
            task_id,
            wait_timeout=wait_timeout,
            sleep=stop.event.wait,
            stop=lambda: stop.stopped,
        )
    view.show(report)
    raise typer.Exit(int(exit_code_for(report)))
