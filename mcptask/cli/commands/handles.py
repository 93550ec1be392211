"""`mcptask handles`: this server's recorded tasks as task handles of the official tasks
library (`@modelcontextprotocol/ext-tasks`), and such handles taken into the record."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, with_server_options


@with_server_options
def handles(
    import_from: Annotated[
        str | None,
        typer.Option(
            "--import",
            metavar="FILE",
            help="Take these handles (JSON, or JSON lines; - for stdin) into the record of "
            "this server, each once tasks/get shows the server knows its task.",
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Write this server's recorded tasks as task handles of the official tasks library
    (ext-tasks SerializedTaskReference), or take such handles in (--import)."""
    from mcptask.cli.exit_codes import exit_code_for
    from mcptask.cli.inputs import read_text
    from mcptask.operations import handles as task_handles
    from mcptask.output.views.saved import HandleExportView, HandleImportView

    taken = None
    if import_from is not None:
        source = "stdin" if import_from == "-" else f"--import {import_from!r}"
        taken = task_handles.read_handles(read_text(import_from, source), source)
    invocation = Invocation(common, default_output="json" if taken is None else None)
    settings = invocation.settings
    endpoint = task_handles.endpoint_id(settings.url, settings.server_command)
    if taken is None:
        export_view = HandleExportView(invocation.screen)
        ids = invocation.known_ids()
        with invocation.client(rejoin=ids) as client:
            export_view.show(task_handles.export_handles(client, ids, endpoint))
        return
    view = HandleImportView(invocation.screen)
    with invocation.client() as client, invocation.stop as stop:
        report = task_handles.import_handles(client, taken, endpoint, stop=lambda: stop.stopped)
    view.show(report)
    raise typer.Exit(int(exit_code_for(report)))
